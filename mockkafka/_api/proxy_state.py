"""A live, read-only view of the upstream cluster shaped like the fake's state.

A scenario's start conditions and ``expect:`` checks read a ``ClusterState`` (``st.topics``,
``st.partition(...)``, ``st.groups.committed(...)``, ...). Played on a
:class:`~mockkafka.Proxy` they get an :class:`UpstreamState` instead: the same attribute
names, each answered now by a request to the upstream (Metadata, ListOffsets, Fetch,
OffsetFetch, DescribeGroups). Nothing is cached: a probe that reads it twice sees the
cluster twice. Only what the proxy-capable conditions and checks read is here; the loader
refuses the others before a scenario starts (``scenario/model.py``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mockkafka.errors import KafkaApiError
from mockkafka.protocol import records as rec
from mockkafka.views import GroupView, PartitionView

if TYPE_CHECKING:
    from mockkafka._api.proxy_verbs import ProxyVerbs


@dataclass(frozen=True)
class _Log:
    log_start_offset: int
    high_watermark: int
    last_stable_offset: int


class _Partition:
    def __init__(self, view: PartitionView) -> None:
        self.index = view.partition
        self.leader = view.leader
        self.replicas = list(view.replicas)
        self.log = _Log(view.log_start_offset, view.high_watermark, view.last_stable_offset)
        self._view = view

    def records(self, *, include_control: bool = False) -> list[rec.Record]:
        return self._view.records(include_control=include_control)


class _Topic:
    def __init__(self, proxy: ProxyVerbs, name: str) -> None:
        view = proxy.topic(name)
        self.name = name
        self.partitions = [_Partition(p) for p in view.partitions]

    def partition(self, index: int) -> _Partition:
        for p in self.partitions:
            if p.index == index:
                return p
        raise KafkaApiError("UNKNOWN_TOPIC_OR_PARTITION", f"{self.name}-{index}")


class _Topics(Mapping[str, _Topic]):
    def __init__(self, proxy: ProxyVerbs) -> None:
        self._proxy = proxy

    def __getitem__(self, name: str) -> _Topic:
        try:
            return _Topic(self._proxy, name)
        except KafkaApiError as exc:
            raise KeyError(name) from exc

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._proxy.topics()

    def __iter__(self) -> Iterator[str]:
        return iter(self._proxy.topics())

    def __len__(self) -> int:
        return len(self._proxy.topics())

    def values(self) -> Any:
        return [self[n] for n in self._proxy.topics()]


@dataclass(frozen=True)
class _Committed:
    offset: int


class _GroupIds:
    def __init__(self, proxy: ProxyVerbs) -> None:
        self._proxy = proxy

    def __contains__(self, group: object) -> bool:
        if not isinstance(group, str):
            return False
        try:
            return self._proxy.group(group).state != "Dead"
        except KafkaApiError:
            return False


class _Groups:
    def __init__(self, proxy: ProxyVerbs) -> None:
        self._proxy = proxy
        self.groups = _GroupIds(proxy)

    def committed(self, group: str) -> dict[tuple[str, int], _Committed]:
        try:
            got = self._proxy.committed_offsets(group)
        except KafkaApiError:
            return {}
        return {k: _Committed(v) for k, v in got.items()}

    def view(self, group: str) -> GroupView:
        return self._proxy.group(group)


class UpstreamState:
    """The upstream cluster, read on each access (see the module docstring)."""

    def __init__(self, proxy: ProxyVerbs) -> None:
        self._proxy = proxy
        self.topics = _Topics(proxy)
        self.groups = _Groups(proxy)

    def now_ms(self) -> int:
        return int(self._proxy._proxy_server.now_ms())

    def topic(self, name: str) -> _Topic:
        return _Topic(self._proxy, name)

    def partition(self, topic: str, index: int) -> _Partition:
        return _Topic(self._proxy, topic).partition(index)

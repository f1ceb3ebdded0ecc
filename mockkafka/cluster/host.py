"""What the parts of the cluster state see of the state that owns them.

:class:`~mockkafka.cluster.state.ClusterState` creates the coordinators, the group and
transaction coordinators and the groups, and hands itself to them. They take it typed by
:class:`StateCore` (or a protocol extending it, defined beside the part that needs more), not
by ``ClusterState``: so ``state.py`` is the top of ``cluster/`` and no part imports it back.
mypy checks that ``ClusterState`` satisfies every one of these protocols where it passes
itself in.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from mockkafka.cluster.base import Broker, TimerHandle
    from mockkafka.cluster.config import ClusterConfig
    from mockkafka.cluster.configs import DynamicConfigs
    from mockkafka.cluster.producers import ProducerIdInfo
    from mockkafka.cluster.topics import Partition, Topic

__all__ = ["StateCore"]


class StateCore(Protocol):
    """The cluster's brokers, topics, configs, clock, timers and notifications."""

    @property
    def config(self) -> ClusterConfig: ...
    @property
    def brokers(self) -> dict[int, Broker]: ...
    @property
    def broker_configs(self) -> dict[str, str]: ...
    @property
    def topics(self) -> dict[str, Topic]: ...
    @property
    def topics_by_id(self) -> dict[uuid.UUID, Topic]: ...
    @property
    def producer_ids(self) -> dict[int, ProducerIdInfo]: ...
    @property
    def extensions(self) -> dict[str, Any]: ...
    @property
    def dynamic_configs(self) -> DynamicConfigs: ...
    @property
    def controller_id(self) -> int: ...

    def now_ms(self) -> int: ...
    def call_at(self, at_ms: int, fn: Callable[[], None]) -> TimerHandle: ...
    def call_later(self, delay_ms: int, fn: Callable[[], None]) -> TimerHandle: ...
    def notify(self, key: Hashable) -> None: ...
    def emit_event(self, name: str, **attrs: Any) -> None: ...
    def broker(self, node_id: int) -> Broker: ...
    def topic(self, name: str) -> Topic: ...
    def partition(self, topic: str, index: int) -> Partition: ...
    def allocate_producer_id(self) -> int: ...
    def create_topic(
        self,
        name: str,
        partitions: int | None = None,
        replication_factor: int | None = None,
        config: dict[str, str] | None = None,
        *,
        assignments: list[list[int]] | None = None,
        topic_id: uuid.UUID | None = None,
        validate_only: bool = False,
        internal: bool = False,
    ) -> Topic: ...

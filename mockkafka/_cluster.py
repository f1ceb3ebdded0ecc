"""The public cluster objects: :class:`Cluster` (sync, background thread) and
:class:`AsyncCluster` (trio, from :func:`open_cluster`).

Both wrap one :class:`~mockkafka.cluster.state.ClusterState` served by a
:class:`~mockkafka.server.runtime.ClusterServer`. Every verb runs on the trio loop that owns
the state: the sync class hops there with ``trio.from_thread``; the trio class is already
there. So a verb applied between two client requests is seen by the second one, with no
locking.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from types import TracebackType
from typing import Any, TypeVar

import trio

from mockkafka._verbs_faults import FaultsVerbs
from mockkafka._verbs_groups import GroupsVerbs
from mockkafka._verbs_transactions import TransactionsVerbs
from mockkafka.cluster.configs import split_config_options
from mockkafka.cluster.produce import append_records
from mockkafka.cluster.state import Broker, ClusterConfig, ClusterState, Partition, Topic
from mockkafka.cluster.traffic import TrafficLog
from mockkafka.errors import BrokerError, ConfigError, ErrorCode, KafkaApiError
from mockkafka.protocol import records as rec
from mockkafka.protocol.apis import api as lookup_api
from mockkafka.server.runtime import ClusterServer

T = TypeVar("T")

START_TIMEOUT_S = 30.0


def _make_config(brokers: int, options: dict[str, Any]) -> ClusterConfig:
    """ClusterConfig from keyword options; ``config={...}`` gives broker configs by name."""
    config = options.pop("config", None)
    if config is not None:
        if not isinstance(config, Mapping):
            raise ConfigError(f"config must be a dict of broker configs, got {config!r}")
        named, rest = split_config_options(config)
        twice = sorted(set(named) & set(options))
        if twice:
            raise ConfigError(
                f"config gives what the option(s) {', '.join(twice)} already give; use one"
            )
        options.update(named)
        options["broker_configs"] = tuple(options.get("broker_configs", ())) + tuple(rest.items())
    try:
        return ClusterConfig(brokers=brokers, **options)
    except TypeError as exc:
        fields = sorted(ClusterConfig.__dataclass_fields__)
        raise ConfigError(f"{exc}; cluster options are: {', '.join(fields)}") from None


def _fixed_ports(state: ClusterState, port: int) -> dict[int, int] | None:
    """Broker id -> port when ``port`` is fixed: the first broker on ``port``, then +1."""
    if not port:
        return None
    return {node: port + n for n, node in enumerate(sorted(state.brokers))}


class PartitionView:
    """A partition as a test sees it: records, offsets, leader, replicas, ISR."""

    def __init__(self, cluster: _ClusterBase, topic: str, index: int) -> None:
        self._c = cluster
        self.topic = topic
        self.index = index

    def _get(self, fn: Callable[[Partition], T]) -> T:
        return self._c._call(lambda: fn(self._c._state.partition(self.topic, self.index)))

    def records(self, *, include_control: bool = False) -> list[rec.Record]:
        """Every record held, decoded now (control records only when asked)."""
        return self._get(lambda p: p.records(include_control=include_control))

    @property
    def high_watermark(self) -> int:
        return self._get(lambda p: p.log.high_watermark)

    @property
    def log_start_offset(self) -> int:
        return self._get(lambda p: p.log.log_start_offset)

    @property
    def last_stable_offset(self) -> int:
        return self._get(lambda p: p.log.last_stable_offset)

    @property
    def leader(self) -> int:
        return self._get(lambda p: p.leader)

    @property
    def leader_epoch(self) -> int:
        return self._get(lambda p: p.leader_epoch)

    @property
    def replicas(self) -> list[int]:
        return self._get(lambda p: list(p.replicas))

    @property
    def isr(self) -> list[int]:
        return self._get(lambda p: list(p.isr))

    def __repr__(self) -> str:
        return f"<partition {self.topic}-{self.index}>"


class TopicView:
    """A topic as a test sees it."""

    def __init__(self, cluster: _ClusterBase, name: str) -> None:
        self._c = cluster
        self.name = name
        self._c._call(lambda: cluster._state.topic(name))  # raises if absent

    def _get(self, fn: Callable[[Topic], T]) -> T:
        return self._c._call(lambda: fn(self._c._state.topic(self.name)))

    def partition(self, index: int) -> PartitionView:
        self._get(lambda t: t.partition(index))
        return PartitionView(self._c, self.name, index)

    @property
    def partitions(self) -> list[PartitionView]:
        n = self._get(lambda t: len(t.partitions))
        return [PartitionView(self._c, self.name, i) for i in range(n)]

    @property
    def topic_id(self) -> Any:
        return self._get(lambda t: t.topic_id)

    @property
    def configs(self) -> dict[str, str]:
        return self._get(lambda t: dict(t.configs))

    def records(self) -> list[rec.Record]:
        """Records of every partition, partition by partition."""
        return [r for p in self.partitions for r in p.records()]

    def __repr__(self) -> str:
        return f"<topic {self.name}>"


class _ClusterBase(GroupsVerbs, TransactionsVerbs, FaultsVerbs):
    """Verbs shared by the sync and trio clusters. See :class:`Cluster`."""

    _state: ClusterState
    _server: ClusterServer

    def _call(self, fn: Callable[[], T]) -> T:  # pragma: no cover - overridden
        raise NotImplementedError

    # -- addresses --------------------------------------------------------------------------

    @property
    def bootstrap_servers(self) -> str:
        """``host:port,...`` of every broker: give it to any Kafka client."""
        return ",".join(f"{b.host}:{b.port}" for b in self._state.brokers.values())

    @property
    def brokers(self) -> list[Broker]:
        return list(self._state.brokers.values())

    @property
    def state(self) -> ClusterState:
        """The raw cluster state (advanced use; touch it only via ``call``)."""
        return self._state

    @property
    def traffic(self) -> TrafficLog:
        """Every request and response seen, for assertions (see TrafficLog)."""
        return self._server.traffic

    def call(self, fn: Callable[[ClusterState], T]) -> T:
        """Run ``fn(state)`` on the cluster's loop and return its result."""
        return self._call(lambda: fn(self._state))

    # -- topics -------------------------------------------------------------------------------

    def create_topic(
        self,
        name: str,
        partitions: int = 1,
        replication_factor: int = 1,
        config: dict[str, str] | None = None,
        *,
        assignments: Sequence[Sequence[int]] | None = None,
    ) -> TopicView:
        """Create a topic as CreateTopics would; raises KafkaApiError on a bad request."""
        self._call(
            lambda: self._state.create_topic(
                name,
                partitions,
                replication_factor,
                {k: str(v) for k, v in (config or {}).items()},
                assignments=[list(a) for a in assignments] if assignments else None,
            )
        )
        return TopicView(self, name)

    def delete_topic(self, name: str) -> None:
        self._call(lambda: self._state.delete_topic(name))

    def create_partitions(self, name: str, total: int) -> None:
        """Grow topic ``name`` to ``total`` partitions."""
        self._call(lambda: self._state.create_partitions(name, total))

    def topic(self, name: str) -> TopicView:
        """The topic ``name`` (KafkaApiError UNKNOWN_TOPIC_OR_PARTITION if absent)."""
        return TopicView(self, name)

    def topics(self) -> list[str]:
        return self._call(lambda: sorted(self._state.topics))

    def produce(
        self,
        topic: str,
        value: bytes | str | None,
        *,
        key: bytes | str | None = None,
        partition: int = 0,
        headers: Sequence[tuple[str, bytes | str | None]] = (),
        timestamp: int | None = None,
    ) -> int:
        """Append one record as a producer would (for test setup); returns its offset."""

        def b(x: bytes | str | None) -> bytes | None:
            return x.encode() if isinstance(x, str) else x

        def do() -> int:
            t = self._state.topic(topic)
            p = t.partition(partition)
            ts = self._state.now_ms() if timestamp is None else timestamp
            data = rec.encode_batch(
                [rec.Record(0, ts, b(key), b(value), tuple((k, b(v)) for k, v in headers))]
            )
            res = append_records(self._state, t, p, data)
            if res.error != ErrorCode.NONE:
                raise KafkaApiError(res.error, res.message or "")
            return res.base_offset

        return self._call(do)

    # -- replication verbs ----------------------------------------------------------------------

    def move_leader(self, topic: str, partition: int, *, to: int) -> None:
        """Make broker ``to`` the leader (bumps the leader epoch; clients see it in Metadata)."""
        self._call(lambda: self._state.set_leader(topic, partition, to))

    def shrink_isr(self, topic: str, partition: int, *, to: Sequence[int]) -> None:
        """Set the ISR (the leader moves if it is not in it)."""
        self._call(lambda: self._state.set_isr(topic, partition, list(to)))

    def truncate_log(self, topic: str, partition: int, *, to_offset: int) -> None:
        """Unclean election: drop records at and above ``to_offset`` (whole batches) and
        start a new leader epoch, so KIP-320 clients detect the loss."""
        self._call(lambda: self._state.truncate_log(topic, partition, to_offset))

    def delete_records_before(self, topic: str, partition: int, *, offset: int) -> int:
        """Advance the log start offset (retention); returns the new log start offset."""
        return self._call(lambda: self._state.delete_records_before(topic, partition, offset))

    def cap_api_versions(self, caps: dict[str | int, int]) -> None:
        """Advertise at most these versions, e.g. ``{"Fetch": 11}``, as an older Kafka would.

        Clients see the caps in their next ApiVersions (new connections).
        """
        resolved: dict[int, int] = {}
        for k, v in caps.items():
            try:
                a = lookup_api(k)
            except KeyError:
                from mockkafka.faults.model import check_api_names

                check_api_names(str(k), "caps")  # raises ConfigError listing the names
                raise
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ConfigError(f"caps[{k!r}] must be a version >= 0, got {v!r}")
            resolved[a.key] = v
        self._call(lambda: self._state.cap_api_versions(resolved))

    # -- errors ----------------------------------------------------------------------------------

    @property
    def broker_errors(self) -> list[BaseException]:
        """Exceptions raised inside the broker so far (each also failed its request)."""
        return list(self._server.errors)

    def raise_broker_errors(self) -> None:
        """Raise BrokerError for the first exception raised inside the broker, if any."""
        errors = self._server.errors
        if errors:
            first = errors[0]
            more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
            raise BrokerError(f"error inside the broker{more}: {first!r}") from first


class Cluster(_ClusterBase):
    """A fake Kafka cluster in a background thread; use it as a context manager::

        with mockkafka.Cluster(brokers=3) as cluster:
            cluster.create_topic("orders", partitions=6, replication_factor=3)
            producer = Producer({"bootstrap.servers": cluster.bootstrap_servers})

    Options are those of :class:`~mockkafka.cluster.state.ClusterConfig`
    (``auto_create_topics``, ``group_initial_rebalance_delay_ms``, ``first_node_id``, ...);
    ``config={"num.partitions": 3, ...}`` sets any Kafka broker config by name (an unknown
    name raises ConfigError with a did-you-mean). ``port`` binds the first broker to a fixed
    port (the next broker to port+1, ...); 0 picks free ports. On exit every socket and the
    thread are closed, and an exception raised inside the broker is re-raised as BrokerError.
    """

    def __init__(
        self,
        brokers: int = 1,
        *,
        port: int = 0,
        host: str = "127.0.0.1",
        record_traffic: bool = True,
        **options: Any,
    ) -> None:
        self._state = ClusterState(_make_config(brokers, options))
        ports = _fixed_ports(self._state, port)
        self._server = ClusterServer(
            self._state, host=host, ports=ports, traffic=TrafficLog(enabled=record_traffic)
        )
        self._thread: threading.Thread | None = None
        self._token: trio.lowlevel.TrioToken | None = None
        self._stop: trio.Event | None = None
        self._ready = threading.Event()
        self._startup_error: BaseException | None = None

    def start(self) -> Cluster:
        """Start serving; returns once every broker listens."""
        if self._thread is not None:
            raise RuntimeError("cluster already started")
        self._thread = threading.Thread(target=self._thread_main, name="mockkafka", daemon=True)
        self._thread.start()
        if not self._ready.wait(START_TIMEOUT_S):
            raise RuntimeError("mockkafka cluster did not start within 30 s")
        if self._startup_error is not None:
            raise self._startup_error
        return self

    def _thread_main(self) -> None:
        try:
            trio.run(self._main)
        except BaseException as exc:
            self._startup_error = exc
            self._ready.set()

    async def _main(self) -> None:
        self._token = trio.lowlevel.current_trio_token()
        self._stop = trio.Event()
        async with trio.open_nursery() as nursery:
            await nursery.start(self._server.run)
            self._ready.set()
            await self._stop.wait()
            nursery.cancel_scope.cancel()

    def stop(self) -> None:
        """Close every listener, connection and the thread (idempotent)."""
        if self._thread is None:
            return
        if self._token is not None and self._stop is not None and self._thread.is_alive():
            with suppress(trio.RunFinishedError):
                trio.from_thread.run_sync(self._stop.set, trio_token=self._token)
        self._thread.join(10)
        self._thread = None

    def __enter__(self) -> Cluster:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
        if exc is None:
            self.raise_broker_errors()

    def _call(self, fn: Callable[[], T]) -> T:
        if self._token is None or self._thread is None:
            return fn()  # not running: nothing else touches the state
        if threading.current_thread() is self._thread:
            return fn()
        return trio.from_thread.run_sync(fn, trio_token=self._token)

    def stop_broker(self, node_id: int) -> None:
        """Stop broker ``node_id``: it refuses connections; its partitions move if they can."""
        self._call(lambda: self._server.stop_broker(node_id))

    def start_broker(self, node_id: int) -> None:
        """Start a stopped broker again on its old port."""
        assert self._token is not None
        trio.from_thread.run(self._server.start_broker, node_id, trio_token=self._token)

    def restart_broker(self, node_id: int) -> None:
        """Stop then start broker ``node_id`` (its connections drop; it comes back on its
        old port)."""
        self.stop_broker(node_id)
        self.start_broker(node_id)


class AsyncCluster(_ClusterBase):
    """The trio flavour of :class:`Cluster`; get one from :func:`open_cluster`.

    Verbs are plain (synchronous) methods because they run on the caller's own trio loop;
    only :meth:`start_broker` is async.
    """

    def __init__(self, state: ClusterState, server: ClusterServer) -> None:
        self._state = state
        self._server = server

    def _call(self, fn: Callable[[], T]) -> T:
        return fn()

    def stop_broker(self, node_id: int) -> None:
        self._server.stop_broker(node_id)

    async def start_broker(self, node_id: int) -> None:
        await self._server.start_broker(node_id)

    async def restart_broker(self, node_id: int) -> None:
        self.stop_broker(node_id)
        await self._server.start_broker(node_id)


@asynccontextmanager
async def open_cluster(
    brokers: int = 1,
    *,
    port: int = 0,
    host: str = "127.0.0.1",
    record_traffic: bool = True,
    **options: Any,
) -> AsyncIterator[AsyncCluster]:
    """``async with open_cluster(brokers=3) as cluster:`` -- a cluster on this trio loop."""
    state = ClusterState(_make_config(brokers, options))
    ports = _fixed_ports(state, port)
    server = ClusterServer(
        state, host=host, ports=ports, traffic=TrafficLog(enabled=record_traffic)
    )
    cluster = AsyncCluster(state, server)
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        try:
            yield cluster
        finally:
            nursery.cancel_scope.cancel()
    cluster.raise_broker_errors()

"""The public cluster objects: :class:`Cluster` (sync, background thread) and
:class:`AsyncCluster` (trio, from :func:`open_cluster`).

Both wrap one :class:`~mockkafka.cluster.state.ClusterState` served by a
:class:`~mockkafka.server.runtime.ClusterServer`. Every verb runs on the trio loop that owns
the state: the sync class hops there (:class:`~mockkafka.server.runner.ThreadedRunner`); the
trio class is already there. So a verb applied between two client requests is seen by the
second one, with no locking. After each verb the loop notifies the cluster's
:class:`~mockkafka.server.waits.StateSignal`, which wakes the waits.
"""

from __future__ import annotations

import difflib
import fnmatch
import socket
import threading
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import trio

from mockkafka._api.options import TopicArgs, check_endpoint, make_config, parse_topics
from mockkafka._api.public import (
    AwaitableWaits,
    BlockingWaits,
    PublicObject,
    WithBlock,
    awaitable_form,
)
from mockkafka._api.verbs import ClusterVerbs
from mockkafka.cluster.state import ClusterState
from mockkafka.cluster.violations import Violation, violations
from mockkafka.errors import (
    BrokerError,
    ListenError,
    MockKafkaError,
    leaf_exception,
)
from mockkafka.faults.engine import Faults, Rule, engine_of
from mockkafka.server.runner import ThreadedRunner, call_on_loop
from mockkafka.server.runtime import ClusterServer
from mockkafka.server.traffic import TrafficLog
from mockkafka.server.waits import Waits
from mockkafka.views import BrokerView, broker_view

T = TypeVar("T")


class _ClusterBase(ClusterVerbs, PublicObject):
    """What the sync and trio clusters share. See :class:`Cluster`."""

    _state: ClusterState
    _server: ClusterServer
    _waits: Waits
    _faults: Faults
    strict_faults: bool

    def _setup(self, server: ClusterServer, waits: Waits, strict_faults: bool) -> None:
        self._state = server.state
        self._server = server
        self._waits = waits
        self.strict_faults = strict_faults
        self._faults = Faults(engine_of(self._state), self._call, waits, self._state)
        server.traffic.waits = waits

        def topic_name(tid: uuid.UUID) -> str | None:
            t = server.state.topics_by_id.get(tid)  # a dict read: safe from any thread
            return None if t is None else t.name

        server.traffic.topic_name = topic_name

    def _run(self, fn: Callable[[], T]) -> T:  # pragma: no cover - provided by the flavour
        raise NotImplementedError

    def _call(self, fn: Callable[[], T]) -> T:
        signal = self._server.signal

        def verb() -> T:
            try:
                return fn()
            finally:
                signal.notify()

        return self._run(verb)

    def _read(self, fn: Callable[[], T]) -> T:
        return self._run(fn)

    # -- addresses and state ------------------------------------------------------------------

    @property
    def bootstrap_servers(self) -> str:
        """``host:port,...`` of every broker: give it to any Kafka client."""
        if not self._server.started:
            raise MockKafkaError(
                "the cluster is not started, so it has no ports yet: call start() first "
                "(or use `with mockkafka.Cluster() as cluster:`)"
            )
        return ",".join(f"{b.host}:{b.port}" for b in self._state.brokers.values())

    def client_config(
        self,
        client: str = "confluent",
        *,
        user: str | None = None,
        mechanism: str = "PLAIN",
        with_cert: bool | None = None,
    ) -> dict[str, Any]:
        """Ready settings for ``client`` to reach this cluster: the bootstrap servers and,
        as the cluster's ``security_protocol`` needs, TLS settings (CA file; the client
        certificate when the cluster asks for one, or ``with_cert=True``) and SASL settings
        for ``user`` (default: the first of ``users``) with ``mechanism`` (PLAIN,
        SCRAM-SHA-256, SCRAM-SHA-512, or OAUTHBEARER with an unsecured token whose ``sub``
        is ``user``: any name).

        ``client`` is ``"confluent"`` (``Producer(cluster.client_config())``),
        ``"kafka-python"`` / ``"aiokafka"`` (keyword arguments:
        ``KafkaProducer(**cluster.client_config("kafka-python"))``), ``"java"`` (the Java
        client's property names) or ``"kafkajs"`` (``new Kafka({...})`` options as
        JSON-ready data with the PEM text inline: ``json.dumps`` it for a Node.js test).
        """
        from mockkafka.cluster.security import SASL_MECHANISMS, SASL_PROTOCOLS, choice
        from mockkafka.server.tls import client_settings

        cfg = self._state.config
        sasl = None
        if cfg.security_protocol in SASL_PROTOCOLS:
            users = dict(cfg.users)
            choice(mechanism, SASL_MECHANISMS, "mechanism")
            name = user if user is not None else next(iter(users))
            if mechanism != "OAUTHBEARER":  # unsecured tokens name any principal
                choice(name, tuple(users), "user")
            sasl = (mechanism, name, users.get(name, ""))
        return client_settings(
            client,
            self.bootstrap_servers,
            security_protocol=cfg.security_protocol,
            tls=self._server.tls,
            with_cert=with_cert,
            sasl=sasl,
        )

    @property
    def brokers(self) -> list[BrokerView]:
        """A snapshot of every broker (node id, host, port, rack, running, configs)."""
        return self._read(lambda: [broker_view(b) for b in self._state.brokers.values()])

    @property
    def state(self) -> ClusterState:
        """The raw cluster state (advanced use; touch it only via ``call``)."""
        return self._state

    def call(self, fn: Callable[[ClusterState], T]) -> T:
        """Run ``fn(state)`` on the cluster's loop and return its result (then wake waits)."""
        return self._call(lambda: fn(self._state))

    def __repr__(self) -> str:
        if not self._server.started:
            return f"<{type(self).__name__} brokers={len(self._state.brokers)}, not started>"

        def describe() -> str:
            brokers = ", ".join(
                f"{b.node_id}@{b.host}:{b.port}" + ("" if b.running else " (stopped)")
                for b in self._state.brokers.values()
            )
            topics = {n: len(t.partitions) for n, t in sorted(self._state.topics.items())}
            return f"<{type(self).__name__} brokers [{brokers}] topics {topics}>"

        return self._read(describe)

    # -- faults and traffic (the rest is PublicObject's) ------------------------------------

    def _state_reasons(self, rule: Rule) -> list[str]:
        """On the loop (from :meth:`why_unfired`): a topic the rule names that does not exist
        (``it names topic 'paymnets', which does not exist (did you mean payments?); topics:
        payments``)."""
        topic = rule.match.topic
        if topic is None:
            return []
        names = sorted(self._state.topics)
        if any(fnmatch.fnmatchcase(n, topic) for n in names):
            return []
        close = difflib.get_close_matches(topic, names, n=2)
        hint = f" (did you mean {' or '.join(close)}?)" if close else ""
        shown = ", ".join(n for n in names if not n.startswith("__")) or "none"
        return [f"it names topic {topic!r}, which does not exist{hint}; topics: {shown}"]

    # -- errors inside the broker --------------------------------------------------------------

    @property
    def broker_errors(self) -> list[BaseException]:
        """Exceptions raised inside the broker so far (each also failed its request)."""
        return list(self._server.errors)

    @property
    def protocol_violations(self) -> list[Violation]:
        """Protocol rules the clients broke so far (see ``mockkafka/cluster/violations.py``):
        a version never negotiated, an idempotent sequence gap, a commit from a fenced
        generation or epoch, a Fetch ignoring its session. The pytest plugin reports each as
        a ProtocolViolationWarning of the test (``--kafka-violations=error``: a failure)."""
        return self._call(lambda: list(violations(self._state)))

    def raise_broker_errors(self) -> None:
        """Raise BrokerError for the first exception raised inside the broker, if any."""
        errors = self._server.errors
        if errors:
            first = errors[0]
            more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
            raise BrokerError(f"error inside the broker{more}: {first!r}") from first

    # -- brokers -------------------------------------------------------------------------------

    def stop_broker(self, broker: int) -> None:
        """Stop ``broker``: it refuses connections (open ones drop), leaves the ISRs, and
        its leaderships move where they can (a stopped broker is left alone)."""
        self._call(lambda: self._server.stop_broker(broker))

    # -- reset ---------------------------------------------------------------------------------

    def _reset_state(self) -> list[int]:
        """On the loop: clear topics, groups, transactions, rules and traffic; returns the
        stopped brokers (to start again)."""
        self._faults.engine.reset()
        self._server.traffic.clear()
        self._state.reset()
        self._server.errors.clear()
        return [b.node_id for b in self._state.brokers.values() if not b.running]


class Cluster(_ClusterBase, WithBlock, BlockingWaits):
    """A fake Kafka cluster in a background thread; use it as a context manager::

        with mockkafka.Cluster(brokers=3) as cluster:
            cluster.create_topic("orders", partitions=6, replication_factor=3)
            producer = Producer({"bootstrap.servers": cluster.bootstrap_servers})

    ``topics`` creates topics when the cluster starts, in the forms the pytest markers take:
    ``["orders", "audit"]``, ``{"orders": 6}`` or
    ``{"orders": {"partitions": 6, "replication_factor": 3, "config": {...}}}``.

    Options are :class:`~mockkafka.ClusterConfig` fields (``auto_create_topics``,
    ``group_initial_rebalance_delay_ms``, ``first_node_id``, ``kafka_version``, ...); an
    unknown name or a wrong type raises ConfigError. ``config={"num.partitions": 3, ...}``
    sets any Kafka broker config by name (an unknown name raises ConfigError with a
    did-you-mean). ``port`` binds the first broker to a fixed port (the next to port+1,
    ...); 0 picks free ports. On exit every socket and the thread are closed, an exception raised inside
    the broker is re-raised as BrokerError, and fault rules that never fired are reported
    (UnfiredRuleWarning, or UnfiredRulesError with ``strict_faults=True``).

    Waits block the calling thread; each has an awaitable form ``NAME_async`` for asyncio
    or trio code (``await cluster.wait_for_group_async("g")``).
    """

    def __init__(
        self,
        brokers: int = 1,
        *,
        port: int = 0,
        host: str = "127.0.0.1",
        record_traffic: bool = True,
        strict_faults: bool = False,
        topics: Any = None,
        **options: Any,
    ) -> None:
        config = make_config(brokers, options)
        ports = check_endpoint(config, port, host, record_traffic, strict_faults)
        self._topics = parse_topics(topics) if topics is not None else {}
        server = ClusterServer(
            ClusterState(config),
            host=host,
            ports=ports,
            traffic=TrafficLog(enabled=record_traffic, max_bytes=int(config.traffic_limit)),
        )
        self._runner = ThreadedRunner(server)
        self._setup(
            server,
            Waits(server.signal, self._runner.call, self._runner.on_loop_thread),
            strict_faults,
        )

    def _run(self, fn: Callable[[], T]) -> T:
        return self._runner.call(fn)

    def start(self) -> Cluster:
        """Start serving; returns once every broker listens and the ``topics`` exist.
        A broker that cannot listen (a fixed ``port`` in use) raises
        :class:`~mockkafka.ListenError`, an OSError naming the broker and port."""
        self._runner.start()
        try:
            _create_topics(self, self._topics)
        except BaseException:
            self._runner.stop()
            raise
        return self

    def stop(self) -> None:
        """Close every listener, connection and the thread (idempotent). Never waits
        more than 10 s for the cluster's thread: a loop that does not end by then (a custom
        fault handler that blocks it) raises MockKafkaError naming the requests in flight
        (connection, client id, API, for how long) and where the loop is."""
        self._runner.stop()

    def _after_block(self) -> None:
        self.raise_broker_errors()
        self.check_rules()

    def start_broker(self, broker: int) -> None:
        """Start a stopped broker again on its old port (a running one is left alone)."""
        self._runner.call_async(lambda: self._server.start_broker(broker))

    def restart_broker(self, broker: int) -> None:
        """Stop then start ``broker`` (its connections drop; it comes back on its old port)."""
        self.stop_broker(broker)
        self.start_broker(broker)

    def reset(self) -> None:
        """Clear topics, groups, transactions, ACLs, fault rules and traffic, start stopped
        brokers again, and keep every broker's port: a shared cluster becomes a fresh one for
        the next test (clients of the previous test should be closed by then)."""
        for broker in self._call(self._reset_state):
            self.start_broker(broker)

    # -- waits: BlockingWaits'; each has an awaitable form -------------------------------------

    wait_for_group_async = awaitable_form(AwaitableWaits.wait_for_group)
    wait_for_share_group_async = awaitable_form(AwaitableWaits.wait_for_share_group)
    wait_for_transaction_async = awaitable_form(AwaitableWaits.wait_for_transaction)
    wait_for_records_async = awaitable_form(AwaitableWaits.wait_for_records)
    wait_for_committed_async = awaitable_form(AwaitableWaits.wait_for_committed)
    wait_for_broker_async = awaitable_form(AwaitableWaits.wait_for_broker)


class AsyncCluster(_ClusterBase, AwaitableWaits):
    """The trio flavour of :class:`Cluster`; get one from :func:`open_cluster`.

    Verbs are plain (synchronous) methods because they run on the caller's own trio loop;
    what must wait -- :meth:`start_broker`, :meth:`restart_broker`, :meth:`reset` and every
    ``wait_for_*`` -- is a coroutine: ``await cluster.wait_for_group("g")``. Rules and the
    traffic log wait with ``await rule.wait_fired_async()`` and
    ``await cluster.traffic.wait_for_async(...)``.
    """

    def __init__(self, server: ClusterServer, *, strict_faults: bool = False) -> None:
        token = trio.lowlevel.current_trio_token()
        loop_thread = threading.current_thread()

        def run_on_loop(fn: Callable[[], object]) -> object:
            if threading.current_thread() is loop_thread:
                return fn()
            return call_on_loop(token, fn)

        self._token = token
        self._loop_thread = loop_thread
        self._setup(
            server,
            Waits(server.signal, run_on_loop, lambda: threading.current_thread() is loop_thread),
            strict_faults,
        )

    def _run(self, fn: Callable[[], T]) -> T:
        if threading.current_thread() is self._loop_thread:
            return fn()
        return call_on_loop(self._token, fn)

    async def start_broker(self, broker: int) -> None:
        """Start a stopped broker again on its old port (a running one is left alone)."""
        await self._server.start_broker(broker)

    async def restart_broker(self, broker: int) -> None:
        """Stop then start ``broker`` (its connections drop; it comes back on its old port)."""
        self.stop_broker(broker)
        await self._server.start_broker(broker)

    async def reset(self) -> None:
        """Clear topics, groups, transactions, ACLs, fault rules and traffic, start stopped
        brokers again, and keep every broker's port (see :meth:`Cluster.reset`)."""
        for broker in self._call(self._reset_state):
            await self._server.start_broker(broker)


@asynccontextmanager
async def open_cluster(
    brokers: int = 1,
    *,
    port: int = 0,
    host: str = "127.0.0.1",
    record_traffic: bool = True,
    strict_faults: bool = False,
    sockets: dict[int, socket.socket] | None = None,
    before_serving: Callable[[AsyncCluster], object] | None = None,
    topics: Any = None,
    **options: Any,
) -> AsyncIterator[AsyncCluster]:
    """``async with open_cluster(brokers=3) as cluster:`` -- a cluster on this trio loop.

    Takes the arguments of :class:`Cluster`. On exit broker errors are re-raised and fault
    rules that never fired reported, as for ``Cluster``. ``sockets`` (node id -> a socket
    already listening on ``host``, as ``mockkafka serve`` binds them before it imports the
    broker; see ``server/prebind.py``) are served instead of binding ``port``; the cluster
    owns and closes them. A client may have connected to such a socket already, so
    ``before_serving(cluster)`` runs before any broker reads a request: create the topics
    and hook the traffic log there.
    """
    try:
        config = make_config(brokers, options)
        ports = check_endpoint(config, port, host, record_traffic, strict_faults)
        wanted = parse_topics(topics) if topics is not None else {}
        server = ClusterServer(
            ClusterState(config),
            host=host,
            ports=ports,
            traffic=TrafficLog(enabled=record_traffic, max_bytes=int(config.traffic_limit)),
            sockets=sockets,
        )
    except BaseException:
        for sock in (sockets or {}).values():
            sock.close()
        raise
    cluster = AsyncCluster(server, strict_faults=strict_faults)
    if before_serving is not None:
        try:
            before_serving(cluster)
        except BaseException:
            for sock in (sockets or {}).values():
                sock.close()
            raise
    listening = False
    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(server.run)
            listening = True
            try:
                _create_topics(cluster, wanted)
                yield cluster
            finally:
                nursery.cancel_scope.cancel()
    except BaseException as exc:
        leaf = leaf_exception(exc)
        if listening or not isinstance(leaf, ListenError) or leaf is exc:
            raise
        # a broker could not listen: one line, as Cluster.start() says it
        raise ListenError(leaf.errno, leaf.strerror) from None
    cluster.raise_broker_errors()
    cluster.check_rules()


def _create_topics(cluster: Any, topics: dict[str, TopicArgs]) -> None:
    """The ``topics=`` of a cluster, created as the pytest fixtures create theirs."""
    for name, (partitions, replication_factor, config) in topics.items():
        cluster.create_topic(
            name,
            partitions=partitions,
            replication_factor=replication_factor,
            config=config or None,
        )

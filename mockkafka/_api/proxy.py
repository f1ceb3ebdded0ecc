"""``mockkafka.Proxy``: fault rules and the traffic log in front of a real Kafka cluster.

::

    with mockkafka.Proxy(upstream="kafka-1:9092") as proxy:
        producer = Producer({"bootstrap.servers": proxy.bootstrap_servers})
        proxy.faults.on("Produce", topic="orders").times(2).error("NOT_LEADER_OR_FOLLOWER")
        ...
        assert proxy.traffic.requests("Produce", with_error="NOT_LEADER_OR_FOLLOWER")

The proxy opens one listener per upstream broker and rewrites every broker address Kafka
hands out to the proxy's own, so the client never talks to Kafka directly (see
``server/proxy.py``). ``faults`` and ``traffic`` are the same objects as a ``Cluster``'s.
Cluster verbs keep ``Cluster``'s names: those Kafka's Admin API can do are done upstream,
connection-level ones are emulated here, the rest raise NotOnProxy (see
``_api/proxy_verbs.py``, whose table also tells which scenario steps a proxy can run).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Any, TypeVar, cast

from mockkafka._api.proxy_verbs import ProxyVerbs
from mockkafka.errors import ConfigError
from mockkafka.faults.engine import Faults, Rule
from mockkafka.protocol import records as rec
from mockkafka.server.proxy import ProxyServer
from mockkafka.server.runner import ThreadedRunner
from mockkafka.server.traffic import TrafficLog
from mockkafka.server.upstream import UpstreamClient
from mockkafka.server.waits import Waits, _timeout, check_timeout
from mockkafka.views import GroupView, TransactionView

T = TypeVar("T")


def parse_upstream(upstream: str | Sequence[str]) -> list[tuple[str, int]]:
    """``"h1:9092,h2:9092"`` or ``["h1:9092", ...]`` -> [(host, port), ...] (ConfigError if bad)."""
    items = upstream.split(",") if isinstance(upstream, str) else list(upstream)
    out: list[tuple[str, int]] = []
    for item in items:
        host, _, port = item.strip().rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ConfigError(f"upstream: {item!r} is not HOST:PORT (e.g. localhost:9092)")
        out.append((host.strip("[]"), int(port)))
    if not out:
        raise ConfigError("upstream: give at least one HOST:PORT of the Kafka cluster")
    return out


class _ProxyBase(ProxyVerbs):
    """What the sync and the trio proxy share: listeners, faults, traffic, rule checks,
    the cluster verbs (``ProxyVerbs``)."""

    _server: ProxyServer
    _faults: Faults
    _admin: UpstreamClient
    upstream: list[tuple[str, int]]
    strict_faults: bool

    @property
    def _proxy_server(self) -> ProxyServer:
        return self._server

    @property
    def _rules(self) -> Faults:
        return self._faults

    def call(self, fn: Callable[[Any], T]) -> T:
        """``fn(state)`` in the calling thread, with ``state`` a live read-only view of the
        upstream cluster (what a scenario's conditions and expectations read; see
        ``_api/proxy_state.py``)."""
        from mockkafka._api.proxy_state import UpstreamState

        return fn(UpstreamState(self))

    def _broker_probe(self, broker: int, up: bool) -> tuple[Callable[[], tuple[bool, Any]], str]:
        n = self._broker_id(broker)
        server = self._server

        def probe() -> tuple[bool, Any]:
            running = n not in server.stopped
            return running == up, f"broker {n} {'up' if running else 'down'} at the proxy"

        return probe, f"wait_for_broker({broker}, up={up})"

    async def _poll_async(
        self, probe: Callable[[], tuple[bool, T]], timeout: float, what: str
    ) -> T:
        """The awaitable form of ``_poll``: the probe runs in a worker thread."""
        import time

        import trio

        check_timeout(timeout)
        deadline = time.monotonic() + timeout
        while True:
            ok, value = await trio.to_thread.run_sync(probe)
            if ok:
                return value
            if time.monotonic() >= deadline:
                raise _timeout(what, timeout, repr(value))
            await trio.sleep(0.05)

    @property
    def bootstrap_servers(self) -> str:
        """``127.0.0.1:PORT,...``: one listener per upstream broker."""
        return self._server.bootstrap_servers

    @property
    def brokers(self) -> dict[int, tuple[str, int]]:
        """Upstream node id -> (its upstream host, port) as the proxy learned them."""
        return dict(self._server.brokers)

    @property
    def faults(self) -> Faults:
        """Fault rules, as on a Cluster: ``proxy.faults.on("Fetch").once().error(...)``."""
        return self._faults

    @property
    def traffic(self) -> TrafficLog:
        """Every exchange relayed, decoded (``proxy.traffic.requests("Produce")``)."""
        return self._server.traffic

    def unfired_rules(self) -> list[Rule]:
        """Rules added and never fired (reported when the ``with`` block ends)."""
        return [r for r in self._faults.rules() if r.fired == 0]

    def check_rules(self) -> None:
        """Report rules that never fired: UnfiredRulesError with ``strict_faults``, an
        UnfiredRuleWarning otherwise, as a Cluster does."""
        from mockkafka._api.cluster import report_unfired

        report_unfired(self.unfired_rules(), strict=self.strict_faults)


class Proxy(_ProxyBase):
    """A proxy in front of ``upstream`` (``start()`` or ``with``); see the module doc."""

    def __init__(
        self,
        upstream: str | Sequence[str],
        *,
        host: str = "127.0.0.1",
        record_traffic: bool = True,
        strict_faults: bool = False,
    ) -> None:
        self.upstream = parse_upstream(upstream)
        self._server = ProxyServer(
            self.upstream, host=host, traffic=TrafficLog(enabled=record_traffic)
        )
        self._admin = UpstreamClient(self.upstream)
        self._runner = ThreadedRunner(cast(Any, self._server))
        waits = Waits(self._server.signal, self._runner.call, self._runner.on_loop_thread)
        self._server.traffic.waits = waits
        self._faults = Faults(self._server.faults, self._runner.call, waits)
        self.strict_faults = strict_faults

    def start(self) -> Proxy:
        """Connect to the upstream cluster and listen; returns once every listener is up
        (raises UpstreamUnavailable when no upstream address answers)."""
        from mockkafka.errors import MockKafkaError, leaf_exception

        try:
            self._runner.start()
        except BaseException as group:
            leaf = leaf_exception(group)
            if isinstance(leaf, MockKafkaError):
                raise leaf from None
            raise
        return self

    def stop(self) -> None:
        """Close every listener and connection (idempotent)."""
        self._runner.stop()
        self._admin.close()

    def __enter__(self) -> Proxy:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
        if exc is None:
            self.check_rules()

    def __repr__(self) -> str:
        up = ",".join(f"{h}:{p}" for h, p in self.upstream)
        state = f"at {self.bootstrap_servers}" if self._runner.running else "not started"
        return f"<Proxy upstream {up} {state}>"

    def _on_loop(self, fn: Callable[[], T]) -> T:
        return self._runner.call(fn)

    # -- waits: poll the upstream every 50 ms --------------------------------------------------

    def wait_for_group(
        self,
        group: str,
        *,
        state: str | None = "Stable",
        members: int | None = None,
        where: Callable[[GroupView], bool] | None = None,
        timeout: float = 10.0,
    ) -> GroupView:
        """Block until classic group ``group`` is in ``state`` upstream (DescribeGroups) with
        ``members`` members and ``where(view)`` holds; returns the view."""
        probe, what = self._group_probe(group, state, members, where)
        return cast(GroupView, self._poll(probe, timeout, what))

    def wait_for_records(
        self, topic: str, *, partition: int | None = None, count: int, timeout: float = 10.0
    ) -> list[rec.Record]:
        """Block until ``topic`` (or one ``partition``) holds ``count`` records upstream."""
        probe, what = self._records_probe(topic, partition, count)
        return cast("list[rec.Record]", self._poll(probe, timeout, what))

    def wait_for_committed(
        self, group: str, topic: str, partition: int, *, offset: int, timeout: float = 10.0
    ) -> int:
        """Block until ``group`` committed at least ``offset`` on ``topic``-``partition``."""
        probe, what = self._committed_probe(group, topic, partition, offset)
        return int(self._poll(probe, timeout, what))

    def wait_for_transaction(
        self,
        transactional_id: str,
        *,
        state: str | None = None,
        where: Callable[[TransactionView], bool] | None = None,
        timeout: float = 10.0,
    ) -> TransactionView:
        """Block until ``transactional_id`` is in ``state`` upstream (DescribeTransactions)
        and ``where(view)`` holds; returns the view."""
        probe, what = self._transaction_probe(transactional_id, state, where)
        return cast(TransactionView, self._poll(probe, timeout, what))

    def wait_for_broker(self, broker: int, *, up: bool = True, timeout: float = 10.0) -> None:
        """Block until clients can reach ``broker`` through the proxy (``up=False``: not)."""
        probe, what = self._broker_probe(broker, up)
        self._poll(probe, timeout, what)


class AsyncProxy(_ProxyBase):
    """The proxy on the caller's own trio loop (no thread): see :func:`open_proxy`.

    The waits are awaitable; the other verbs are plain calls as on an AsyncCluster. Those
    that make requests to the upstream (``create_topic``, ``topic``, ...) block the loop,
    and with it the relaying, until Kafka answers: from a task that should not stall the
    clients, call them with ``await trio.to_thread.run_sync(lambda: proxy.create_topic(...))``.
    """

    def __init__(self, server: ProxyServer, upstream: list[tuple[str, int]], strict: bool) -> None:
        import threading

        import trio

        from mockkafka.server.runner import call_on_loop

        token = trio.lowlevel.current_trio_token()
        loop_thread = threading.current_thread()

        def run_on_loop(fn: Callable[[], Any]) -> Any:
            if threading.current_thread() is loop_thread:
                return fn()
            return call_on_loop(token, fn)

        self._server = server
        self._admin = UpstreamClient(upstream)
        self._run_on_loop = run_on_loop
        self.upstream = upstream
        self.strict_faults = strict
        waits = Waits(server.signal, run_on_loop, lambda: threading.current_thread() is loop_thread)
        server.traffic.waits = waits
        self._faults = Faults(server.faults, run_on_loop, waits)

    def __repr__(self) -> str:
        up = ",".join(f"{h}:{p}" for h, p in self.upstream)
        return f"<AsyncProxy upstream {up} at {self.bootstrap_servers}>"

    def _on_loop(self, fn: Callable[[], T]) -> T:
        return cast(T, self._run_on_loop(fn))

    # -- waits: awaitable, polling the upstream every 50 ms from a worker thread ---------------

    async def wait_for_group(
        self,
        group: str,
        *,
        state: str | None = "Stable",
        members: int | None = None,
        where: Callable[[GroupView], bool] | None = None,
        timeout: float = 10.0,
    ) -> GroupView:
        """The trio form of :meth:`Proxy.wait_for_group`."""
        probe, what = self._group_probe(group, state, members, where)
        return cast(GroupView, await self._poll_async(probe, timeout, what))

    async def wait_for_records(
        self, topic: str, *, partition: int | None = None, count: int, timeout: float = 10.0
    ) -> list[rec.Record]:
        """The trio form of :meth:`Proxy.wait_for_records`."""
        probe, what = self._records_probe(topic, partition, count)
        return cast("list[rec.Record]", await self._poll_async(probe, timeout, what))

    async def wait_for_committed(
        self, group: str, topic: str, partition: int, *, offset: int, timeout: float = 10.0
    ) -> int:
        """The trio form of :meth:`Proxy.wait_for_committed`."""
        probe, what = self._committed_probe(group, topic, partition, offset)
        return int(await self._poll_async(probe, timeout, what))

    async def wait_for_broker(self, broker: int, *, up: bool = True, timeout: float = 10.0) -> None:
        """The trio form of :meth:`Proxy.wait_for_broker`."""
        probe, what = self._broker_probe(broker, up)
        await self._poll_async(probe, timeout, what)


@asynccontextmanager
async def open_proxy(
    upstream: str | Sequence[str],
    *,
    host: str = "127.0.0.1",
    record_traffic: bool = True,
    strict_faults: bool = False,
) -> AsyncIterator[AsyncProxy]:
    """``async with open_proxy("kafka:9092") as proxy:`` -- the proxy on this trio loop.

    Takes the arguments of :class:`Proxy`; on exit rules that never fired are reported."""
    import trio

    hosts = parse_upstream(upstream)
    server = ProxyServer(hosts, host=host, traffic=TrafficLog(enabled=record_traffic))
    proxy = AsyncProxy(server, hosts, strict_faults)
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        try:
            yield proxy
        finally:
            nursery.cancel_scope.cancel()
            proxy._admin.close()
    proxy.check_rules()


async def serve_proxy(
    upstream: str,
    host: str = "127.0.0.1",
    *,
    control_host: str = "127.0.0.1",
    control_port: int = 0,
    control_token: str | None = None,
    scenario: Any = None,
    out: Any = None,
) -> int:
    """``mockkafka proxy``: relay until SIGINT/SIGTERM or ``POST /stop``, printing
    ``bootstrap.servers=`` and ``control=`` as ``mockkafka serve`` does; the control
    endpoint (``server/control.py``) drives the proxy's faults, steps, waits and scenarios.
    ``scenario`` (a :class:`~mockkafka.Scenario`) is started first; how it ended goes to
    stderr on exit."""
    import signal
    import sys

    import trio

    from mockkafka.cli import _print_ready
    from mockkafka.server.control import ControlServer

    stream = out if out is not None else sys.stdout
    async with open_proxy(upstream, host=host) as proxy, trio.open_nursery() as nursery:
        control = ControlServer(proxy, nursery, host=control_host, token=control_token)
        port = await nursery.start(control.serve, control_port)
        if scenario is not None:
            await control.start_scenario(scenario)
        _print_ready(
            proxy.bootstrap_servers,
            port,
            stream,
            host=control_host,
            token=control.token if control.generated_token else None,
        )
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:

            async def on_signal() -> None:
                async for _sig in signals:
                    control.stopped.set()
                    return

            nursery.start_soon(on_signal)
            await control.stopped.wait()
        nursery.cancel_scope.cancel()
    run = control.scenario_run
    if run is not None:
        failures = await trio.to_thread.run_sync(run.failures)
        print(
            run.report(failures) if failures else f"scenario {run.scenario.name!r}: ok",
            file=sys.stderr,
            flush=True,
        )
    print("mockkafka proxy: stopped", file=sys.stderr)
    return 0

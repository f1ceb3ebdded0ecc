"""``mockkafka.Proxy``: fault rules and the traffic log in front of a real Kafka cluster.

::

    with mockkafka.Proxy(upstream="kafka-1:9092") as proxy:
        producer = Producer({"bootstrap.servers": proxy.bootstrap_servers})
        proxy.faults.on("Produce", topic="orders").times(2).error("NOT_LEADER_OR_FOLLOWER")
        ...
        assert proxy.traffic.requests("Produce", with_error="NOT_LEADER_OR_FOLLOWER")

The proxy opens one listener per upstream broker and rewrites every broker address Kafka
hands out to the proxy's own, so the client never talks to Kafka directly (see
``server/proxy.py``). ``faults`` and ``traffic`` are the same objects as a ``Cluster``'s; what
needs the fake's own state (cluster verbs, scenarios) is not
available here.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Any, cast

from mockkafka.errors import ConfigError
from mockkafka.faults.engine import Faults, Rule
from mockkafka.server.proxy import ProxyServer
from mockkafka.server.runner import ThreadedRunner
from mockkafka.server.traffic import TrafficLog
from mockkafka.server.waits import Waits


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


class _ProxyBase:
    """What the sync and the trio proxy share: listeners, faults, traffic, rule checks."""

    _server: ProxyServer
    _faults: Faults
    upstream: list[tuple[str, int]]
    strict_faults: bool

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


class AsyncProxy(_ProxyBase):
    """The proxy on the caller's own trio loop (no thread): see :func:`open_proxy`."""

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
        self.upstream = upstream
        self.strict_faults = strict
        waits = Waits(server.signal, run_on_loop, lambda: threading.current_thread() is loop_thread)
        server.traffic.waits = waits
        self._faults = Faults(server.faults, run_on_loop, waits)

    def __repr__(self) -> str:
        up = ",".join(f"{h}:{p}" for h, p in self.upstream)
        return f"<AsyncProxy upstream {up} at {self.bootstrap_servers}>"


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
    proxy.check_rules()


async def serve_proxy(upstream: str, host: str = "127.0.0.1") -> int:
    """``mockkafka proxy``: relay until cancelled (SIGINT), printing ``bootstrap.servers=``."""
    import signal
    import sys

    import trio

    server = ProxyServer(parse_upstream(upstream), host=host)
    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        print(f"bootstrap.servers={server.bootstrap_servers}", flush=True)
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for _ in signals:
                break
        nursery.cancel_scope.cancel()
    print("mockkafka proxy: stopped", file=sys.stderr)
    return 0

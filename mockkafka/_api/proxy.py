"""``mockkafka.Proxy``: fault rules and the traffic log in front of a real Kafka cluster.

::

    with mockkafka.Proxy(upstream="kafka-1:9092") as proxy:
        producer = Producer({"bootstrap.servers": proxy.bootstrap_servers})
        proxy.faults.on("Produce", topic="orders").times(2).error("NOT_LEADER_OR_FOLLOWER")
        ...
        assert proxy.traffic.requests("Produce", with_error="NOT_LEADER_OR_FOLLOWER")

The proxy opens one listener per upstream broker and rewrites every broker address Kafka
hands out to the proxy's own, so the client never talks to Kafka directly (see
``server/proxy.py``). ``faults`` and ``traffic`` are the same objects as a ``Cluster``'s;
``stop_broker``/``start_broker`` are emulated at the proxy. What needs the fake's own state
(other cluster verbs, scenarios, record-editing faults) is not available here.

TLS and SASL (docs/proxy.md): ``upstream_security_protocol`` and ``upstream_ssl_cafile`` say
how the proxy reaches Kafka; ``security_protocol`` what clients use towards the proxy (SSL
and SASL_SSL give its listeners a throwaway CA; :meth:`client_config` hands out the client
settings). SASL is relayed to Kafka; ``upstream_sasl_*`` is the proxy's own login for its
Metadata discovery.
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
from mockkafka.server.tls import TlsMaterial
from mockkafka.server.traffic import TrafficLog
from mockkafka.server.upstream import UpstreamSecurity
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


def proxy_security(
    security_protocol: str | None,
    upstream_security_protocol: str,
    upstream_ssl_cafile: str | None,
    upstream_ssl_check_hostname: bool,
    upstream_sasl_mechanism: str | None,
    upstream_sasl_username: str | None,
    upstream_sasl_password: str | None,
    host: str,
) -> tuple[str, UpstreamSecurity, TlsMaterial | None]:
    """Check the security options of a proxy (ConfigError naming the wrong one) and build
    them: the protocol clients use towards the proxy, how the proxy reaches the upstream,
    and the proxy's own TLS material (``security_protocol`` SSL or SASL_SSL)."""
    security = UpstreamSecurity.build(
        upstream_security_protocol,
        ssl_cafile=upstream_ssl_cafile,
        ssl_check_hostname=upstream_ssl_check_hostname,
        sasl_mechanism=upstream_sasl_mechanism,
        sasl_username=upstream_sasl_username,
        sasl_password=upstream_sasl_password,
    )
    sasl = "SASL_" if security.client_sasl else ""
    choices = (f"{sasl}PLAINTEXT", f"{sasl}SSL")
    protocol = security_protocol or choices[0]
    if protocol not in choices:
        raise ConfigError(
            f"security_protocol: {protocol!r} cannot front a {upstream_security_protocol} "
            f"upstream; use {choices[0]} or {choices[1]} (the proxy relays SASL, so clients "
            "log in exactly when the upstream asks them to; TLS towards clients is the "
            "proxy's own choice)"
        )
    tls = TlsMaterial(host) if protocol.endswith("SSL") else None
    return protocol, security, tls


class _ProxyBase:
    """What the sync and the trio proxy share: listeners, faults, traffic, rule checks."""

    _server: ProxyServer
    _faults: Faults
    _on_loop: Callable[[Callable[[], Any]], Any]
    upstream: list[tuple[str, int]]
    strict_faults: bool
    #: what clients use towards the proxy: PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL
    security_protocol: str

    def client_config(
        self,
        client: str = "confluent",
        *,
        user: str | None = None,
        password: str | None = None,
        mechanism: str = "PLAIN",
    ) -> dict[str, Any]:
        """Settings for ``client`` (confluent, kafka-python, aiokafka, java, kafkajs) to
        reach the proxy: ``bootstrap.servers``, the proxy CA of an SSL listener, and for a
        SASL upstream the login (``user``, ``password``, ``mechanism``) the client sends
        through the proxy to Kafka."""
        from mockkafka.server.tls import client_settings

        sasl = None
        if self.security_protocol.startswith("SASL_"):
            if user is None or password is None:
                raise ConfigError(
                    f"client_config: the upstream wants SASL ({self.security_protocol}); "
                    "pass user= and password= of a user Kafka knows"
                )
            sasl = (mechanism, user, password)
        return client_settings(
            client,
            self.bootstrap_servers,
            security_protocol=self.security_protocol,
            tls=self._server.tls,
            sasl=sasl,
        )

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

    def stop_broker(self, broker: int) -> None:
        """Emulate stopping upstream ``broker`` at the proxy (Kafka's broker keeps running):
        its listener drops every open client connection and closes new ones at once, so
        clients see the broker gone and turn to the others. :meth:`start_broker` undoes it.
        ConfigError names the known node ids when ``broker`` is not one."""
        self._on_loop(lambda: self._server.stop_broker(broker))

    def start_broker(self, broker: int) -> None:
        """Relay to ``broker`` again after :meth:`stop_broker`."""
        self._on_loop(lambda: self._server.start_broker(broker))

    def unfired_rules(self) -> list[Rule]:
        """Rules added and never fired (reported when the ``with`` block ends)."""
        return [r for r in self._faults.rules() if r.fired == 0]

    def check_rules(self) -> None:
        """Report rules that never fired: UnfiredRulesError with ``strict_faults``, an
        UnfiredRuleWarning otherwise, as a Cluster does."""
        from mockkafka._api.cluster import report_unfired

        report_unfired(self.unfired_rules(), strict=self.strict_faults)


class Proxy(_ProxyBase):
    """A proxy in front of ``upstream`` (``start()`` or ``with``); see the module doc.

    ``upstream``: ``"HOST:PORT,..."`` of the Kafka cluster (any reachable one is enough: the
    others are learned from Metadata). ``upstream_security_protocol``: PLAINTEXT, SSL,
    SASL_PLAINTEXT or SASL_SSL, as the upstream listener wants; ``upstream_ssl_cafile``: the
    CA to check Kafka's certificate with (default: the system's roots);
    ``upstream_sasl_mechanism`` (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512),
    ``upstream_sasl_username``, ``upstream_sasl_password``: the proxy's own login, needed with
    a SASL upstream. ``security_protocol``: what clients use (default PLAINTEXT, or
    SASL_PLAINTEXT in front of SASL). A combination that cannot work raises ConfigError
    naming the option.
    """

    def __init__(
        self,
        upstream: str | Sequence[str],
        *,
        host: str = "127.0.0.1",
        record_traffic: bool = True,
        strict_faults: bool = False,
        upstream_security_protocol: str = "PLAINTEXT",
        upstream_ssl_cafile: str | None = None,
        upstream_ssl_check_hostname: bool = True,
        upstream_sasl_mechanism: str | None = None,
        upstream_sasl_username: str | None = None,
        upstream_sasl_password: str | None = None,
        security_protocol: str | None = None,
    ) -> None:
        self.upstream = parse_upstream(upstream)
        self.security_protocol, security, tls = proxy_security(
            security_protocol,
            upstream_security_protocol,
            upstream_ssl_cafile,
            upstream_ssl_check_hostname,
            upstream_sasl_mechanism,
            upstream_sasl_username,
            upstream_sasl_password,
            host,
        )
        self._server = ProxyServer(
            self.upstream,
            host=host,
            traffic=TrafficLog(enabled=record_traffic),
            security=security,
            tls=tls,
        )
        self._runner = ThreadedRunner(cast(Any, self._server))
        waits = Waits(self._server.signal, self._runner.call, self._runner.on_loop_thread)
        self._server.traffic.waits = waits
        self._faults = Faults(self._server.faults, self._runner.call, waits)
        self._on_loop = self._runner.call
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
        if self._server.tls is not None:
            self._server.tls.close()

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

    def __init__(
        self,
        server: ProxyServer,
        upstream: list[tuple[str, int]],
        strict: bool,
        security_protocol: str = "PLAINTEXT",
    ) -> None:
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
        self.security_protocol = security_protocol
        waits = Waits(server.signal, run_on_loop, lambda: threading.current_thread() is loop_thread)
        server.traffic.waits = waits
        self._faults = Faults(server.faults, run_on_loop, waits)
        self._on_loop = run_on_loop

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
    upstream_security_protocol: str = "PLAINTEXT",
    upstream_ssl_cafile: str | None = None,
    upstream_ssl_check_hostname: bool = True,
    upstream_sasl_mechanism: str | None = None,
    upstream_sasl_username: str | None = None,
    upstream_sasl_password: str | None = None,
    security_protocol: str | None = None,
) -> AsyncIterator[AsyncProxy]:
    """``async with open_proxy("kafka:9092") as proxy:`` -- the proxy on this trio loop.

    Takes the arguments of :class:`Proxy`; on exit rules that never fired are reported."""
    import trio

    hosts = parse_upstream(upstream)
    protocol, security, tls = proxy_security(
        security_protocol,
        upstream_security_protocol,
        upstream_ssl_cafile,
        upstream_ssl_check_hostname,
        upstream_sasl_mechanism,
        upstream_sasl_username,
        upstream_sasl_password,
        host,
    )
    server = ProxyServer(
        hosts,
        host=host,
        traffic=TrafficLog(enabled=record_traffic),
        security=security,
        tls=tls,
    )
    proxy = AsyncProxy(server, hosts, strict_faults, protocol)
    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(server.run)
            try:
                yield proxy
            finally:
                nursery.cancel_scope.cancel()
    finally:
        if tls is not None:
            tls.close()
    proxy.check_rules()


async def serve_proxy(upstream: str, host: str = "127.0.0.1", **security: Any) -> int:
    """``mockkafka proxy``: relay until cancelled (SIGINT), printing ``bootstrap.servers=``.

    ``security``: the ``security_protocol`` and ``upstream_*`` options of :class:`Proxy`;
    with a TLS listener the proxy's CA file is printed as ``ssl.ca.location=``."""

    options = {
        "security_protocol": None,
        "upstream_security_protocol": "PLAINTEXT",
        "upstream_ssl_cafile": None,
        "upstream_ssl_check_hostname": True,
        "upstream_sasl_mechanism": None,
        "upstream_sasl_username": None,
        "upstream_sasl_password": None,
        **security,
    }
    _protocol, upstream_security, tls = proxy_security(
        options["security_protocol"],
        options["upstream_security_protocol"],
        options["upstream_ssl_cafile"],
        options["upstream_ssl_check_hostname"],
        options["upstream_sasl_mechanism"],
        options["upstream_sasl_username"],
        options["upstream_sasl_password"],
        host,
    )
    try:
        return await _serve(
            ProxyServer(parse_upstream(upstream), host=host, security=upstream_security, tls=tls)
        )
    finally:
        if tls is not None:
            tls.close()


async def _serve(server: ProxyServer) -> int:
    import signal
    import sys

    import trio

    async with trio.open_nursery() as nursery:
        await nursery.start(server.run)
        print(f"bootstrap.servers={server.bootstrap_servers}", flush=True)
        if server.tls is not None:
            print(f"ssl.ca.location={server.tls.ca_file}", flush=True)
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for _ in signals:
                break
        nursery.cancel_scope.cancel()
    print("mockkafka proxy: stopped", file=sys.stderr)
    return 0

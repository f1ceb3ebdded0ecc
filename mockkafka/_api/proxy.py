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
connection-level ones (``stop_broker``, ``isolate_client``) are emulated here, the rest raise
NotOnProxy (see ``_api/proxy_verbs.py``, whose table also tells which scenario steps a proxy
can run).

TLS and SASL (docs/proxy.md): ``upstream_security_protocol`` and ``upstream_ssl_cafile`` say
how the proxy reaches Kafka; ``security_protocol`` what clients use towards the proxy (SSL
and SASL_SSL give its listeners a throwaway CA; :meth:`client_config` hands out the client
settings). SASL is relayed to Kafka; ``upstream_sasl_*`` is the proxy's own login for its
Metadata discovery and its cluster verbs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any, TypeVar, cast

from mockkafka._api.proxy_verbs import POLL_S, ProxyVerbs
from mockkafka._api.public import AwaitableWaits, BlockingWaits, PublicObject, WithBlock
from mockkafka._api.verb_args import broker_probe
from mockkafka.errors import ConfigError
from mockkafka.faults.engine import Faults
from mockkafka.server.proxy import ProxyServer
from mockkafka.server.runner import ThreadedRunner
from mockkafka.server.tls import TlsMaterial
from mockkafka.server.traffic import TrafficLog
from mockkafka.server.upstream import UpstreamSecurity
from mockkafka.server.upstream_admin import UpstreamClient
from mockkafka.server.waits import Seen, Waits

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


def proxy_server(
    upstream: str | Sequence[str],
    *,
    host: str,
    record_traffic: bool,
    security_protocol: str | None,
    upstream_security_protocol: str,
    upstream_ssl_cafile: str | None,
    upstream_ssl_check_hostname: bool,
    upstream_sasl_mechanism: str | None,
    upstream_sasl_username: str | None,
    upstream_sasl_password: str | None,
) -> tuple[list[tuple[str, int]], str, ProxyServer]:
    """The arguments of :class:`Proxy` / :func:`open_proxy` checked (ConfigError naming the
    wrong one) and made into a server: (upstream addresses, what clients use, the server)."""
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
    return hosts, protocol, server


class _ProxyBase(ProxyVerbs, PublicObject):
    """What the sync and the trio proxy share: listeners, faults, traffic, rule checks
    (``PublicObject``), the cluster verbs (``ProxyVerbs``) and their waits, which poll the
    upstream every 50 ms."""

    _server: ProxyServer
    _faults: Faults
    _admin: UpstreamClient
    _waits: Waits
    upstream: list[tuple[str, int]]
    strict_faults: bool
    #: what clients use towards the proxy: PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL
    security_protocol: str

    def _setup(
        self,
        server: ProxyServer,
        upstream: list[tuple[str, int]],
        strict_faults: bool,
        security_protocol: str,
        run_on_loop: Callable[[Callable[[], Any]], Any],
        on_loop_thread: Callable[[], bool],
    ) -> None:
        self._server = server
        self.upstream = upstream
        self.strict_faults = strict_faults
        self.security_protocol = security_protocol
        self._admin = UpstreamClient(upstream, security=server.security)
        self._run_on_loop = run_on_loop
        signalled = Waits(server.signal, run_on_loop, on_loop_thread)
        server.traffic.waits = signalled
        self._faults = Faults(server.faults, run_on_loop, signalled)
        self._waits = Waits.polling(POLL_S)

    def _on_loop(self, fn: Callable[[], T]) -> T:
        return cast(T, self._run_on_loop(fn))

    def _serving(self) -> bool:
        return True

    def __repr__(self) -> str:
        up = ",".join(f"{h}:{p}" for h, p in self.upstream)
        state = f"at {self.bootstrap_servers}" if self._serving() else "not started"
        return f"<{type(self).__name__} upstream {up} {state}>"

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

    def _broker_probe(self, broker: int, up: bool) -> tuple[Callable[[], Seen[None]], str]:
        n = self._broker_id(broker)
        server = self._server
        return broker_probe(lambda: n not in server.stopped, n, up, " at the proxy")

    @property
    def bootstrap_servers(self) -> str:
        """``127.0.0.1:PORT,...``: one listener per upstream broker."""
        return self._server.bootstrap_servers

    @property
    def brokers(self) -> dict[int, tuple[str, int]]:
        """Upstream node id -> (its upstream host, port) as the proxy learned them."""
        return dict(self._server.brokers)


class Proxy(_ProxyBase, WithBlock, BlockingWaits):
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
        hosts, protocol, server = proxy_server(
            upstream,
            host=host,
            record_traffic=record_traffic,
            security_protocol=security_protocol,
            upstream_security_protocol=upstream_security_protocol,
            upstream_ssl_cafile=upstream_ssl_cafile,
            upstream_ssl_check_hostname=upstream_ssl_check_hostname,
            upstream_sasl_mechanism=upstream_sasl_mechanism,
            upstream_sasl_username=upstream_sasl_username,
            upstream_sasl_password=upstream_sasl_password,
        )
        self._runner = ThreadedRunner(cast(Any, server))
        self._setup(
            server,
            hosts,
            strict_faults,
            protocol,
            self._runner.call,
            self._runner.on_loop_thread,
        )

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

    def _after_block(self) -> None:
        self.check_rules()

    def _serving(self) -> bool:
        return self._runner.running


class AsyncProxy(_ProxyBase, AwaitableWaits):
    """The proxy on the caller's own trio loop (no thread): see :func:`open_proxy`.

    The waits are awaitable; the other verbs are plain calls as on an AsyncCluster. Those
    that make requests to the upstream (``create_topic``, ``topic``, ...) block the loop,
    and with it the relaying, until Kafka answers: from a task that should not stall the
    clients, call them with ``await trio.to_thread.run_sync(lambda: proxy.create_topic(...))``.
    """

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

        self._setup(
            server,
            upstream,
            strict,
            security_protocol,
            run_on_loop,
            lambda: threading.current_thread() is loop_thread,
        )


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

    hosts, protocol, server = proxy_server(
        upstream,
        host=host,
        record_traffic=record_traffic,
        security_protocol=security_protocol,
        upstream_security_protocol=upstream_security_protocol,
        upstream_ssl_cafile=upstream_ssl_cafile,
        upstream_ssl_check_hostname=upstream_ssl_check_hostname,
        upstream_sasl_mechanism=upstream_sasl_mechanism,
        upstream_sasl_username=upstream_sasl_username,
        upstream_sasl_password=upstream_sasl_password,
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
        proxy._admin.close()
        if server.tls is not None:
            server.tls.close()
    proxy.check_rules()

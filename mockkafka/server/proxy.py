"""The proxy: mockkafka's fault rules and traffic log in front of a real Kafka cluster.

Theory of operation
-------------------
:class:`ProxyServer` learns the upstream cluster's brokers from a Metadata request to the
first reachable bootstrap address and opens one listener per upstream broker on
``host`` (127.0.0.1). A client connection to the listener of broker N gets its own
connection to broker N upstream; two tasks then relay frames, one per direction:

* client to upstream: each request frame is decoded with the project's codec (at the version
  the client sent) for the traffic log and the fault rules. Faults go through the broker's
  own fault phases (``server/faults.py``, a :class:`ProxyCall` being the actions' call
  interface), with "the handler" meaning Kafka upstream: the ``BEFORE`` and ``INSTEAD``
  actions run here (a delay, a dropped connection, a request never answered, an answer the
  proxy makes itself so the request never reaches Kafka, partitions claimed with an
  error); for an API that changes state (Produce, OffsetCommit, ...) the request is
  re-encoded without the claimed partitions, so Kafka never applies them, and the answer
  merges their errors in. Everything else goes upstream byte for byte.
* upstream to client: responses come back in request order (Kafka answers one request at a
  time per connection), so a queue of what was sent tells which request each answers. Every
  broker address in an answer (Metadata, FindCoordinator, DescribeCluster, the leader
  endpoints of Produce and Fetch, ...: any entry with a node id, a host and a port) is
  rewritten to the proxy's listener for that broker, so clients never bypass the proxy; a
  broker seen for the first time gets a listener then. The ``AFTER``, ``DATA`` and
  ``CONNECTION`` actions run on Kafka's answer (partition errors written in, record data
  edited, ``throttle_time_ms`` set and the client muted, a delay or a drop after
  processing) before it is sent. A rule counts as fired once the answer carrying it is
  sent (or the connection closed by it), as on the broker.

Security: the proxy reaches the upstream over TCP or TLS (``server/upstream.py``) and can
offer its own TLS listeners to clients (``server/tls.py``, a throwaway CA as a Cluster's).
SASL is not terminated: a client's SaslHandshake and SaslAuthenticate go upstream like any
request and Kafka checks them, so the requests after the login are decoded, logged and
faulted as before. The proxy logs in itself (``upstream_sasl_*``) only for its own Metadata
discovery. SaslHandshake v0 (the unframed exchange of clients older than Kafka 1.0) is not
supported.

Nothing here keeps Kafka's state: topics, offsets and groups live upstream. Requests the
codec cannot decode are relayed untouched. A partial trailing batch can only cut the
answer's own last batch, and ``duplicate`` has no earlier batch to repeat (the log is
upstream). The cluster verbs of ``mockkafka.Proxy`` use this server's emulation hooks
(:meth:`ProxyServer.stop_broker`, :meth:`isolate`, ``api_caps``).
"""

from __future__ import annotations

import itertools
import struct
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

import trio

from mockkafka.errors import ConfigError, ErrorCode, MockKafkaError
from mockkafka.faults.actions import ACTIONS, BEFORE, INSTEAD
from mockkafka.faults.engine import FaultEngine, Rule
from mockkafka.faults.inspect import request_info
from mockkafka.faults.model import RequestInfo
from mockkafka.handlers._errors import build_error_response
from mockkafka.handlers.base import NO_RESPONSE
from mockkafka.protocol.apis import API_BY_KEY, Api, response_header_version
from mockkafka.protocol.codec import codec
from mockkafka.protocol.framing import ClientConnection, parse_request_header
from mockkafka.server.faults import (
    FaultCallBase,
    after,
    answers,
    commit,
    edit_claimed,
    merge_split,
    release,
    split,
    splits,
)
from mockkafka.server.tls import TlsMaterial
from mockkafka.server.traffic import Exchange, TrafficLog
from mockkafka.server.upstream import UpstreamAuthFailed, UpstreamSecurity, login
from mockkafka.server.upstream import request as upstream_request
from mockkafka.server.waits import StateSignal

#: The fault actions a proxy can apply: every one that does not read the partition log
#: (the scenario loader names a fault step with another as one a proxy cannot run).
PROXY_ACTIONS = frozenset(c for c in ACTIONS.values() if not c.NEEDS_LOG)

MAX_FRAME = 128 * 1024 * 1024
#: What ``_request`` returns for a request a rule never answers.
STALL = b"\x00stall"
CONNECT_TIMEOUT_S = 10.0


class UpstreamUnavailable(MockKafkaError, OSError):
    """No upstream bootstrap address answered Metadata: check ``upstream``."""


class _Dropped(Exception):
    """A fault closed the client connection before the request went upstream."""


class _Stalled(Exception):
    """A fault leaves the request (and the connection) unanswered."""


class ProxyCall(FaultCallBase):
    """The :class:`~mockkafka.faults.actions.FaultCall` of one proxied request: the same
    phases as on the broker (``server/faults.py``), with "run the handler" meaning "send
    it upstream" and the answer being Kafka's."""

    def __init__(
        self,
        proxy: ProxyServer,
        api: Api,
        version: int,
        ex: Exchange,
        body: dict[str, Any],
        info: RequestInfo,
        fired: list[Rule],
        deferred: list[Rule],
        mute: Callable[[float], None],
    ) -> None:
        super().__init__(proxy.faults, ex, body, info, fired, deferred, proxy.topic_names.get)
        self._proxy = proxy
        self._api = api
        self._mute = mute
        self.api = api.name
        self.version = version
        self.context = None

    def error_body(self, body: dict[str, Any], code: ErrorCode) -> dict[str, Any]:
        return build_error_response(self._api, self.version, body, int(code))

    async def flush(self) -> None:
        return None  # answers are relayed as they come

    def close(self, reason: str) -> NoReturn:
        self.ex.closed_connection = True
        self._proxy.traffic.completed(self.ex)
        commit(self)
        raise _Dropped(reason)

    async def never_respond(self) -> NoReturn:
        self.ex.no_response = True
        self._proxy.traffic.completed(self.ex)
        commit(self)
        raise _Stalled(self.api)

    def mute(self, seconds: float) -> None:
        self._mute(seconds)

    def next_batch(self, topic: str, index: int, records: Any) -> bytes | None:
        return None  # the log is upstream

    def silence(self) -> None:
        # A blackhole: this connection relays and answers nothing more (as never_respond)
        # until the client closes it; its next connection meets the rule afresh.
        self.ex.no_response = True
        self._proxy.traffic.completed(self.ex)
        commit(self)
        raise _Stalled(self.api)

    def record_error(self, exc: BaseException) -> None:
        self._proxy.errors.append(exc)


@dataclass
class _InFlight:
    """A request sent upstream (or answered here), waiting for its turn to be answered."""

    ex: Exchange | None
    api: Api | None
    version: int
    correlation_id: int
    local: bytes | None = None  # the proxy's own answer (the request never went upstream)
    merge_with: dict[str, Any] | None = None  # the request whose claimed partitions to merge
    call: ProxyCall | None = None  # the fault rules that fired on it


def _frame(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


class _FrameReader:
    def __init__(self, stream: trio.abc.ReceiveStream) -> None:
        self.stream = stream
        self.buf = bytearray()

    async def read(self) -> bytes | None:
        """The next frame's payload, or None at end of stream."""
        while True:
            if len(self.buf) >= 4:
                size = struct.unpack_from(">i", self.buf, 0)[0]
                if size < 0 or size > MAX_FRAME:
                    raise MockKafkaError(f"frame of {size} bytes")
                if len(self.buf) >= 4 + size:
                    payload = bytes(self.buf[4 : 4 + size])
                    del self.buf[: 4 + size]
                    return payload
            data = await self.stream.receive_some(1 << 20)
            if not data:
                return None
            self.buf += data


class ProxyServer:
    """Relays between clients and an upstream Kafka cluster; see the module docstring."""

    def __init__(
        self,
        upstream: list[tuple[str, int]],
        *,
        host: str = "127.0.0.1",
        traffic: TrafficLog | None = None,
        security: UpstreamSecurity | None = None,
        tls: TlsMaterial | None = None,
    ) -> None:
        if not upstream:
            raise ValueError("upstream: give at least one HOST:PORT of the Kafka cluster")
        self.upstream = list(upstream)
        self.host = host
        self.traffic = traffic if traffic is not None else TrafficLog()
        #: how to reach the upstream (TLS, the proxy's own SASL login)
        self.security = security if security is not None else UpstreamSecurity()
        #: the proxy's own TLS towards clients (None: plaintext listeners)
        self.tls = tls
        self.signal = StateSignal()
        self.traffic.signal = self.signal
        self._t0 = time.monotonic()
        self.faults = FaultEngine(self.now_ms)
        #: upstream node id -> its address upstream, and the proxy's listener port for it
        self.brokers: dict[int, tuple[str, int]] = {}
        self.ports: dict[int, int] = {}
        self.topic_names: dict[uuid.UUID, str] = {}
        self.errors: list[BaseException] = []
        self._conn_ids = itertools.count(1)
        self._nursery: trio.Nursery | None = None
        self._listening: dict[int, trio.Event] = {}
        # Emulated at the proxy (the cluster verbs of mockkafka.Proxy): brokers "stopped",
        # client ids cut off by a network partition, API versions capped in ApiVersions.
        self.stopped: set[int] = set()
        self.isolated: set[str] = set()
        self.api_caps: dict[int, int] = {}
        #: connection id -> (node id, client id once seen, the scope that closes it)
        self._conns: dict[int, tuple[int, str | None, trio.CancelScope]] = {}

    def now_ms(self) -> int:
        return int((time.monotonic() - self._t0) * 1000)

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(f"{self.host}:{p}" for _, p in sorted(self.ports.items()))

    # -- lifecycle ----------------------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Learn the upstream brokers, listen for each, then relay until cancelled."""
        brokers = await self._discover()
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            for node_id, addr in sorted(brokers.items()):
                await self._ensure_listener(node_id, addr)
            task_status.started()

    async def _discover(self) -> dict[int, tuple[str, int]]:
        problems = []
        for host, port in self.upstream:
            try:
                with trio.fail_after(CONNECT_TIMEOUT_S):
                    stream = await self.security.connect(host, port)
                    async with stream:
                        return await self._metadata(stream)
            except UpstreamAuthFailed:
                raise
            except (OSError, trio.TooSlowError, trio.BrokenResourceError, MockKafkaError) as exc:
                why = str(exc) or str(exc.__cause__ or "") or type(exc).__name__  # TLS: the cause
                problems.append(f"{host}:{port}: {why}")
        raise UpstreamUnavailable(
            "no upstream broker answered Metadata (" + "; ".join(problems) + ")"
        )

    async def _metadata(self, stream: trio.abc.Stream) -> dict[int, tuple[str, int]]:
        conn = ClientConnection(client_id="mockkafka-proxy")
        if self.security.sasl is not None:
            await login(stream, conn, self.security.sasl)
        body = await upstream_request(stream, conn, "Metadata", 9, {"topics": None})
        return {b["node_id"]: (b["host"], b["port"]) for b in body.get("brokers") or []}

    async def _ensure_listener(self, node_id: int, addr: tuple[str, int]) -> int:
        """The listener port for upstream broker ``node_id`` (opened on first sight)."""
        self.brokers[node_id] = addr
        if node_id in self.ports:
            return self.ports[node_id]
        ready = self._listening.get(node_id)
        if ready is not None:
            await ready.wait()
            return self.ports[node_id]
        self._listening[node_id] = trio.Event()
        assert self._nursery is not None
        listeners = await trio.open_tcp_listeners(0, host=self.host)
        port = int(listeners[0].socket.getsockname()[1])
        self.ports[node_id] = port
        self._listening[node_id].set()

        async def handle(stream: Any) -> None:
            if self.tls is not None:
                stream = self.tls.wrap(stream)
            await self._relay(stream, node_id)

        async def serve() -> None:
            await trio.serve_listeners(handle, listeners)

        self._nursery.start_soon(serve)
        return port

    # -- one client connection ------------------------------------------------------------------

    def _check_node(self, node_id: int) -> None:
        if node_id not in self.ports:
            known = ", ".join(map(str, sorted(self.ports))) or "none yet"
            raise ConfigError(f"broker {node_id}: the upstream has no such node (known: {known})")

    async def _relay(self, client: trio.abc.Stream, node_id: int) -> None:
        conn_id = next(self._conn_ids)
        if node_id in self.stopped:  # a stopped broker refuses connections
            await client.aclose()
            return
        try:
            with trio.fail_after(CONNECT_TIMEOUT_S):
                upstream = await self.security.connect(*self.brokers[node_id])
        except (OSError, trio.TooSlowError, trio.BrokenResourceError):
            await client.aclose()
            return
        send, receive = trio.open_memory_channel[_InFlight](1000)
        try:
            async with client, upstream, trio.open_nursery() as nursery:
                self._conns[conn_id] = (node_id, None, nursery.cancel_scope)
                if node_id in self.stopped:  # stopped while this connection was opening
                    nursery.cancel_scope.cancel()

                async def close_both() -> None:
                    nursery.cancel_scope.cancel()

                nursery.start_soon(
                    self._to_upstream, client, upstream, send, node_id, conn_id, close_both
                )
                nursery.start_soon(self._to_client, client, upstream, receive, close_both)
        finally:
            self._conns.pop(conn_id, None)

    async def _to_upstream(
        self,
        client: trio.abc.Stream,
        upstream: trio.abc.Stream,
        queue: trio.MemorySendChannel[_InFlight],
        node_id: int,
        conn_id: int,
        close: Callable[[], Any],
    ) -> None:
        reader = _FrameReader(client)
        muted_until = [0.0]

        def mute(seconds: float) -> None:
            # KIP-219, as the broker: nothing more is read from the client until then
            muted_until[0] = max(muted_until[0], trio.current_time() + seconds)

        try:
            while True:
                payload = await reader.read()
                if payload is None:
                    break
                if muted_until[0] > trio.current_time():
                    await trio.sleep_until(muted_until[0])
                out = await self._request(payload, queue, node_id, conn_id, mute)
                if out is None:  # dropped before processing
                    break
                if out is STALL:  # never answered: nothing more is relayed or answered
                    while await reader.read() is not None:
                        pass
                    break
                if out:
                    await upstream.send_all(_frame(out))
        except (trio.BrokenResourceError, trio.ClosedResourceError, MockKafkaError):
            pass
        await close()

    async def _request(
        self,
        payload: bytes,
        queue: trio.MemorySendChannel[_InFlight],
        node_id: int,
        conn_id: int,
        mute_client: Callable[[float], None],
    ) -> bytes | None:
        """What to send upstream for one request frame (b"": nothing; None: stop)."""
        try:
            hdr, pos = parse_request_header(payload)
        except Exception:
            return payload
        if self._isolated(conn_id, hdr.client_id):
            return None
        api = API_BY_KEY.get(hdr.api_key)
        body: dict[str, Any] | None = None
        if api is not None:
            try:
                body, _ = codec(api.request_name, hdr.api_version).decode(payload, pos)
            except Exception:
                body = None
        if api is None or body is None:
            await queue.send(_InFlight(None, None, hdr.api_version, hdr.correlation_id))
            return payload
        v = hdr.api_version
        info = request_info(
            api.name,
            v,
            body,
            broker_id=node_id,
            connection_id=conn_id,
            client_id=hdr.client_id,
            resolve=self.topic_names.get,
        )
        ex = self.traffic.start(
            time_ms=self.now_ms(),
            broker_id=node_id,
            connection_id=conn_id,
            client_id=hdr.client_id,
            api=api.name,
            api_key=api.key,
            version=v,
            correlation_id=hdr.correlation_id,
            request=body,
            size=len(payload) + 4,
            info=info,
        )
        no_answer = not answers(api.name, body)
        item = _InFlight(ex, api, v, hdr.correlation_id)
        fired, deferred = self.faults.select(info, reserve=True) if self.faults else ([], [])
        if fired or deferred:
            item.call = call = ProxyCall(self, api, v, ex, body, info, fired, deferred, mute_client)
            # The broker's fault phases, with Kafka upstream as the handler.
            try:
                await call.run(BEFORE)
                await call.run(INSTEAD)
            except _Dropped:
                return None
            except _Stalled:
                return STALL
            if call.answered:
                if call.response is NO_RESPONSE or no_answer:
                    ex.no_response = True
                    commit(call)
                    self.traffic.completed(ex)
                    return b""
                item.local = self._encode(api, v, hdr.correlation_id, call.response)
                await queue.send(item)
                return b""
        out = payload
        claimed = item.call
        if claimed is not None and claimed.claims and splits(claimed):
            call = claimed
            reduced, remaining = split(call, body)
            item.merge_with = body
            if not remaining:
                merged = merge_split(call, body, None)
                if no_answer:
                    ex.no_response = True
                    commit(call)
                    self.traffic.completed(ex)
                    return b""
                item.local = self._encode(api, v, hdr.correlation_id, merged)
                item.merge_with = None
                await queue.send(item)
                return b""
            out = payload[:pos] + codec(api.request_name, v).encode(reduced)
        if not no_answer:
            await queue.send(item)
        elif ex is not None:
            ex.no_response = True
            if item.call is not None:
                commit(item.call)
            self.traffic.completed(ex)
        return out

    async def _to_client(
        self,
        client: trio.abc.Stream,
        upstream: trio.abc.Stream,
        queue: trio.MemoryReceiveChannel[_InFlight],
        close: Callable[[], Any],
    ) -> None:
        reader = _FrameReader(upstream)
        item: _InFlight | None = None
        try:
            async for item in queue:
                if item.local is not None:
                    payload: bytes | None = item.local
                    body = None
                else:
                    payload = await reader.read()
                    if payload is None:
                        break
                    payload, body = await self._response(payload, item)
                call = item.call
                if call is not None and item.local is not None:
                    # answered here: the AFTER/DATA/CONNECTION phases on the local answer
                    call.response = self._decode_response(item, item.local)
                    payload = item.local = await self._after_faults(item, call.response)
                if item.ex is not None:
                    if body is not None:
                        item.ex.response = body
                    item.ex.response_time_ms = self.now_ms()
                if call is not None and call.drop_after:
                    if item.ex is not None:
                        item.ex.closed_connection = True
                        commit(call)
                        self.traffic.completed(item.ex)
                    break
                assert payload is not None
                if call is not None:
                    # handed to the connection, as on the broker: counted before the client
                    # can read it (a test that saw the answer sees the count)
                    commit(call)
                await client.send_all(_frame(payload))
                if item.ex is not None:
                    if item.local is not None and item.ex.response is None:
                        item.ex.response = self._decode_response(item, item.local)
                    self.traffic.completed(item.ex, len(payload) + 4)
                item.call = None
        except (trio.BrokenResourceError, trio.ClosedResourceError, MockKafkaError):
            pass
        finally:
            # answers that never went out: their faults did not reach the client
            leftovers = [item] if item is not None else []
            while True:
                try:
                    leftovers.append(queue.receive_nowait())
                except (trio.WouldBlock, trio.EndOfChannel, trio.ClosedResourceError):
                    break
            for left in leftovers:
                if left.call is not None:
                    release(left.call)
        await close()

    async def _response(
        self, payload: bytes, item: _InFlight
    ) -> tuple[bytes, dict[str, Any] | None]:
        """The answer to send the client (addresses rewritten, faults applied), decoded."""
        api = item.api
        if api is None:
            return payload, None
        hv = response_header_version(api.key, item.version)
        pos = 4 if hv == 0 else 5
        c = codec(api.response_name, item.version)
        try:
            body, _ = c.decode(payload, pos)
        except Exception:
            return payload, None
        changed = await self._rewrite_addresses(body)
        self._learn_topics(body)
        if api.name == "ApiVersions" and self.api_caps:
            changed = self._cap_versions(body) or changed
        call = item.call
        if call is not None:
            if item.merge_with is not None:
                body = merge_split(call, item.merge_with, body)
            elif call.claims:
                edit_claimed(call, body)
            call.response = body
            await after(call, self.faults)
            body = call.response
            changed = True
        if changed:
            payload = payload[:pos] + c.encode(body)
        return payload, body

    async def _after_faults(self, item: _InFlight, body: Any) -> bytes:
        """The AFTER/DATA/CONNECTION phases on an answer the proxy made itself."""
        assert item.call is not None and item.api is not None and item.local is not None
        if not isinstance(body, dict):
            return item.local
        item.call.response = body
        await after(item.call, self.faults)
        return self._encode(item.api, item.version, item.correlation_id, item.call.response)

    def _encode(self, api: Api, version: int, correlation_id: int, body: dict[str, Any]) -> bytes:
        hv = response_header_version(api.key, version)
        header = struct.pack(">i", correlation_id) + (b"\x00" if hv >= 1 else b"")
        return header + codec(api.response_name, version).encode(body)

    def _decode_response(self, item: _InFlight, payload: bytes) -> dict[str, Any] | None:
        if item.api is None:
            return None
        pos = 4 if response_header_version(item.api.key, item.version) == 0 else 5
        try:
            body, _ = codec(item.api.response_name, item.version).decode(payload, pos)
        except Exception:
            return None
        return body

    # -- emulated cluster verbs (run on the proxy's loop) -------------------------------------

    def stop_broker(self, node_id: int) -> None:
        """Emulate a stopped broker at the proxy (Kafka's broker keeps running): refuse new
        connections to ``node_id``'s listener and close its open ones (ConfigError naming
        the known node ids when ``node_id`` is not one)."""
        self._check_node(node_id)
        self.stopped.add(node_id)
        for conn_node, _client, scope in list(self._conns.values()):
            if conn_node == node_id:
                scope.cancel()
        self.signal.notify()

    def start_broker(self, node_id: int) -> None:
        """Accept connections to ``node_id``'s listener again."""
        self._check_node(node_id)
        self.stopped.discard(node_id)
        self.signal.notify()

    def isolate(self, client_id: str) -> None:
        """Cut ``client_id`` off: close its connections, drop each new one at its first request."""
        self.isolated.add(client_id)
        for _node, seen, scope in list(self._conns.values()):
            if seen == client_id:
                scope.cancel()

    def heal(self, client_id: str | None = None) -> None:
        """End the partition of ``client_id`` (None: of every client)."""
        if client_id is None:
            self.isolated.clear()
        else:
            self.isolated.discard(client_id)

    def _isolated(self, conn_id: int, client_id: str | None) -> bool:
        known = self._conns.get(conn_id)
        if known is not None and known[1] is None and client_id is not None:
            self._conns[conn_id] = (known[0], client_id, known[2])
        return client_id is not None and client_id in self.isolated

    def _cap_versions(self, body: dict[str, Any]) -> bool:
        """Clamp the advertised versions to :attr:`api_caps` (an API capped below its
        minimum is left out), as an older Kafka would advertise."""
        keys = body.get("api_keys")
        if not isinstance(keys, list):
            return False
        kept = []
        for k in keys:
            cap = self.api_caps.get(k.get("api_key"))
            if cap is None:
                kept.append(k)
            elif cap >= k["min_version"]:
                kept.append({**k, "max_version": min(cap, k["max_version"])})
        body["api_keys"] = kept
        return True

    async def _rewrite_addresses(self, obj: Any) -> bool:
        """Point every broker address in ``obj`` at the proxy; True if any changed."""
        changed = False
        if isinstance(obj, dict):
            node = obj.get("node_id", obj.get("broker_id"))
            if isinstance(node, int) and node >= 0 and "host" in obj and "port" in obj:
                port = await self._ensure_listener(node, (obj["host"], obj["port"]))
                if (obj["host"], obj["port"]) != (self.host, port):
                    obj["host"], obj["port"] = self.host, port
                    changed = True
            for v in obj.values():
                if isinstance(v, list | dict):
                    changed = await self._rewrite_addresses(v) or changed
        elif isinstance(obj, list):
            for v in obj:
                if isinstance(v, list | dict):
                    changed = await self._rewrite_addresses(v) or changed
        return changed

    def _learn_topics(self, body: dict[str, Any]) -> None:
        """Topic ids from Metadata answers, so rules can match Fetch v13+ by topic name."""
        for t in body.get("topics") or []:
            if isinstance(t, dict) and isinstance(t.get("topic_id"), uuid.UUID):
                name = t.get("name")
                if isinstance(name, str):
                    self.topic_names[t["topic_id"]] = name

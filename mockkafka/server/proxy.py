"""The proxy: mockkafka's fault rules and traffic log in front of a real Kafka cluster.

Theory of operation
-------------------
:class:`ProxyServer` learns the upstream cluster's brokers from a Metadata request to the
first reachable bootstrap address and opens one listener per upstream broker on
``host`` (127.0.0.1). A client connection to the listener of broker N gets its own
connection to broker N upstream; two tasks then relay frames, one per direction:

* client to upstream: each request frame is decoded with the project's codec (at the version
  the client sent) for the traffic log and the fault rules. What the rules ask for happens
  here: a delay or a dropped connection before processing, a request never answered, a
  request-level error answered by the proxy itself (the request never reaches Kafka), and a
  partition-level error on an API that changes state (Produce, OffsetCommit, ...), for which
  the request is re-encoded without the claimed partitions, so Kafka never applies them,
  and the answer merges their errors in. Everything else goes upstream byte for byte.
* upstream to client: responses come back in request order (Kafka answers one request at a
  time per connection), so a queue of what was sent tells which request each answers. Every
  broker address in an answer (Metadata, FindCoordinator, DescribeCluster, the leader
  endpoints of Produce and Fetch, ...: any entry with a node id, a host and a port) is
  rewritten to the proxy's listener for that broker, so clients never bypass the proxy; a
  broker seen for the first time gets a listener then. Partition-level errors on read-only
  APIs are written into the answer, throttles set ``throttle_time_ms``, and a delay or a
  dropped connection after processing happen before the answer is sent.

Security: the proxy reaches the upstream over TCP or TLS (``server/upstream.py``) and can
offer its own TLS listeners to clients (``server/tls.py``, a throwaway CA as a Cluster's).
SASL is not terminated: a client's SaslHandshake and SaslAuthenticate go upstream like any
request and Kafka checks them, so the requests after the login are decoded, logged and
faulted as before. The proxy logs in itself (``upstream_sasl_*``) only for its own Metadata
discovery. SaslHandshake v0 (the unframed exchange of clients older than Kafka 1.0) is not
supported.

Nothing here keeps Kafka's state: topics, offsets and groups live upstream. Requests the
codec cannot decode are relayed untouched. Not yet: the data-editing actions (partial
trailing batch, corrupt batch). The cluster verbs of ``mockkafka.Proxy`` use this server's
emulation hooks (:meth:`ProxyServer.stop_broker`, :meth:`isolate`, ``api_caps``).
"""

from __future__ import annotations

import itertools
import struct
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import trio

from mockkafka.errors import ConfigError, MockKafkaError
from mockkafka.faults.engine import FaultEngine, Rule
from mockkafka.faults.error_facts import APPLIED_FIRST
from mockkafka.faults.inspect import partition_entries, request_info, split_request
from mockkafka.faults.model import (
    CustomHandler,
    Delay,
    DropConnection,
    Error,
    NeverRespond,
    Observe,
    Throttle,
)
from mockkafka.handlers._errors import build_error_response
from mockkafka.protocol.apis import API_BY_KEY, Api, response_header_version
from mockkafka.protocol.codec import codec
from mockkafka.protocol.framing import ClientConnection, parse_request_header
from mockkafka.server.faults import (  # partitions a rule claims stay back
    STATE_CHANGING,
    _edit_applied,
)
from mockkafka.server.tls import TlsMaterial
from mockkafka.server.traffic import Exchange, TrafficLog
from mockkafka.server.upstream import UpstreamAuthFailed, UpstreamSecurity, login
from mockkafka.server.upstream import request as upstream_request
from mockkafka.server.waits import StateSignal

#: The fault actions the proxy applies to relayed traffic (the scenario loader names a
#: fault step with any other as one a proxy cannot run).
PROXY_ACTIONS = frozenset(
    {Error, Delay, Throttle, DropConnection, NeverRespond, CustomHandler, Observe}
)

MAX_FRAME = 128 * 1024 * 1024
#: What ``_request`` returns for a request a rule never answers.
STALL = b"\x00stall"
CONNECT_TIMEOUT_S = 10.0


class UpstreamUnavailable(MockKafkaError, OSError):
    """No upstream bootstrap address answered Metadata: check ``upstream``."""


@dataclass
class _InFlight:
    """A request sent upstream (or answered here), waiting for its turn to be answered."""

    ex: Exchange | None
    api: Api | None
    version: int
    correlation_id: int
    local: bytes | None = None  # the proxy's own answer (the request never went upstream)
    partition_errors: list[tuple[Rule, Error]] = field(default_factory=list)
    merge_with: dict[str, Any] | None = None  # the request whose claimed partitions to merge
    # errors Kafka answers after applying the request: the request goes upstream whole
    applied_errors: list[tuple[Rule, Error]] = field(default_factory=list)
    info: Any = None
    actions: list[Any] = field(default_factory=list)


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
        try:
            while True:
                payload = await reader.read()
                if payload is None:
                    break
                out = await self._request(payload, queue, node_id, conn_id)
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
        no_answer = api.name == "Produce" and body.get("acks", 1) == 0
        fired, _deferred = self.faults.select(info) if self.faults else ([], [])
        ex.faults.extend(r.name for r in fired)
        actions = [(r, a) for r in fired for a in r.actions]
        item = _InFlight(ex, api, v, hdr.correlation_id, actions=[a for _, a in actions], info=info)
        for _r, a in actions:
            if isinstance(a, Delay) and a.before_processing:
                await trio.sleep(a.ms / 1000)
        for _r, a in actions:
            if isinstance(a, DropConnection) and not a.after_processing:
                ex.closed_connection = True
                self.traffic.completed(ex)
                return None
            if isinstance(a, NeverRespond):
                ex.no_response = True
                self.traffic.completed(ex)
                return STALL
        for r, a in actions:
            if isinstance(a, Error) and (api.name, a.code) in APPLIED_FIRST:
                item.applied_errors.append((r, a))  # Kafka stores the batch, then says this
            elif isinstance(a, Error):
                level = a.level
                if level == "auto":
                    targeted = info.partitions or info.topics or info.all_topics
                    level = "partition" if r.match.targets_partitions and targeted else "request"
                if level == "partition":
                    item.partition_errors.append((r, a))
                elif item.local is None:
                    item.local = self._encode(
                        api,
                        v,
                        hdr.correlation_id,
                        build_error_response(api, v, body, int(a.error_code)),
                    )
            elif isinstance(a, CustomHandler) and item.local is None:
                answer = a.fn(body, None)
                if answer is not None:
                    item.local = self._encode(api, v, hdr.correlation_id, answer)
        if item.local is not None:
            if not no_answer:
                await queue.send(item)
            return b""
        out = payload
        if item.partition_errors and api.name in STATE_CHANGING:
            claimed = lambda t, i: self._claim(item.partition_errors, t, i) is not None  # noqa: E731
            reduced, remaining = split_request(body, claimed, self.topic_names.get)
            item.merge_with = body
            if not remaining:
                merged = build_error_response(api, v, body, 0)
                self._merge(item, merged, None)
                if not no_answer:
                    await queue.send(
                        _InFlight(
                            ex,
                            api,
                            v,
                            hdr.correlation_id,
                            local=self._encode(api, v, hdr.correlation_id, merged),
                        )
                    )
                return b""
            out = payload[:pos] + codec(api.request_name, v).encode(reduced)
        if not no_answer:
            await queue.send(item)
        elif ex is not None:
            ex.no_response = True
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
                if item.ex is not None:
                    if body is not None:
                        item.ex.response = body
                    item.ex.response_time_ms = self.now_ms()
                for a in item.actions:
                    if isinstance(a, Delay) and not a.before_processing:
                        await trio.sleep(a.ms / 1000)
                if any(isinstance(a, DropConnection) and a.after_processing for a in item.actions):
                    if item.ex is not None:
                        item.ex.closed_connection = True
                        self.traffic.completed(item.ex)
                    break
                assert payload is not None
                await client.send_all(_frame(payload))
                if item.ex is not None:
                    if item.local is not None and item.ex.response is None:
                        item.ex.response = self._decode_response(item, item.local)
                    self.traffic.completed(item.ex, len(payload) + 4)
        except (trio.BrokenResourceError, trio.ClosedResourceError, MockKafkaError):
            pass
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
        if item.merge_with is not None:
            merged = build_error_response(api, item.version, item.merge_with, 0)
            self._merge(item, merged, body)
            body, changed = merged, True
        elif item.partition_errors:
            for t, i, entry, _arr, _pos in partition_entries(body, self.topic_names.get):
                claim = self._claim(item.partition_errors, t, i)
                if claim is not None and isinstance(entry, dict):
                    entry["error_code"] = int(claim.error_code)
                    if "records" in entry:
                        entry["records"] = b""
                    changed = True
        if item.applied_errors:
            _edit_applied(item.info, body, item.applied_errors, self.topic_names.get)
            changed = True
        for a in item.actions:
            if isinstance(a, Throttle) and "throttle_time_ms" in body:
                body["throttle_time_ms"] = a.ms
                changed = True
        if changed:
            payload = payload[:pos] + c.encode(body)
        return payload, body

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

    def _merge(self, item: _InFlight, merged: dict[str, Any], real: dict[str, Any] | None) -> None:
        """Claimed partitions get their rule's error, the others Kafka's answer."""
        real_entries: dict[tuple[str | None, int], Any] = {}
        if real is not None:
            for t, i, entry, _arr, _pos in partition_entries(real, self.topic_names.get):
                real_entries[(t, i)] = entry
        for t, i, _entry, arr, pos in partition_entries(merged, self.topic_names.get):
            claim = self._claim(item.partition_errors, t, i)
            if claim is not None:
                arr[pos]["error_code"] = int(claim.error_code)
            elif (t, i) in real_entries:
                arr[pos] = real_entries[(t, i)]
        if real is not None:
            for k, val in real.items():
                if not (k in merged and isinstance(val, list)):
                    merged[k] = val

    @staticmethod
    def _claim(errors: list[tuple[Rule, Error]], topic: str | None, idx: int) -> Error | None:
        if topic is None:
            return None
        for r, a in errors:
            if r.match.partition_matches(topic, idx):
                return a
        return None

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

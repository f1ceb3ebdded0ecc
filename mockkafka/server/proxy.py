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

Nothing here keeps Kafka's state: topics, offsets and groups live upstream. Requests the
codec cannot decode are relayed untouched. ``DATA`` rules (record edits) are decided on
Kafka's answer; the proxy holds no log, so ``duplicate`` (the batch before the fetch
offset) and a ``partial_trailing_batch`` of a single batch (the batch after it) find
nothing to edit. Not yet: TLS and SASL towards either side (the SASL exchange of
SaslHandshake v0 is unframed), and cluster verbs.
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

from mockkafka.errors import MockKafkaError
from mockkafka.faults.engine import FaultEngine, Rule
from mockkafka.faults.inspect import partition_entries, request_info, split_request
from mockkafka.faults.model import (
    CustomHandler,
    Delay,
    DropConnection,
    Error,
    NeverRespond,
    Throttle,
)
from mockkafka.handlers._errors import build_error_response
from mockkafka.protocol.apis import API_BY_KEY, Api, response_header_version
from mockkafka.protocol.codec import codec
from mockkafka.protocol.framing import ClientConnection, parse_request_header
from mockkafka.server.faults import STATE_CHANGING  # partitions a rule claims stay back
from mockkafka.server.traffic import Exchange, TrafficLog
from mockkafka.server.waits import StateSignal

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
    actions: list[Any] = field(default_factory=list)
    deferred: list[Rule] = field(default_factory=list)  # DATA rules, decided on the answer


class _RelayedAnswer:
    """What a ``DATA`` action may ask of an answer the proxy relays: the proxy holds no
    log, so there is no batch before or after the records (``duplicate`` and
    ``partial_trailing_batch`` with a single batch find nothing to edit)."""

    def __init__(self, api: str, version: int, request: dict[str, Any]) -> None:
        self.api = api
        self.version = version
        self.request = request

    def next_batch(self, topic: str, index: int, records: Any) -> bytes | None:
        return None

    def previous_batch(self, topic: str, index: int) -> bytes | None:
        return None


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
    ) -> None:
        if not upstream:
            raise ValueError("upstream: give at least one HOST:PORT of the Kafka cluster")
        self.upstream = list(upstream)
        self.host = host
        self.traffic = traffic if traffic is not None else TrafficLog()
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
                    stream = await trio.open_tcp_stream(host, port)
                    async with stream:
                        return await self._metadata(stream)
            except (OSError, trio.TooSlowError, MockKafkaError) as exc:
                problems.append(f"{host}:{port}: {exc or type(exc).__name__}")
        raise UpstreamUnavailable(
            "no upstream broker answered Metadata (" + "; ".join(problems) + ")"
        )

    async def _metadata(self, stream: trio.SocketStream) -> dict[int, tuple[str, int]]:
        conn = ClientConnection(client_id="mockkafka-proxy")
        await stream.send_all(conn.send_request("Metadata", 9, {"topics": None}))
        reader = _FrameReader(stream)
        payload = await reader.read()
        if payload is None:
            raise MockKafkaError("the connection closed before Metadata was answered")
        conn.receive_data(_frame(payload))
        resp = conn.next_event()
        body: dict[str, Any] = getattr(resp, "body", None) or {}
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
            await self._connection(stream, node_id)

        async def serve() -> None:
            await trio.serve_listeners(handle, listeners)

        self._nursery.start_soon(serve)
        return port

    # -- one client connection ------------------------------------------------------------------

    async def _connection(self, client: trio.abc.Stream, node_id: int) -> None:
        conn_id = next(self._conn_ids)
        try:
            with trio.fail_after(CONNECT_TIMEOUT_S):
                upstream = await trio.open_tcp_stream(*self.brokers[node_id])
        except (OSError, trio.TooSlowError):
            await client.aclose()
            return
        send, receive = trio.open_memory_channel[_InFlight](1000)
        async with client, upstream, trio.open_nursery() as nursery:

            async def close_both() -> None:
                nursery.cancel_scope.cancel()

            nursery.start_soon(
                self._to_upstream, client, upstream, send, node_id, conn_id, close_both
            )
            nursery.start_soon(self._to_client, client, upstream, receive, close_both)

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
        fired, deferred = self.faults.select(info) if self.faults else ([], [])
        ex.faults.extend(r.name for r in fired)
        actions = [(r, a) for r in fired for a in r.actions]
        item = _InFlight(ex, api, v, hdr.correlation_id, actions=[a for _, a in actions])
        item.deferred = deferred
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
            if isinstance(a, Error):
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
        if item.deferred and item.ex is not None:
            changed = self._edit_data(item, body) or changed
        for a in item.actions:
            if isinstance(a, Throttle) and "throttle_time_ms" in body:
                body["throttle_time_ms"] = a.ms
                changed = True
        if changed:
            payload = payload[:pos] + c.encode(body)
        return payload, body

    def _edit_data(self, item: _InFlight, body: dict[str, Any]) -> bool:
        """Decide the ``DATA`` rules on Kafka's answer: each edits the first matching
        partition it can (record edits that need no log: ``corrupt_payload``,
        ``schema_id``, ``skew_timestamps``, ``corrupt_batch``...). True if any did."""
        assert item.ex is not None and item.api is not None
        call: Any = _RelayedAnswer(item.api.name, item.version, item.ex.request or {})
        changed = False
        for rule in item.deferred:
            for t, i, entry, _arr, _pos in partition_entries(body, self.topic_names.get):
                if t is None or not isinstance(entry, dict) or not entry.get("records"):
                    continue
                if not rule.match.partition_matches(t, i):
                    continue
                edited = entry["records"]
                for a in rule.actions:
                    new = a.edit_records(call, t, i, edited)
                    if new is not None:
                        edited = new
                if edited is entry["records"]:
                    continue
                if self.faults.decide(rule):
                    entry["records"] = edited
                    item.ex.faults.append(rule.name)
                    changed = True
                break
        return changed

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

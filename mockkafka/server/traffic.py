"""The traffic log: every request and response the cluster saw, for assertions.

Each exchange is an :class:`Exchange` (time, broker, connection, client id, API, version,
decoded request and response, the fault rules that fired). :class:`TrafficLog` keeps the
newest ``maxlen`` of them and filters them; ``to_jsonl`` / ``write_jsonl`` write them one
JSON object per line (bytes become ``{"bytes": N}`` summaries, UUIDs strings).

Queries are strict: API names are checked (a misspelling raises ConfigError with a
did-you-mean instead of matching nothing), and ``topic``, ``partition``, ``group``,
``transactional_id``, ``client_id`` filter exactly as fault rules match (see
:class:`~mockkafka.faults.model.Match`).

The log is written by the cluster's loop and read by tests from any thread. Every record
notifies the cluster's :class:`~mockkafka.server.waits.StateSignal`, so
:meth:`TrafficLog.wait_for` ("until the client sent 3 Metadata requests, at most 5 s")
sleeps until something happens; :meth:`TrafficLog.wait_for_async` is its awaitable form
(trio or asyncio).
"""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import threading
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import IO, TYPE_CHECKING, Any

from mockkafka.errors import ConfigError, error_code
from mockkafka.faults.model import Match, RequestInfo

if TYPE_CHECKING:
    from mockkafka.server.waits import Seen, StateSignal, Waits

# What the fields of Exchange.summary mean (a timeline prints it once, above its lines).
SUMMARY_LEGEND = (
    "+Nms since the first exchange | bN broker N | cN connection N | client id | API vVERSION"
    " | T-P topic-partition, @N offset the client sent (fetch position, commit), >N offset"
    " the broker returned (Produce base offset, ListOffsets, OffsetFetch), hwN high watermark"
    " | errors= error codes in the response | faults= rules that fired | response time"
    " (or closed, no-response)"
)


class Exchange:
    """One request and (once answered) its response.

    ``request`` and ``response`` are the decoded bodies (dicts). Once the exchange completes
    the log keeps only the wire frames and decodes a body again each time it is read (see
    :class:`TrafficLog`): read ``ex.request`` once into a local when a test looks at it
    several times.
    """

    __slots__ = (
        "_errors",
        "_info",
        "_request",
        "_request_frame",
        "_response",
        "_response_frame",
        "api",
        "api_key",
        "broker_id",
        "client_id",
        "closed_connection",
        "connection_id",
        "correlation_id",
        "faults",
        "no_response",
        "resolve",
        "response_time_ms",
        "seq",
        "size",
        "time_ms",
        "version",
    )

    def __init__(
        self,
        seq: int,
        time_ms: int,
        broker_id: int,
        connection_id: int,
        client_id: str | None,
        api: str,
        api_key: int,
        version: int,
        correlation_id: int,
        request: dict[str, Any] | None,
        response: dict[str, Any] | None = None,
        response_time_ms: int | None = None,
        faults: list[str] | None = None,
        closed_connection: bool = False,
        no_response: bool = False,
        size: int = 0,
        info: RequestInfo | None = None,
        resolve: Callable[[uuid.UUID], str | None] | None = None,
    ) -> None:
        self.seq = seq
        self.time_ms = time_ms
        self.broker_id = broker_id
        self.connection_id = connection_id
        self.client_id = client_id
        self.api = api
        self.api_key = api_key
        self.version = version
        self.correlation_id = correlation_id
        self._request = request
        self._response = response
        self.response_time_ms = response_time_ms
        self.faults: list[str] = [] if faults is None else faults
        self.closed_connection = closed_connection
        self.no_response = no_response
        #: Bytes the log accounts for this exchange (frames, names, bookkeeping).
        self.size = size
        self._info = info
        #: Topic id -> name, for :attr:`info` worked out from a request naming topics by id.
        self.resolve = resolve
        self._request_frame: tuple[bytes, int] | None = None
        self._response_frame: tuple[bytes, int] | None = None
        self._errors: frozenset[int] | None = None

    def __repr__(self) -> str:
        return (
            f"<Exchange seq={self.seq} b{self.broker_id} c{self.connection_id} "
            f"{self.api} v{self.version} corr={self.correlation_id}>"
        )

    @property
    def request(self) -> dict[str, Any] | None:
        """The decoded request body (None for an exchange recorded without one)."""
        return self._body(self._request, self._request_frame, request=True)

    @request.setter
    def request(self, value: dict[str, Any] | None) -> None:
        self._request = value
        self._request_frame = None

    @property
    def response(self) -> dict[str, Any] | None:
        """The decoded response body (None until answered, or when there was none)."""
        return self._body(self._response, self._response_frame, request=False)

    @response.setter
    def response(self, value: dict[str, Any] | None) -> None:
        self._response = value
        self._response_frame = None
        self._errors = None

    def _body(
        self, body: dict[str, Any] | None, frame: tuple[bytes, int] | None, *, request: bool
    ) -> dict[str, Any] | None:
        if body is not None or frame is None:
            return body
        return _decode(self.api_key, self.version, frame, request=request)

    @property
    def answered(self) -> bool:
        """Whether a response was recorded (without decoding it)."""
        return self._response is not None or self._response_frame is not None

    def compact(self) -> int:
        """Let go of the decoded bodies that have a wire frame (they are decoded again when
        read); returns the bytes the exchange now accounts for beyond its frames."""
        if self._request_frame is not None:
            self._request = None
        if self._response_frame is not None:
            self._response = None
        return _info_bytes(self._info)

    @property
    def info(self) -> RequestInfo | None:
        """The request's topics, partitions, groups (as fault rules see them); None for an
        exchange recorded without a request body. Worked out from the request on first
        read (the broker does not spend it on requests nobody filters), then kept."""
        info = self._info
        if info is None and (self._request is not None or self._request_frame is not None):
            from mockkafka.faults.inspect import request_info

            info = request_info(
                self.api,
                self.version,
                self.request,
                broker_id=self.broker_id,
                connection_id=self.connection_id,
                client_id=self.client_id,
                resolve=self.resolve,
            )
            if len(info.topics) + len(info.partitions) + len(info.groups) > MAX_KEPT_NAMES:
                # As for an exchange that had them when it completed (TrafficLog.completed).
                info = dataclasses.replace(
                    info, topics=frozenset(), partitions=frozenset(), groups=frozenset()
                )
            self._info = info
        return info

    @info.setter
    def info(self, value: RequestInfo | None) -> None:
        self._info = value

    def request_info(self) -> RequestInfo:
        """What fault rules (and traffic filters) match on for this exchange."""
        info = self.info
        if info is None:
            return self.basic_info()
        return info

    def basic_info(self) -> RequestInfo:
        """What a rule matches on without the request's names (API, version, broker,
        connection, client id): enough for a filter that names no topic, partition, group
        or transactional id, and free (nothing decoded)."""
        return RequestInfo(
            self.api, self.version, self.broker_id, self.connection_id, self.client_id
        )

    @property
    def duration_ms(self) -> int | None:
        if self.response_time_ms is None:
            return None
        return self.response_time_ms - self.time_ms

    @property
    def error_codes(self) -> set[int]:
        """Every non-zero error code anywhere in the response."""
        if self._errors is not None:
            return set(self._errors)
        out: set[int] = set()
        response = self.response
        if response is not None:
            _collect_errors(response, out)
        if self._response_frame is not None:  # a kept frame never changes: remember them
            self._errors = frozenset(out)
        return out

    def summary(
        self,
        origin_ms: int | None = None,
        resolve: Callable[[uuid.UUID], str | None] | None = None,
    ) -> str:
        """One line (see :data:`SUMMARY_LEGEND`): time (ms since ``origin_ms``, the first
        exchange by default), broker, connection, client, API and version, partitions with
        offsets (topic ids named through ``resolve``, by default the exchange's own, which
        knows deleted topics too), errors, faults, duration."""
        from mockkafka.faults.inspect import partition_offsets

        if resolve is None:
            resolve = self.resolve

        errs = sorted(self.error_codes)
        origin = self.time_ms if origin_ms is None else origin_ms
        parts = [
            f"+{self.time_ms - origin:>6}ms",
            f"b{self.broker_id}",
            f"c{self.connection_id}",
            f"{self.client_id or '-'}",
            f"{self.api} v{self.version}",
        ]
        where = partition_offsets(self.request, self.response, resolve)
        if where:
            parts.append(where)
        if errs:
            names = []
            for e in errs:
                try:
                    names.append(error_code(e).name)
                except ValueError:
                    names.append(str(e))
            parts.append("errors=" + ",".join(names))
        if self.faults:
            parts.append("faults=" + ",".join(self.faults))
        if self.closed_connection:
            parts.append("closed")
        elif self.no_response:
            parts.append("no-response")
        elif self.duration_ms is not None:
            parts.append(f"{self.duration_ms}ms")
        return " ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "time_ms": self.time_ms,
            "broker_id": self.broker_id,
            "connection_id": self.connection_id,
            "client_id": self.client_id,
            "api": self.api,
            "version": self.version,
            "correlation_id": self.correlation_id,
            "request": _jsonable(self.request),
            "response": _jsonable(self.response),
            "response_time_ms": self.response_time_ms,
            "faults": self.faults,
            "closed_connection": self.closed_connection,
            "no_response": self.no_response,
        }


def _decode(
    api_key: int, version: int, frame: tuple[bytes, int], *, request: bool
) -> dict[str, Any]:
    """A body decoded again from its frame (``(bytes, body offset)``)."""
    from mockkafka.protocol.apis import API_BY_KEY
    from mockkafka.protocol.codec import codec

    api = API_BY_KEY[api_key]
    data, pos = frame
    try:
        body, _end = codec(api.request_name if request else api.response_name, version).decode(
            data, pos
        )
    except Exception as exc:  # a log read must not fail on one odd frame
        return {"undecodable": f"{len(data)} bytes: {exc}"}
    out: dict[str, Any] = body
    return out


def _response_body_offset(api_key: int, version: int) -> int:
    """Where the body starts in a response frame as ``encode_response`` writes it: size,
    correlation id, and the empty tag buffer of a flexible header."""
    found = _BODY_OFFSETS.get((api_key, version))
    if found is None:
        from mockkafka.protocol.apis import response_header_version

        found = _BODY_OFFSETS[api_key, version] = 8 + (
            1 if response_header_version(api_key, version) >= 1 else 0
        )
    return found


#: (api key, version) -> :func:`_response_body_offset` (every recorded answer asks).
_BODY_OFFSETS: dict[tuple[int, int], int] = {}


def _decoded_bytes(body: Any, budget: int = 4096) -> int:
    """About what a decoded body that the log keeps holds (a body without a frame: an
    answer built for an unsupported version, a fault's own body); walks at most ``budget``
    values and counts each at 100 bytes."""
    if body is None:
        return 0
    stack = [body]
    n = 0
    while stack and n < budget:
        v = stack.pop()
        n += 1
        if isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list | tuple):
            stack.extend(v)
        elif isinstance(v, bytes | bytearray | memoryview | str):
            n += len(v) // 100
    return n * 100


#: Bytes an exchange costs beyond its frames (the object, its lists, the RequestInfo).
EXCHANGE_OVERHEAD = 600


def _info_bytes(info: RequestInfo | None) -> int:
    """About what the names of a RequestInfo hold (str objects and set slots)."""
    if info is None:
        return EXCHANGE_OVERHEAD
    names = sum(len(t) + 90 for t in info.topics) + sum(len(g) + 90 for g in info.groups)
    return EXCHANGE_OVERHEAD + names + 130 * len(info.partitions)


def _collect_errors(obj: Any, out: set[int]) -> None:
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k == "error_code" and isinstance(v, int) and v:
                out.add(v)
            elif isinstance(v, dict | list):
                _collect_errors(v, out)
    elif isinstance(obj, list):
        for v in obj:
            if isinstance(v, dict | list):
                _collect_errors(v, out)


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, bytes | bytearray | memoryview):
        b = bytes(obj)
        if len(b) <= 64:
            return {"base64": base64.b64encode(b).decode()}
        return {"bytes": len(b)}
    if isinstance(obj, uuid.UUID):
        return str(obj)
    return obj


#: An exchange listing more topics and partitions than this keeps none of them once answered
#: (traffic filters by topic then skip it, as they skip an omitted body).
MAX_KEPT_NAMES = 10_000


def _omitted(size: int, limit: int, body: Any = None) -> dict[str, Any]:
    """What the log keeps of a body over ``limit``: its top-level scalars
    (``throttle_time_ms``, ``error_code``, ...) and a note saying the rest was left out."""
    kept = {}
    if isinstance(body, dict):
        kept = {k: v for k, v in body.items() if v is None or isinstance(v, int | float | str)}
    note = f"{size} bytes on the wire, over the traffic log's max_body_bytes={limit}"
    return {**kept, "omitted": note}


class TrafficLog:
    """The newest exchanges, oldest first. Filter with :meth:`requests`.

    Bounded by the memory it holds, so a long or hostile test cannot grow it without end.
    A completed exchange keeps its request and response as wire frames (a decoded body can
    be a hundred times its wire size: 12,000 group names, a 60-entry ApiVersions answer) and
    decodes them again when read. The log holds at most ``maxlen`` exchanges and
    ``max_bytes`` bytes (frames, the names fault rules match on, and a few hundred bytes of
    bookkeeping per exchange); the oldest go first. A frame over ``max_body_bytes`` is kept
    as ``{"omitted": "..."}`` instead. With ``enabled=False`` nothing is kept at all.
    """

    def __init__(
        self,
        maxlen: int = 20_000,
        *,
        enabled: bool = True,
        max_bytes: int = 64 * 1024 * 1024,
        max_body_bytes: int = 256 * 1024,
    ) -> None:
        self._items: deque[Exchange] = deque()
        self.maxlen = maxlen
        self.max_bytes = max_bytes
        self.max_body_bytes = max_body_bytes
        self._bytes = 0
        self._seq = 0
        self.enabled = enabled
        self.on_record: list[Callable[[Exchange], None]] = []
        # Called once per exchange when it is answered, closed or left unanswered (the
        # live JSONL and log of `mockkafka serve`).
        self.on_completed: list[Callable[[Exchange], None]] = []
        self._lock = threading.Lock()
        self.origin_ms: int | None = None  # time of the first exchange: timelines count from it
        #: Notified on every record (set by the server that writes this log).
        self.signal: StateSignal | None = None
        #: How waits reach the cluster's loop (set by the public cluster object).
        self.waits: Waits | None = None
        #: Topic id -> name (set by the public cluster object): Fetch v13+ names topics
        #: by id, queries answer by name.
        self.topic_name: Callable[[uuid.UUID], str | None] | None = None

    @property
    def held_bytes(self) -> int:
        """The bytes the log accounts for now (at most ``max_bytes`` once it evicted)."""
        return self._bytes

    def _changed(self) -> None:
        if self.signal is not None:
            self.signal.notify()

    def start(
        self,
        *,
        time_ms: int,
        broker_id: int,
        connection_id: int,
        client_id: str | None,
        api: str,
        api_key: int,
        version: int,
        correlation_id: int,
        request: dict[str, Any] | None,
        size: int = 0,
        info: RequestInfo | None = None,
        frame: bytes | None = None,
        body_offset: int = 0,
        resolve: Callable[[uuid.UUID], str | None] | None = None,
    ) -> Exchange:
        """Record a request (``size``: its frame's wire bytes; ``frame`` and
        ``body_offset``: the frame itself and where its body starts, so the log can let the
        decoded body go once the exchange completes); returns its exchange. Without
        ``info`` the exchange works it out when a filter first needs it, topic ids named
        through ``resolve``."""
        self._seq += 1
        if size > self.max_body_bytes:
            if info is None and request is not None and self.enabled:
                # The body is not kept: its names are worked out now, while it is here.
                from mockkafka.faults.inspect import request_info

                info = request_info(
                    api,
                    version,
                    request,
                    broker_id=broker_id,
                    connection_id=connection_id,
                    client_id=client_id,
                    resolve=resolve,
                )
            request = _omitted(size, self.max_body_bytes, request)
            frame = None
        if self.origin_ms is None:
            self.origin_ms = time_ms
        ex = Exchange(
            self._seq,
            time_ms,
            broker_id,
            connection_id,
            client_id,
            api,
            api_key,
            version,
            correlation_id,
            request,
            size=size,
            info=info,
            resolve=resolve,
        )
        if frame is not None and self.enabled:
            ex._request_frame = (frame, body_offset)
        if self.enabled:
            with self._lock:
                self._items.append(ex)
                self._bytes += size
                self._evict()
            for cb in self.on_record:
                cb(ex)
            self._changed()
        return ex

    def completed(self, ex: Exchange, size: int = 0, frame: bytes | None = None) -> None:
        """Signal waiters that ``ex`` got its response (or was closed or parked);
        ``size`` is the response frame's wire bytes and ``frame`` the frame itself (as
        ``ServerConnection.encode_response`` wrote it), kept instead of the decoded body."""
        if size > self.max_body_bytes:
            ex.response = _omitted(size, self.max_body_bytes, ex.response)
            frame = None
        info = ex._info  # (only one worked out already: the rest are capped when read)
        if info is not None and (
            len(info.topics) + len(info.partitions) + len(info.groups) > MAX_KEPT_NAMES
        ):
            # Fault rules have seen the names; the log keeps no more of them than of the
            # body (a hostile Metadata naming 60,000 topics would pin megabytes).
            ex.info = dataclasses.replace(
                info, topics=frozenset(), partitions=frozenset(), groups=frozenset()
            )
        for cb in self.on_completed:  # while the bodies are still decoded
            cb(ex)
        if not self.enabled:
            return
        if frame is not None and ex._response is not None:
            ex._response_frame = (frame, _response_body_offset(ex.api_key, ex.version))
        extra = ex.compact()
        with self._lock:
            if ex._response is not None or ex._request is not None:
                extra += _decoded_bytes(ex._request) + _decoded_bytes(ex._response)
            ex.size += size + extra
            self._bytes += size + extra
            self._evict()
        self._changed()

    def _evict(self) -> None:
        items = self._items
        while items and (len(items) > self.maxlen or self._bytes > self.max_bytes):
            self._bytes -= items.popleft().size

    def mark(self) -> int:
        """The newest sequence number: pass it as ``since_seq`` to see only later traffic."""
        return self._seq

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[Exchange]:
        with self._lock:
            return iter(list(self._items))

    def clear(self) -> None:
        """Forget every exchange (sequence numbers keep counting)."""
        with self._lock:
            self._items.clear()
            self._bytes = 0
        self.origin_ms = None

    def requests(
        self,
        api: str | Iterable[str] | None = None,
        *,
        broker: int | Iterable[int] | None = None,
        topic: str | None = None,
        partition: int | Iterable[int] | None = None,
        group: str | None = None,
        transactional_id: str | None = None,
        client_id: str | None = None,
        connection: int | None = None,
        version: int | None = None,
        with_error: int | str | None = None,
        fault: Any = None,
        since_seq: int = 0,
        answered: bool | None = None,
        where: Callable[[Exchange], bool] | None = None,
    ) -> list[Exchange]:
        """Exchanges matching every given filter.

        ``api`` is a name or a list of names (checked: a misspelling raises ConfigError with
        a did-you-mean); ``broker``, ``topic``, ``partition``, ``group``,
        ``transactional_id``, ``client_id`` (shell wildcards) and ``connection`` match as a
        fault rule's ``on(...)`` does; ``with_error`` an error name or code found anywhere
        in the response; ``fault`` a rule (or its name) that fired on the exchange;
        ``answered`` True for exchanges that got a response; ``where`` any predicate.
        """
        match = Match(
            api=api if api is not None else "*",  # type: ignore[arg-type]
            versions=version,  # type: ignore[arg-type]
            broker=broker,  # type: ignore[arg-type]
            topic=topic,
            partition=partition,  # type: ignore[arg-type]
            group=group,
            transactional_id=transactional_id,
            client_id=client_id,
            connection=connection,
        )
        if fault is not None and not isinstance(fault, str):
            fault = fault.name
        err = int(error_code(with_error)) if with_error is not None else None
        with self._lock:
            items = list(self._items)
        # Only a filter on names needs the request's names (worked out on first need): the
        # other fields are tried first, on what the exchange holds without decoding.
        names = (
            topic is not None
            or partition is not None
            or group is not None
            or transactional_id is not None
        )
        cheap = (
            Match(
                api=match.api,
                versions=match.versions,
                broker=match.broker,
                client_id=client_id,
                connection=connection,
            )
            if names
            else match
        )
        out = []
        for ex in items:
            if ex.seq <= since_seq:
                continue
            if not cheap.matches(ex.basic_info()):
                continue
            if names and not match.matches(ex.request_info()):
                continue
            if err is not None and err not in ex.error_codes:
                continue
            if fault is not None and fault not in ex.faults:
                continue
            if answered is not None and ex.answered != answered:
                continue
            if where is not None and not where(ex):
                continue
            out.append(ex)
        return out

    def fetch_positions(
        self, topic: str | None = None, *, since_seq: int = 0, **filters: Any
    ) -> dict[tuple[str, int], int]:
        """``{(topic, partition): offset}``: the furthest ``fetch_offset`` any Fetch asked
        for on each partition (where the consumers have got to), by topic name also when
        the client fetched by topic id (Fetch v13+, librdkafka 2.x, Spark's Java client).
        ``topic`` narrows it to one topic; other filters are those of :meth:`requests`
        (``broker``, ``client_id``, ...)."""
        out: dict[tuple[str, int], int] = {}
        for ex in self.requests("Fetch", since_seq=since_seq, **filters):
            for t in (ex.request or {}).get("topics", []):
                name = t.get("topic") or None
                tid = t.get("topic_id")
                if name is None and isinstance(tid, uuid.UUID) and self.topic_name is not None:
                    name = self.topic_name(tid)
                if name is None or (topic is not None and name != topic):
                    continue
                for p in t.get("partitions", []):
                    off = p.get("fetch_offset", -1)
                    key = (name, p.get("partition", -1))
                    if off > out.get(key, -1):
                        out[key] = off
        return out

    def count(self, api: str | Iterable[str] | None = None, **filters: Any) -> int:
        """How many exchanges match (same filters as :meth:`requests`)."""
        return len(self.requests(api, **filters))

    def _wait_probe(
        self, api: str | Iterable[str] | None, count: int, filters: dict[str, Any]
    ) -> tuple[Callable[[], Seen[list[Exchange]]], str]:
        from mockkafka.server.waits import Seen

        if not self.enabled:
            raise ConfigError("traffic.wait_for: traffic recording is off (record_traffic=False)")
        self.requests(api, **filters)  # check the filters now, in the caller's thread
        what = f"traffic.wait_for({api!r}, count={count}" + "".join(
            f", {k}={v!r}" for k, v in filters.items()
        )

        def probe() -> Seen[list[Exchange]]:
            got = self.requests(api, **filters)
            recent = self.timeline(20)
            return Seen(
                len(got) >= count,
                got,
                f"{len(got)} matching; "
                + (
                    f"recent traffic:\n{recent}"
                    if recent
                    else "no traffic recorded yet (no client sent a request to this "
                    "cluster: does it use its bootstrap_servers?)"
                ),
            )

        return probe, what + ")"

    def _require_waits(self) -> Waits:
        if self.waits is None:
            from mockkafka.server.waits import Waits

            self.waits = Waits.inline(self.signal)
        return self.waits

    def wait_for(
        self,
        api: str | Iterable[str] | None = None,
        *,
        count: int = 1,
        timeout: float = 10.0,
        **filters: Any,
    ) -> list[Exchange]:
        """Block until at least ``count`` exchanges match (filters as :meth:`requests`);
        returns them. Raises WaitTimeout, with the recent timeline, after ``timeout`` s.

        From async code (or the trio cluster) use ``await traffic.wait_for_async(...)``.
        """
        __tracebackhide__ = True
        probe, what = self._wait_probe(api, count, filters)
        return self._require_waits().wait(
            probe, timeout=timeout, what=what, async_name="traffic.wait_for_async(...)"
        )

    async def wait_for_async(
        self,
        api: str | Iterable[str] | None = None,
        *,
        count: int = 1,
        timeout: float = 10.0,
        **filters: Any,
    ) -> list[Exchange]:
        """The awaitable form of :meth:`wait_for` (trio or asyncio)."""
        __tracebackhide__ = True
        probe, what = self._wait_probe(api, count, filters)
        return await self._require_waits().wait_async(probe, timeout=timeout, what=what)

    def write_jsonl(self, path: str | os.PathLike[str], **filters: Any) -> int:
        """Write the exchanges matching ``filters`` to ``path`` as JSON lines; returns how
        many were written."""
        with open(path, "w", encoding="utf-8") as fp:
            return self.to_jsonl(fp, self.requests(**filters))

    def to_jsonl(self, fp: IO[str], items: Iterable[Exchange] | None = None) -> int:
        """Write exchanges as JSON lines; returns how many were written."""
        n = 0
        for ex in self._items if items is None else items:
            fp.write(json.dumps(ex.to_json(), default=str) + "\n")
            n += 1
        return n

    def timeline(self, last: int = 50) -> str:
        """A compact multi-line summary of the newest ``last`` exchanges."""
        with self._lock:
            items = list(self._items)[-last:]
        return "\n".join(ex.summary(self.origin_ms) for ex in items)

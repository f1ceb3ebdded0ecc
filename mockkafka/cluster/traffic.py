"""The traffic log: every request and response the cluster saw, for assertions.

Each exchange is an :class:`Exchange` (time, broker, connection, client id, API, version,
decoded request and response, the fault rules that fired). :class:`TrafficLog` keeps the
newest ``maxlen`` of them and filters them; ``to_jsonl`` / ``write_jsonl`` write them one
JSON object per line (bytes become ``{"bytes": N}`` summaries, UUIDs strings).

The log is written by the cluster's loop and read by tests from any thread: every change
is signalled on a :class:`threading.Condition`, so :meth:`TrafficLog.wait_for` ("until the
client sent 3 Metadata requests, at most 5 s") sleeps instead of polling.
:meth:`TrafficLog.wait_for_async` is the trio flavour (never block the loop that serves the
cluster with the sync one).
"""

from __future__ import annotations

import base64
import fnmatch
import json
import os
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any

# What the fields of Exchange.summary mean (a timeline prints it once, above its lines).
SUMMARY_LEGEND = (
    "+Nms since the first exchange | bN broker N | cN connection N | client id | API vVERSION"
    " | T-P topic-partition, @N offset the client sent (fetch position, commit), >N offset"
    " the broker returned (Produce base offset, ListOffsets, OffsetFetch), hwN high watermark"
    " | errors= error codes in the response | faults= rules that fired | response time"
    " (or closed, no-response)"
)


@dataclass(slots=True)
class Exchange:
    """One request and (once answered) its response."""

    seq: int
    time_ms: int
    broker_id: int
    connection_id: int
    client_id: str | None
    api: str
    api_key: int
    version: int
    correlation_id: int
    request: dict[str, Any] | None
    response: dict[str, Any] | None = None
    response_time_ms: int | None = None
    faults: list[str] = field(default_factory=list)
    closed_connection: bool = False
    no_response: bool = False

    @property
    def duration_ms(self) -> int | None:
        if self.response_time_ms is None:
            return None
        return self.response_time_ms - self.time_ms

    @property
    def error_codes(self) -> set[int]:
        """Every non-zero error code anywhere in the response."""
        out: set[int] = set()
        if self.response is not None:
            _collect_errors(self.response, out)
        return out

    def summary(
        self,
        origin_ms: int | None = None,
        resolve: Callable[[uuid.UUID], str | None] | None = None,
    ) -> str:
        """One line (see :data:`SUMMARY_LEGEND`): time (ms since ``origin_ms``, the first
        exchange by default), broker, connection, client, API and version, partitions with
        offsets (topic ids named through ``resolve``), errors, faults, duration."""
        from mockkafka.faults.inspect import partition_offsets

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
            from mockkafka.errors import error_code

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


class TrafficLog:
    """The newest exchanges, oldest first. Filter with :meth:`requests`."""

    def __init__(self, maxlen: int = 20_000, *, enabled: bool = True) -> None:
        self._items: deque[Exchange] = deque(maxlen=maxlen)
        self._seq = 0
        self.enabled = enabled
        self.on_record: list[Callable[[Exchange], None]] = []
        # Called once per exchange when it is answered, closed or left unanswered (the
        # live JSONL and log of `mockkafka serve`).
        self.on_completed: list[Callable[[Exchange], None]] = []
        self._cond = threading.Condition()
        self.origin_ms: int | None = None  # time of the first exchange: timelines count from it

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
    ) -> Exchange:
        self._seq += 1
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
        )
        if self.enabled:
            with self._cond:
                self._items.append(ex)
                self._cond.notify_all()
            for cb in self.on_record:
                cb(ex)
        return ex

    def completed(self, ex: Exchange) -> None:
        """Signal waiters that ``ex`` got its response (or was closed or parked)."""
        if self.enabled:
            with self._cond:
                self._cond.notify_all()
            for cb in self.on_completed:
                cb(ex)

    def mark(self) -> int:
        """The newest sequence number: pass it as ``since_seq`` to see only later traffic."""
        return self._seq

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[Exchange]:
        return iter(list(self._items))

    def clear(self) -> None:
        with self._cond:
            self._items.clear()

    def requests(
        self,
        api: str | Iterable[str] | None = None,
        *,
        broker: int | None = None,
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

        ``api`` is a name or a list of names; ``client_id`` takes shell wildcards;
        ``with_error`` an error name or code found anywhere in the response; ``fault`` a rule
        (or its name) that fired on the exchange; ``answered`` True for exchanges that got a
        response; ``where`` any predicate.
        """
        apis = {api} if isinstance(api, str) else set(api) if api is not None else None
        if fault is not None and not isinstance(fault, str):
            fault = fault.name
        err: int | None = None
        if with_error is not None:
            from mockkafka.errors import error_code

            err = int(error_code(with_error))
        out = []
        with self._cond:
            items = list(self._items)
        for ex in items:
            if ex.seq <= since_seq:
                continue
            if apis is not None and ex.api not in apis:
                continue
            if broker is not None and ex.broker_id != broker:
                continue
            if connection is not None and ex.connection_id != connection:
                continue
            if version is not None and ex.version != version:
                continue
            if client_id is not None and not fnmatch.fnmatchcase(ex.client_id or "", client_id):
                continue
            if err is not None and err not in ex.error_codes:
                continue
            if fault is not None and fault not in ex.faults:
                continue
            if answered is not None and (ex.response is not None) != answered:
                continue
            if where is not None and not where(ex):
                continue
            out.append(ex)
        return out

    def count(self, api: str | None = None, **filters: Any) -> int:
        """How many exchanges match (same filters as :meth:`requests`)."""
        return len(self.requests(api, **filters))

    def wait_for(
        self, api: str | None = None, *, count: int = 1, timeout: float = 10.0, **filters: Any
    ) -> list[Exchange]:
        """Block until at least ``count`` exchanges match (filters as :meth:`requests`);
        returns them. Raises TimeoutError, with the recent timeline, after ``timeout`` s.

        For a sync ``Cluster`` from the test thread; from trio use :meth:`wait_for_async`.
        """
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                got = self.requests(api, **filters)
                if len(got) >= count:
                    return got
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(
                        f"saw {len(got)} of {count} {api or 'requests'} matching {filters} "
                        f"within {timeout} s; recent traffic:\n{self.timeline(20)}"
                    )
                self._cond.wait(min(left, 0.5))

    async def wait_for_async(
        self, api: str | None = None, *, count: int = 1, timeout: float = 10.0, **filters: Any
    ) -> list[Exchange]:
        """:meth:`wait_for` for trio code (on the loop that serves the cluster)."""
        import trio

        with trio.move_on_after(timeout):
            while True:
                got = self.requests(api, **filters)
                if len(got) >= count:
                    return got
                await trio.sleep(0.005)
        got = self.requests(api, **filters)
        raise TimeoutError(
            f"saw {len(got)} of {count} {api or 'requests'} matching {filters} within "
            f"{timeout} s; recent traffic:\n{self.timeline(20)}"
        )

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
        with self._cond:
            items = list(self._items)[-last:]
        return "\n".join(ex.summary(self.origin_ms) for ex in items)

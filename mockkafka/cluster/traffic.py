"""The traffic log: every request and response the cluster saw, for assertions.

Each exchange is an :class:`Exchange` (time, broker, connection, client id, API, version,
decoded request and response, the fault rules that fired). :class:`TrafficLog` keeps the
newest ``maxlen`` of them and filters them; ``to_jsonl`` writes them one JSON object per line
(bytes become ``{"bytes": N}`` summaries, UUIDs strings).
"""

from __future__ import annotations

import base64
import fnmatch
import json
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any


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

    def summary(self) -> str:
        """One line: time, broker, connection, client, API/version, errors, faults."""
        errs = sorted(self.error_codes)
        parts = [
            f"{self.time_ms % 100000:>5}ms",
            f"b{self.broker_id}",
            f"c{self.connection_id}",
            f"{self.client_id or '-'}",
            f"{self.api}v{self.version}",
        ]
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
            self._items.append(ex)
            for cb in self.on_record:
                cb(ex)
        return ex

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[Exchange]:
        return iter(list(self._items))

    def clear(self) -> None:
        self._items.clear()

    def requests(
        self,
        api: str | None = None,
        *,
        broker: int | None = None,
        client_id: str | None = None,
        connection: int | None = None,
        version: int | None = None,
        with_error: int | str | None = None,
        fault: str | None = None,
        since_seq: int = 0,
    ) -> list[Exchange]:
        """Exchanges matching every given filter (``client_id`` takes shell wildcards)."""
        err: int | None = None
        if with_error is not None:
            from mockkafka.errors import error_code

            err = int(error_code(with_error))
        out = []
        for ex in self._items:
            if ex.seq <= since_seq:
                continue
            if api is not None and ex.api != api:
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
            out.append(ex)
        return out

    def to_jsonl(self, fp: IO[str], items: Iterable[Exchange] | None = None) -> int:
        """Write exchanges as JSON lines; returns how many were written."""
        n = 0
        for ex in self._items if items is None else items:
            fp.write(json.dumps(ex.to_json(), default=str) + "\n")
            n += 1
        return n

    def timeline(self, last: int = 50) -> str:
        """A compact multi-line summary of the newest ``last`` exchanges."""
        items = list(self._items)[-last:]
        return "\n".join(ex.summary() for ex in items)

"""Fetch sessions (KIP-227): incremental fetch requests and responses.

Theory of operation
-------------------
A consumer that supports sessions opens one with ``session_id=0, session_epoch=0`` and gets
an id back. Later requests name the id and the next epoch and list only the partitions that
changed (new fetch offset) plus ``forgotten_topics_data``; the broker keeps the full set.
The response then carries only partitions with news: records, an error, or a changed high
watermark / last stable offset / log start offset. ``session_epoch=-1`` closes a session and
makes the request a plain full fetch; ``session_epoch=0`` with an id closes that session and
opens a new one (what a client does after INVALID_FETCH_SESSION_EPOCH). Sessions belong to a broker, not a connection.

:class:`FetchSessionCache` is the per-broker table; :meth:`FetchSessionCache.update` applies
one request and says which partitions to read and whether the response is incremental.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from mockkafka.errors import ErrorCode

INITIAL_EPOCH = 0
FINAL_EPOCH = -1
MAX_SESSIONS = 1000

PartitionKey = tuple[str, int]  # (topic name or str(topic id), partition)


@dataclass(slots=True)
class SessionPartition:
    """What the session remembers of one partition: the request fields and what was sent."""

    request: dict[str, Any]
    topic: str | None
    topic_id: Any
    last_hw: int = -1
    last_lso: int = -1
    last_log_start: int = -1


@dataclass(slots=True)
class FetchSession:
    id: int
    epoch: int  # the epoch the next request must carry
    partitions: dict[PartitionKey, SessionPartition] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SessionUpdate:
    """The outcome of one request: error, the session (None if sessionless), incremental?"""

    error: ErrorCode
    session: FetchSession | None
    incremental: bool
    partitions: dict[PartitionKey, SessionPartition]


class FetchSessionCache:
    """One broker's fetch sessions."""

    def __init__(self) -> None:
        self.sessions: dict[int, FetchSession] = {}
        self._ids = itertools.count(1)

    def update(
        self,
        session_id: int,
        session_epoch: int,
        topics: list[dict[str, Any]],
        forgotten: list[dict[str, Any]],
        *,
        use_ids: bool,
    ) -> SessionUpdate:
        requested = _requested(topics, use_ids)
        if session_id != 0 and session_epoch in (INITIAL_EPOCH, FINAL_EPOCH):
            # A full fetch naming a session closes it (Kafka's FetchManager); with the
            # initial epoch it opens a new one (clients do this after a session error).
            self.sessions.pop(session_id, None)
            session_id = 0
        if session_id == 0:
            if session_epoch == INITIAL_EPOCH:
                if len(self.sessions) >= MAX_SESSIONS:
                    self.sessions.pop(next(iter(self.sessions)))
                s = FetchSession(next(self._ids), 1, requested)
                self.sessions[s.id] = s
                return SessionUpdate(ErrorCode.NONE, s, False, requested)
            return SessionUpdate(ErrorCode.NONE, None, False, requested)
        found = self.sessions.get(session_id)
        if found is None:
            return SessionUpdate(ErrorCode.FETCH_SESSION_ID_NOT_FOUND, None, False, {})
        s = found
        if session_epoch != s.epoch:
            return SessionUpdate(ErrorCode.INVALID_FETCH_SESSION_EPOCH, None, False, {})
        s.epoch = s.epoch + 1 if s.epoch < 2**31 - 1 else 1
        for key, sp in requested.items():
            old = s.partitions.get(key)
            if old is None:
                s.partitions[key] = sp
            else:
                old.request = sp.request
        for ft in forgotten:
            name = str(ft.get("topic_id")) if use_ids else ft.get("topic")
            for idx in ft.get("partitions") or []:
                s.partitions.pop((name or "", idx), None)
        return SessionUpdate(ErrorCode.NONE, s, True, s.partitions)


def _requested(topics: list[dict[str, Any]], use_ids: bool) -> dict[PartitionKey, SessionPartition]:
    out: dict[PartitionKey, SessionPartition] = {}
    for t in topics:
        name = str(t.get("topic_id")) if use_ids else t.get("topic")
        for p in t.get("partitions") or []:
            out[(name or "", p.get("partition", 0))] = SessionPartition(
                p, t.get("topic"), t.get("topic_id")
            )
    return out

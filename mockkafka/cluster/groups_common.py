"""Pieces shared by classic and KIP-848 consumer groups: committed offsets, answers that
complete later, and the base class of a group.

A group's committed offsets live on the group object, keyed by (topic, partition), each
remembering the topic id it was committed against, so offsets of a deleted topic disappear
(also when a topic of the same name is created again). A :class:`Pending` is a one-shot
slot for an answer that another request or a timer fills in (a JoinGroup waiting for the
join phase to end, a follower's SyncGroup waiting for the leader); the handler parks on the
group's wake-up key and looks at the slot when woken.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mockkafka.errors import ErrorCode

if TYPE_CHECKING:
    from mockkafka.cluster.host import StateCore

Message = dict[str, Any]


def group_key(group_id: str) -> tuple[str, str]:
    """The :meth:`ClusterState.notify` key of a group: parked group requests wait on it."""
    return ("group", group_id)


class Pending:
    """An answer that is not known yet (see the module docstring)."""

    __slots__ = ("result",)

    def __init__(self) -> None:
        self.result: Message | None = None

    @property
    def done(self) -> bool:
        return self.result is not None

    def complete(self, result: Message) -> None:
        """Fill the slot (the first answer wins)."""
        if self.result is None:
            self.result = result

    def __repr__(self) -> str:
        return f"Pending(result={self.result!r})"


@dataclass(slots=True)
class OffsetAndMetadata:
    """One committed offset."""

    offset: int
    leader_epoch: int = -1
    metadata: str | None = ""
    commit_timestamp_ms: int = -1
    topic_id: uuid.UUID | None = None


@dataclass(eq=False)
class Group:
    """What every group has: an id, a coordinator-visible state name and committed offsets."""

    group_id: str
    state_ref: StateCore
    offsets: dict[tuple[str, int], OffsetAndMetadata] = field(default_factory=dict)

    kind = "classic"

    @property
    def state_name(self) -> str:  # pragma: no cover - overridden
        raise NotImplementedError

    @property
    def protocol_type_name(self) -> str:  # pragma: no cover - overridden
        raise NotImplementedError

    def is_empty(self) -> bool:  # pragma: no cover - overridden
        raise NotImplementedError

    def subscribed_topics(self) -> set[str] | None:
        """Topics the members subscribe to (None: unknown, e.g. a non-consumer protocol)."""
        return set()

    def live_offsets(self) -> dict[tuple[str, int], OffsetAndMetadata]:
        """Committed offsets, dropping those whose topic was deleted (or re-created)."""
        topics = self.state_ref.topics
        stale = []
        for (topic, p), om in self.offsets.items():
            t = topics.get(topic)
            if (
                t is None
                or (om.topic_id is not None and om.topic_id != t.topic_id)
                or p >= len(t.partitions)
            ):
                stale.append((topic, p))
        for k in stale:
            del self.offsets[k]
        return self.offsets

    def notify(self) -> None:
        self.state_ref.notify(group_key(self.group_id))

    def fail_pending(self, error: ErrorCode) -> None:
        """Answer every parked request of the group with ``error`` (coordinator moved)."""

    def reset_timers(self) -> None:
        """Restart member timers from now (a new coordinator loaded the group)."""

    def shutdown(self) -> None:
        """The group is being deleted: cancel its timers."""


def topics_fingerprint(state: StateCore, names: set[str]) -> tuple[tuple[str, str, int], ...]:
    """(name, topic id, partition count) of the existing topics among ``names``, sorted:
    what the target assignment of a heartbeat-driven group depends on (a change means a new
    group epoch)."""
    topics = state.topics
    return tuple(
        sorted(
            (n, str(topics[n].topic_id), len(topics[n].partitions)) for n in names if n in topics
        )
    )


def topic_id_partitions(state: StateCore, tp: Mapping[str, set[int]]) -> list[Message]:
    """``{topic: partitions}`` as heartbeat ``topic_partitions`` (topic ids; deleted topics
    left out)."""
    topics = state.topics
    return [
        {"topic_id": topics[t].topic_id, "partitions": sorted(ps)}
        for t, ps in sorted(tp.items())
        if ps and t in topics
    ]


def described_assignment(state: StateCore, tp: Mapping[str, set[int]]) -> Message:
    """``{topic: partitions}`` as a describe response's ``Assignment`` (ids and names)."""
    topics = state.topics
    return {
        "topic_partitions": [
            {"topic_id": topics[t].topic_id, "topic_name": t, "partitions": sorted(ps)}
            for t, ps in sorted(tp.items())
            if ps and t in topics
        ]
    }


class SessionTimers:
    """Member session timeouts of the heartbeat-driven groups (KIP-848 consumer groups and
    KIP-932 share groups): a member whose session timer fires is removed."""

    state_ref: StateCore
    members: Mapping[str, Any]

    @property
    def session_timeout_ms(self) -> int:  # pragma: no cover - overridden
        raise NotImplementedError

    def remove_member(self, m: Any) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def _schedule_session(self, m: Any) -> None:
        if m.session_timer is not None:
            m.session_timer.cancel()
        m.session_timer = self.state_ref.call_later(
            self.session_timeout_ms, lambda: self._session_expired(m)
        )

    def _session_expired(self, m: Any) -> None:
        m.session_timer = None
        if self.members.get(m.member_id) is m:
            self.remove_member(m)

    def reset_timers(self) -> None:
        """Restart every member's session timer from now (a new coordinator loaded it)."""
        for m in self.members.values():
            self._schedule_session(m)

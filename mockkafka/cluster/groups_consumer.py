"""KIP-848 consumer groups: ConsumerGroupHeartbeat with server-side assignment.

Theory of operation
-------------------
A :class:`ConsumerGroup` is driven by one request, ConsumerGroupHeartbeat, answered at once
(nothing parks). Three epochs order everything, as in Kafka's ``GroupMetadataManager``:

* ``group_epoch`` -- bumped when membership or a subscription changes, or when the
  partitions of a subscribed topic change (created, deleted, grown);
* ``assignment_epoch`` -- the group epoch the *target assignment* was computed for. The
  target comes from the server-side assignor (``uniform`` or ``range``, see
  ``assignors.py``) and is recomputed whenever the group epoch moves ahead of it;
* each member's ``member_epoch`` -- the assignment epoch the member has reconciled to.

Reconciling a member with the target (Kafka's ``CurrentAssignmentBuilder``): partitions the
member owns but should not are *revoked* first -- the member keeps its epoch and is told to
keep only the rest (state UNREVOKED_PARTITIONS) until a heartbeat reports owned partitions
without the revoked ones. Then it moves to the target epoch and gets the new partitions that
no other member still holds; those still held are *unreleased* and come with a later
heartbeat (state UNRELEASED_PARTITIONS). So a partition never has two owners.

Liveness: a member that sends no heartbeat within ``group.consumer.session.timeout.ms`` is
removed; one that does not finish a revocation within its rebalance timeout is fenced. A
member leaves with epoch -1; a static member (``instance_id``) leaves with -2 and keeps its
assignment for a new process with the same instance id until its session times out
(until then another member with that instance id gets UNRELEASED_INSTANCE_ID if the old
one did not leave).
"""

from __future__ import annotations

import enum
import re
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mockkafka.cluster.assignors import ASSIGNORS, DEFAULT_ASSIGNOR, MemberSubscription
from mockkafka.cluster.groups_common import (
    Group,
    Message,
    SessionTimers,
    described_assignment,
    topic_id_partitions,
    topics_fingerprint,
)
from mockkafka.errors import ErrorCode

if TYPE_CHECKING:
    from mockkafka.cluster.base import TimerHandle

LEAVE_GROUP_MEMBER_EPOCH = -1
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2

TopicPartitions = dict[str, set[int]]

#: ConsumerGroupDescribe v1 ``member_type`` (KIP-1099): -1 unknown, 0 classic, 1 consumer.
CONSUMER_MEMBER_TYPE = 1


class MemberState(enum.Enum):
    STABLE = "STABLE"
    UNREVOKED_PARTITIONS = "UNREVOKED_PARTITIONS"
    UNRELEASED_PARTITIONS = "UNRELEASED_PARTITIONS"


@dataclass(eq=False, slots=True)
class ConsumerMember:
    """One member of a consumer group."""

    member_id: str
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    rebalance_timeout_ms: int = 300_000
    subscribed_topic_names: list[str] = field(default_factory=list)
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    member_epoch: int = 0
    previous_member_epoch: int = -1
    state: MemberState = MemberState.STABLE
    assigned: TopicPartitions = field(default_factory=dict)
    pending_revocation: TopicPartitions = field(default_factory=dict)
    session_timer: TimerHandle | None = None
    revocation_timer: TimerHandle | None = None

    def cancel_timers(self) -> None:
        for t in (self.session_timer, self.revocation_timer):
            if t is not None:
                t.cancel()
        self.session_timer = self.revocation_timer = None


def _copy(tp: Mapping[str, set[int]]) -> TopicPartitions:
    return {t: set(ps) for t, ps in tp.items() if ps}


def _minus(a: Mapping[str, set[int]], b: Mapping[str, set[int]]) -> TopicPartitions:
    return {t: ps - b.get(t, set()) for t, ps in a.items() if ps - b.get(t, set())}


def held_by_others(members: Iterable[Any], me: Any) -> TopicPartitions:
    """What the members other than ``me`` hold or still have to give up (``assigned`` and
    ``pending_revocation``): not yet free for ``me`` (KIP-848 reconciliation; the keys are
    topics, or subtopology ids in a streams group)."""
    out: TopicPartitions = {}
    for x in members:
        if x is me:
            continue
        for held in (x.assigned, x.pending_revocation):
            for key, ps in held.items():
                out.setdefault(key, set()).update(ps)
    return out


def _and(a: Mapping[str, set[int]], b: Mapping[str, set[int]]) -> TopicPartitions:
    return {t: ps & b.get(t, set()) for t, ps in a.items() if ps & b.get(t, set())}


def _overlaps(a: Mapping[str, set[int]], b: Mapping[str, set[int]]) -> bool:
    return any(ps & b.get(t, set()) for t, ps in a.items())


def _sorted(tp: Mapping[str, set[int]]) -> dict[str, list[int]]:
    return {t: sorted(ps) for t, ps in sorted(tp.items()) if ps}


class MemberEpochOffsets:
    """Offset commits and fetches checked against the member epoch: the groups whose members
    heartbeat with an epoch (KIP-848 consumer groups, KIP-1071 streams groups)."""

    members: Mapping[str, Any]

    def validate_offset_commit(
        self,
        member_id: str,
        member_epoch: int,
        *,
        group_instance_id: str | None = None,
        version: int = 9,
        transactional: bool = False,
    ) -> ErrorCode:
        """Kafka's ``ConsumerGroup.validateOffsetCommit``.

        A commit with epoch -1 is a simple commit, allowed while the group has no members; a
        TxnOffsetCommit naming no member is not checked; a KIP-848 member must commit with
        OffsetCommit v9+ (UNSUPPORTED_VERSION) and with exactly its current member epoch:
        any other epoch, older *or newer*, is STALE_MEMBER_EPOCH (Kafka never answers
        FENCED_MEMBER_EPOCH to a commit; clients retry a stale commit with the epoch of
        their next heartbeat, while FENCED would make them drop out of the group).
        """
        if member_epoch < 0 and not self.members:
            return ErrorCode.NONE
        if transactional and member_epoch == -1 and not member_id and group_instance_id is None:
            return ErrorCode.NONE
        m = self.members.get(member_id)
        if m is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if not transactional and version < 9:
            return ErrorCode.UNSUPPORTED_VERSION
        if member_epoch != m.member_epoch:
            return ErrorCode.STALE_MEMBER_EPOCH
        return ErrorCode.NONE

    def validate_offset_fetch(self, member_id: str | None, member_epoch: int) -> ErrorCode:
        if member_id is None or (member_epoch < 0 and not member_id):
            return ErrorCode.NONE
        m = self.members.get(member_id)
        if m is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if member_epoch != m.member_epoch:
            return ErrorCode.STALE_MEMBER_EPOCH
        return ErrorCode.NONE


@dataclass(eq=False)
class ConsumerGroup(MemberEpochOffsets, SessionTimers, Group):
    """A KIP-848 consumer group (see the module docstring)."""

    group_epoch: int = 0
    assignment_epoch: int = 0
    members: dict[str, ConsumerMember] = field(default_factory=dict)
    target: dict[str, TopicPartitions] = field(default_factory=dict)
    static_members: dict[str, str] = field(default_factory=dict)
    subscription_metadata: tuple[tuple[str, str, int], ...] = ()
    assignor_name: str = DEFAULT_ASSIGNOR
    dead: bool = False
    rebalances: int = 0

    kind = "consumer"

    @property
    def state_name(self) -> str:
        if self.dead:
            return "Dead"
        if not self.members:
            return "Empty"
        if self.group_epoch > self.assignment_epoch:
            return "Assigning"
        for m in self.members.values():
            if m.member_epoch != self.assignment_epoch or m.state is not MemberState.STABLE:
                return "Reconciling"
        return "Stable"

    @property
    def protocol_type_name(self) -> str:
        return "consumer"

    def is_empty(self) -> bool:
        return not self.members

    def _config_ms(self, key: str, default: int) -> int:
        return int(self.state_ref.broker_configs.get(key, str(default)))

    @property
    def heartbeat_interval_ms(self) -> int:
        return self._config_ms(
            "group.consumer.heartbeat.interval.ms",
            self.state_ref.config.group_consumer_heartbeat_interval_ms,
        )

    @property
    def session_timeout_ms(self) -> int:
        return self._config_ms("group.consumer.session.timeout.ms", 45000)

    # -- subscriptions -------------------------------------------------------------------------

    def _member_topics(self, m: ConsumerMember) -> set[str]:
        topics = {t for t in m.subscribed_topic_names if t in self.state_ref.topics}
        if m.subscribed_topic_regex:
            try:
                rx = re.compile(m.subscribed_topic_regex)
            except re.error:
                rx = None
            if rx is not None:
                # Internal topics too: Kafka's coordinator matches every topic it knows.
                topics |= {name for name in self.state_ref.topics if rx.fullmatch(name)}
        return topics

    def subscribed_topics(self) -> set[str] | None:
        out: set[str] = set()
        for m in self.members.values():
            out |= set(m.subscribed_topic_names) | self._member_topics(m)
        return out

    def _metadata_fingerprint(self) -> tuple[tuple[str, str, int], ...]:
        names: set[str] = set()
        for m in self.members.values():
            names |= self._member_topics(m)
        return topics_fingerprint(self.state_ref, names)

    def _bump(self) -> None:
        self.group_epoch += 1

    def _maybe_update_target(self, *, bump: bool = False) -> None:
        """Bump the group epoch (once) if asked or topic metadata changed; then recompute the
        target assignment if it is behind."""
        fp = self._metadata_fingerprint()
        if fp != self.subscription_metadata:
            self.subscription_metadata = fp
            bump = True
        if bump:
            self._bump()
        if self.group_epoch <= self.assignment_epoch:
            return
        assignor = ASSIGNORS.get(self.assignor_name, ASSIGNORS[DEFAULT_ASSIGNOR])
        partitions = {name: count for name, _, count in fp}
        specs = {
            mid: MemberSubscription(frozenset(self._member_topics(m)), self.target.get(mid, {}))
            for mid, m in self.members.items()
        }
        self.target = assignor(specs, partitions)
        self.assignment_epoch = self.group_epoch
        self.rebalances += 1

    def _choose_assignor(self) -> str:
        for m in self.members.values():
            if m.server_assignor:
                return m.server_assignor
        return DEFAULT_ASSIGNOR

    # -- heartbeat -----------------------------------------------------------------------------

    def heartbeat(self, request: Mapping[str, Any], client_id: str, client_host: str) -> Message:
        """Handle a ConsumerGroupHeartbeat body; returns the response body."""
        member_id: str = request.get("member_id") or ""
        epoch: int = request.get("member_epoch", 0)
        instance_id: str | None = request.get("instance_id")
        owned_ids = request.get("topic_partitions")
        owned = self._owned_from_request(owned_ids) if owned_ids is not None else None
        assignor = request.get("server_assignor")
        if assignor is not None and assignor not in ASSIGNORS:
            return self._error(
                ErrorCode.UNSUPPORTED_ASSIGNOR,
                f"assignor {assignor!r} is not supported; use one of {sorted(ASSIGNORS)}",
            )
        if epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
            return self._leave(member_id, instance_id, epoch)
        if epoch == 0:
            if not member_id:
                member_id = str(uuid.uuid4())
            joined = self._join_member(member_id, instance_id)
            if isinstance(joined, dict):
                return joined
            m, replaced = joined
        else:
            replaced = False
            found = self.members.get(member_id)
            if found is None:
                return self._error(ErrorCode.UNKNOWN_MEMBER_ID, f"member {member_id} is unknown")
            if instance_id is not None and self.static_members.get(instance_id) != member_id:
                return self._error(ErrorCode.FENCED_INSTANCE_ID, "instance id is used by another")
            if epoch != found.member_epoch:
                lost_response = (
                    epoch == found.previous_member_epoch
                    and owned is not None
                    and not _minus(owned, found.assigned)
                )
                if not lost_response:
                    return self._error(
                        ErrorCode.FENCED_MEMBER_EPOCH,
                        f"member epoch {epoch} is not the current epoch {found.member_epoch}",
                    )
            m = found
        before = _copy(m.assigned)
        changed = epoch == 0 and not replaced
        names = request.get("subscribed_topic_names")
        if names is not None and sorted(names) != sorted(m.subscribed_topic_names):
            m.subscribed_topic_names = list(names)
            changed = True
        regex = request.get("subscribed_topic_regex")
        if regex is not None and (regex or None) != m.subscribed_topic_regex:
            m.subscribed_topic_regex = regex or None
            changed = True
        if assignor is not None and assignor != m.server_assignor:
            m.server_assignor = assignor
            changed = True
        if request.get("rack_id") is not None:
            m.rack_id = request["rack_id"]
        if request.get("rebalance_timeout_ms", -1) > 0:
            m.rebalance_timeout_ms = request["rebalance_timeout_ms"]
        m.client_id = client_id
        m.client_host = client_host
        if changed:
            self.assignor_name = self._choose_assignor()
        self._maybe_update_target(bump=changed)
        self._reconcile(m, owned)
        self._schedule_session(m)
        self.notify()
        resp: Message = {
            "error_code": ErrorCode.NONE,
            "member_id": m.member_id,
            "member_epoch": m.member_epoch,
            "heartbeat_interval_ms": self.heartbeat_interval_ms,
        }
        full = (
            request.get("rebalance_timeout_ms", -1) != -1
            and (names is not None or regex is not None)
            and owned_ids is not None
        )
        if epoch == 0 or full or before != m.assigned:
            resp["assignment"] = {
                "topic_partitions": topic_id_partitions(self.state_ref, m.assigned)
            }
        return resp

    def _error(self, code: ErrorCode, message: str) -> Message:
        return {"error_code": code, "error_message": message, "member_epoch": -1}

    def _owned_from_request(self, entries: list[Mapping[str, Any]]) -> TopicPartitions:
        out: TopicPartitions = {}
        by_id = self.state_ref.topics_by_id
        for e in entries:
            t = by_id.get(e["topic_id"])
            if t is not None:
                out.setdefault(t.name, set()).update(e.get("partitions") or [])
        return out

    def _join_member(
        self, member_id: str, instance_id: str | None
    ) -> tuple[ConsumerMember, bool] | Message:
        """The member joining with epoch 0, and whether it replaced a static member."""
        if instance_id is not None:
            old_id = self.static_members.get(instance_id)
            if old_id is not None and old_id != member_id and old_id in self.members:
                old = self.members[old_id]
                if old.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH:
                    return self._error(
                        ErrorCode.UNRELEASED_INSTANCE_ID,
                        f"instance id {instance_id} is still used by member {old_id}",
                    )
                # The new process takes over the old member's place and assignment.
                del self.members[old_id]
                old.cancel_timers()
                old.member_id = member_id
                old.member_epoch = old.previous_member_epoch
                self.members[member_id] = old
                self.static_members[instance_id] = member_id
                if old_id in self.target:
                    self.target[member_id] = self.target.pop(old_id)
                return old, True
        existing = self.members.pop(member_id, None)
        if existing is not None:
            existing.cancel_timers()
            self.target.pop(member_id, None)
        m = ConsumerMember(member_id, instance_id)
        self.members[member_id] = m
        if instance_id is not None:
            self.static_members[instance_id] = member_id
        return m, False

    def _leave(self, member_id: str, instance_id: str | None, epoch: int) -> Message:
        m = self.members.get(member_id)
        if m is None and instance_id is not None:
            m = self.members.get(self.static_members.get(instance_id, ""))
        if m is None:
            return self._error(ErrorCode.UNKNOWN_MEMBER_ID, f"member {member_id} is unknown")
        if epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH and m.instance_id is not None:
            # Keep the assignment for the next process with this instance id.
            if m.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH:
                m.previous_member_epoch = m.member_epoch
            m.member_epoch = LEAVE_GROUP_STATIC_MEMBER_EPOCH
            self._schedule_session(m)
            self.notify()
            return {"error_code": 0, "member_id": m.member_id, "member_epoch": epoch}
        self.remove_member(m)
        return {"error_code": 0, "member_id": member_id, "member_epoch": epoch}

    def remove_member(self, m: ConsumerMember) -> None:
        """Remove a member (leave, expiry, fencing): the group epoch moves on."""
        m.cancel_timers()
        if self.members.get(m.member_id) is m:
            del self.members[m.member_id]
        self.target.pop(m.member_id, None)
        if m.instance_id is not None and self.static_members.get(m.instance_id) == m.member_id:
            del self.static_members[m.instance_id]
        self._maybe_update_target(bump=True)
        self.notify()

    def _reconcile(self, m: ConsumerMember, owned: TopicPartitions | None) -> None:
        if m.state is MemberState.UNREVOKED_PARTITIONS:
            if owned is None or _overlaps(owned, m.pending_revocation):
                return
            m.pending_revocation = {}
            if m.revocation_timer is not None:
                m.revocation_timer.cancel()
                m.revocation_timer = None
        target = self.target.get(m.member_id, {})
        if m.member_epoch == self.assignment_epoch and m.state is MemberState.STABLE:
            return
        keep = _and(m.assigned, target)
        revoke = _minus(m.assigned, target)
        if revoke:
            m.assigned = keep
            m.pending_revocation = revoke
            m.state = MemberState.UNREVOKED_PARTITIONS
            m.revocation_timer = self.state_ref.call_later(
                m.rebalance_timeout_ms, lambda: self._revocation_expired(m)
            )
            return
        wanted = _minus(target, keep)
        free = _minus(wanted, held_by_others(self.members.values(), m))
        for t, ps in free.items():
            keep.setdefault(t, set()).update(ps)
        m.assigned = keep
        if m.member_epoch != self.assignment_epoch:
            m.previous_member_epoch = m.member_epoch
            m.member_epoch = self.assignment_epoch
        m.state = (
            MemberState.STABLE if not _minus(wanted, free) else MemberState.UNRELEASED_PARTITIONS
        )

    def _revocation_expired(self, m: ConsumerMember) -> None:
        m.revocation_timer = None
        if self.members.get(m.member_id) is m and m.state is MemberState.UNREVOKED_PARTITIONS:
            self.remove_member(m)

    # -- verbs and views -----------------------------------------------------------------------

    def trigger_rebalance(self) -> None:
        """Recompute the target assignment at a new group epoch."""
        self.target = {}
        self._maybe_update_target(bump=True)
        self.notify()

    def shutdown(self) -> None:
        for m in self.members.values():
            m.cancel_timers()
        self.members.clear()
        self.dead = True
        self.notify()

    def describe_member(self, m: ConsumerMember) -> dict[str, Any]:
        """One member of ConsumerGroupDescribe."""
        return {
            "member_id": m.member_id,
            "instance_id": m.instance_id,
            "rack_id": m.rack_id,
            "member_epoch": m.member_epoch,
            "client_id": m.client_id,
            "client_host": m.client_host,
            "subscribed_topic_names": list(m.subscribed_topic_names),
            "subscribed_topic_regex": m.subscribed_topic_regex,
            "assignment": described_assignment(self.state_ref, m.assigned),
            "target_assignment": described_assignment(
                self.state_ref, self.target.get(m.member_id, {})
            ),
            # ConsumerGroupDescribe v1 (KIP-1099): every member here speaks the consumer
            # protocol (classic members never join a non-empty consumer group here)
            "member_type": CONSUMER_MEMBER_TYPE,
        }

    @staticmethod
    def sorted_assignment(m: ConsumerMember) -> dict[str, list[int]]:
        return _sorted(m.assigned)

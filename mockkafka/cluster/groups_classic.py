"""Classic consumer groups: JoinGroup / SyncGroup / Heartbeat / LeaveGroup.

Theory of operation
-------------------
A :class:`ClassicGroup` follows Kafka's classic group state machine (``GroupMetadata`` and
``GroupCoordinator`` of Kafka 3.x, kept in Kafka 4's ``ClassicGroup``)::

    Empty --join--> PreparingRebalance --all joined / rebalance timeout--> CompletingRebalance
    CompletingRebalance --leader's SyncGroup--> Stable
    Stable / CompletingRebalance --join with new metadata, leave, expiry--> PreparingRebalance
    PreparingRebalance --every member gone--> Empty      any --delete--> Dead

The legal previous states of each state are the table ``VALID_PREVIOUS_STATES``; a
transition outside it is a bug and raises.

* Join phase. Every member must send JoinGroup; each parks (a :class:`Pending`) until the
  phase ends: when every known member has rejoined and no member id handed out with
  MEMBER_ID_REQUIRED is still outstanding, or at the rebalance timeout (the largest of the
  members'), when dynamic members that did not rejoin are dropped. The first join of an
  Empty group waits ``group.initial.rebalance.delay.ms`` and, while new members keep
  arriving, again, up to the rebalance timeout (Kafka's InitialDelayedJoin). Ending the phase
  bumps ``generation_id``, picks the protocol every member supports that most members
  prefer, keeps the leader (or elects the first member) and answers every JoinGroup; only the
  leader gets the member list.
* Sync phase. The leader's SyncGroup carries the assignment; followers' SyncGroups park
  until it arrives. A member that sends no SyncGroup within the rebalance timeout is removed.
* Liveness. Each member has a session timer restarted by every JoinGroup, SyncGroup and
  Heartbeat; when it fires (and the member is not parked in a join or sync) the member is
  removed and the group rebalances. Heartbeat answers REBALANCE_IN_PROGRESS in the join
  phase, so members rejoin.
* Static members (``group.instance.id``) keep their place across restarts: a JoinGroup with
  a known instance id and no member id replaces the old member id (whose requests then get
  FENCED_INSTANCE_ID) and, in a Stable group whose protocol would not change, answers at once
  with the current generation -- no rebalance.

Errors follow Kafka: UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, REBALANCE_IN_PROGRESS,
FENCED_INSTANCE_ID, INCONSISTENT_GROUP_PROTOCOL, MEMBER_ID_REQUIRED (JoinGroup v4+).
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mockkafka.cluster.consumer_protocol import (
    ConsumerProtocolError,
    decode_assignment,
    decode_subscription,
)
from mockkafka.cluster.groups_common import Group, Message, Pending
from mockkafka.errors import ErrorCode

if TYPE_CHECKING:
    from mockkafka.cluster.base import TimerHandle


class ClassicGroupState(enum.Enum):
    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


S = ClassicGroupState

VALID_PREVIOUS_STATES: dict[ClassicGroupState, frozenset[ClassicGroupState]] = {
    S.PREPARING_REBALANCE: frozenset({S.STABLE, S.COMPLETING_REBALANCE, S.EMPTY}),
    S.COMPLETING_REBALANCE: frozenset({S.PREPARING_REBALANCE}),
    S.STABLE: frozenset({S.COMPLETING_REBALANCE}),
    S.EMPTY: frozenset({S.PREPARING_REBALANCE}),
    S.DEAD: frozenset(ClassicGroupState),
}


@dataclass(eq=False, slots=True)
class ClassicMember:
    """One member of a classic group."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    assignment: bytes = b""
    join_pending: Pending | None = None
    sync_pending: Pending | None = None
    heartbeat_timer: TimerHandle | None = None
    joined_generation: int = -1

    def metadata(self, protocol: str | None) -> bytes:
        for name, meta in self.protocols:
            if name == protocol:
                return meta
        return b""

    def protocol_names(self) -> list[str]:
        return [name for name, _ in self.protocols]

    def matches(self, protocols: Sequence[tuple[str, bytes]]) -> bool:
        return [(n, bytes(m)) for n, m in protocols] == [(n, bytes(m)) for n, m in self.protocols]

    def decoded_assignment(self) -> dict[str, list[int]] | None:
        """The assignment as {topic: [partitions]} for the consumer protocol, else None."""
        if self.protocol_type != "consumer":
            return None
        try:
            a = decode_assignment(self.assignment)
        except ConsumerProtocolError:
            return None
        return {t: sorted(ps) for t, ps in a.partitions.items()}


def _error(code: ErrorCode, **extra: object) -> Message:
    return {"error_code": code, **extra}


@dataclass(eq=False)
class ClassicGroup(Group):
    """A classic group (see the module docstring)."""

    state: ClassicGroupState = S.EMPTY
    protocol_type: str | None = None
    protocol_name: str | None = None
    generation_id: int = 0
    leader_id: str | None = None
    members: dict[str, ClassicMember] = field(default_factory=dict)
    static_members: dict[str, str] = field(default_factory=dict)
    pending_members: dict[str, TimerHandle] = field(default_factory=dict)
    pending_sync: set[str] = field(default_factory=set)
    join_timer: TimerHandle | None = None
    sync_timer: TimerHandle | None = None
    initial_delay_active: bool = False
    new_member_added: bool = False
    # Observers (the cluster API's rebalance counter).
    on_generation: list[Callable[[ClassicGroup], None]] = field(default_factory=list)
    rebalances: int = 0

    kind = "classic"

    # -- views ---------------------------------------------------------------------------------

    @property
    def state_name(self) -> str:
        return self.state.value

    @property
    def protocol_type_name(self) -> str:
        return self.protocol_type or ""

    def is_empty(self) -> bool:
        return not self.members

    def subscribed_topics(self) -> set[str] | None:
        if not self.members:
            return set()
        if self.protocol_type != "consumer":
            return None
        topics: set[str] = set()
        for m in self.members.values():
            meta = m.metadata(self.protocol_name or m.protocol_names()[0])
            try:
                topics.update(decode_subscription(meta).topics)
            except ConsumerProtocolError:
                continue
        return topics

    @property
    def max_rebalance_timeout_ms(self) -> int:
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    def _now(self) -> int:
        return self.state_ref.now_ms()

    # -- state machine -------------------------------------------------------------------------

    def transition(self, to: ClassicGroupState) -> None:
        if self.state not in VALID_PREVIOUS_STATES[to]:
            raise RuntimeError(
                f"group {self.group_id!r}: illegal transition {self.state.value} -> {to.value}"
            )
        self.state = to

    def _supports(self, protocol_type: str, protocols: Sequence[tuple[str, bytes]]) -> bool:
        names = {n for n, _ in protocols}
        if not self.members:
            return bool(protocol_type) and bool(protocols)
        if protocol_type != self.protocol_type:
            return False
        return bool(self._candidates() & names)

    def _candidates(self) -> set[str]:
        sets = [set(m.protocol_names()) for m in self.members.values()]
        return set.intersection(*sets) if sets else set()

    def select_protocol(self) -> str:
        """The protocol every member supports that most members list first (Kafka's vote)."""
        cands = self._candidates()
        if not cands:
            raise RuntimeError(f"group {self.group_id!r}: no protocol common to all members")
        votes: dict[str, int] = {}
        order: list[str] = []
        for m in self.members.values():
            choice = next(n for n in m.protocol_names() if n in cands)
            votes[choice] = votes.get(choice, 0) + 1
            if choice not in order:
                order.append(choice)
        return max(order, key=lambda n: (votes[n], -order.index(n)))

    # -- join ----------------------------------------------------------------------------------

    def join(
        self,
        *,
        member_id: str,
        group_instance_id: str | None,
        client_id: str,
        client_host: str,
        session_timeout_ms: int,
        rebalance_timeout_ms: int,
        protocol_type: str,
        protocols: Sequence[tuple[str, bytes]],
        require_known_member_id: bool,
    ) -> Message | Pending:
        """Handle a JoinGroup; a :class:`Pending` means: park until it is completed."""
        if self.state is S.DEAD:
            return _error(ErrorCode.COORDINATOR_NOT_AVAILABLE, member_id=member_id)
        if not self._supports(protocol_type, protocols):
            return _error(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, member_id=member_id)
        args = (
            group_instance_id,
            client_id,
            client_host,
            session_timeout_ms,
            rebalance_timeout_ms,
            protocol_type,
            list(protocols),
        )
        if not member_id:
            new_id = f"{group_instance_id or client_id}-{uuid.uuid4()}"
            if group_instance_id is not None:
                old = self.static_members.get(group_instance_id)
                if old is not None and old in self.members:
                    return self._replace_static_member(old, new_id, *args)
                return self._add_member_and_rebalance(new_id, *args)
            if require_known_member_id:
                self._add_pending_member(new_id, session_timeout_ms)
                return _error(ErrorCode.MEMBER_ID_REQUIRED, member_id=new_id)
            return self._add_member_and_rebalance(new_id, *args)
        if group_instance_id is not None:
            known = self.static_members.get(group_instance_id)
            if known is None:
                return _error(ErrorCode.UNKNOWN_MEMBER_ID, member_id=member_id)
            if known != member_id:
                return _error(ErrorCode.FENCED_INSTANCE_ID, member_id=member_id)
        if member_id in self.pending_members:
            return self._add_member_and_rebalance(member_id, *args)
        m = self.members.get(member_id)
        if m is None or self.state in (S.EMPTY, S.DEAD):
            return _error(ErrorCode.UNKNOWN_MEMBER_ID, member_id=member_id)
        if self.state is S.COMPLETING_REBALANCE and m.matches(protocols):
            # The JoinGroup response was lost: answer it again.
            self._schedule_heartbeat(m)
            return self._join_response(m)
        if self.state is S.STABLE and m.member_id != self.leader_id and m.matches(protocols):
            self._schedule_heartbeat(m)
            return self._join_response(m)
        self._update_member(m, *args)
        p = m.join_pending
        self._maybe_prepare_rebalance()
        self._try_complete_join()
        return self._result(p)

    def _add_pending_member(self, member_id: str, session_timeout_ms: int) -> None:
        def expire() -> None:
            if self.pending_members.pop(member_id, None) is not None:
                self._try_complete_join()
                self.notify()

        self.pending_members[member_id] = self.state_ref.call_later(session_timeout_ms, expire)

    def _add_member_and_rebalance(
        self,
        member_id: str,
        group_instance_id: str | None,
        client_id: str,
        client_host: str,
        session_timeout_ms: int,
        rebalance_timeout_ms: int,
        protocol_type: str,
        protocols: list[tuple[str, bytes]],
    ) -> Message | Pending:
        timer = self.pending_members.pop(member_id, None)
        if timer is not None:
            timer.cancel()
        m = ClassicMember(
            member_id,
            group_instance_id,
            client_id,
            client_host,
            session_timeout_ms,
            rebalance_timeout_ms,
            protocol_type,
            protocols,
        )
        p = m.join_pending = Pending()
        if not self.members:
            self.protocol_type = protocol_type
        self.members[member_id] = m
        if group_instance_id is not None:
            self.static_members[group_instance_id] = member_id
        if self.leader_id is None:
            self.leader_id = member_id
        if self.state is S.PREPARING_REBALANCE:
            self.new_member_added = True
        self._maybe_prepare_rebalance()
        self._try_complete_join()
        return self._result(p)

    def _update_member(
        self,
        m: ClassicMember,
        group_instance_id: str | None,
        client_id: str,
        client_host: str,
        session_timeout_ms: int,
        rebalance_timeout_ms: int,
        protocol_type: str,
        protocols: list[tuple[str, bytes]],
    ) -> None:
        m.protocols = protocols
        m.session_timeout_ms = session_timeout_ms
        m.rebalance_timeout_ms = rebalance_timeout_ms
        m.client_id = client_id
        m.client_host = client_host
        if m.join_pending is not None:
            # A newer JoinGroup of the same member supersedes the parked one.
            m.join_pending.complete(_error(ErrorCode.REBALANCE_IN_PROGRESS, member_id=m.member_id))
        m.join_pending = Pending()
        self._cancel_heartbeat(m)

    def _replace_static_member(
        self,
        old_id: str,
        new_id: str,
        group_instance_id: str | None,
        client_id: str,
        client_host: str,
        session_timeout_ms: int,
        rebalance_timeout_ms: int,
        protocol_type: str,
        protocols: list[tuple[str, bytes]],
    ) -> Message | Pending:
        assert group_instance_id is not None
        old = self.members.pop(old_id)
        fenced = _error(ErrorCode.FENCED_INSTANCE_ID, member_id=old_id)
        for p in (old.join_pending, old.sync_pending):
            if p is not None:
                p.complete(fenced)
        old.join_pending = old.sync_pending = None
        self._cancel_heartbeat(old)
        old.member_id = new_id
        self.members[new_id] = old
        self.static_members[group_instance_id] = new_id
        if self.leader_id == old_id:
            self.leader_id = new_id
        if old_id in self.pending_sync:
            self.pending_sync.discard(old_id)
            self.pending_sync.add(new_id)
        m = old
        self._update_member(m, group_instance_id, client_id, client_host, session_timeout_ms,
                            rebalance_timeout_ms, protocol_type, protocols)  # fmt: skip
        p = m.join_pending
        self.notify()
        if self.state is S.STABLE:
            if self.protocol_name == self.select_protocol():
                self._schedule_heartbeat(m)
                resp = self._join_response(m, skip_assignment=m.member_id == self.leader_id)
                assert m.join_pending is not None
                m.join_pending.complete(resp)
                m.join_pending = None
                return resp
            self._maybe_prepare_rebalance()
        elif self.state is S.COMPLETING_REBALANCE:
            self._maybe_prepare_rebalance()
        self._try_complete_join()
        return self._result(p)

    @staticmethod
    def _result(p: Pending | None) -> Message | Pending:
        assert p is not None
        return p.result if p.result is not None else p

    def _join_response(self, m: ClassicMember, *, skip_assignment: bool = False) -> Message:
        is_leader = m.member_id == self.leader_id
        return {
            "error_code": ErrorCode.NONE,
            "generation_id": self.generation_id,
            "protocol_type": self.protocol_type,
            "protocol_name": self.protocol_name,
            "leader": self.leader_id or "",
            "skip_assignment": skip_assignment,
            "member_id": m.member_id,
            "members": [
                {
                    "member_id": x.member_id,
                    "group_instance_id": x.group_instance_id,
                    "metadata": x.metadata(self.protocol_name),
                }
                for x in self.members.values()
            ]
            if is_leader
            else [],
        }

    def _maybe_prepare_rebalance(self) -> None:
        if self.state in (S.STABLE, S.COMPLETING_REBALANCE, S.EMPTY):
            self._prepare_rebalance()

    def _prepare_rebalance(self) -> None:
        if self.state is S.COMPLETING_REBALANCE:
            for m in self.members.values():
                m.assignment = b""
                if m.sync_pending is not None:
                    m.sync_pending.complete(_error(ErrorCode.REBALANCE_IN_PROGRESS))
                    m.sync_pending = None
        self._cancel_sync_timer()
        was_empty = self.state is S.EMPTY
        self.transition(S.PREPARING_REBALANCE)
        self.rebalances += 1
        delay = int(self.state_ref.broker_configs.get("group.initial.rebalance.delay.ms", "0"))
        if self.join_timer is not None:
            self.join_timer.cancel()
        if was_empty and delay > 0:
            self.initial_delay_active = True
            self.new_member_added = False
            remaining = max(self.max_rebalance_timeout_ms - delay, 0)
            self._schedule_initial_delay(delay, remaining, delay)
        else:
            self.initial_delay_active = False
            self.join_timer = self.state_ref.call_later(
                self.max_rebalance_timeout_ms, self._join_deadline
            )
        self._try_complete_join()
        self.notify()

    def _schedule_initial_delay(self, delay: int, remaining: int, configured: int) -> None:
        def fire() -> None:
            if self.state is not S.PREPARING_REBALANCE:
                return
            if self.new_member_added and remaining > 0:
                self.new_member_added = False
                d = min(configured, remaining)
                self._schedule_initial_delay(d, max(remaining - d, 0), configured)
            else:
                self.initial_delay_active = False
                self._complete_join()

        self.join_timer = self.state_ref.call_later(delay, fire)

    def _join_deadline(self) -> None:
        if self.state is S.PREPARING_REBALANCE:
            self._complete_join()

    def _all_joined(self) -> bool:
        return not self.pending_members and all(
            m.join_pending is not None for m in self.members.values()
        )

    def _try_complete_join(self) -> None:
        if (
            self.state is S.PREPARING_REBALANCE
            and not self.initial_delay_active
            and self._all_joined()
        ):
            self._complete_join()

    def _complete_join(self) -> None:
        if self.join_timer is not None:
            self.join_timer.cancel()
            self.join_timer = None
        self.initial_delay_active = False
        for m in list(self.members.values()):
            if m.join_pending is None and m.group_instance_id is None:
                self._remove(m)
        self.generation_id += 1
        if not self.members:
            self.protocol_name = None
            self.leader_id = None
            self.transition(S.EMPTY)
        else:
            self.protocol_name = self.select_protocol()
            joined = [m for m in self.members.values() if m.join_pending is not None]
            if self.leader_id not in self.members or (
                joined and self.members[self.leader_id or ""].join_pending is None
            ):
                self.leader_id = (joined or list(self.members.values()))[0].member_id
            self.transition(S.COMPLETING_REBALANCE)
            self.pending_sync = set()
            for m in self.members.values():
                m.joined_generation = self.generation_id
                if m.join_pending is not None:
                    resp = self._join_response(m)
                    m.join_pending.complete(resp)
                    m.join_pending = None
                self.pending_sync.add(m.member_id)
                self._schedule_heartbeat(m)
            gen = self.generation_id
            self.sync_timer = self.state_ref.call_later(
                self.max_rebalance_timeout_ms, lambda: self._sync_deadline(gen)
            )
        for cb in self.on_generation:
            cb(self)
        self.notify()

    def _sync_deadline(self, generation_id: int) -> None:
        if generation_id != self.generation_id or self.state not in (
            S.COMPLETING_REBALANCE,
            S.STABLE,
        ):
            return
        late = [self.members[mid] for mid in self.pending_sync if mid in self.members]
        self.pending_sync = set()
        for m in late:
            self.remove_member(m)

    def _cancel_sync_timer(self) -> None:
        if self.sync_timer is not None:
            self.sync_timer.cancel()
            self.sync_timer = None

    # -- liveness ------------------------------------------------------------------------------

    def _schedule_heartbeat(self, m: ClassicMember) -> None:
        self._cancel_heartbeat(m)
        m.heartbeat_timer = self.state_ref.call_later(
            m.session_timeout_ms, lambda: self._heartbeat_expired(m)
        )

    @staticmethod
    def _cancel_heartbeat(m: ClassicMember) -> None:
        if m.heartbeat_timer is not None:
            m.heartbeat_timer.cancel()
            m.heartbeat_timer = None

    def _heartbeat_expired(self, m: ClassicMember) -> None:
        m.heartbeat_timer = None
        if self.members.get(m.member_id) is not m:
            return
        if m.join_pending is not None or m.sync_pending is not None:
            return
        self.remove_member(m)

    def _remove(self, m: ClassicMember) -> None:
        """Drop ``m`` (answering its parked requests) without changing the group state."""
        gone = _error(ErrorCode.UNKNOWN_MEMBER_ID, member_id=m.member_id)
        for p in (m.join_pending, m.sync_pending):
            if p is not None:
                p.complete(gone)
        m.join_pending = m.sync_pending = None
        self._cancel_heartbeat(m)
        self.members.pop(m.member_id, None)
        self.pending_sync.discard(m.member_id)
        iid = m.group_instance_id
        if iid is not None and self.static_members.get(iid) == m.member_id:
            del self.static_members[iid]
        if self.leader_id == m.member_id:
            self.leader_id = next(iter(self.members), None)

    def remove_member(self, m: ClassicMember) -> None:
        """Remove a member (leave, expiry) and rebalance as Kafka does."""
        self._remove(m)
        if self.state in (S.STABLE, S.COMPLETING_REBALANCE):
            self._maybe_prepare_rebalance()
        elif self.state is S.PREPARING_REBALANCE:
            self._try_complete_join()
        self.notify()

    # -- sync, heartbeat, leave --------------------------------------------------------------

    def _member_error(self, member_id: str, group_instance_id: str | None) -> ErrorCode:
        if group_instance_id is not None:
            known = self.static_members.get(group_instance_id)
            if known is not None and known != member_id:
                return ErrorCode.FENCED_INSTANCE_ID
        if member_id not in self.members:
            return ErrorCode.UNKNOWN_MEMBER_ID
        return ErrorCode.NONE

    def sync(
        self,
        *,
        member_id: str,
        group_instance_id: str | None,
        generation_id: int,
        protocol_type: str | None,
        protocol_name: str | None,
        assignments: Sequence[tuple[str, bytes]],
    ) -> Message | Pending:
        """Handle a SyncGroup; a :class:`Pending` means: park until the leader's arrives."""
        if self.state is S.DEAD:
            return _error(ErrorCode.COORDINATOR_NOT_AVAILABLE)
        err = self._member_error(member_id, group_instance_id)
        if err:
            return _error(err)
        if generation_id != self.generation_id:
            return _error(ErrorCode.ILLEGAL_GENERATION)
        if (protocol_type is not None and protocol_type != self.protocol_type) or (
            protocol_name is not None and protocol_name != self.protocol_name
        ):
            return _error(ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
        m = self.members[member_id]
        if self.state is S.EMPTY:
            return _error(ErrorCode.UNKNOWN_MEMBER_ID)
        if self.state is S.PREPARING_REBALANCE:
            return _error(ErrorCode.REBALANCE_IN_PROGRESS)
        self.pending_sync.discard(member_id)
        self._schedule_heartbeat(m)
        if self.state is S.STABLE:
            return self._sync_response(m)
        # CompletingRebalance
        if m.sync_pending is not None:
            m.sync_pending.complete(_error(ErrorCode.REBALANCE_IN_PROGRESS))
        pending = m.sync_pending = Pending()
        if member_id == self.leader_id:
            given = {mid: bytes(a) for mid, a in assignments}
            for x in self.members.values():
                x.assignment = given.get(x.member_id, b"")
            self.transition(S.STABLE)
            for x in self.members.values():
                if x.sync_pending is not None:
                    x.sync_pending.complete(self._sync_response(x))
                    x.sync_pending = None
            self.notify()
        return pending.result if pending.result is not None else pending

    def _sync_response(self, m: ClassicMember) -> Message:
        return {
            "error_code": ErrorCode.NONE,
            "protocol_type": self.protocol_type,
            "protocol_name": self.protocol_name,
            "assignment": m.assignment,
        }

    def heartbeat(
        self, *, member_id: str, group_instance_id: str | None, generation_id: int
    ) -> ErrorCode:
        if self.state is S.DEAD:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        err = self._member_error(member_id, group_instance_id)
        if err:
            return err
        if self.state is S.EMPTY:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if generation_id != self.generation_id:
            return ErrorCode.ILLEGAL_GENERATION
        m = self.members[member_id]
        if m.join_pending is None and m.sync_pending is None:
            self._schedule_heartbeat(m)
        if self.state is S.PREPARING_REBALANCE:
            return ErrorCode.REBALANCE_IN_PROGRESS
        return ErrorCode.NONE

    def leave(self, member_id: str, group_instance_id: str | None) -> ErrorCode:
        """One member of a LeaveGroup."""
        if self.state is S.DEAD:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        if group_instance_id is not None:
            known = self.static_members.get(group_instance_id)
            if known is None or known not in self.members:
                return ErrorCode.UNKNOWN_MEMBER_ID
            if member_id and known != member_id:
                return ErrorCode.FENCED_INSTANCE_ID
            self.remove_member(self.members[known])
            return ErrorCode.NONE
        timer = self.pending_members.pop(member_id, None)
        if timer is not None:
            timer.cancel()
            self._try_complete_join()
            self.notify()
            return ErrorCode.NONE
        m = self.members.get(member_id)
        if m is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        self.remove_member(m)
        return ErrorCode.NONE

    # -- offsets -------------------------------------------------------------------------------

    def validate_offset_commit(
        self,
        member_id: str,
        group_instance_id: str | None,
        generation_id: int,
        *,
        transactional: bool = False,
    ) -> ErrorCode:
        """Kafka's ``ClassicGroup.validateOffsetCommit``."""
        if self.state is S.DEAD:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        if generation_id < 0 and self.state is S.EMPTY:
            return ErrorCode.NONE
        if generation_id >= 0 or member_id or group_instance_id is not None:
            err = self._member_error(member_id, group_instance_id)
            if err:
                return err
            if generation_id != self.generation_id:
                return ErrorCode.ILLEGAL_GENERATION
        elif not transactional and self.state is not S.EMPTY:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if not transactional and self.state is S.COMPLETING_REBALANCE:
            return ErrorCode.REBALANCE_IN_PROGRESS
        return ErrorCode.NONE

    # -- verbs ---------------------------------------------------------------------------------

    def trigger_rebalance(self) -> None:
        if self.state in (S.STABLE, S.COMPLETING_REBALANCE):
            self._prepare_rebalance()

    def fail_pending(self, error: ErrorCode) -> None:
        for m in self.members.values():
            if m.join_pending is not None:
                m.join_pending.complete(_error(error, member_id=m.member_id))
            if m.sync_pending is not None:  # a SyncGroup answer has no member_id field
                m.sync_pending.complete(_error(error))
            if m.join_pending is not None:
                m.join_pending = Pending()  # still counts as joined, as after a reload
            m.sync_pending = None
        self.notify()

    def reset_timers(self) -> None:
        for m in self.members.values():
            if m.heartbeat_timer is not None:
                self._schedule_heartbeat(m)

    def shutdown(self) -> None:
        for m in list(self.members.values()):
            self._remove(m)
        for t in self.pending_members.values():
            t.cancel()
        self.pending_members.clear()
        if self.join_timer is not None:
            self.join_timer.cancel()
        self._cancel_sync_timer()
        self.transition(S.DEAD)
        self.notify()

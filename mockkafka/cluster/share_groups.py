"""KIP-932 share groups: membership, server-side assignment, share partitions and sessions.

Theory of operation
-------------------
A :class:`ShareGroup` lives in the group coordinator beside classic and consumer groups (the
ids share one namespace). Members join with ShareGroupHeartbeat epoch 0 and their subscribed
topics, leave with -1, and are removed when no heartbeat arrives within the session timeout
(group config ``share.session.timeout.ms``, else the broker's
``group.share.session.timeout.ms``). Any membership or subscription change, or a change of a
subscribed topic's partitions, bumps the *group epoch* and recomputes the target assignment
with Kafka's ``simple`` assignor: per subscription, partitions are dealt round-robin over the
members, and when there are more members than partitions the members wrap around, so several
members share one partition. There is no revocation phase: a member takes its target
assignment, and the group epoch, with its next heartbeat.

Records are handed out per :class:`SharePartition` -- one per (group, topic, partition),
created on the first ShareFetch. Its *share-partition start offset* (SPSO) starts at the log
end (``share.auto.offset.reset=latest``, Kafka's default) or the log start (``earliest``).
Every offset between the SPSO and the *end offset* (SPEO, the next offset never acquired)
is in flight in one of the states Available, Acquired (by one member, until its acquisition
lock expires after ``share.record.lock.duration.ms``), Acknowledged or Archived. Acquiring
bumps an offset's delivery count; releasing it (ack type RELEASE, lock expiry, the member's
session closing or the member leaving) makes it Available again unless the count reached
``group.share.delivery.count.limit``, in which case it is Archived. ACCEPT acknowledges,
REJECT and GAP archive. The SPSO moves past the leading Acknowledged/Archived offsets; at most
``group.share.partition.max.record.locks`` offsets are in flight.

With the group config ``share.isolation.level=read_committed`` only records below the last
stable offset are acquired and records of aborted transactions are archived at once (as
Kafka 4.1+ does; Kafka 4.0 only knew read_uncommitted). Transaction markers are archived at
once either way.

Share sessions (the share-fetch analogue of KIP-227 fetch sessions) are kept per (broker,
member) on the group: epoch 0 opens one with the request's partitions, each later request
carries the next epoch (INVALID_SHARE_SESSION_EPOCH otherwise, SHARE_SESSION_NOT_FOUND when
there is none), and -1 closes it, releasing what the member still holds on that broker. A
session opened with ShareFetch v1+ (Kafka 4.1+) belongs to its connection: when the
connection closes, the session closes and its records are released at once
(:meth:`ShareGroup.connection_closed`); a v0 session (Kafka 4.0) outlives its connection.

Acquisition (ShareFetch v1+): at most ``max_records`` records per partition, rounded up to
whole log batches in the batch-optimized acquire mode (0, the default) and cut exactly in the
record-limit mode (1, ShareFetch v2); acquired runs are reported in pieces of at most
``batch_size`` records. RENEW acknowledgements (type 4, v2 with ``is_renew_ack``) keep the
records acquired and restart their acquisition lock (KIP-1222).
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mockkafka.cluster.configs import ResourceType, resource_configs
from mockkafka.cluster.groups_common import (
    Group,
    Message,
    SessionTimers,
    described_assignment,
    topic_id_partitions,
    topics_fingerprint,
)
from mockkafka.cluster.groups_consumer import LEAVE_GROUP_MEMBER_EPOCH
from mockkafka.errors import ErrorCode

if TYPE_CHECKING:
    from mockkafka.cluster.base import TimerHandle
    from mockkafka.cluster.host import StateCore
    from mockkafka.cluster.topics import Partition

FINAL_SESSION_EPOCH = -1
INITIAL_SESSION_EPOCH = 0

ASSIGNOR_NAME = "simple"

TopicPartitions = dict[str, set[int]]


class AcknowledgeType(enum.IntEnum):
    """The acknowledge types of ShareFetch/ShareAcknowledge batches."""

    GAP = 0
    ACCEPT = 1
    RELEASE = 2
    REJECT = 3
    RENEW = 4  # KIP-1222 (ShareFetch/ShareAcknowledge v2 with is_renew_ack): restart the lock


class RecordState(enum.Enum):
    """The state of one in-flight offset of a share partition (Kafka's names)."""

    AVAILABLE = "Available"
    ACQUIRED = "Acquired"
    ACKNOWLEDGED = "Acknowledged"
    ARCHIVED = "Archived"


TERMINAL = (RecordState.ACKNOWLEDGED, RecordState.ARCHIVED)

# Broker configs and their Kafka defaults; group configs (share.*) override the first three.
_BROKER_DEFAULTS = {
    "group.share.session.timeout.ms": 45000,
    "group.share.heartbeat.interval.ms": 5000,
    "group.share.record.lock.duration.ms": 30000,
    "group.share.delivery.count.limit": 5,
    "group.share.partition.max.record.locks": 200,
    "group.share.max.size": 200,
}
_GROUP_OVERRIDES = {
    "group.share.session.timeout.ms": "share.session.timeout.ms",
    "group.share.heartbeat.interval.ms": "share.heartbeat.interval.ms",
    "group.share.record.lock.duration.ms": "share.record.lock.duration.ms",
}


def share_config(state: StateCore, group_id: str, key: str) -> int:
    """An integer share-group setting: the group config overriding the broker config."""
    override = _GROUP_OVERRIDES.get(key)
    if override is not None:
        value = resource_configs(state, ResourceType.GROUP, group_id).get(override)
        if value is not None:
            return int(value)
    return int(state.broker_configs.get(key, str(_BROKER_DEFAULTS[key])))


def group_setting(state: StateCore, group_id: str, key: str, default: str) -> str:
    """A string group config of ``group_id`` (``share.auto.offset.reset``, ...)."""
    return resource_configs(state, ResourceType.GROUP, group_id).get(key, default)


@dataclass(slots=True)
class InFlightRecord:
    """One offset between the SPSO and the end offset."""

    state: RecordState = RecordState.AVAILABLE
    delivery_count: int = 0
    member_id: str | None = None
    #: The acquisition this offset's lock belongs to (None: not locked). One timer per
    #: acquisition checks it when it fires, so an offset acknowledged early just drops it.
    lock: object | None = None

    def unlock(self) -> None:
        self.lock = None


@dataclass(frozen=True, slots=True)
class Acquired:
    """A run of offsets acquired by one fetch, all with the same delivery count."""

    first_offset: int
    last_offset: int
    delivery_count: int


class SharePartition:
    """The delivery state of one topic-partition for one share group (see the module
    docstring). Offsets in ``[start_offset, end_offset)`` missing from ``records`` are done
    (they were transaction markers or were removed by retention)."""

    def __init__(self, group: ShareGroup, topic: str, partition: int, topic_id: uuid.UUID):
        self.group = group
        self.topic = topic
        self.partition = partition
        self.topic_id = topic_id
        self.start_offset = -1  # set on the first acquire
        self.end_offset = -1
        self.records: dict[int, InFlightRecord] = {}

    @property
    def _state(self) -> StateCore:
        return self.group.state_ref

    def _initialise(self, p: Partition) -> None:
        reset = group_setting(self._state, self.group.group_id, "share.auto.offset.reset", "latest")
        start = p.log.log_start_offset if reset == "earliest" else p.log.high_watermark
        self.start_offset = self.end_offset = start

    def _follow_log(self, p: Partition) -> None:
        """Retention (DeleteRecords) moved the log start past the SPSO: those offsets left."""
        lso = p.log.log_start_offset
        if self.start_offset < lso:
            for off in [o for o in self.records if o < lso]:
                self.records.pop(off).unlock()
            self.start_offset = lso
            self.end_offset = max(self.end_offset, lso)

    def truncated(self, end: int) -> None:
        """An unclean truncation dropped every offset at and above ``end``."""
        if self.end_offset > end:
            for off in [o for o in self.records if o >= end]:
                self.records.pop(off).unlock()
            self.end_offset = end
            self.start_offset = min(self.start_offset, end)

    def acquire(
        self,
        member_id: str,
        p: Partition,
        *,
        max_records: int,
        max_bytes: int = 1 << 20,
        record_limit: bool = False,
        batch_size: int = 0,
    ) -> list[Acquired]:
        """Acquire for ``member_id``: released offsets first, then new ones from the log
        (whole batches while ``max_bytes`` allows, at least one; with ``record_limit`` a
        batch is cut so that no more than ``max_records`` are acquired).

        Returns runs of acquired offsets (each with one delivery count, at most
        ``batch_size`` offsets when it is positive), in offset order.
        """
        if self.start_offset < 0:
            self._initialise(p)
        self._follow_log(p)
        st = self._state
        limit = share_config(st, self.group.group_id, "group.share.delivery.count.limit")
        max_locks = share_config(st, self.group.group_id, "group.share.partition.max.record.locks")
        lock_ms = share_config(st, self.group.group_id, "group.share.record.lock.duration.ms")
        got: list[int] = []
        for off in sorted(self.records):
            if len(got) >= max_records:
                break
            r = self.records[off]
            if r.state is RecordState.AVAILABLE:
                got.append(off)
        if len(got) < max_records:
            got.extend(
                self._acquire_new(p, max_records - len(got), max_locks, max_bytes, record_limit)
            )
        for off in got:
            r = self.records.setdefault(off, InFlightRecord())
            r.state = RecordState.ACQUIRED
            r.delivery_count += 1
            r.member_id = member_id
        self.advance()  # past markers and aborted records at the start
        if got:
            token = object()
            for off in got:
                self.records[off].lock = token
            st.call_later(lock_ms, lambda: self._lock_expired(got, token, limit))
        return _runs(got, self.records, batch_size)

    def _acquire_new(
        self, p: Partition, wanted: int, max_locks: int, max_bytes: int, record_limit: bool
    ) -> list[int]:
        """Offsets from the log at and above the end offset (whole batches, as Kafka, unless
        ``record_limit`` cuts the last one at ``wanted``)."""
        read_committed = (
            group_setting(
                self._state, self.group.group_id, "share.isolation.level", "read_uncommitted"
            )
            == "read_committed"
        )
        log = p.log
        upto = log.last_stable_offset if read_committed else log.high_watermark
        out: list[int] = []
        size = 0
        i = log.batch_index(self.end_offset)
        while i < len(log.batches) and len(out) < wanted:
            b = log.batches[i]
            if b.base_offset >= upto or self.end_offset - self.start_offset >= max_locks:
                break
            if out and size + b.size > max_bytes:
                break
            i += 1
            first = max(b.base_offset, self.end_offset)
            last = b.last_offset
            skip = b.is_control or (read_committed and _aborted(log.aborted_txns, b))
            if record_limit and not skip and last - first + 1 > wanted - len(out):
                last = first + (wanted - len(out)) - 1  # the rest of the batch stays for later
            self.end_offset = last + 1
            if skip:
                continue  # markers and aborted records are never delivered: done at once
            out.extend(range(first, last + 1))
            size += b.size
        return out

    def batches_for(self, p: Partition, acquired: list[Acquired]) -> list[bytes]:
        """The raw batches holding the ``acquired`` offsets, in log order (the client
        delivers only the acquired offsets of them)."""
        log = p.log
        seen: dict[int, None] = {}
        for a in acquired:
            i = log.batch_index(a.first_offset)
            while i < len(log.batches) and log.batches[i].base_offset <= a.last_offset:
                seen[i] = None
                i += 1
        return [log.batches[i].data for i in sorted(seen)]

    def _lock_expired(self, offsets: list[int], token: object, limit: int) -> None:
        changed = False
        for off in offsets:
            r = self.records.get(off)
            if r is not None and r.state is RecordState.ACQUIRED and r.lock is token:
                self._release(r, limit)
                changed = True
        if changed:
            self.advance()
            self.group.notify_partition(self.topic, self.partition)

    def _release(self, r: InFlightRecord, limit: int) -> None:
        r.unlock()
        r.member_id = None
        r.state = RecordState.ARCHIVED if r.delivery_count >= limit else RecordState.AVAILABLE

    def acknowledge(
        self, member_id: str, batches: Iterable[Mapping[str, Any]], *, renew: bool = False
    ) -> tuple[ErrorCode, str | None]:
        """Apply acknowledgement batches of ``member_id``; all or nothing.

        INVALID_RECORD_STATE when an offset is not acquired by this member; INVALID_REQUEST
        for a malformed batch (last before first, wrong number of types, unknown type, RENEW
        without ``renew`` -- the request's ``is_renew_ack``).
        """
        plan: list[tuple[int, AcknowledgeType]] = []
        for b in batches:
            first, last = int(b["first_offset"]), int(b["last_offset"])
            types = list(b.get("acknowledge_types") or [])
            if last < first or not types or len(types) not in (1, last - first + 1):
                return ErrorCode.INVALID_REQUEST, f"bad acknowledgement batch {first}-{last}"
            for i, off in enumerate(range(first, last + 1)):
                raw = types[0] if len(types) == 1 else types[i]
                try:
                    kind = AcknowledgeType(raw)
                except ValueError:
                    return ErrorCode.INVALID_REQUEST, f"unknown acknowledge type {raw}"
                if kind is AcknowledgeType.RENEW and not renew:
                    return ErrorCode.INVALID_REQUEST, "RENEW acknowledgement without IsRenewAck"
                r = self.records.get(off)
                if kind is AcknowledgeType.GAP and (r is None and self._in_window(off)):
                    continue  # already done (a marker): nothing to do
                if r is None or r.state is not RecordState.ACQUIRED or r.member_id != member_id:
                    return (
                        ErrorCode.INVALID_RECORD_STATE,
                        f"offset {off} of {self.topic}-{self.partition} is not acquired "
                        f"by member {member_id}",
                    )
                plan.append((off, kind))
        limit = share_config(self._state, self.group.group_id, "group.share.delivery.count.limit")
        renewed: list[int] = []
        for off, kind in plan:
            r = self.records[off]
            if kind is AcknowledgeType.RELEASE:
                self._release(r, limit)
                continue
            if kind is AcknowledgeType.RENEW:
                renewed.append(off)
                continue
            r.unlock()
            r.member_id = None
            r.state = (
                RecordState.ACKNOWLEDGED if kind is AcknowledgeType.ACCEPT else RecordState.ARCHIVED
            )
        if renewed:
            token = object()
            for off in renewed:
                self.records[off].lock = token
            self._state.call_later(
                self.group.lock_duration_ms, lambda: self._lock_expired(renewed, token, limit)
            )
        if len(renewed) < len(plan):
            self.advance()
            self.group.notify_partition(self.topic, self.partition)
        return ErrorCode.NONE, None

    def _in_window(self, off: int) -> bool:
        return self.start_offset <= off < self.end_offset

    def release_member(self, member_id: str) -> int:
        """Release every offset ``member_id`` holds (its session closed or it left)."""
        return self._release_where(lambda r: r.member_id == member_id)

    def expire_locks(self) -> int:
        """Release every acquired offset now, as if the acquisition locks timed out."""
        return self._release_where(lambda r: True)

    def _release_where(self, which: Callable[[InFlightRecord], bool]) -> int:
        limit = share_config(self._state, self.group.group_id, "group.share.delivery.count.limit")
        n = 0
        for r in self.records.values():
            if r.state is RecordState.ACQUIRED and which(r):
                self._release(r, limit)
                n += 1
        if n:
            self.advance()
            self.group.notify_partition(self.topic, self.partition)
        return n

    def advance(self) -> None:
        """Move the SPSO past the leading Acknowledged/Archived (or vanished) offsets."""
        while self.start_offset < self.end_offset:
            r = self.records.get(self.start_offset)
            if r is not None and r.state not in TERMINAL:
                break
            self.records.pop(self.start_offset, None)
            self.start_offset += 1

    def shutdown(self) -> None:
        for r in self.records.values():
            r.unlock()
        self.records.clear()

    def lag(self, high_watermark: int) -> int:
        """Records at or above the SPSO and below ``high_watermark`` not yet delivered to
        completion (KIP-1226's share-partition lag); -1 before the first fetch."""
        if self.start_offset < 0:
            return -1
        done = sum(
            1 for off, r in self.records.items() if off < high_watermark and r.state in TERMINAL
        )
        in_window = max(0, min(self.end_offset, high_watermark) - self.start_offset)
        vanished = in_window - sum(1 for off in self.records if off < high_watermark)
        return max(0, high_watermark - self.start_offset - done - vanished)

    def describe(self) -> dict[str, Any]:
        """Plain data for :class:`~mockkafka.views.SharePartitionView`."""
        return {
            "topic": self.topic,
            "partition": self.partition,
            "start_offset": self.start_offset,
            "end_offset": self.end_offset,
            "records": {
                off: (r.state.value, r.delivery_count, r.member_id)
                for off, r in sorted(self.records.items())
            },
        }


def _aborted(aborted_txns: list[tuple[int, int, int]], b: Any) -> bool:
    if not b.is_transactional:
        return False
    return any(
        pid == b.producer_id and first <= b.base_offset <= last for pid, first, last in aborted_txns
    )


def _runs(
    offsets: list[int], records: Mapping[int, InFlightRecord], batch_size: int = 0
) -> list[Acquired]:
    out: list[Acquired] = []
    for off in sorted(offsets):
        count = records[off].delivery_count
        if (
            out
            and out[-1].last_offset == off - 1
            and out[-1].delivery_count == count
            and (batch_size <= 0 or off - out[-1].first_offset < batch_size)
        ):
            out[-1] = Acquired(out[-1].first_offset, off, count)
        else:
            out.append(Acquired(off, off, count))
    return out


@dataclass(eq=False, slots=True)
class ShareMember:
    """One member of a share group."""

    member_id: str
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: list[str] = field(default_factory=list)
    member_epoch: int = 0
    assigned: TopicPartitions = field(default_factory=dict)
    session_timer: TimerHandle | None = None

    def cancel_timers(self) -> None:
        if self.session_timer is not None:
            self.session_timer.cancel()
            self.session_timer = None


@dataclass(slots=True)
class ShareSession:
    """A share session of one member on one broker."""

    epoch: int  # the epoch the next request must carry
    partitions: dict[tuple[uuid.UUID, int], None] = field(default_factory=dict)
    #: The connection that opened it (ShareFetch v1+): closing it closes the session.
    connection_id: int | None = None


def simple_assign(
    members: Mapping[str, Iterable[str]], partitions: Mapping[str, int]
) -> dict[str, TopicPartitions]:
    """Kafka's ``simple`` share assignor: per topic, partitions round-robin over the members
    subscribed to it; with more members than partitions, members wrap around and share."""
    out: dict[str, TopicPartitions] = {m: {} for m in members}
    for topic in sorted(partitions):
        subs = sorted(m for m, topics in members.items() if topic in set(topics))
        n = partitions[topic]
        if not subs or not n:
            continue
        if n >= len(subs):
            for p in range(n):
                out[subs[p % len(subs)]].setdefault(topic, set()).add(p)
        else:
            for i, m in enumerate(subs):
                out[m].setdefault(topic, set()).add(i % n)
    return out


@dataclass(eq=False)
class ShareGroup(SessionTimers, Group):
    """A KIP-932 share group (see the module docstring)."""

    group_epoch: int = 0
    assignment_epoch: int = 0
    members: dict[str, ShareMember] = field(default_factory=dict)
    target: dict[str, TopicPartitions] = field(default_factory=dict)
    subscription_metadata: tuple[tuple[str, str, int], ...] = ()
    partitions: dict[tuple[str, int], SharePartition] = field(default_factory=dict)
    sessions: dict[tuple[int, str], ShareSession] = field(default_factory=dict)
    dead: bool = False
    rebalances: int = 0

    kind = "share"
    assignor_name = ASSIGNOR_NAME

    @property
    def state_name(self) -> str:
        if self.dead:
            return "Dead"
        return "Stable" if self.members else "Empty"

    @property
    def protocol_type_name(self) -> str:
        return "share"

    def is_empty(self) -> bool:
        return not self.members

    @property
    def heartbeat_interval_ms(self) -> int:
        return share_config(self.state_ref, self.group_id, "group.share.heartbeat.interval.ms")

    @property
    def session_timeout_ms(self) -> int:
        return share_config(self.state_ref, self.group_id, "group.share.session.timeout.ms")

    @property
    def lock_duration_ms(self) -> int:
        """How long an acquisition lock lasts (``acquisition_lock_timeout_ms`` in v1+)."""
        return share_config(self.state_ref, self.group_id, "group.share.record.lock.duration.ms")

    def subscribed_topics(self) -> set[str] | None:
        out: set[str] = set()
        for m in self.members.values():
            out |= set(m.subscribed_topic_names)
        return out

    def notify_partition(self, topic: str, partition: int) -> None:
        """Wake parked ShareFetch requests of this group (records became available)."""
        self.state_ref.notify(("share", self.group_id))

    # -- membership ----------------------------------------------------------------------------

    def _fingerprint(self) -> tuple[tuple[str, str, int], ...]:
        names = {t for m in self.members.values() for t in m.subscribed_topic_names}
        return topics_fingerprint(self.state_ref, names)

    def _update_target(self, *, bump: bool) -> None:
        fp = self._fingerprint()
        if fp != self.subscription_metadata:
            self.subscription_metadata = fp
            bump = True
        if bump:
            self.group_epoch += 1
        if self.group_epoch <= self.assignment_epoch:
            return
        counts = {name: n for name, _, n in fp}
        self.target = simple_assign(
            {mid: m.subscribed_topic_names for mid, m in self.members.items()}, counts
        )
        self.assignment_epoch = self.group_epoch
        self.rebalances += 1

    def heartbeat(self, request: Mapping[str, Any], client_id: str, client_host: str) -> Message:
        """Handle a ShareGroupHeartbeat body; returns the response body."""
        member_id: str = request.get("member_id") or ""
        epoch: int = request.get("member_epoch", 0)
        if epoch == LEAVE_GROUP_MEMBER_EPOCH:
            m = self.members.get(member_id)
            if m is None:
                return _error(ErrorCode.UNKNOWN_MEMBER_ID, f"member {member_id} is unknown")
            self.remove_member(m)
            return {"error_code": 0, "member_id": member_id, "member_epoch": epoch}
        changed = False
        if epoch == 0:
            if not member_id:
                member_id = str(uuid.uuid4())
            limit = share_config(self.state_ref, self.group_id, "group.share.max.size")
            if member_id not in self.members and len(self.members) >= limit:
                return _error(
                    ErrorCode.GROUP_MAX_SIZE_REACHED,
                    f"share group {self.group_id} has the maximum of {limit} members "
                    "(group.share.max.size)",
                )
            old = self.members.pop(member_id, None)
            if old is not None:
                old.cancel_timers()
            m = ShareMember(member_id)
            self.members[member_id] = m
            changed = True
        else:
            found = self.members.get(member_id)
            if found is None:
                return _error(ErrorCode.UNKNOWN_MEMBER_ID, f"member {member_id} is unknown")
            if epoch != found.member_epoch:
                return _error(
                    ErrorCode.FENCED_MEMBER_EPOCH,
                    f"member epoch {epoch} is not the current epoch {found.member_epoch}",
                )
            m = found
        before = {t: set(ps) for t, ps in m.assigned.items()}
        names = request.get("subscribed_topic_names")
        if names is not None and sorted(names) != sorted(m.subscribed_topic_names):
            m.subscribed_topic_names = list(names)
            changed = True
        if request.get("rack_id") is not None:
            m.rack_id = request["rack_id"]
        m.client_id = client_id
        m.client_host = client_host
        self._update_target(bump=changed)
        m.assigned = {t: set(ps) for t, ps in self.target.get(m.member_id, {}).items() if ps}
        m.member_epoch = self.assignment_epoch
        self._schedule_session(m)
        self.notify()
        resp: Message = {
            "error_code": ErrorCode.NONE,
            "member_id": m.member_id,
            "member_epoch": m.member_epoch,
            "heartbeat_interval_ms": self.heartbeat_interval_ms,
        }
        if epoch == 0 or before != m.assigned:
            resp["assignment"] = {
                "topic_partitions": topic_id_partitions(self.state_ref, m.assigned)
            }
        return resp

    def remove_member(self, m: ShareMember) -> None:
        """Remove a member (leave or expiry): the epoch moves on and its records are
        released -- except while it has a share session bound to a connection (v1+): as in
        Kafka 4.1+, that session lives on until the client closes it (epoch -1, what a
        closing share consumer sends after leaving) or its connection closes."""
        m.cancel_timers()
        if self.members.get(m.member_id) is m:
            del self.members[m.member_id]
        self.target.pop(m.member_id, None)
        bound = False
        for key in [k for k in self.sessions if k[1] == m.member_id]:
            if self.sessions[key].connection_id is None:
                del self.sessions[key]
            else:
                bound = True
        if not bound:
            for sp in self.partitions.values():
                sp.release_member(m.member_id)
        self._update_target(bump=True)
        self.notify()

    def trigger_rebalance(self) -> None:
        """Recompute the target assignment at a new group epoch."""
        self._update_target(bump=True)
        self.notify()

    # -- share partitions and sessions ---------------------------------------------------------

    def share_partition(self, topic: str, partition: int, topic_id: uuid.UUID) -> SharePartition:
        """The share partition of ``topic``/``partition`` (created on first use; a topic
        re-created under the same name starts a fresh one)."""
        sp = self.partitions.get((topic, partition))
        if sp is None or sp.topic_id != topic_id:
            if sp is not None:
                sp.shutdown()
            sp = self.partitions[(topic, partition)] = SharePartition(
                self, topic, partition, topic_id
            )
        return sp

    def session(self, broker_id: int, member_id: str) -> ShareSession | None:
        return self.sessions.get((broker_id, member_id))

    def open_session(
        self, broker_id: int, member_id: str, connection_id: int | None = None
    ) -> ShareSession:
        """Open (or reopen) the member's session on ``broker_id``; with ``connection_id``
        it is closed when that connection closes (see :meth:`connection_closed`)."""
        old = self.sessions.get((broker_id, member_id))
        if old is not None and old.connection_id not in (None, connection_id):
            self.close_session(broker_id, member_id)  # its connection's records go back
        s = self.sessions[(broker_id, member_id)] = ShareSession(
            epoch=1, connection_id=connection_id
        )
        return s

    def connection_closed(self, connection_id: int) -> int:
        """Close the sessions opened on ``connection_id``, releasing their records (Kafka
        4.1+). Returns how many sessions closed."""
        keys = [k for k, s in self.sessions.items() if s.connection_id == connection_id]
        for broker_id, member_id in keys:
            self.close_session(broker_id, member_id)
        return len(keys)

    def close_session(self, broker_id: int, member_id: str) -> None:
        """Close the member's share session on ``broker_id``; release what it holds there."""
        s = self.sessions.pop((broker_id, member_id), None)
        if s is None:
            return
        by_id = self.state_ref.topics_by_id
        for tid, idx in s.partitions:
            t = by_id.get(tid)
            sp = self.partitions.get((t.name, idx)) if t is not None else None
            if sp is not None:
                sp.release_member(member_id)

    # -- share-group offsets (DescribeShareGroupOffsets, Alter..., Delete...) ---------------

    def start_offsets(
        self, wanted: Iterable[tuple[str, int]] | None
    ) -> list[tuple[str, int, SharePartition | None]]:
        """The share partitions asked for (None: every one with state), sorted; a partition
        without state comes as None (never fetched, or its offsets were deleted)."""
        if wanted is None:
            keys = sorted(k for k, sp in self.partitions.items() if sp.start_offset >= 0)
        else:
            keys = list(wanted)
        out: list[tuple[str, int, SharePartition | None]] = []
        for topic, idx in keys:
            sp = self.partitions.get((topic, idx))
            out.append((topic, idx, sp if sp is not None and sp.start_offset >= 0 else None))
        return out

    def alter_start_offset(
        self, topic: str, partition: int, topic_id: uuid.UUID, offset: int
    ) -> None:
        """Set the share-partition start offset (the group must be empty: no records are
        in flight). The partition is delivered from ``offset`` on, as if never fetched."""
        sp = self.share_partition(topic, partition, topic_id)
        sp.shutdown()
        sp.start_offset = sp.end_offset = offset

    def delete_offsets(self, topic: str) -> None:
        """Forget the share state of every partition of ``topic`` (the group must be empty):
        the next fetch starts at ``share.auto.offset.reset``."""
        for key in [k for k in self.partitions if k[0] == topic]:
            self.partitions.pop(key).shutdown()

    # -- verbs and views -----------------------------------------------------------------------

    def expire_locks(self, topic: str | None = None, partition: int | None = None) -> int:
        n = 0
        for (t, p), sp in self.partitions.items():
            if (topic is None or t == topic) and (partition is None or p == partition):
                n += sp.expire_locks()
        return n

    def shutdown(self) -> None:
        for m in self.members.values():
            m.cancel_timers()
        for sp in self.partitions.values():
            sp.shutdown()
        self.members.clear()
        self.sessions.clear()
        self.dead = True
        self.notify()

    def describe_member(self, m: ShareMember) -> dict[str, Any]:
        return {
            "member_id": m.member_id,
            "rack_id": m.rack_id,
            "member_epoch": m.member_epoch,
            "client_id": m.client_id,
            "client_host": m.client_host,
            "subscribed_topic_names": list(m.subscribed_topic_names),
            "assignment": described_assignment(self.state_ref, m.assigned),
        }


def _error(code: ErrorCode, message: str) -> Message:
    # As Kafka's error answers: member epoch 0.
    return {"error_code": code, "error_message": message, "member_epoch": 0}

"""KIP-1071 streams groups: Kafka Streams' own rebalance protocol, run by the group coordinator.

Theory of operation
-------------------
A :class:`StreamsGroup` lives beside classic, consumer and share groups (one id namespace).
Members of a Kafka Streams application (``group.protocol=streams``) join with
StreamsGroupHeartbeat epoch 0 and the application's *topology*: its subtopologies, each with
source topics, repartition topics it writes and reads, and state changelog topics. The first
member's topology (and its epoch) becomes the group's; a member with another topology epoch
is refused (STREAMS_INVALID_TOPOLOGY_EPOCH).

Tasks: subtopology ``s`` has one task per partition of its source topics (the largest
partition count among them). A repartition topic declared with 0 partitions gets the task
count of the subtopology that writes it. The coordinator creates the *internal topics* --
repartition and changelog topics -- that do not exist yet (a changelog topic declared with 0
partitions gets its subtopology's task count), with the declared replication factor (the
cluster default when 0) and topic configs, as Kafka's coordinator does. While a source topic
is missing no task is assigned and every heartbeat carries the MISSING_SOURCE_TOPICS status.

Assignment: any change of membership, topology or source topic metadata bumps the *group
epoch*; the target assignment then deals every active task over the members, balanced and
sticky (a member keeps tasks it has while within its share). There are no standby or warm-up
tasks (``num.standby.replicas`` is 0 here). Reconciliation is KIP-848's: a member first gives
up tasks it must lose (its epoch stays until a heartbeat reports them gone), and a task is
handed to its new owner only once the old owner has released it; then the member moves to
the assignment epoch.

Offsets: members commit with OffsetCommit v9+ under their member epoch (STALE_MEMBER_EPOCH
otherwise), as consumer-protocol members do. Leaving (-1) releases the member's tasks; a
member silent for ``group.streams.session.timeout.ms`` is removed.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mockkafka.cluster.groups_common import Group, Message, SessionTimers
from mockkafka.cluster.groups_consumer import (
    MemberEpochOffsets,
    _and,
    _copy,
    _minus,
    _overlaps,
    held_by_others,
)
from mockkafka.errors import ErrorCode, KafkaApiError

if TYPE_CHECKING:
    from mockkafka.cluster.base import TimerHandle

Tasks = dict[str, set[int]]  # subtopology id -> partitions

LEAVE_GROUP_MEMBER_EPOCH = -1
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2
#: Heartbeat and session settings (broker configs ``group.streams.*``; Kafka's defaults are
#: 5000 ms and 45000 ms: the heartbeat interval is shortened, as for the other groups).
DEFAULT_HEARTBEAT_INTERVAL_MS = 500
DEFAULT_SESSION_TIMEOUT_MS = 45000
TASK_OFFSET_INTERVAL_MS = 60000
ACCEPTABLE_RECOVERY_LAG = 10000
ASSIGNOR_NAME = "sticky"


class StreamsStatus(enum.IntEnum):
    """The ``Status`` codes of a StreamsGroupHeartbeat response (KIP-1071)."""

    STALE_TOPOLOGY = 0
    MISSING_SOURCE_TOPICS = 1
    INCORRECTLY_PARTITIONED_TOPICS = 2
    MISSING_INTERNAL_TOPICS = 3
    SHUTDOWN_APPLICATION = 4


@dataclass(slots=True)
class StreamsMember:
    """One member (a Streams client's consumer) of a streams group."""

    member_id: str
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    process_id: str = ""
    user_endpoint: tuple[str, int] | None = None
    client_tags: dict[str, str] = field(default_factory=dict)
    topology_epoch: int = -1
    member_epoch: int = 0
    previous_member_epoch: int = -1
    rebalance_timeout_ms: int = 300000
    #: Active tasks handed to the member (what its last answer said it may own).
    assigned: Tasks = field(default_factory=dict)
    #: Tasks it must give up before it moves on (KIP-848 reconciliation).
    pending_revocation: Tasks = field(default_factory=dict)
    #: What the last answer listed (an answer repeats the tasks only when they change).
    last_sent: Tasks | None = None
    session_timer: TimerHandle | None = None

    def cancel_timers(self) -> None:
        if self.session_timer is not None:
            self.session_timer.cancel()
            self.session_timer = None


def _tasks_from_request(entries: list[Mapping[str, Any]]) -> Tasks:
    out: Tasks = {}
    for e in entries:
        out.setdefault(e.get("subtopology_id") or "", set()).update(e.get("partitions") or [])
    return {k: v for k, v in out.items() if v}


def _task_ids(tasks: Mapping[str, set[int]]) -> list[Message]:
    return [
        {"subtopology_id": s, "partitions": sorted(ps)} for s, ps in sorted(tasks.items()) if ps
    ]


@dataclass(eq=False)
class StreamsGroup(MemberEpochOffsets, SessionTimers, Group):
    """A KIP-1071 streams group (see the module docstring)."""

    kind = "streams"

    group_epoch: int = 0
    assignment_epoch: int = 0
    topology_epoch: int = -1
    subtopologies: list[Message] = field(default_factory=list)
    members: dict[str, StreamsMember] = field(default_factory=dict)
    target: dict[str, Tasks] = field(default_factory=dict)
    metadata: tuple[Any, ...] = ()
    #: Task counts per subtopology (None while a source topic is missing).
    task_counts: dict[str, int] | None = None
    missing_topics: list[str] = field(default_factory=list)
    internal_topics_created: list[str] = field(default_factory=list)
    shutdown_requested: bool = False
    rebalances: int = 0
    dead: bool = False

    @property
    def state_name(self) -> str:
        if not self.members:
            return "Empty"
        if self.task_counts is None:
            return "NotReady"
        if any(m.member_epoch != self.assignment_epoch for m in self.members.values()):
            return "Reconciling"
        return "Stable"

    @property
    def protocol_type_name(self) -> str:
        return "streams"

    def is_empty(self) -> bool:
        return not self.members

    @property
    def assignor_name(self) -> str:
        return ASSIGNOR_NAME

    def _config_ms(self, key: str, default: int) -> int:
        raw = self.state_ref.broker_configs.get(key)
        try:
            return int(raw) if raw is not None else default
        except ValueError:
            return default

    @property
    def heartbeat_interval_ms(self) -> int:
        return self._config_ms("group.streams.heartbeat.interval.ms", DEFAULT_HEARTBEAT_INTERVAL_MS)

    @property
    def session_timeout_ms(self) -> int:
        return self._config_ms("group.streams.session.timeout.ms", DEFAULT_SESSION_TIMEOUT_MS)

    def source_topics(self) -> set[str]:
        return {t for s in self.subtopologies for t in s.get("source_topics") or []}

    def subscribed_topics(self) -> set[str] | None:
        return self.source_topics() | {
            r["name"] for s in self.subtopologies for r in s.get("repartition_source_topics") or []
        }

    # -- topology and internal topics ----------------------------------------------------------

    def _configure(self) -> None:
        """Compute task counts from the topics; create missing internal topics."""
        st = self.state_ref
        missing = sorted(t for t in self.source_topics() if t not in st.topics)
        self.missing_topics = missing
        if missing or not self.subtopologies:
            self.task_counts = None if missing else {}
            return
        counts: dict[str, int] = {}
        repartition: dict[str, int] = {}
        for _round in range(len(self.subtopologies) + 1):
            for s in self.subtopologies:
                sid = s["subtopology_id"]
                n = max(
                    [len(st.topics[t].partitions) for t in s.get("source_topics") or []]
                    + [
                        r.get("partitions") or repartition.get(r["name"], 0)
                        for r in s.get("repartition_source_topics") or []
                    ]
                    + [0]
                )
                if n > 0:
                    counts[sid] = n
                    for sink in s.get("repartition_sink_topics") or []:
                        repartition.setdefault(sink, n)
        for s in self.subtopologies:
            sid = s["subtopology_id"]
            n = counts.get(sid, 0)
            for r in s.get("repartition_source_topics") or []:
                self._ensure_topic(r, r.get("partitions") or repartition.get(r["name"], n))
            for c in s.get("state_changelog_topics") or []:
                self._ensure_topic(c, c.get("partitions") or n)
        self.task_counts = counts

    def _ensure_topic(self, info: Mapping[str, Any], partitions: int) -> None:
        st = self.state_ref
        name = info["name"]
        if name in st.topics or partitions <= 0:
            return
        rf = info.get("replication_factor") or None
        configs = {kv["key"]: kv["value"] for kv in info.get("topic_configs") or []}
        try:
            st.create_topic(name, partitions, rf, configs or None)
        except KafkaApiError:
            return  # reported as MISSING_INTERNAL_TOPICS until it exists
        self.internal_topics_created.append(name)

    def _fingerprint(self) -> tuple[Any, ...]:
        topics = self.state_ref.topics
        names = self.subscribed_topics() or set()
        return (
            self.topology_epoch,
            tuple(
                sorted(
                    (n, str(topics[n].topic_id), len(topics[n].partitions))
                    for n in names
                    if n in topics
                )
            ),
        )

    def _update_target(self, *, bump: bool) -> None:
        fp = self._fingerprint()
        if fp != self.metadata:
            self.metadata = fp
            bump = True
        if bump:
            self.group_epoch += 1
        if self.group_epoch <= self.assignment_epoch:
            return
        self._configure()
        self.metadata = self._fingerprint()  # internal topics may have just been created
        self.target = self._assign()
        self.assignment_epoch = self.group_epoch
        self.rebalances += 1

    def _assign(self) -> dict[str, Tasks]:
        """Every active task to exactly one member: balanced, keeping current owners."""
        out: dict[str, Tasks] = {mid: {} for mid in self.members}
        if not self.members or not self.task_counts:
            return out
        tasks = sorted((s, p) for s, n in self.task_counts.items() for p in range(n))
        mids = sorted(self.members)
        base, extra = divmod(len(tasks), len(mids))
        current = {
            mid: {
                (s, p)
                for s, ps in (self.target.get(mid) or self.members[mid].assigned).items()
                for p in ps
            }
            for mid in mids
        }
        # members keeping the most get the larger shares first (fewer moves)
        order = sorted(mids, key=lambda mid: (-len(current[mid] & set(tasks)), mid))
        cap = {mid: base + (1 if i < extra else 0) for i, mid in enumerate(order)}
        free = set(tasks)
        for mid in order:
            keep = sorted(current[mid] & free)[: cap[mid]]
            for task in keep:
                out[mid].setdefault(task[0], set()).add(task[1])
                free.discard(task)
        remaining = sorted(free)
        for mid in order:
            while remaining and sum(len(ps) for ps in out[mid].values()) < cap[mid]:
                s, p = remaining.pop(0)
                out[mid].setdefault(s, set()).add(p)
        return out

    # -- heartbeat -----------------------------------------------------------------------------

    def heartbeat(self, request: Mapping[str, Any], client_id: str, client_host: str) -> Message:
        """Handle a StreamsGroupHeartbeat body; returns the response body."""
        member_id: str = request.get("member_id") or ""
        epoch: int = request.get("member_epoch", 0)
        topology = request.get("topology")
        if epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
            m = self.members.get(member_id)
            if m is None:
                return _error(ErrorCode.UNKNOWN_MEMBER_ID, f"member {member_id} is unknown")
            self.remove_member(m)
            return {"error_code": 0, "member_id": member_id, "member_epoch": epoch}
        changed = False
        if epoch == 0:
            if topology is None:
                return _error(ErrorCode.INVALID_REQUEST, "Topology must be set when joining.")
            t_epoch = topology.get("epoch", 0)
            if self.topology_epoch < 0 or not self.members:
                if t_epoch != self.topology_epoch or topology.get("subtopologies") != (
                    self.subtopologies
                ):
                    self.topology_epoch = t_epoch
                    self.subtopologies = list(topology.get("subtopologies") or [])
                    changed = True
            elif t_epoch != self.topology_epoch:
                return _error(
                    ErrorCode.STREAMS_INVALID_TOPOLOGY_EPOCH,
                    f"topology epoch {t_epoch} is not the group's {self.topology_epoch}",
                )
            m = self.members.get(member_id)
            if m is None:
                m = self.members[member_id] = StreamsMember(member_id)
                changed = True
            m.topology_epoch = t_epoch
        else:
            found = self.members.get(member_id)
            if found is None:
                return _error(ErrorCode.UNKNOWN_MEMBER_ID, f"member {member_id} is unknown")
            if epoch != found.member_epoch and epoch != found.previous_member_epoch:
                return _error(
                    ErrorCode.FENCED_MEMBER_EPOCH,
                    f"member epoch {epoch} is not the current epoch {found.member_epoch}",
                )
            m = found
        for key, attr in (("instance_id", "instance_id"), ("rack_id", "rack_id")):
            if request.get(key) is not None:
                setattr(m, attr, request[key])
        if request.get("process_id") is not None:
            m.process_id = request["process_id"]
        if request.get("user_endpoint") is not None:
            ep = request["user_endpoint"]
            m.user_endpoint = (ep.get("host") or "", ep.get("port", 0))
        if request.get("client_tags") is not None:
            m.client_tags = {kv["key"]: kv["value"] for kv in request["client_tags"]}
        if request.get("rebalance_timeout_ms", -1) > 0:
            m.rebalance_timeout_ms = request["rebalance_timeout_ms"]
        if request.get("shutdown_application"):
            self.shutdown_requested = True
        m.client_id, m.client_host = client_id, client_host
        owned_raw = request.get("active_tasks")
        owned = _tasks_from_request(owned_raw) if owned_raw is not None else None
        self._update_target(bump=changed)
        self._reconcile(m, owned)
        self._schedule_session(m)
        self.notify()
        resp: Message = {
            "error_code": 0,
            "member_id": m.member_id,
            "member_epoch": m.member_epoch,
            "heartbeat_interval_ms": self.heartbeat_interval_ms,
            "acceptable_recovery_lag_legacy": ACCEPTABLE_RECOVERY_LAG,
            "acceptable_recovery_lag": ACCEPTABLE_RECOVERY_LAG,
            "task_offset_interval_ms": TASK_OFFSET_INTERVAL_MS,
            "status": self._status(),
            "endpoint_information_epoch": 0,
        }
        if epoch == 0 or m.last_sent != m.assigned:
            resp["active_tasks"] = _task_ids(m.assigned)
            resp["standby_tasks"] = []
            resp["warmup_tasks"] = []
            m.last_sent = _copy(m.assigned)
        return resp

    def _status(self) -> list[Message]:
        out: list[Message] = []
        if self.missing_topics:
            out.append(
                {
                    "status_code": StreamsStatus.MISSING_SOURCE_TOPICS,
                    "status_detail": "Source topics "
                    + ", ".join(self.missing_topics)
                    + " are missing.",
                }
            )
        if self.shutdown_requested:
            out.append(
                {
                    "status_code": StreamsStatus.SHUTDOWN_APPLICATION,
                    "status_detail": "A KafkaStreams instance requested the application to shut "
                    "down.",
                }
            )
        return out

    def _reconcile(self, m: StreamsMember, owned: Tasks | None) -> None:
        if m.pending_revocation:
            if owned is None or _overlaps(owned, m.pending_revocation):
                return
            m.pending_revocation = {}
        target = self.target.get(m.member_id, {})
        keep = _and(m.assigned, target)
        revoke = _minus(m.assigned, target)
        if revoke:
            m.assigned = keep
            m.pending_revocation = revoke
            return
        wanted = _minus(target, keep)
        free = _minus(wanted, held_by_others(self.members.values(), m))
        for s, ps in free.items():
            keep.setdefault(s, set()).update(ps)
        m.assigned = keep
        if m.member_epoch != self.assignment_epoch:
            m.previous_member_epoch = m.member_epoch
            m.member_epoch = self.assignment_epoch

    def remove_member(self, m: StreamsMember) -> None:
        """Remove a member (leave or expiry): its tasks go to the others."""
        m.cancel_timers()
        if self.members.get(m.member_id) is m:
            del self.members[m.member_id]
        self.target.pop(m.member_id, None)
        if not self.members:
            self.shutdown_requested = False
        self._update_target(bump=True)
        self.notify()

    def trigger_rebalance(self) -> None:
        """Recompute the target assignment at a new group epoch."""
        self._update_target(bump=True)
        self.notify()

    def shutdown(self) -> None:
        for m in self.members.values():
            m.cancel_timers()
        self.members.clear()
        self.dead = True
        self.notify()

    # -- describe ------------------------------------------------------------------------------

    def describe_topology(self) -> Message:
        return {
            "epoch": self.topology_epoch,
            "subtopologies": [
                {
                    "subtopology_id": s["subtopology_id"],
                    "source_topics": list(s.get("source_topics") or []),
                    "repartition_sink_topics": list(s.get("repartition_sink_topics") or []),
                    "state_changelog_topics": [
                        _described_topic(c) for c in s.get("state_changelog_topics") or []
                    ],
                    "repartition_source_topics": [
                        _described_topic(r) for r in s.get("repartition_source_topics") or []
                    ],
                }
                for s in self.subtopologies
            ],
        }

    def describe_member(self, m: StreamsMember) -> Message:
        ep = m.user_endpoint
        return {
            "member_id": m.member_id,
            "member_epoch": m.member_epoch,
            "instance_id": m.instance_id,
            "rack_id": m.rack_id,
            "client_id": m.client_id,
            "client_host": m.client_host,
            "topology_epoch": m.topology_epoch,
            "process_id": m.process_id,
            "user_endpoint": {"host": ep[0], "port": ep[1]} if ep else None,
            "client_tags": [{"key": k, "value": v} for k, v in sorted(m.client_tags.items())],
            "task_offsets": [],
            "task_end_offsets": [],
            "assignment": _described_assignment(m.assigned),
            "target_assignment": _described_assignment(self.target.get(m.member_id, {})),
            "is_classic": False,
        }


def _described_topic(info: Mapping[str, Any]) -> Message:
    return {
        "name": info["name"],
        "partitions": info.get("partitions", 0),
        "replication_factor": info.get("replication_factor", 0),
        "topic_configs": list(info.get("topic_configs") or []),
    }


def _described_assignment(tasks: Mapping[str, set[int]]) -> Message:
    return {"active_tasks": _task_ids(tasks), "standby_tasks": [], "warmup_tasks": []}


def _error(code: ErrorCode, message: str) -> Message:
    # As Kafka's error answers: member epoch 0 and an empty (not null) status list.
    return {"error_code": code, "error_message": message, "member_epoch": 0, "status": []}

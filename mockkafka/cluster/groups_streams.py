"""KIP-1071 streams groups: StreamsGroupHeartbeat, with the broker assigning tasks.

Theory of operation
-------------------
A streams group is a KIP-848 group whose unit of assignment is a *task* -- a subtopology and
a partition number -- instead of a topic partition, so :class:`StreamsGroup` reuses the
consumer group's epochs and reconciliation (``groups_consumer.py``) with subtopology ids in
place of topic names: a task is revoked from its old owner before another member gets it.

The first member to join brings the *topology*: its subtopologies, their source topics,
the repartition topics they write and read and their state changelog topics. The group
derives the number of tasks of each subtopology as Kafka's coordinator does: the largest
partition count among its source topics and repartition source topics, where a repartition
topic that does not fix its own count takes the task count of the subtopology that writes
it. When every source topic exists, the group creates the missing internal topics (the
changelogs with one partition per task, the repartition topics as derived, with the
configs the topology names) and assigns the tasks; until then the heartbeat answers with
a status (MISSING_SOURCE_TOPICS) and no tasks, and the members wait. Kafka creates the
internal topics asynchronously and reports MISSING_INTERNAL_TOPICS meanwhile; here they
exist by the time the heartbeat that asked for them is answered.

Only active tasks are assigned (``num.standby.replicas`` is the client's business and the
fake's assignor gives no standby or warm-up tasks). Endpoint information (interactive
queries) is kept per member and sent as ``partitions_by_user_endpoint`` whenever the
member's ``endpoint_information_epoch`` is behind the group's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mockkafka.cluster.groups_common import Message
from mockkafka.cluster.groups_consumer import (
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    ConsumerGroup,
    ConsumerMember,
    TopicPartitions,
    _copy,
    _minus,
    _sorted,
)
from mockkafka.errors import ErrorCode, KafkaApiError

# StreamsGroupHeartbeatResponse status codes (the schema's "Possible status codes").
STALE_TOPOLOGY = 0
MISSING_SOURCE_TOPICS = 1
INCORRECTLY_PARTITIONED_TOPICS = 2
MISSING_INTERNAL_TOPICS = 3
SHUTDOWN_APPLICATION = 4

#: What Kafka's coordinator answers for these group configs by default.
ACCEPTABLE_RECOVERY_LAG = 10_000
TASK_OFFSET_INTERVAL_MS = 60_000


@dataclass(frozen=True, slots=True)
class TopicInfo:
    """An internal topic of the topology: ``partitions`` 0 means "derive it"."""

    name: str
    partitions: int = 0
    replication_factor: int = -1
    configs: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Subtopology:
    subtopology_id: str
    source_topics: tuple[str, ...] = ()
    source_topic_regex: tuple[str, ...] = ()
    state_changelog_topics: tuple[TopicInfo, ...] = ()
    repartition_sink_topics: tuple[str, ...] = ()
    repartition_source_topics: tuple[TopicInfo, ...] = ()


@dataclass(frozen=True, slots=True)
class Topology:
    epoch: int
    subtopologies: tuple[Subtopology, ...]

    @staticmethod
    def from_request(doc: Mapping[str, Any]) -> Topology:
        def infos(items: list[Mapping[str, Any]] | None) -> tuple[TopicInfo, ...]:
            return tuple(
                TopicInfo(
                    i["name"],
                    i.get("partitions", 0),
                    i.get("replication_factor", -1),
                    tuple((c["key"], c["value"]) for c in i.get("topic_configs") or []),
                )
                for i in items or []
            )

        return Topology(
            doc.get("epoch", 0),
            tuple(
                Subtopology(
                    s["subtopology_id"],
                    tuple(s.get("source_topics") or []),
                    tuple(s.get("source_topic_regex") or []),
                    infos(s.get("state_changelog_topics")),
                    tuple(s.get("repartition_sink_topics") or []),
                    infos(s.get("repartition_source_topics")),
                )
                for s in doc.get("subtopologies") or []
            ),
        )

    def to_description(self) -> Message:
        """The topology as StreamsGroupDescribe shows it."""

        def infos(items: tuple[TopicInfo, ...]) -> list[Message]:
            return [
                {
                    "name": i.name,
                    "partitions": i.partitions,
                    "replication_factor": i.replication_factor,
                    "topic_configs": [{"key": k, "value": v} for k, v in i.configs],
                }
                for i in items
            ]

        return {
            "epoch": self.epoch,
            "subtopologies": [
                {
                    "subtopology_id": s.subtopology_id,
                    "source_topics": list(s.source_topics),
                    "repartition_sink_topics": list(s.repartition_sink_topics),
                    "state_changelog_topics": infos(s.state_changelog_topics),
                    "repartition_source_topics": infos(s.repartition_source_topics),
                }
                for s in self.subtopologies
            ],
        }


@dataclass(eq=False, slots=True)
class StreamsMember(ConsumerMember):
    """A member of a streams group: one Kafka Streams client (process) thread."""

    process_id: str | None = None
    user_endpoint: tuple[str, int] | None = None
    client_tags: dict[str, str] = field(default_factory=dict)
    topology_epoch: int = 0


@dataclass(eq=False)
class StreamsGroup(ConsumerGroup):
    """A KIP-1071 streams group (see the module docstring)."""

    topology: Topology | None = None
    tasks: dict[str, int] = field(default_factory=dict)
    status: list[Message] = field(default_factory=list)
    endpoint_information_epoch: int = 0
    topology_description: Message | None = None

    kind = "streams"

    @property
    def protocol_type_name(self) -> str:
        return "streams"

    @property
    def state_name(self) -> str:
        if not self.dead and self.members and self.topology is not None and self.status:
            return "NotReady"
        return super().state_name

    @property
    def heartbeat_interval_ms(self) -> int:
        return self._config_ms(
            "group.streams.heartbeat.interval.ms",
            self.state_ref.config.group_consumer_heartbeat_interval_ms,
        )

    @property
    def session_timeout_ms(self) -> int:
        return self._config_ms("group.streams.session.timeout.ms", 45000)

    # -- the topology and its tasks ------------------------------------------------------------

    def _member_topics(self, m: ConsumerMember) -> set[str]:
        return {sid for sid, n in self.tasks.items() if n > 0}

    def subscribed_topics(self) -> set[str] | None:
        if self.topology is None:
            return set()
        out: set[str] = set()
        for s in self.topology.subtopologies:
            out |= set(s.source_topics) | {i.name for i in s.repartition_source_topics}
        return out

    def _metadata_fingerprint(self) -> tuple[tuple[str, str, int], ...]:
        self._configure_topics()
        return tuple((sid, "", n) for sid, n in sorted(self.tasks.items()))

    def _partitions_of(self, topic: str) -> int:
        t = self.state_ref.topics.get(topic)
        return len(t.partitions) if t is not None else 0

    def _configure_topics(self) -> None:
        """Derive the task counts, create missing internal topics, set the status."""
        self.status = []
        self.tasks = {}
        topo = self.topology
        if topo is None:
            return
        missing = sorted(
            {t for s in topo.subtopologies for t in s.source_topics if self._partitions_of(t) == 0}
        )
        if missing:
            self.status = [
                {
                    "status_code": MISSING_SOURCE_TOPICS,
                    "status_detail": f"Source topics {', '.join(missing)} are missing.",
                }
            ]
            return
        repartition: dict[str, int] = {}
        for s in topo.subtopologies:
            for i in s.repartition_source_topics:
                if i.partitions > 0:
                    repartition[i.name] = i.partitions
        counts: dict[str, int] = {}
        for _ in range(len(topo.subtopologies) + 1):  # a fixpoint: writers before readers
            for s in topo.subtopologies:
                sizes = [self._partitions_of(t) for t in s.source_topics]
                sizes += [repartition.get(i.name, 0) for i in s.repartition_source_topics]
                n = max(sizes, default=0)
                if n:
                    counts[s.subtopology_id] = n
                    for sink in s.repartition_sink_topics:
                        repartition.setdefault(sink, n)
        unresolved = [
            i.name
            for s in topo.subtopologies
            for i in s.repartition_source_topics
            if i.name not in repartition
        ]
        if unresolved:
            self.status = [
                {
                    "status_code": INCORRECTLY_PARTITIONED_TOPICS,
                    "status_detail": "The number of partitions of the repartition topics "
                    f"{', '.join(sorted(unresolved))} cannot be derived.",
                }
            ]
            return
        wanted: dict[str, tuple[int, TopicInfo]] = {}
        for s in topo.subtopologies:
            for i in s.repartition_source_topics:
                wanted[i.name] = (repartition[i.name], i)
            for i in s.state_changelog_topics:
                wanted[i.name] = (i.partitions or counts.get(s.subtopology_id, 0), i)
        problems: list[str] = []
        for name, (partitions, info) in sorted(wanted.items()):
            if name in self.state_ref.topics:
                if self._partitions_of(name) != partitions:
                    problems.append(name)
                continue
            try:
                self.state_ref.create_topic(
                    name,
                    partitions,
                    info.replication_factor,
                    dict(info.configs),
                )
            except KafkaApiError as exc:
                problems.append(f"{name} ({exc})")
        if problems:
            self.status = [
                {
                    "status_code": INCORRECTLY_PARTITIONED_TOPICS
                    if all("(" not in p for p in problems)
                    else MISSING_INTERNAL_TOPICS,
                    "status_detail": f"Internal topics are not as the topology needs: "
                    f"{', '.join(problems)}",
                }
            ]
            return
        self.tasks = counts

    # -- heartbeat -----------------------------------------------------------------------------

    def _error(self, code: ErrorCode, message: str) -> Message:
        return {"error_code": code, "error_message": message}

    def heartbeat(self, request: Mapping[str, Any], client_id: str, client_host: str) -> Message:
        """Handle a StreamsGroupHeartbeat body; returns the response body."""
        member_id: str = request.get("member_id") or ""
        epoch: int = request.get("member_epoch", 0)
        instance_id: str | None = request.get("instance_id")
        owned_ids = request.get("active_tasks")
        owned = _tasks(owned_ids) if owned_ids is not None else None
        if epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
            out = self._leave(member_id, instance_id, epoch)
            return {**out, "heartbeat_interval_ms": 0, "acceptable_recovery_lag": -1}
        topology_doc = request.get("topology")
        changed = False
        if topology_doc is not None:
            topo = Topology.from_request(topology_doc)
            if self.topology is None or topo.epoch > self.topology.epoch:
                self.topology = topo
                changed = True
        if epoch == 0:
            if self.topology is None:
                return self._error(
                    ErrorCode.INVALID_REQUEST, "Topology must be non-null when joining the group."
                )
            joined = self._join_member(member_id, instance_id)
            if isinstance(joined, dict):
                return joined
            m, replaced = joined
            changed = changed or not replaced
        else:
            found = self.members.get(member_id)
            if found is None:
                return self._error(ErrorCode.UNKNOWN_MEMBER_ID, f"member {member_id} is unknown")
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
        assert isinstance(m, StreamsMember)
        before = _copy(m.assigned)
        if request.get("process_id") is not None:
            m.process_id = request["process_id"]
        endpoint = request.get("user_endpoint")
        if endpoint is not None:
            new_endpoint = (endpoint["host"], endpoint["port"])
            if new_endpoint != m.user_endpoint:
                m.user_endpoint = new_endpoint
                self.endpoint_information_epoch += 1
        if request.get("client_tags") is not None:
            m.client_tags = {t["key"]: t["value"] for t in request["client_tags"]}
        if request.get("rack_id") is not None:
            m.rack_id = request["rack_id"]
        if request.get("rebalance_timeout_ms", -1) > 0:
            m.rebalance_timeout_ms = request["rebalance_timeout_ms"]
        if topology_doc is not None:
            m.topology_epoch = topology_doc.get("epoch", 0)
        m.client_id = client_id
        m.client_host = client_host
        self._maybe_update_target(bump=changed)
        self._reconcile(m, owned)
        if before != m.assigned and any(
            isinstance(x, StreamsMember) and x.user_endpoint for x in self.members.values()
        ):
            self.endpoint_information_epoch += 1
        self._schedule_session(m)
        self.notify()
        resp: Message = {
            "error_code": ErrorCode.NONE,
            "error_message": None,
            "member_id": m.member_id,
            "member_epoch": m.member_epoch,
            "heartbeat_interval_ms": self.heartbeat_interval_ms,
            "acceptable_recovery_lag": ACCEPTABLE_RECOVERY_LAG,
            "task_offset_interval_ms": TASK_OFFSET_INTERVAL_MS,
            "status": list(self.status),
            "active_tasks": None,
            "standby_tasks": None,
            "warmup_tasks": None,
            "endpoint_information_epoch": self.endpoint_information_epoch,
            "partitions_by_user_endpoint": None,
        }
        if epoch == 0 or before != m.assigned:
            resp["active_tasks"] = [
                {"subtopology_id": sid, "partitions": ps} for sid, ps in _sorted(m.assigned).items()
            ]
            resp["standby_tasks"] = []
            resp["warmup_tasks"] = []
        if request.get("endpoint_information_epoch", -1) != self.endpoint_information_epoch:
            resp["partitions_by_user_endpoint"] = self._partitions_by_endpoint()
        return resp

    def _join_member(
        self, member_id: str, instance_id: str | None
    ) -> tuple[ConsumerMember, bool] | Message:
        existing = self.members.get(member_id)
        if existing is not None and not isinstance(existing, StreamsMember):  # pragma: no cover
            return self._error(ErrorCode.INVALID_REQUEST, "not a streams member")
        joined = super()._join_member(member_id, instance_id)
        if isinstance(joined, dict):
            return joined
        m, replaced = joined
        if not isinstance(m, StreamsMember):
            streams = StreamsMember(m.member_id, m.instance_id)
            self.members[m.member_id] = streams
            return streams, replaced
        return m, replaced

    def _partitions_by_endpoint(self) -> list[Message]:
        """For each member with a user endpoint: the source partitions of its tasks."""
        topo = self.topology
        out: list[Message] = []
        if topo is None:
            return out
        sources = {
            s.subtopology_id: [*s.source_topics, *(i.name for i in s.repartition_source_topics)]
            for s in topo.subtopologies
        }
        for m in self.members.values():
            if not isinstance(m, StreamsMember) or m.user_endpoint is None:
                continue
            by_topic: dict[str, set[int]] = {}
            for sid, ps in m.assigned.items():
                for topic in sources.get(sid, []):
                    by_topic.setdefault(topic, set()).update(ps)
            host, port = m.user_endpoint
            out.append(
                {
                    "user_endpoint": {"host": host, "port": port},
                    "active_partitions": [
                        {"topic": t, "partitions": sorted(ps)} for t, ps in sorted(by_topic.items())
                    ],
                    "standby_partitions": [],
                }
            )
        return out

    # -- views ---------------------------------------------------------------------------------

    def describe(self) -> Message:
        """The group part of StreamsGroupDescribe (without error and authorized operations)."""
        return {
            "group_state": self.state_name,
            "group_epoch": self.group_epoch,
            "assignment_epoch": self.assignment_epoch,
            "topology": self.topology.to_description() if self.topology is not None else None,
            "members": [self.describe_member(m) for m in self.members.values()],
        }

    def describe_member(self, m: ConsumerMember) -> dict[str, Any]:
        assert isinstance(m, StreamsMember)

        def task_ids(tp: TopicPartitions) -> list[Message]:
            return [{"subtopology_id": s, "partitions": ps} for s, ps in _sorted(tp).items()]

        endpoint = m.user_endpoint
        return {
            "member_id": m.member_id,
            "member_epoch": m.member_epoch,
            "instance_id": m.instance_id,
            "rack_id": m.rack_id,
            "client_id": m.client_id,
            "client_host": m.client_host,
            "topology_epoch": m.topology_epoch,
            "process_id": m.process_id or "",
            "user_endpoint": {"host": endpoint[0], "port": endpoint[1]} if endpoint else None,
            "client_tags": [{"key": k, "value": v} for k, v in sorted(m.client_tags.items())],
            "task_offsets": [],
            "task_end_offsets": [],
            "assignment": {
                "active_tasks": task_ids(m.assigned),
                "standby_tasks": [],
                "warmup_tasks": [],
            },
            "target_assignment": {
                "active_tasks": task_ids(self.target.get(m.member_id, {})),
                "standby_tasks": [],
                "warmup_tasks": [],
            },
            "is_classic": False,
        }


def _tasks(entries: list[Mapping[str, Any]]) -> TopicPartitions:
    out: TopicPartitions = {}
    for e in entries:
        out.setdefault(e["subtopology_id"], set()).update(e.get("partitions") or [])
    return out

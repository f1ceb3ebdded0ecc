"""Views: frozen snapshots of cluster state, for assertions.

Every view is taken on the cluster's loop in one go, so its fields agree with each other
and never change under the test: take a new view (``cluster.topic("orders")``) to see
later state. The one exception is ``records()`` on a topic or partition view, which reads
the log *now* (a query, not part of the snapshot).

* :class:`BrokerView` -- node id, address, rack, whether it runs, its dynamic configs;
* :class:`TopicView` -- name, topic id, configs set on the topic, partitions;
* :class:`PartitionView` -- leader, leader epoch, replicas, ISR, offsets;
* :class:`GroupView` / :class:`MemberView` -- a consumer group and its members;
* :class:`ShareGroupView` / :class:`SharePartitionView` -- a KIP-932 share group, its
  members and the delivery state of each topic-partition it consumes;
* :class:`TransactionView` -- a transactional id as the coordinator holds it;
* :class:`AclView` -- one ACL: who may (or may not) do what on which resource.

The builders (``topic_view``, ``group_view``, ``share_group_view``, ``transaction_view``,
``acl_view``) are sans-IO: they read state objects
and must run on the loop that owns them.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mockkafka.errors import KafkaApiError

if TYPE_CHECKING:
    from mockkafka.cluster.acls import AclBinding
    from mockkafka.cluster.coordinators import Coordinators
    from mockkafka.cluster.groups_common import OffsetAndMetadata
    from mockkafka.cluster.state import Broker, ClusterState, Topic
    from mockkafka.cluster.transactions import (
        CompletedTransaction,
        TopicPartition,
        TransactionMetadata,
    )
    from mockkafka.protocol.records import Record

__all__ = [
    "AclView",
    "BrokerView",
    "GroupView",
    "MemberView",
    "PartitionView",
    "RecordReader",
    "ShareGroupView",
    "SharePartitionView",
    "TopicView",
    "TransactionView",
    "acl_view",
    "group_view",
    "share_group_view",
    "topic_view",
    "transaction_view",
]

#: ``reader(topic, partition, include_control)``: the records a partition holds now,
#: read on the cluster's loop.
RecordReader = Callable[[str, int, bool], "list[Record]"]


# -- brokers -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BrokerView:
    """One broker as it was when the view was taken: ``configs`` are those set at run time
    for this broker (IncrementalAlterConfigs), ``running`` False after ``stop_broker``."""

    node_id: int
    host: str
    port: int
    rack: str | None
    running: bool
    configs: dict[str, str]


def broker_view(broker: Broker) -> BrokerView:
    """Snapshot ``broker`` (run on the cluster's loop)."""
    return BrokerView(
        broker.node_id, broker.host, broker.port, broker.rack, broker.running, dict(broker.configs)
    )


# -- topics and partitions -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PartitionView:
    """One partition as it was when the view was taken.

    ``records()`` reads the log now (not part of the snapshot).
    """

    topic: str
    partition: int
    leader: int
    leader_epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    log_start_offset: int
    high_watermark: int
    last_stable_offset: int
    _reader: RecordReader = field(repr=False, compare=False)

    def records(self, *, include_control: bool = False) -> list[Record]:
        """Every record the partition holds now, decoded (control records only if asked)."""
        return self._reader(self.topic, self.partition, include_control)


@dataclass(frozen=True, slots=True)
class TopicView:
    """One topic as it was when the view was taken.

    ``configs`` holds the configs set on the topic (others take broker or Kafka defaults);
    ``partitions`` one :class:`PartitionView` per partition. ``records()`` reads the logs
    now (not part of the snapshot).
    """

    name: str
    topic_id: uuid.UUID
    configs: dict[str, str]
    partitions: tuple[PartitionView, ...]

    def partition(self, partition: int) -> PartitionView:
        """Partition ``partition`` (KafkaApiError UNKNOWN_TOPIC_OR_PARTITION if absent)."""
        if (
            isinstance(partition, bool)
            or not isinstance(partition, int)
            or not 0 <= partition < len(self.partitions)
        ):
            raise KafkaApiError(
                "UNKNOWN_TOPIC_OR_PARTITION",
                f"topic {self.name!r} has partitions 0..{len(self.partitions) - 1}, "
                f"not {partition!r}",
            )
        return self.partitions[partition]

    def records(self) -> list[Record]:
        """Every record the topic holds now, partition by partition."""
        return [r for p in self.partitions for r in p.records()]

    def __repr__(self) -> str:
        parts = ", ".join(
            f"{p.partition}: leader={p.leader} isr={list(p.isr)} "
            f"offsets={p.log_start_offset}..{p.high_watermark}"
            for p in self.partitions
        )
        configs = f" configs={self.configs}" if self.configs else ""
        return f"<TopicView {self.name!r} [{parts}]{configs}>"


def topic_view(topic: Topic, reader: RecordReader) -> TopicView:
    """Snapshot ``topic`` (run on the cluster's loop)."""
    return TopicView(
        name=topic.name,
        topic_id=topic.topic_id,
        configs=dict(topic.configs),
        partitions=tuple(
            PartitionView(
                topic=topic.name,
                partition=p.index,
                leader=p.leader,
                leader_epoch=p.leader_epoch,
                replicas=tuple(p.replicas),
                isr=tuple(p.isr),
                log_start_offset=p.log.log_start_offset,
                high_watermark=p.log.high_watermark,
                last_stable_offset=p.log.last_stable_offset,
                _reader=reader,
            )
            for p in topic.partitions
        ),
    )


# -- consumer groups ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MemberView:
    """A group member as a test sees it (a snapshot).

    ``assignment`` is {topic: [partitions]} -- decoded from the consumer protocol for classic
    groups (None when the protocol is not ``consumer`` or nothing was assigned yet), the
    current assignment for KIP-848 groups. ``member_epoch`` is -1 for classic members.
    """

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    assignment: dict[str, list[int]] | None
    member_epoch: int = -1


def _member(what: str, members: tuple[MemberView, ...], member_id: str) -> MemberView:
    for m in members:
        if m.member_id == member_id:
            return m
    raise KafkaApiError(
        "UNKNOWN_MEMBER_ID",
        f"{what} has no member {member_id!r}; members are {[m.member_id for m in members]}",
    )


@dataclass(frozen=True, slots=True)
class GroupView:
    """A group as a test sees it (a snapshot taken on the cluster loop).

    ``type`` is ``"classic"``, ``"consumer"`` (KIP-848) or ``"streams"`` (KIP-1071). ``state``
    uses Kafka's names (``Empty``, ``PreparingRebalance``, ``CompletingRebalance``,
    ``Stable``, ``Dead`` for classic; ``Empty``, ``Assigning``, ``Reconciling``, ``Stable``
    for consumer groups, and ``NotReady`` too for streams groups). A streams group member's
    ``assignment`` is its active tasks, ``{subtopology id: [partitions]}``.
    ``generation_id`` is the classic generation or the consumer group epoch. ``rebalances``
    counts rebalances started (classic) or target assignments computed (consumer).
    """

    group_id: str
    type: str
    state: str
    generation_id: int
    protocol_type: str
    protocol: str | None
    leader_id: str | None
    members: tuple[MemberView, ...]
    offsets: dict[tuple[str, int], OffsetAndMetadata]
    rebalances: int
    assignment_epoch: int = -1

    def committed_offsets(self) -> dict[tuple[str, int], int]:
        """{(topic, partition): committed offset}."""
        return {k: v.offset for k, v in self.offsets.items()}

    def member(self, member_id: str) -> MemberView:
        """The member ``member_id`` (KafkaApiError UNKNOWN_MEMBER_ID if absent)."""
        return _member(f"group {self.group_id!r}", self.members, member_id)

    @property
    def assignments(self) -> dict[str, dict[str, list[int]] | None]:
        """{member_id: {topic: [partitions]}}."""
        return {m.member_id: m.assignment for m in self.members}

    def summary(self) -> str:
        """One line: state, generation, members and what they are assigned."""
        members = ", ".join(f"{m.member_id}: {m.assignment}" for m in self.members)
        return (
            f"{self.type} group {self.group_id!r} {self.state}, generation "
            f"{self.generation_id}, {len(self.members)} members [{members}]"
        )

    def __repr__(self) -> str:
        committed = self.committed_offsets()
        return f"<GroupView {self.summary()}" + (f" committed={committed}>" if committed else ">")


# -- share groups ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SharePartitionView:
    """The delivery state of one topic-partition for one share group (a snapshot).

    ``start_offset`` is the share-partition start offset (SPSO: every record below it is done),
    ``end_offset`` the next offset never acquired (-1 for both before the first fetch);
    ``records`` maps each in-flight offset to ``(state, delivery_count, member_id)`` with
    Kafka's state names ``Available``, ``Acquired``, ``Acknowledged``, ``Archived``.
    """

    topic: str
    partition: int
    start_offset: int
    end_offset: int
    records: dict[int, tuple[str, int, str | None]]

    def offsets(self, state: str) -> list[int]:
        """The in-flight offsets in ``state`` (e.g. ``"Acquired"``)."""
        return [off for off, (st, _, _) in self.records.items() if st == state]

    def delivery_count(self, offset: int) -> int:
        """How often ``offset`` was delivered (0 when it is not in flight)."""
        r = self.records.get(offset)
        return r[1] if r is not None else 0


@dataclass(frozen=True, slots=True)
class ShareGroupView:
    """A KIP-932 share group as a test sees it (a snapshot).

    ``state`` is ``Empty``, ``Stable`` or ``Dead``; ``group_epoch`` moves with membership and
    subscriptions, ``assignment_epoch`` is the epoch of the current assignment; each member's
    ``assignment`` may share partitions with other members. ``partitions`` maps
    ``(topic, partition)`` to its :class:`SharePartitionView` (created on the first fetch).
    """

    group_id: str
    state: str
    group_epoch: int
    assignment_epoch: int
    members: tuple[MemberView, ...]
    partitions: dict[tuple[str, int], SharePartitionView]

    def member(self, member_id: str) -> MemberView:
        """The member ``member_id`` (KafkaApiError UNKNOWN_MEMBER_ID if absent)."""
        return _member(f"share group {self.group_id!r}", self.members, member_id)

    def partition(self, topic: str, partition: int) -> SharePartitionView:
        """The share partition ``topic``/``partition`` (KafkaApiError if never fetched)."""
        sp = self.partitions.get((topic, partition))
        if sp is None:
            raise KafkaApiError(
                "UNKNOWN_TOPIC_OR_PARTITION",
                f"share group {self.group_id!r} has not fetched {topic}-{partition}; it has "
                f"{sorted(self.partitions)}",
            )
        return sp

    @property
    def assignments(self) -> dict[str, dict[str, list[int]] | None]:
        """{member_id: {topic: [partitions]}}."""
        return {m.member_id: m.assignment for m in self.members}

    def summary(self) -> str:
        """One line: state, epoch, members and their assignments, share partitions."""
        members = ", ".join(f"{m.member_id}: {m.assignment}" for m in self.members)
        parts = ", ".join(
            f"{t}-{p} [{v.start_offset}, {v.end_offset})"
            for (t, p), v in sorted(self.partitions.items())
        )
        return (
            f"share group {self.group_id!r} {self.state}, epoch {self.group_epoch}, "
            f"{len(self.members)} members [{members}], partitions [{parts}]"
        )

    def __repr__(self) -> str:
        return f"<ShareGroupView {self.summary()}>"


def group_view(state: ClusterState, group_id: str) -> GroupView:
    """Snapshot the group ``group_id`` (run on the cluster's loop; KafkaApiError with
    GROUP_ID_NOT_FOUND, naming the groups there are, when there is none)."""
    from mockkafka.cluster.groups_classic import ClassicGroup
    from mockkafka.cluster.groups_consumer import ConsumerGroup
    from mockkafka.cluster.share_groups import ShareGroup
    from mockkafka.cluster.streams_groups import StreamsGroup

    g = state.groups.require(group_id)
    offsets = dict(g.live_offsets())
    if isinstance(g, ClassicGroup):
        return GroupView(
            group_id,
            "classic",
            g.state_name,
            g.generation_id,
            g.protocol_type or "",
            g.protocol_name,
            g.leader_id,
            tuple(
                MemberView(
                    m.member_id,
                    m.group_instance_id,
                    m.client_id,
                    m.client_host,
                    m.decoded_assignment() if m.assignment else None,
                )
                for m in g.members.values()
            ),
            offsets,
            g.rebalances,
        )
    # KIP-848, KIP-932 and KIP-1071 groups: epochs, and each member's assignment as
    # {topic or subtopology id: sorted partitions}.
    assert isinstance(g, ConsumerGroup | ShareGroup | StreamsGroup)
    if isinstance(g, ShareGroup):
        protocol, assignor = "share", "simple"
    else:
        protocol, assignor = g.protocol_type_name, g.assignor_name
    return GroupView(
        group_id,
        g.kind,
        g.state_name,
        g.group_epoch,
        protocol,
        assignor,
        None,
        tuple(
            MemberView(
                m.member_id,
                getattr(m, "instance_id", None),
                m.client_id,
                m.client_host,
                {t: sorted(ps) for t, ps in sorted(m.assigned.items()) if ps},
                m.member_epoch,
            )
            for m in g.members.values()
        ),
        offsets,
        g.rebalances,
        g.assignment_epoch,
    )


def share_group_view(state: ClusterState, group_id: str) -> ShareGroupView:
    """Snapshot the share group ``group_id`` (run on the cluster's loop; KafkaApiError with
    GROUP_ID_NOT_FOUND when there is none)."""
    g = state.groups.require_share_group(group_id)
    topics = state.topics
    return ShareGroupView(
        group_id,
        g.state_name,
        g.group_epoch,
        g.assignment_epoch,
        group_view(state, group_id).members,
        {
            key: SharePartitionView(**sp.describe())
            for key, sp in sorted(g.partitions.items())
            if key[0] in topics and topics[key[0]].topic_id == sp.topic_id
        },
    )


# -- transactions ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TransactionView:
    """A snapshot of one transactional id as the coordinator holds it.

    ``state`` uses Kafka's names: ``Empty``, ``Ongoing``, ``PrepareCommit``,
    ``PrepareAbort``, ``CompleteCommit``, ``CompleteAbort``, ``Dead``, ``PrepareEpochFence``.
    ``partitions`` and ``groups`` are those of the transaction in progress (empty when none);
    ``pending_offsets`` maps group -> {(topic, partition): offset} staged by TxnOffsetCommit.
    ``history`` lists every finished transaction, oldest first.
    """

    transactional_id: str
    state: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    start_time_ms: int
    partitions: tuple[TopicPartition, ...]
    groups: tuple[str, ...]
    pending_offsets: dict[str, dict[TopicPartition, int]]
    history: tuple[CompletedTransaction, ...]
    coordinator: int

    @property
    def ongoing(self) -> bool:
        """Is a transaction open (partitions or offsets added, not yet ended)?"""
        return self.state == "Ongoing"

    @property
    def committed_count(self) -> int:
        return sum(1 for t in self.history if t.committed)

    @property
    def aborted_count(self) -> int:
        return sum(1 for t in self.history if not t.committed)

    @property
    def last(self) -> CompletedTransaction | None:
        """The most recently finished transaction, if any."""
        return self.history[-1] if self.history else None

    def summary(self) -> str:
        """One line: state, producer id/epoch, partitions, finished transactions."""
        return (
            f"{self.transactional_id!r} {self.state}, producer {self.producer_id} epoch "
            f"{self.producer_epoch}, partitions {list(self.partitions)}, "
            f"{self.committed_count} committed / {self.aborted_count} aborted"
        )

    def __repr__(self) -> str:
        return f"<TransactionView {self.summary()}, coordinator {self.coordinator}>"


def transaction_view(coordinators: Coordinators, txn: TransactionMetadata) -> TransactionView:
    """Snapshot ``txn`` (run on the cluster's loop)."""
    from mockkafka.cluster.coordinators import TRANSACTION

    return TransactionView(
        transactional_id=txn.transactional_id,
        state=txn.state.value,
        producer_id=txn.producer_id,
        producer_epoch=txn.producer_epoch,
        timeout_ms=txn.timeout_ms,
        start_time_ms=txn.start_time_ms,
        partitions=tuple(txn.partitions),
        groups=tuple(txn.groups),
        pending_offsets={
            g: {tp: po.offset for tp, po in staged.items()}
            for g, staged in txn.pending_offsets.items()
        },
        history=tuple(txn.history),
        coordinator=coordinators.coordinator(TRANSACTION, txn.transactional_id),
    )


# -- ACLs --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AclView:
    """One ACL: ``principal`` connecting from ``host`` is allowed or denied (``permission``
    ``"ALLOW"`` / ``"DENY"``) ``operation`` (``"WRITE"``, ``"ALL"``, ...) on the resources
    of ``resource_type`` (``"TOPIC"``, ``"GROUP"``, ``"TRANSACTIONAL_ID"``, ``"CLUSTER"``,
    ...) named ``resource_name`` (``pattern`` ``"LITERAL"``, ``"*"`` meaning every one) or
    starting with it (``"PREFIXED"``). From ``cluster.acls(...)``."""

    principal: str
    host: str
    operation: str
    permission: str
    resource_type: str
    resource_name: str
    pattern: str

    def summary(self) -> str:
        """``ALLOW User:alice WRITE on TOPIC orders (LITERAL) from *``."""
        return (
            f"{self.permission} {self.principal} {self.operation} on {self.resource_type} "
            f"{self.resource_name} ({self.pattern}) from {self.host}"
        )


def acl_view(acl: AclBinding) -> AclView:
    """Snapshot ``acl`` (bindings are immutable: any thread)."""
    return AclView(
        acl.principal,
        acl.host,
        acl.operation.name,
        acl.permission_type.name,
        acl.resource_type.name,
        acl.resource_name,
        acl.pattern_type.name,
    )


def describe(value: Any) -> str:
    """Text for a wait's timeout message: a view's summary, or ``repr``."""
    summary = getattr(value, "summary", None)
    return summary() if callable(summary) else repr(value)

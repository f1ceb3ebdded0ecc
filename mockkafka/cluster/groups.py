"""The group coordinator: every consumer group of the cluster and its committed offsets.

Theory of operation
-------------------
Kafka keeps groups in ``__consumer_offsets`` partitions led by the group's coordinator;
when the coordinator moves, the new one loads the same groups and offsets. Here the state
lives once for the whole cluster in :class:`GroupCoordinator` (``state.groups``); which
broker may *serve* a group is decided by ``state.coordinators`` (see ``coordinators.py``),
and a request for a group reaching another broker gets NOT_COORDINATOR (or
COORDINATOR_LOAD_IN_PROGRESS while a simulated load runs). Moving a group's coordinator
answers its parked requests with NOT_COORDINATOR and restarts member timers, but keeps
members, generation and offsets -- members rejoin only if something triggers a rebalance.

A group is either a :class:`~mockkafka.cluster.groups_classic.ClassicGroup` (JoinGroup and
friends) or a :class:`~mockkafka.cluster.groups_consumer.ConsumerGroup` (KIP-848
ConsumerGroupHeartbeat). An *empty* group of one type turns into the other type when a
member of the other protocol arrives, keeping its offsets, as Kafka allows. OffsetCommit with
generation -1 to a group that does not exist creates an empty classic group holding only
offsets (a "simple" group, as the admin client and ``assign()`` users make).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Protocol

from mockkafka.cluster.coordinators import GROUP
from mockkafka.cluster.groups_classic import ClassicGroup, ClassicGroupState
from mockkafka.cluster.groups_common import Group, OffsetAndMetadata, Pending, group_key
from mockkafka.cluster.groups_consumer import ConsumerGroup
from mockkafka.cluster.host import StateCore
from mockkafka.cluster.share_groups import ShareGroup
from mockkafka.cluster.streams_groups import StreamsGroup
from mockkafka.errors import ErrorCode, KafkaApiError

if TYPE_CHECKING:
    from mockkafka.cluster.coordinators import Coordinators

__all__ = [
    "ClassicGroup",
    "ConsumerGroup",
    "GroupCoordinator",
    "OffsetAndMetadata",
    "Pending",
    "group_key",
]


class GroupHost(StateCore, Protocol):
    """What the group coordinator reads of the cluster state (ClusterState is one)."""

    @property
    def coordinators(self) -> Coordinators: ...


OFFSET_METADATA_MAX_BYTES = 4096


class GroupCoordinator:
    """All consumer groups of one cluster (see the module docstring)."""

    def __init__(self, state: GroupHost) -> None:
        self._state = state
        self.groups: dict[str, Group] = {}

    # -- lookup --------------------------------------------------------------------------------

    def get(self, group_id: str) -> Group | None:
        return self.groups.get(group_id)

    def coordinator_error(self, broker_id: int, group_id: str) -> ErrorCode:
        """NONE when ``broker_id`` may serve ``group_id`` now; else the code to answer."""
        return self._state.coordinators.check(GROUP, group_id, broker_id)

    def _new_classic(self, group_id: str, offsets: Group | None = None) -> ClassicGroup:
        g = ClassicGroup(group_id, self._state)
        if offsets is not None:
            g.offsets = offsets.offsets
            offsets.shutdown()
        self.groups[group_id] = g
        return g

    def classic_group(self, group_id: str, *, create: bool) -> ClassicGroup | ErrorCode:
        """The classic group ``group_id`` (an empty consumer group converts)."""
        g = self.groups.get(group_id)
        if isinstance(g, ClassicGroup):
            return g
        if isinstance(g, ShareGroup | StreamsGroup):
            return ErrorCode.INCONSISTENT_GROUP_PROTOCOL if create else ErrorCode.UNKNOWN_MEMBER_ID
        if g is None:
            return self._new_classic(group_id) if create else ErrorCode.GROUP_ID_NOT_FOUND
        if g.is_empty() and create:
            return self._new_classic(group_id, g)
        return ErrorCode.INCONSISTENT_GROUP_PROTOCOL if create else ErrorCode.UNKNOWN_MEMBER_ID

    def consumer_group(self, group_id: str, *, create: bool) -> ConsumerGroup | ErrorCode:
        """The KIP-848 group ``group_id`` (an empty classic group converts)."""
        g = self.groups.get(group_id)
        if isinstance(g, ShareGroup | StreamsGroup):
            return ErrorCode.GROUP_ID_NOT_FOUND
        if isinstance(g, ConsumerGroup):
            return g
        if g is None or (g.is_empty() and create):
            if not create:
                return ErrorCode.GROUP_ID_NOT_FOUND
            new = ConsumerGroup(group_id, self._state)
            if g is not None:
                new.offsets = g.offsets
                g.shutdown()
            self.groups[group_id] = new
            return new
        return ErrorCode.GROUP_ID_NOT_FOUND

    def share_group(self, group_id: str, *, create: bool) -> ShareGroup | ErrorCode:
        """The KIP-932 share group ``group_id``; GROUP_ID_NOT_FOUND when it does not exist
        (and ``create`` is False) or the id belongs to a classic or consumer group (Kafka
        never converts between share groups and the other types)."""
        g = self.groups.get(group_id)
        if isinstance(g, ShareGroup):
            return g
        if g is not None or not create:
            return ErrorCode.GROUP_ID_NOT_FOUND
        new = self.groups[group_id] = ShareGroup(group_id, self._state)
        return new

    def streams_group(self, group_id: str, *, create: bool) -> StreamsGroup | ErrorCode:
        """The KIP-1071 streams group ``group_id``; an empty classic or consumer group turns
        into one (keeping its offsets). GROUP_ID_NOT_FOUND when it does not exist (and
        ``create`` is False) or the id belongs to a group of another type with members."""
        g = self.groups.get(group_id)
        if isinstance(g, StreamsGroup):
            return g
        if isinstance(g, ShareGroup) or not create or (g is not None and not g.is_empty()):
            return ErrorCode.GROUP_ID_NOT_FOUND
        new = StreamsGroup(group_id, self._state)
        if g is not None:
            new.offsets = g.offsets
            g.shutdown()
        self.groups[group_id] = new
        return new

    def share_group_ids(self) -> list[str]:
        return sorted(gid for gid, g in self.groups.items() if isinstance(g, ShareGroup))

    def connection_closed(self, connection_id: int) -> None:
        """A client connection closed: close the share sessions it opened (Kafka 4.1+
        releases their records at once; see ``ShareGroup.connection_closed``)."""
        for g in list(self.groups.values()):
            if isinstance(g, ShareGroup) and g.sessions:
                g.connection_closed(connection_id)

    # -- offsets -------------------------------------------------------------------------------

    def validate_offset_commit(
        self,
        group_id: str,
        member_id: str,
        group_instance_id: str | None,
        generation_id_or_member_epoch: int,
        *,
        version: int = 9,
        transactional: bool = False,
    ) -> ErrorCode:
        """May this OffsetCommit (or TxnOffsetCommit) write offsets? Creates a simple group."""
        g = self.groups.get(group_id)
        if g is None:
            if generation_id_or_member_epoch < 0 and not member_id:
                self._new_classic(group_id)
                return ErrorCode.NONE
            if version >= 9 and not transactional:
                return ErrorCode.GROUP_ID_NOT_FOUND
            return ErrorCode.ILLEGAL_GENERATION
        if isinstance(g, ClassicGroup):
            return g.validate_offset_commit(
                member_id,
                group_instance_id,
                generation_id_or_member_epoch,
                transactional=transactional,
            )
        if isinstance(g, ShareGroup):
            return ErrorCode.GROUP_ID_NOT_FOUND
        assert isinstance(g, (ConsumerGroup, StreamsGroup))
        return g.validate_offset_commit(
            member_id,
            generation_id_or_member_epoch,
            group_instance_id=group_instance_id,
            version=version,
            transactional=transactional,
        )

    def validate_txn_offset_commit(
        self,
        group_id: str,
        generation_id: int,
        member_id: str,
        group_instance_id: str | None,
    ) -> ErrorCode:
        """TxnOffsetCommit v3+ member checks (for the transaction coordinator)."""
        g = self.groups.get(group_id)
        if g is None:
            if generation_id < 0 and not member_id:
                return ErrorCode.NONE
            return ErrorCode.ILLEGAL_GENERATION
        return self.validate_offset_commit(
            group_id, member_id, group_instance_id, generation_id, transactional=True
        )

    def commit_error(self, topic: str, partition: int, metadata: str | None) -> ErrorCode:
        """The per-partition error of committing to ``topic``/``partition`` (NONE if fine)."""
        t = self._state.topics.get(topic)
        if t is None or not 0 <= partition < len(t.partitions):
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        if metadata is not None and len(metadata.encode()) > OFFSET_METADATA_MAX_BYTES:
            return ErrorCode.OFFSET_METADATA_TOO_LARGE
        return ErrorCode.NONE

    def store_committed_offset(
        self,
        group_id: str,
        topic: str,
        partition: int,
        offset: int,
        leader_epoch: int,
        metadata: str | None,
    ) -> None:
        """Store one committed offset (OffsetCommit, and TxnOffsetCommit when it commits)."""
        g = self.groups.get(group_id)
        if g is None:
            g = self._new_classic(group_id)
        t = self._state.topics.get(topic)
        g.offsets[(topic, partition)] = OffsetAndMetadata(
            offset,
            leader_epoch,
            metadata,
            self._state.now_ms(),
            t.topic_id if t is not None else None,
        )
        self._state.notify(("offsets", group_id))

    def committed(self, group_id: str) -> dict[tuple[str, int], OffsetAndMetadata]:
        """Committed offsets of ``group_id`` (empty when the group does not exist)."""
        g = self.groups.get(group_id)
        return dict(g.live_offsets()) if g is not None else {}

    def delete_offsets(
        self, group_id: str, partitions: Iterable[tuple[str, int]]
    ) -> tuple[ErrorCode, dict[tuple[str, int], ErrorCode]]:
        """OffsetDelete: (group error, {(topic, partition): error})."""
        g = self.groups.get(group_id)
        if g is None:
            return ErrorCode.GROUP_ID_NOT_FOUND, {}
        subscribed = g.subscribed_topics() if not g.is_empty() else set()
        if subscribed is None:
            return ErrorCode.NON_EMPTY_GROUP, {}
        out: dict[tuple[str, int], ErrorCode] = {}
        for topic, p in partitions:
            t = self._state.topics.get(topic)
            if t is None or not 0 <= p < len(t.partitions):
                out[(topic, p)] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            elif topic in subscribed:
                out[(topic, p)] = ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC
            else:
                g.offsets.pop((topic, p), None)
                out[(topic, p)] = ErrorCode.NONE
        return ErrorCode.NONE, out

    # -- groups --------------------------------------------------------------------------------

    def delete_group(self, group_id: str) -> ErrorCode:
        """DeleteGroups for one group."""
        g = self.groups.get(group_id)
        if g is None:
            return ErrorCode.GROUP_ID_NOT_FOUND
        if not g.is_empty():
            return ErrorCode.NON_EMPTY_GROUP
        if isinstance(g, ClassicGroup) and g.state is not ClassicGroupState.EMPTY:
            return ErrorCode.NON_EMPTY_GROUP
        g.shutdown()
        del self.groups[group_id]
        return ErrorCode.NONE

    def coordinated_by(self, broker_id: int) -> list[Group]:
        """Groups whose coordinator is ``broker_id`` (what its ListGroups shows)."""
        coord = self._state.coordinators
        return [g for gid, g in self.groups.items() if coord.coordinator(GROUP, gid) == broker_id]

    # -- verbs ---------------------------------------------------------------------------------

    def require(self, group_id: str) -> Group:
        """The group ``group_id``; KafkaApiError (GROUP_ID_NOT_FOUND) naming the groups there
        are when there is none."""
        g = self.groups.get(group_id)
        if g is None:
            raise KafkaApiError(
                ErrorCode.GROUP_ID_NOT_FOUND,
                f"no group {group_id!r}; groups are {sorted(self.groups)}",
            )
        return g

    def trigger_rebalance(self, group_id: str) -> None:
        """Start a rebalance now, as a membership change would."""
        g = self.require(group_id)
        if isinstance(g, (ClassicGroup, ConsumerGroup, ShareGroup, StreamsGroup)):
            g.trigger_rebalance()
        self._state.emit_event("rebalance_triggered", group=group_id)

    def expire_member(self, group_id: str, member_id: str) -> None:
        """Remove a member as if its session timed out (UNKNOWN_MEMBER_ID, and no
        ``member_expired`` event, when the group has no such member)."""
        g = self.require(group_id)
        members = getattr(g, "members", {})
        if member_id not in members:
            raise KafkaApiError(
                ErrorCode.UNKNOWN_MEMBER_ID,
                f"group {group_id!r} has no member {member_id!r}; members are {sorted(members)}",
            )
        self._state.emit_event("member_expired", group=group_id, member=member_id)
        if isinstance(g, ClassicGroup | ConsumerGroup | ShareGroup | StreamsGroup):
            g.remove_member(g.members[member_id])  # type: ignore[arg-type]

    def move_coordinator(self, group_id: str, to: int) -> None:
        """Make broker ``to`` the coordinator; the old one answers NOT_COORDINATOR."""
        self._state.coordinators.move(GROUP, group_id, to)
        self._state.emit_event("coordinator_moved", group=group_id, broker=to)
        g = self.groups.get(group_id)
        if g is not None:
            g.fail_pending(ErrorCode.NOT_COORDINATOR)
            g.reset_timers()

    def require_share_group(self, group_id: str) -> ShareGroup:
        """The share group ``group_id``; KafkaApiError (GROUP_ID_NOT_FOUND) naming the share
        groups there are when there is none or the id belongs to another kind of group."""
        g = self.groups.get(group_id)
        if not isinstance(g, ShareGroup):
            raise KafkaApiError(
                ErrorCode.GROUP_ID_NOT_FOUND,
                f"no share group {group_id!r}; share groups are {self.share_group_ids()}"
                + (f" ({group_id!r} is a {g.kind} group)" if g is not None else ""),
            )
        return g

    def expire_acquisition_locks(
        self, group_id: str, topic: str | None, partition: int | None
    ) -> int:
        """Release every record acquired in ``group_id`` (optionally one topic/partition) as
        if its acquisition lock timed out; returns how many were released."""
        g = self.require_share_group(group_id)
        n = g.expire_locks(topic, partition)
        self._state.emit_event(
            "acquisition_locks_expired", group=group_id, topic=topic, partition=partition
        )
        return n

    def log_truncated(self, topic: str, partition: int, end: int) -> None:
        """An unclean truncation cut ``topic``/``partition`` at ``end``: share groups forget
        the offsets that are gone (new records will take those offsets again)."""
        for g in self.groups.values():
            if isinstance(g, ShareGroup):
                sp = g.partitions.get((topic, partition))
                if sp is not None:
                    sp.truncated(end)

    def group_ids(self) -> list[str]:
        return sorted(self.groups)


def join_protocols(protocols: Sequence[dict[str, object]]) -> list[tuple[str, bytes]]:
    """JoinGroup ``protocols`` entries as (name, metadata) pairs."""
    return [(str(p["name"]), bytes(p["metadata"] or b"")) for p in protocols]  # type: ignore[call-overload]

"""Transaction coordinator: transactional ids, producer epochs, markers, staged offsets.

Theory of operation
-------------------
Each transactional id has one :class:`TransactionMetadata` (Kafka's ``__transaction_state``
entry): the producer id and epoch that own it, the transaction timeout, its state and the
partitions and groups of the transaction in progress. States and transitions follow Kafka's
transaction.version 1 coordinator::

    Empty / CompleteCommit / CompleteAbort --AddPartitions/AddOffsets--> Ongoing
    Ongoing --EndTxn(commit)--> PrepareCommit --markers written--> CompleteCommit
    Ongoing --EndTxn(abort) --> PrepareAbort  --markers written--> CompleteAbort
    Ongoing --timeout / InitProducerId / fence--> PrepareEpochFence -> PrepareAbort -> ...

Markers are control batches appended to every partition of the transaction (the data lives
in the cluster, so no broker-to-broker WriteTxnMarkers is needed); each append wakes
read_committed fetchers parked on the partition, whose last stable offset moves past the
transaction. Marker writing is instant unless :attr:`TransactionCoordinator.marker_delay_ms`
is set; while markers are pending the coordinator answers CONCURRENT_TRANSACTIONS, as Kafka
does between EndTxn and the markers landing.

Offsets sent with TxnOffsetCommit are staged per (transactional id, group) and reach the
group coordinator (``state.groups.store_committed_offset``) only when the transaction
commits; an abort discards them.

Epochs fence: InitProducerId for an id with a transaction in flight aborts it and bumps the
epoch, so the old producer's next request answers PRODUCER_FENCED (INVALID_PRODUCER_EPOCH on
Produce and for request versions from before KIP-588). A timed-out transaction is aborted
with a bumped epoch too. When the epoch would overflow, a new producer id is allocated.

Transaction version 2 (KIP-890 part 2), used when the finalized feature ``transaction.version``
is 2 or more (the default, as on a new Kafka 4.x cluster) and the request is new enough
(``tv2`` arguments; the handlers decide from the request version, so older clients keep the
v1 flow on the same cluster):

* a transactional Produce (v12+) adds its partition to the transaction itself, starting the
  transaction if none is ongoing -- no AddPartitionsToTxn;
* TxnOffsetCommit (v5+) adds its group the same way -- no AddOffsetsToTxn;
* every EndTxn (v5+) bumps the epoch (a new producer id when it would overflow) before the
  markers, which carry the new epoch; the response names the id and epoch the producer
  continues with. A retry of the EndTxn (the old epoch, the same result) answers them again,
  and an abort with no transaction ongoing just bumps the epoch (the client aborts after a
  Produce whose partition may not have been added).

Everything here is synchronous and free of I/O; handlers translate requests into calls of
:class:`TransactionCoordinator` and its answers into error codes.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from mockkafka.cluster.coordinators import GROUP, TRANSACTION, partition_for
from mockkafka.cluster.host import StateCore
from mockkafka.cluster.producers import ProducerIdInfo, ProducerPartitionState
from mockkafka.errors import ErrorCode, error_code

if TYPE_CHECKING:
    from mockkafka.cluster.base import TimerHandle
    from mockkafka.cluster.coordinators import Coordinators
    from mockkafka.cluster.groups import GroupCoordinator
    from mockkafka.cluster.topics import Partition

MAX_EPOCH = 32767
OFFSETS_TOPIC = "__consumer_offsets"

TopicPartition = tuple[str, int]


class TxnState(enum.Enum):
    """Transaction states, valued by the names Kafka reports (DescribeTransactions)."""

    EMPTY = "Empty"
    ONGOING = "Ongoing"
    PREPARE_COMMIT = "PrepareCommit"
    PREPARE_ABORT = "PrepareAbort"
    COMPLETE_COMMIT = "CompleteCommit"
    COMPLETE_ABORT = "CompleteAbort"
    DEAD = "Dead"
    PREPARE_EPOCH_FENCE = "PrepareEpochFence"


STATE_NAMES = frozenset(s.value for s in TxnState)
_READY = (TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT)
_PREPARING = (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT, TxnState.PREPARE_EPOCH_FENCE)


@dataclass(frozen=True, slots=True)
class PendingOffset:
    """An offset staged by TxnOffsetCommit, committed with the transaction."""

    offset: int
    leader_epoch: int
    metadata: str | None


@dataclass(frozen=True, slots=True)
class CompletedTransaction:
    """One finished transaction, for assertions.

    ``reason`` says who ended it: ``"client"`` (EndTxn), ``"timeout"``, ``"init"`` (a new
    InitProducerId aborted it), ``"fenced"`` or ``"verb"`` (the test's cluster verbs).
    """

    committed: bool
    producer_id: int
    producer_epoch: int
    partitions: tuple[TopicPartition, ...]
    groups: tuple[str, ...]
    start_time_ms: int
    end_time_ms: int
    reason: str
    #: Offsets sent with the transaction: group -> {(topic, partition): offset}.
    offsets: dict[str, dict[TopicPartition, int]] = field(default_factory=dict)


@dataclass(slots=True)
class TransactionMetadata:
    """The coordinator's record of one transactional id."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    state: TxnState = TxnState.EMPTY
    # The epoch before the last InitProducerId bump (a retried InitProducerId names it).
    last_producer_epoch: int = -1
    # The producer id before an epoch overflow moved the id to a new producer id.
    last_producer_id: int = -1
    partitions: dict[TopicPartition, None] = field(default_factory=dict)  # ordered set
    groups: dict[str, None] = field(default_factory=dict)
    pending_offsets: dict[str, dict[TopicPartition, PendingOffset]] = field(default_factory=dict)
    start_time_ms: int = -1
    last_update_ms: int = -1
    coordinator_epoch: int = 0
    history: list[CompletedTransaction] = field(default_factory=list)
    timer: TimerHandle | None = None
    #: Transaction version 2: the (producer id, epoch, committed) of the last EndTxn, so a
    #: retry of it (with the epoch it bumped) is recognised.
    last_end: tuple[int, int, bool] | None = None

    @property
    def committed_count(self) -> int:
        return sum(1 for t in self.history if t.committed)

    @property
    def aborted_count(self) -> int:
        return sum(1 for t in self.history if not t.committed)

    def topic_partitions(self, offsets_partitions: int = 50) -> list[TopicPartition]:
        """Partitions of the transaction, the groups' offsets partitions included."""
        out = list(self.partitions)
        for g in self.groups:
            tp = (OFFSETS_TOPIC, partition_for(g, offsets_partitions))
            if tp not in self.partitions:
                out.append(tp)
        return out


def _is_complete(txn: TransactionMetadata) -> bool:
    return txn.state in (TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT)


def fenced_error(version: int, first_fenced_version: int) -> ErrorCode:
    """PRODUCER_FENCED, or INVALID_PRODUCER_EPOCH for versions from before KIP-588."""
    if version < first_fenced_version:
        return ErrorCode.INVALID_PRODUCER_EPOCH
    return ErrorCode.PRODUCER_FENCED


class TransactionHost(StateCore, Protocol):
    """What the transaction coordinator reads of the cluster state (ClusterState is one)."""

    @property
    def coordinators(self) -> Coordinators: ...
    @property
    def groups(self) -> GroupCoordinator: ...


class TransactionCoordinator:
    """All transactional ids of one cluster (``state.transactions``)."""

    def __init__(self, state: TransactionHost) -> None:
        self._state = state
        self.transactions: dict[str, TransactionMetadata] = {}
        self._by_producer_id: dict[int, str] = {}
        #: Delay between EndTxn and its markers landing (0: at once). While markers are
        #: pending the coordinator answers CONCURRENT_TRANSACTIONS.
        self.marker_delay_ms = 0

    # -- lookups ---------------------------------------------------------------------------

    def get(self, transactional_id: str) -> TransactionMetadata | None:
        return self.transactions.get(transactional_id)

    def for_producer_id(self, producer_id: int) -> TransactionMetadata | None:
        tid = self._by_producer_id.get(producer_id)
        return self.transactions.get(tid) if tid is not None else None

    def is_coordinator(self, broker_id: int, transactional_id: str) -> bool:
        return self._state.coordinators.coordinator(TRANSACTION, transactional_id) == broker_id

    def has_pending_offsets(self, group_id: str, topic: str, partition: int) -> bool:
        """Is an offset for this partition staged by a transaction not yet completed?

        OffsetFetch with ``require_stable`` answers UNSTABLE_OFFSET_COMMIT while this holds.
        """
        for txn in self.transactions.values():
            if txn.state in _READY:
                continue
            staged = txn.pending_offsets.get(group_id)
            if staged and (topic, partition) in staged:
                return True
        return False

    # -- produce path --------------------------------------------------------------------------

    def tv2_enabled(self) -> bool:
        """Is the finalized ``transaction.version`` 2 or more (KIP-890 part 2)?"""
        from mockkafka.cluster.features import feature_level

        return feature_level(self._state, "transaction.version") >= 2

    def check_produce(
        self,
        p: Partition,
        producer_id: int,
        producer_epoch: int,
        transactional_id: str | None,
        *,
        tv2: bool = False,
    ) -> ErrorCode:
        """May this transactional batch be written to ``p``? (called by the produce path)

        The partition must have been added to the producer's ongoing transaction
        (INVALID_TXN_STATE otherwise, as brokers with KIP-890 verification answer), and the
        epoch must be the current one (INVALID_PRODUCER_EPOCH, as the partition leader
        answers since KIP-588). With ``tv2`` (Produce v12+ under transaction version 2) the
        partition is added here, starting the transaction if needed; while the previous one
        is still being completed the answer is NOT_ENOUGH_REPLICAS, which every client
        retries (as Kafka maps the coordinator's CONCURRENT_TRANSACTIONS).
        """
        txn = self.for_producer_id(producer_id)
        if txn is None and transactional_id is not None:
            txn = self.transactions.get(transactional_id)
        if txn is None:
            return ErrorCode.INVALID_PRODUCER_ID_MAPPING
        if txn.producer_id != producer_id:
            if producer_id == txn.last_producer_id:
                return ErrorCode.INVALID_PRODUCER_EPOCH
            return ErrorCode.INVALID_PRODUCER_ID_MAPPING
        if producer_epoch != txn.producer_epoch:
            return ErrorCode.INVALID_PRODUCER_EPOCH
        tp = (p.topic, p.index)
        if (
            tv2
            and self.tv2_enabled()
            and not (txn.state is TxnState.ONGOING and tp in txn.partitions)
        ):
            if txn.state in _PREPARING:
                return ErrorCode.NOT_ENOUGH_REPLICAS
            if txn.state not in (*_READY, TxnState.ONGOING):
                return ErrorCode.INVALID_TXN_STATE
            self._begin(txn)
            txn.partitions[tp] = None
            txn.last_update_ms = self._state.now_ms()
            return ErrorCode.NONE
        if txn.state is not TxnState.ONGOING or tp not in txn.partitions:
            return ErrorCode.INVALID_TXN_STATE
        return ErrorCode.NONE

    # -- InitProducerId ------------------------------------------------------------------------

    def init(
        self,
        transactional_id: str,
        timeout_ms: int,
        *,
        broker_id: int | None = None,
        expected_producer_id: int = -1,
        expected_epoch: int = -1,
    ) -> tuple[ErrorCode, int, int]:
        """Initialise (or re-initialise) a transactional id: (error, producer_id, epoch)."""
        st = self._state
        if broker_id is not None and not self.is_coordinator(broker_id, transactional_id):
            return ErrorCode.NOT_COORDINATOR, -1, -1
        if timeout_ms <= 0 or timeout_ms > st.config.transaction_max_timeout_ms:
            return ErrorCode.INVALID_TRANSACTION_TIMEOUT, -1, -1
        txn = self.transactions.get(transactional_id)
        if txn is None:
            pid = st.allocate_producer_id()
            txn = TransactionMetadata(transactional_id, pid, 0, timeout_ms)
            txn.last_update_ms = st.now_ms()
            txn.coordinator_epoch = st.coordinators.epoch
            self.transactions[transactional_id] = txn
            self._by_producer_id[pid] = transactional_id
            st.producer_ids[pid] = ProducerIdInfo(pid, 0, transactional_id)
            return ErrorCode.NONE, pid, 0
        if expected_producer_id >= 0:
            current = (txn.producer_id, txn.producer_epoch)
            retry = (txn.producer_id, txn.last_producer_epoch)
            if (expected_producer_id, expected_epoch) == retry and txn.state is TxnState.EMPTY:
                # A retried InitProducerId whose answer was lost: hand out the same again.
                return ErrorCode.NONE, txn.producer_id, txn.producer_epoch
            if (expected_producer_id, expected_epoch) != current:
                return ErrorCode.PRODUCER_FENCED, -1, -1
        if txn.state in _PREPARING:
            return ErrorCode.CONCURRENT_TRANSACTIONS, -1, -1
        txn.timeout_ms = timeout_ms
        if txn.state is TxnState.ONGOING:
            self._fence_and_abort(txn, reason="init")
            if not _is_complete(txn):  # markers delayed: the client retries
                return ErrorCode.CONCURRENT_TRANSACTIONS, -1, -1
        before = txn.producer_epoch
        self._bump_epoch(txn)
        # Only a producer naming its epoch (KIP-360) may retry with it; a new instance may not.
        bumped = expected_producer_id >= 0 and txn.producer_epoch > before
        txn.last_producer_epoch = before if bumped else -1
        txn.state = TxnState.EMPTY
        txn.last_update_ms = st.now_ms()
        return ErrorCode.NONE, txn.producer_id, txn.producer_epoch

    def _bump_epoch(self, txn: TransactionMetadata) -> None:
        st = self._state
        if txn.producer_epoch >= MAX_EPOCH - 1:
            old = txn.producer_id
            txn.last_producer_id = old
            txn.producer_id = st.allocate_producer_id()
            txn.producer_epoch = 0
            self._by_producer_id.pop(old, None)
            self._by_producer_id[txn.producer_id] = txn.transactional_id
            st.producer_ids[txn.producer_id] = ProducerIdInfo(
                txn.producer_id, 0, txn.transactional_id
            )
        else:
            txn.producer_epoch += 1
            info = st.producer_ids.get(txn.producer_id)
            if info is None:
                info = st.producer_ids[txn.producer_id] = ProducerIdInfo(
                    txn.producer_id, 0, txn.transactional_id
                )
            info.epoch = txn.producer_epoch

    # -- the request checks every client call shares --------------------------------------------

    def _check_producer(
        self, transactional_id: str, producer_id: int, producer_epoch: int, broker_id: int | None
    ) -> tuple[TransactionMetadata | None, ErrorCode]:
        if broker_id is not None and not self.is_coordinator(broker_id, transactional_id):
            return None, ErrorCode.NOT_COORDINATOR
        txn = self.transactions.get(transactional_id)
        if txn is None or txn.producer_id != producer_id:
            return None, ErrorCode.INVALID_PRODUCER_ID_MAPPING
        if producer_epoch != txn.producer_epoch:
            return None, ErrorCode.PRODUCER_FENCED
        return txn, ErrorCode.NONE

    def _begin(self, txn: TransactionMetadata) -> None:
        """Move a ready transactional id to Ongoing and arm its timeout."""
        st = self._state
        if txn.state is TxnState.ONGOING:
            return
        txn.state = TxnState.ONGOING
        txn.partitions = {}
        txn.groups = {}
        txn.pending_offsets = {}
        txn.start_time_ms = st.now_ms()
        if txn.timer is not None:
            txn.timer.cancel()
        pid, epoch, start = txn.producer_id, txn.producer_epoch, txn.start_time_ms

        def expire() -> None:
            same = (txn.producer_id, txn.producer_epoch, txn.start_time_ms) == (pid, epoch, start)
            if same and txn.state is TxnState.ONGOING:
                self._fence_and_abort(txn, reason="timeout")

        txn.timer = st.call_later(txn.timeout_ms, expire)

    # -- AddPartitionsToTxn / AddOffsetsToTxn -------------------------------------------------------

    def add_partitions(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: list[TopicPartition],
        *,
        verify_only: bool = False,
        broker_id: int | None = None,
    ) -> dict[TopicPartition, ErrorCode]:
        """AddPartitionsToTxn for one transaction: an error code per partition."""
        st = self._state

        def all_(code: ErrorCode) -> dict[TopicPartition, ErrorCode]:
            return dict.fromkeys(partitions, code)

        txn, err = self._check_producer(transactional_id, producer_id, producer_epoch, broker_id)
        if txn is None:
            return all_(err)
        if verify_only:
            ok = txn.state is TxnState.ONGOING
            return {
                tp: ErrorCode.NONE if ok and tp in txn.partitions else ErrorCode.INVALID_TXN_STATE
                for tp in partitions
            }
        if txn.state in _PREPARING:
            return all_(ErrorCode.CONCURRENT_TRANSACTIONS)
        if txn.state not in (*_READY, TxnState.ONGOING):
            return all_(ErrorCode.INVALID_TXN_STATE)
        unknown = {
            tp
            for tp in partitions
            if tp[0] not in st.topics or not 0 <= tp[1] < len(st.topics[tp[0]].partitions)
        }
        if unknown:
            return {
                tp: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                if tp in unknown
                else ErrorCode.OPERATION_NOT_ATTEMPTED
                for tp in partitions
            }
        self._begin(txn)
        for tp in partitions:
            txn.partitions[tp] = None
        txn.last_update_ms = st.now_ms()
        return all_(ErrorCode.NONE)

    def add_offsets(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        group_id: str,
        *,
        broker_id: int | None = None,
    ) -> ErrorCode:
        """AddOffsetsToTxn: the group's offsets become part of the transaction."""
        txn, err = self._check_producer(transactional_id, producer_id, producer_epoch, broker_id)
        if txn is None:
            return err
        if txn.state in _PREPARING:
            return ErrorCode.CONCURRENT_TRANSACTIONS
        if txn.state not in (*_READY, TxnState.ONGOING):
            return ErrorCode.INVALID_TXN_STATE
        self._begin(txn)
        txn.groups[group_id] = None
        txn.last_update_ms = self._state.now_ms()
        return ErrorCode.NONE

    # -- TxnOffsetCommit (group coordinator side) -----------------------------------------------

    def txn_offset_commit(
        self,
        transactional_id: str,
        group_id: str,
        producer_id: int,
        producer_epoch: int,
        offsets: dict[TopicPartition, PendingOffset],
        *,
        generation_id: int = -1,
        member_id: str = "",
        group_instance_id: str | None = None,
        validate_member: bool = False,
        broker_id: int | None = None,
        tv2: bool = False,
    ) -> dict[TopicPartition, ErrorCode]:
        """Stage ``offsets`` for ``group_id`` until the transaction ends. With ``tv2``
        (TxnOffsetCommit v5+ under transaction version 2) the group is added to the
        transaction here, starting it if needed, instead of by AddOffsetsToTxn."""
        st = self._state

        def all_(code: ErrorCode) -> dict[TopicPartition, ErrorCode]:
            return dict.fromkeys(offsets, code)

        if broker_id is not None and st.coordinators.coordinator(GROUP, group_id) != broker_id:
            return all_(ErrorCode.NOT_COORDINATOR)
        txn, err = self._check_producer(transactional_id, producer_id, producer_epoch, None)
        if txn is None:
            return all_(err)
        if txn.state in _PREPARING:
            return all_(ErrorCode.CONCURRENT_TRANSACTIONS)
        implicit = tv2 and self.tv2_enabled() and txn.state in (*_READY, TxnState.ONGOING)
        if not implicit and (txn.state is not TxnState.ONGOING or group_id not in txn.groups):
            return all_(ErrorCode.INVALID_TXN_STATE)
        if validate_member:
            verdict = st.groups.validate_txn_offset_commit(
                group_id, generation_id, member_id, group_instance_id
            )
            if verdict != ErrorCode.NONE:
                return all_(error_code(verdict))
        if implicit:
            self._begin(txn)
            txn.groups[group_id] = None
        out: dict[TopicPartition, ErrorCode] = {}
        staged = txn.pending_offsets.setdefault(group_id, {})
        for tp, po in offsets.items():
            t = st.topics.get(tp[0])
            if t is None or not 0 <= tp[1] < len(t.partitions):
                out[tp] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                continue
            staged[tp] = po
            out[tp] = ErrorCode.NONE
        txn.last_update_ms = st.now_ms()
        return out

    # -- EndTxn -----------------------------------------------------------------------------------

    def end_txn(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        committed: bool,
        *,
        broker_id: int | None = None,
        tv2: bool = False,
    ) -> ErrorCode:
        """EndTxn: commit or abort the ongoing transaction (retries answer as Kafka does).

        With ``tv2`` (EndTxn v5+ under transaction version 2) the epoch is bumped first (see
        the module docstring); the caller reads the id and epoch to answer from the
        transaction's metadata.
        """
        if tv2 and self.tv2_enabled():
            return self._end_txn_v2(
                transactional_id, producer_id, producer_epoch, committed, broker_id
            )
        txn, err = self._check_producer(transactional_id, producer_id, producer_epoch, broker_id)
        if txn is None:
            return err
        s = txn.state
        if s is TxnState.ONGOING:
            self._complete(txn, committed, reason="client")
            return ErrorCode.NONE
        if s is TxnState.COMPLETE_COMMIT:
            return ErrorCode.NONE if committed else ErrorCode.INVALID_TXN_STATE
        if s is TxnState.COMPLETE_ABORT:
            return ErrorCode.NONE if not committed else ErrorCode.INVALID_TXN_STATE
        if s is TxnState.PREPARE_COMMIT:
            return ErrorCode.CONCURRENT_TRANSACTIONS if committed else ErrorCode.INVALID_TXN_STATE
        if s is TxnState.PREPARE_ABORT:
            return ErrorCode.INVALID_TXN_STATE if committed else ErrorCode.CONCURRENT_TRANSACTIONS
        if s is TxnState.PREPARE_EPOCH_FENCE:
            return ErrorCode.CONCURRENT_TRANSACTIONS
        return ErrorCode.INVALID_TXN_STATE

    def _end_txn_v2(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        committed: bool,
        broker_id: int | None,
    ) -> ErrorCode:
        if broker_id is not None and not self.is_coordinator(broker_id, transactional_id):
            return ErrorCode.NOT_COORDINATOR
        txn = self.transactions.get(transactional_id)
        if txn is None:
            return ErrorCode.INVALID_PRODUCER_ID_MAPPING
        if txn.last_end == (producer_id, producer_epoch, committed) and (
            txn.state in (TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT, *_PREPARING)
        ):
            # A retry of the EndTxn that bumped the epoch: the same answer again.
            return ErrorCode.NONE if _is_complete(txn) else ErrorCode.CONCURRENT_TRANSACTIONS
        if producer_id not in (txn.producer_id, txn.last_producer_id):
            return ErrorCode.INVALID_PRODUCER_ID_MAPPING
        if (producer_id, producer_epoch) != (txn.producer_id, txn.producer_epoch):
            return ErrorCode.PRODUCER_FENCED
        s = txn.state
        if s in _PREPARING:
            return ErrorCode.CONCURRENT_TRANSACTIONS
        if s is TxnState.ONGOING:
            txn.last_end = (producer_id, producer_epoch, committed)
            self._bump_epoch(txn)
            txn.last_producer_epoch = -1
            self._complete(txn, committed, reason="client")
            return ErrorCode.NONE
        if s in _READY and not committed:
            # Nothing ongoing (the client aborts after a Produce it is unsure of): the epoch
            # moves on all the same, so a late batch of the old epoch is fenced.
            txn.last_end = (producer_id, producer_epoch, committed)
            self._bump_epoch(txn)
            txn.last_producer_epoch = -1
            txn.state = TxnState.COMPLETE_ABORT
            txn.last_update_ms = self._state.now_ms()
            return ErrorCode.NONE
        return ErrorCode.INVALID_TXN_STATE

    # -- completing transactions --------------------------------------------------------------

    def _fence_and_abort(self, txn: TransactionMetadata, *, reason: str) -> None:
        """Bump the epoch (the current producer is fenced) and abort what is in flight."""
        txn.state = TxnState.PREPARE_EPOCH_FENCE
        self._bump_epoch(txn)
        txn.last_producer_epoch = -1
        self._complete(txn, False, reason=reason)

    def _complete(self, txn: TransactionMetadata, committed: bool, *, reason: str) -> None:
        st = self._state
        if txn.timer is not None:
            txn.timer.cancel()
            txn.timer = None
        txn.state = TxnState.PREPARE_COMMIT if committed else TxnState.PREPARE_ABORT
        txn.last_update_ms = st.now_ms()
        if self.marker_delay_ms > 0:
            pid, epoch = txn.producer_id, txn.producer_epoch
            st.call_later(
                self.marker_delay_ms,
                lambda: self._write_markers(txn, committed, reason, pid, epoch),
            )
        else:
            self._write_markers(txn, committed, reason, txn.producer_id, txn.producer_epoch)

    def _write_markers(
        self,
        txn: TransactionMetadata,
        committed: bool,
        reason: str,
        producer_id: int,
        producer_epoch: int,
    ) -> None:
        st = self._state
        now = st.now_ms()
        txn.coordinator_epoch = st.coordinators.epoch
        for topic, idx in txn.partitions:
            t = st.topics.get(topic)
            if t is None or not 0 <= idx < len(t.partitions):
                continue  # deleted while the transaction ran
            p = t.partitions[idx]
            p.log.append_control(
                commit=committed,
                producer_id=producer_id,
                producer_epoch=producer_epoch,
                coordinator_epoch=txn.coordinator_epoch,
                leader_epoch=p.leader_epoch,
                now_ms=now,
            )
            note_marker_producer(p, producer_id, producer_epoch)
            st.notify(("partition", topic, idx))
        if committed:
            for group_id, staged in txn.pending_offsets.items():
                for (topic, idx), po in staged.items():
                    st.groups.store_committed_offset(
                        group_id, topic, idx, po.offset, po.leader_epoch, po.metadata
                    )
        txn.history.append(
            CompletedTransaction(
                committed=committed,
                producer_id=producer_id,
                producer_epoch=producer_epoch,
                partitions=tuple(txn.partitions),
                groups=tuple(txn.groups),
                start_time_ms=txn.start_time_ms,
                end_time_ms=now,
                reason=reason,
                offsets={
                    g: {tp: po.offset for tp, po in staged.items()}
                    for g, staged in txn.pending_offsets.items()
                },
            )
        )
        txn.state = TxnState.COMPLETE_COMMIT if committed else TxnState.COMPLETE_ABORT
        txn.partitions = {}
        txn.groups = {}
        txn.pending_offsets = {}
        txn.start_time_ms = -1
        txn.last_update_ms = now
        st.notify(("transaction", txn.transactional_id))

    # -- verbs (the fault engine and tests) ---------------------------------------------------------

    def _require(self, transactional_id: str) -> TransactionMetadata:
        from mockkafka.errors import KafkaApiError

        txn = self.transactions.get(transactional_id)
        if txn is None:
            raise KafkaApiError(
                ErrorCode.TRANSACTIONAL_ID_NOT_FOUND,
                f"no transactional id {transactional_id!r}; known: {sorted(self.transactions)}",
            )
        return txn

    def abort(self, transactional_id: str) -> bool:
        """Abort the ongoing transaction, keeping the epoch (the producer's next request in
        it answers INVALID_TXN_STATE). Returns False when none was ongoing."""
        txn = self._require(transactional_id)
        if txn.state is not TxnState.ONGOING:
            return False
        self._complete(txn, False, reason="verb")
        self._state.emit_event("transaction_aborted", transactional_id=transactional_id)
        return True

    def expire(self, transactional_id: str) -> bool:
        """Time the ongoing transaction out now (abort with an epoch bump)."""
        txn = self._require(transactional_id)
        if txn.state is not TxnState.ONGOING:
            return False
        self._fence_and_abort(txn, reason="timeout")
        self._state.emit_event("transaction_expired", transactional_id=transactional_id)
        return True

    def fence(self, transactional_id: str) -> int:
        """Bump the epoch so the current producer is fenced; aborts an ongoing transaction.
        Returns the new epoch."""
        txn = self._require(transactional_id)
        if txn.state is TxnState.ONGOING:
            self._fence_and_abort(txn, reason="fenced")
        else:
            self._bump_epoch(txn)
            txn.last_producer_epoch = -1
            txn.last_update_ms = self._state.now_ms()
        self._state.emit_event("producer_fenced", transactional_id=transactional_id)
        return txn.producer_epoch

    # -- tooling (DescribeTransactions, ListTransactions) -------------------------------------------

    def matching(
        self,
        *,
        broker_id: int | None = None,
        states: set[str] | None = None,
        producer_ids: set[int] | None = None,
        min_duration_ms: int = -1,
        pattern: str | None = None,
    ) -> list[TransactionMetadata]:
        """Transactional ids (coordinated by ``broker_id`` when given) matching the filters."""
        now = self._state.now_ms()
        rx = re.compile(pattern) if pattern else None
        out = []
        for tid, txn in sorted(self.transactions.items()):
            if broker_id is not None and not self.is_coordinator(broker_id, tid):
                continue
            if states and txn.state.value not in states:
                continue
            if producer_ids and txn.producer_id not in producer_ids:
                continue
            if min_duration_ms >= 0 and (
                txn.start_time_ms < 0 or now - txn.start_time_ms < min_duration_ms
            ):
                continue
            if rx is not None and not rx.fullmatch(tid):
                continue
            out.append(txn)
        return out


def write_marker(
    state: StateCore,
    p: Partition,
    *,
    committed: bool,
    producer_id: int,
    producer_epoch: int,
    coordinator_epoch: int,
) -> ErrorCode:
    """Append one transaction marker to ``p`` (WriteTxnMarkers, Admin.abortTransaction).

    A marker older than the producer's epoch on the partition is refused
    (INVALID_PRODUCER_EPOCH), as the partition leader does.
    """
    known = p.producers.get(producer_id)
    if known is not None and producer_epoch < known.epoch:
        return ErrorCode.INVALID_PRODUCER_EPOCH
    p.log.append_control(
        commit=committed,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        coordinator_epoch=coordinator_epoch,
        leader_epoch=p.leader_epoch,
        now_ms=state.now_ms(),
    )
    note_marker_producer(p, producer_id, producer_epoch)
    state.notify(("partition", p.topic, p.index))
    return ErrorCode.NONE


def note_marker_producer(p: Partition, producer_id: int, producer_epoch: int) -> None:
    """A marker is a batch of its producer: the partition remembers the producer (at the
    marker's epoch) even when the transaction wrote nothing there, as Kafka's producer
    state does (DescribeProducers lists it)."""
    known = p.producers.get(producer_id)
    if known is None:
        p.producers[producer_id] = ProducerPartitionState(epoch=producer_epoch)
    elif producer_epoch > known.epoch:
        # A newer epoch starts its sequences at 0 (transaction version 2 writes the marker
        # at the epoch EndTxn bumped to, the epoch the producer's next batch carries).
        known.epoch = producer_epoch
        known.batches.clear()

"""Public cluster verbs for the transactions subsystem (mixed into mockkafka.Cluster).

Assert on what the transaction coordinator holds::

    txn = cluster.transaction("my-txn-id")
    assert txn.state == "CompleteCommit" and txn.committed_count == 1

and script its faults: :meth:`~TransactionsVerbs.abort_transaction`,
:meth:`~TransactionsVerbs.expire_transaction`, :meth:`~TransactionsVerbs.fence_producer`,
:meth:`~TransactionsVerbs.delay_transaction_markers`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from mockkafka.cluster.coordinators import TRANSACTION
from mockkafka.cluster.transactions import (
    STATE_NAMES,
    CompletedTransaction,
    TopicPartition,
    TransactionMetadata,
    TxnState,
)
from mockkafka.errors import ConfigError

if TYPE_CHECKING:
    from mockkafka.cluster.state import ClusterState

T = TypeVar("T")


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
        return self.state == TxnState.ONGOING.value

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


def _view(state: ClusterState, txn: TransactionMetadata) -> TransactionView:
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
        coordinator=state.coordinators.coordinator(TRANSACTION, txn.transactional_id),
    )


class TransactionsVerbs:
    """Verbs of the transactions subsystem; they run on the cluster's loop via ``self._call``."""

    if TYPE_CHECKING:
        _state: ClusterState

        def _call(self, fn: Callable[[], T]) -> T: ...

    # -- inspection ----------------------------------------------------------------------------

    def transaction(self, transactional_id: str) -> TransactionView:
        """A snapshot of ``transactional_id`` (KafkaApiError TRANSACTIONAL_ID_NOT_FOUND if no
        producer has initialised it)."""

        def do() -> TransactionView:
            return _view(self._state, self._state.transactions._require(transactional_id))

        return self._call(do)

    def transactions(self, *, state: str | None = None) -> list[TransactionView]:
        """Every transactional id (optionally only those in ``state``), sorted by id."""
        if state is not None and state not in STATE_NAMES:
            raise ConfigError(
                f"unknown transaction state {state!r}; use one of {sorted(STATE_NAMES)}"
            )

        def do() -> list[TransactionView]:
            txns = self._state.transactions.matching(states={state} if state else None)
            return [_view(self._state, t) for t in txns]

        return self._call(do)

    def wait_for_transaction(
        self,
        transactional_id: str,
        *,
        state: str | None = None,
        where: Callable[[TransactionView], bool] | None = None,
        timeout: float = 10.0,
    ) -> TransactionView:
        """Poll until the transaction is in ``state`` and ``where(view)`` holds (returns the
        view) or ``timeout`` seconds pass."""

        def condition(v: TransactionView) -> bool:
            return (state is None or v.state == state) and (where is None or where(v))

        deadline = time.monotonic() + timeout
        last: TransactionView | None = None
        for _ in range(int(timeout / 0.01) + 2):
            exists = self._call(lambda: transactional_id in self._state.transactions.transactions)
            if exists:
                last = self.transaction(transactional_id)
                if condition(last):
                    return last
            if time.monotonic() >= deadline:
                break
            time.sleep(0.01)
        raise AssertionError(
            f"transaction {transactional_id!r} did not reach the condition in {timeout} s; "
            f"last seen: {last!r}"
        )

    # -- faults ------------------------------------------------------------------------------------

    def abort_transaction(self, transactional_id: str) -> bool:
        """Abort the ongoing transaction now (abort markers written), keeping the producer's
        epoch: its next produce or EndTxn(commit) in that transaction answers
        INVALID_TXN_STATE. Returns False when no transaction was ongoing."""
        return self._call(lambda: self._state.transactions.abort(transactional_id))

    def expire_transaction(self, transactional_id: str) -> bool:
        """Time the ongoing transaction out now, as ``transaction.timeout.ms`` would: it is
        aborted and the epoch bumped, so the producer is fenced. False when none was ongoing."""
        return self._call(lambda: self._state.transactions.expire(transactional_id))

    def fence_producer(self, transactional_id: str) -> int:
        """Bump the epoch of ``transactional_id`` (aborting an ongoing transaction), as a new
        producer instance would: the current one gets PRODUCER_FENCED. Returns the new epoch."""
        return self._call(lambda: self._state.transactions.fence(transactional_id))

    def delay_transaction_markers(self, *, ms: int) -> None:
        """Write transaction markers ``ms`` after EndTxn (0: at once). Meanwhile the
        coordinator answers CONCURRENT_TRANSACTIONS to the producer's next transaction."""
        if ms < 0:
            raise ConfigError(f"delay_transaction_markers: ms must be >= 0, got {ms}")

        def do() -> None:
            self._state.transactions.marker_delay_ms = ms

        self._call(do)

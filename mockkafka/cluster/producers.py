"""Idempotent producer state: producer ids, epochs and per-partition sequence numbers.

Theory of operation
-------------------
InitProducerId hands out a producer id and epoch. Every batch an idempotent producer sends
carries (producer_id, producer_epoch, base_sequence); the partition leader keeps, per
producer, the epoch and the last five batches it appended (Kafka's
``max.in.flight.requests.per.connection`` limit for idempotence). :func:`check_sequence` is
the broker's verdict on a new batch:

* a batch equal to one of the five -> a duplicate, acknowledged with its original offsets;
* an older epoch -> INVALID_PRODUCER_EPOCH (PRODUCER_FENCED for transactional producers);
* a newer epoch must start at sequence 0;
* otherwise the base sequence must follow the last one (int32 wrap-around included), else
  OUT_OF_ORDER_SEQUENCE_NUMBER; with no state at all and a non-zero sequence,
  UNKNOWN_PRODUCER_ID.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from mockkafka.errors import ErrorCode

MAX_CACHED_BATCHES = 5
_INT32_MAX = 2**31 - 1


@dataclass(frozen=True, slots=True)
class BatchMetadata:
    first_seq: int
    last_seq: int
    base_offset: int
    last_offset: int
    log_append_time: int


@dataclass(slots=True)
class ProducerPartitionState:
    """What one partition's leader remembers about one producer."""

    epoch: int
    batches: deque[BatchMetadata] = field(default_factory=lambda: deque(maxlen=MAX_CACHED_BATCHES))

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else -1


def next_seq(seq: int, count: int) -> int:
    """The sequence after ``count`` records starting at ``seq`` (wraps at int32 max)."""
    n = seq + count
    return n - _INT32_MAX - 1 if n > _INT32_MAX else n


@dataclass(frozen=True, slots=True)
class SequenceVerdict:
    """The outcome of :func:`check_sequence`: append, duplicate (with original), or error."""

    error: ErrorCode = ErrorCode.NONE
    duplicate_of: BatchMetadata | None = None


def check_sequence(
    state: ProducerPartitionState | None,
    *,
    producer_epoch: int,
    base_sequence: int,
    record_count: int,
    transactional: bool,
) -> SequenceVerdict:
    """Decide whether a new idempotent batch may be appended."""
    last_seq = next_seq(base_sequence, record_count - 1) if record_count else base_sequence
    if state is None:
        if base_sequence != 0:
            return SequenceVerdict(ErrorCode.UNKNOWN_PRODUCER_ID)
        return SequenceVerdict()
    if producer_epoch < state.epoch:
        return SequenceVerdict(
            ErrorCode.PRODUCER_FENCED if transactional else ErrorCode.INVALID_PRODUCER_EPOCH
        )
    if producer_epoch > state.epoch:
        if base_sequence != 0:
            return SequenceVerdict(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER)
        return SequenceVerdict()
    for b in state.batches:
        if b.first_seq == base_sequence and b.last_seq == last_seq:
            return SequenceVerdict(duplicate_of=b)
    if state.batches and base_sequence != next_seq(state.last_seq, 1):
        earliest = state.batches[0].first_seq
        if _seq_before(base_sequence, earliest) or base_sequence in _seq_span(state):
            return SequenceVerdict(ErrorCode.DUPLICATE_SEQUENCE_NUMBER)
        return SequenceVerdict(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER)
    if not state.batches and base_sequence != 0:
        return SequenceVerdict(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER)
    return SequenceVerdict()


def _seq_before(a: int, b: int) -> bool:
    return a < b and b - a < 2**30


def _seq_span(state: ProducerPartitionState) -> range:
    first = state.batches[0].first_seq
    last = state.batches[-1].last_seq
    return range(first, last + 1) if last >= first else range(0)


def record_append(
    states: dict[int, ProducerPartitionState],
    *,
    producer_id: int,
    producer_epoch: int,
    meta: BatchMetadata,
) -> None:
    """Remember an appended batch (call after a verdict without error or duplicate)."""
    st = states.get(producer_id)
    if st is None or producer_epoch > st.epoch:
        st = ProducerPartitionState(producer_epoch)
        states[producer_id] = st
    st.batches.append(meta)


@dataclass(slots=True)
class ProducerIdInfo:
    """Cluster-wide record of one producer id (non-transactional or transactional)."""

    producer_id: int
    epoch: int
    transactional_id: str | None = None

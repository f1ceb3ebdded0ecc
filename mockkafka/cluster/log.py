"""One partition's log: raw record batches with exact offsets and watermarks.

Theory of operation
-------------------
A log is a list of :class:`StoredBatch` kept in offset order. Produce hands the leader a
records blob; :meth:`PartitionLog.append` walks its batch headers (no record is decoded),
rewrites each batch's base offset and partition leader epoch in place (neither is covered by
the CRC) and appends the bytes. Fetch reads whole batches back from the one that holds the
fetch offset, so consumers receive exactly what producers sent.

Offsets: ``log_start_offset`` (first offset still held, moved by DeleteRecords/retention),
``log_end_offset`` (next offset to assign), ``high_watermark`` (every replica in the ISR has
it; replication is instantaneous here, so it equals the log end offset) and
``last_stable_offset`` (below the first offset of any open transaction; read_committed
consumers stop there). ``epoch_starts`` records the first offset of each leader epoch for
OffsetForLeaderEpoch (KIP-101/KIP-320).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from mockkafka.protocol import records as rec
from mockkafka.protocol.errors import ProtocolError


@dataclass(slots=True)
class StoredBatch:
    """A batch as the broker holds it: its raw bytes plus the header facts it needs."""

    base_offset: int
    last_offset: int
    max_timestamp: int
    magic: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    is_transactional: bool
    is_control: bool
    leader_epoch: int
    data: bytes
    records_count: int
    _converted: dict[int, bytes] = field(default_factory=dict)

    @property
    def size(self) -> int:
        return len(self.data)

    def as_magic(self, magic: int) -> bytes:
        """The batch in message format ``magic`` (down-converted and cached for old fetches)."""
        if magic >= self.magic:
            return self.data
        out = self._converted.get(magic)
        if out is None:
            out = rec.downconvert(self.data, magic)
            self._converted[magic] = out
        return out


@dataclass(frozen=True, slots=True)
class AppendResult:
    """Where an append landed: first and last offset, and the log-append time if used."""

    base_offset: int
    last_offset: int
    log_append_time: int


class PartitionLog:
    """The log of one partition. All offsets are exact; nothing is dropped silently."""

    def __init__(self) -> None:
        self.batches: list[StoredBatch] = []
        self._bases: list[int] = []  # base offsets, for bisect
        self.log_start_offset = 0
        self.log_end_offset = 0
        self.epoch_starts: list[tuple[int, int]] = []  # (leader_epoch, start_offset)
        # First offsets of open transactions, producer_id -> first offset.
        self.open_txn_first_offset: dict[int, int] = {}
        # Aborted transactions: (producer_id, first_offset, last_offset) in offset order.
        self.aborted_txns: list[tuple[int, int, int]] = []
        self.size_bytes = 0

    # -- reading state --------------------------------------------------------------------

    @property
    def high_watermark(self) -> int:
        return self.log_end_offset

    @property
    def last_stable_offset(self) -> int:
        if not self.open_txn_first_offset:
            return self.high_watermark
        return min(self.open_txn_first_offset.values())

    def __len__(self) -> int:
        return self.log_end_offset - self.log_start_offset

    # -- writing ----------------------------------------------------------------------------

    def append(
        self,
        data: bytes | bytearray | memoryview,
        *,
        leader_epoch: int,
        now_ms: int,
        log_append_time: bool = False,
    ) -> AppendResult:
        """Append a produce request's records blob; returns the offsets assigned.

        Raises ProtocolError for a truncated or corrupt blob (the handler answers
        CORRUPT_MESSAGE); nothing is appended in that case.
        """
        batches = rec.split_batches(data, allow_partial=False)
        if not batches:
            raise ProtocolError("empty records")
        for header, raw in batches:
            if not rec.verify_crc(header, raw):
                raise ProtocolError(f"CRC mismatch in batch at offset {header.base_offset}")
        return self.append_batches(
            batches, leader_epoch=leader_epoch, now_ms=now_ms, log_append_time=log_append_time
        )

    def append_batches(
        self,
        batches: list[tuple[rec.BatchHeader, memoryview]],
        *,
        leader_epoch: int,
        now_ms: int,
        log_append_time: bool = False,
    ) -> AppendResult:
        """Append batches already split and CRC-checked (see :meth:`append`)."""
        first = self.log_end_offset
        ts = now_ms if log_append_time else -1
        staged: list[StoredBatch] = []
        next_offset = first
        for header, raw in batches:
            if header.magic >= 2:
                out = rec.stamp_batch(raw, next_offset, leader_epoch)
                if log_append_time:
                    out = rec.set_log_append_time(out, now_ms)
                count = header.last_offset_delta + 1
                max_ts = now_ms if log_append_time else header.max_timestamp
            else:
                out, count = rec.assign_offsets(raw, next_offset)
                max_ts = now_ms if log_append_time else header.max_timestamp
            staged.append(
                StoredBatch(
                    base_offset=next_offset,
                    last_offset=next_offset + count - 1,
                    max_timestamp=max_ts,
                    magic=header.magic,
                    producer_id=header.producer_id,
                    producer_epoch=header.producer_epoch,
                    base_sequence=header.base_sequence,
                    is_transactional=header.is_transactional,
                    is_control=header.is_control,
                    leader_epoch=leader_epoch,
                    data=bytes(out),
                    records_count=count,
                )
            )
            next_offset += count
        for b in staged:
            self._push(b)
        return AppendResult(first, next_offset - 1, ts)

    def append_control(
        self,
        *,
        commit: bool,
        producer_id: int,
        producer_epoch: int,
        coordinator_epoch: int,
        leader_epoch: int,
        now_ms: int,
    ) -> int:
        """Write a transaction marker; returns its offset and updates the LSO bookkeeping."""
        offset = self.log_end_offset
        data = rec.encode_control_batch(
            "commit" if commit else "abort",
            producer_id=producer_id,
            producer_epoch=producer_epoch,
            coordinator_epoch=coordinator_epoch,
            base_offset=offset,
            timestamp=now_ms,
        )
        data = rec.set_partition_leader_epoch(data, leader_epoch)
        self._push(
            StoredBatch(
                base_offset=offset,
                last_offset=offset,
                max_timestamp=now_ms,
                magic=2,
                producer_id=producer_id,
                producer_epoch=producer_epoch,
                base_sequence=-1,
                is_transactional=True,
                is_control=True,
                leader_epoch=leader_epoch,
                data=bytes(data),
                records_count=1,
            )
        )
        first = self.open_txn_first_offset.pop(producer_id, None)
        if not commit and first is not None:
            self.aborted_txns.append((producer_id, first, offset))
        return offset

    def _push(self, b: StoredBatch) -> None:
        if not self.epoch_starts or self.epoch_starts[-1][0] < b.leader_epoch:
            self.epoch_starts.append((b.leader_epoch, b.base_offset))
        if b.is_transactional and not b.is_control:
            self.open_txn_first_offset.setdefault(b.producer_id, b.base_offset)
        self.batches.append(b)
        self._bases.append(b.base_offset)
        self.log_end_offset = b.last_offset + 1
        self.size_bytes += b.size

    # -- reading ----------------------------------------------------------------------------

    def batch_index(self, offset: int) -> int:
        """Index of the first batch whose last offset is >= ``offset`` (len if none)."""
        i = bisect.bisect_right(self._bases, offset) - 1
        if i < 0:
            return 0
        if self.batches[i].last_offset < offset:
            return i + 1
        return i

    def read(
        self, offset: int, max_bytes: int, *, upto: int | None = None, magic: int = 2
    ) -> list[bytes]:
        """Raw batches from the one holding ``offset``, at most ``max_bytes`` (but at least
        one batch, as Kafka does), stopping before ``upto`` (high watermark or LSO)."""
        if upto is None:
            upto = self.high_watermark
        out: list[bytes] = []
        total = 0
        for i in range(self.batch_index(offset), len(self.batches)):
            b = self.batches[i]
            if b.base_offset >= upto:
                break
            data = b.as_magic(magic)
            if magic < 2 and b.is_control:
                continue
            if out and total + len(data) > max_bytes:
                break
            out.append(data)
            total += len(data)
            if total >= max_bytes:
                break
        return out

    def aborted_in_range(self, start: int, end: int) -> list[tuple[int, int]]:
        """(producer_id, first_offset) of aborted transactions overlapping [start, end)."""
        return [
            (pid, first) for pid, first, last in self.aborted_txns if first < end and last >= start
        ]

    def offset_for_timestamp(self, timestamp: int) -> tuple[int, int]:
        """(offset, timestamp) of the first record with timestamp >= ``timestamp``.

        Returns (-1, -1) when there is none. Batch granularity picks the batch, then its
        records are decoded to find the exact record.
        """
        for b in self.batches[self.batch_index(self.log_start_offset) :]:
            if b.is_control or b.max_timestamp < timestamp:
                continue
            for r in rec.decode_records(b.data):
                if r.offset >= self.log_start_offset and r.timestamp >= timestamp:
                    return r.offset, r.timestamp
        return -1, -1

    def max_timestamp_offset(self) -> tuple[int, int]:
        """(offset, timestamp) of the record with the largest timestamp (ListOffsets -3)."""
        best = (-1, -1)
        for b in self.batches[self.batch_index(self.log_start_offset) :]:
            if b.is_control or b.max_timestamp < best[1]:
                continue
            for r in rec.decode_records(b.data):
                if r.offset >= self.log_start_offset and r.timestamp > best[1]:
                    best = (r.offset, r.timestamp)
        return best

    def epoch_history(self, current_epoch: int) -> list[tuple[int, int]]:
        """(leader_epoch, start_offset) entries as a leader's epoch cache holds them.

        ``current_epoch`` is the partition's leader epoch: a new leader records it at the log
        end offset even before writing a record. Entries a later epoch starts at or before
        are dropped, and epochs wholly below the log start offset are trimmed (Kafka's
        ``LeaderEpochFileCache``).
        """
        entries: list[tuple[int, int]] = []
        for epoch, start in [*self.epoch_starts, (current_epoch, self.log_end_offset)]:
            if entries and entries[-1][0] >= epoch:
                continue
            while entries and entries[-1][1] >= start:
                entries.pop()
            entries.append((epoch, start))
        lso = self.log_start_offset
        while len(entries) > 1 and entries[1][1] <= lso:
            entries.pop(0)
        if entries and entries[0][1] < lso:
            entries[0] = (entries[0][0], lso)
        return entries

    def end_offset_for_epoch(self, requested: int, *, current_epoch: int) -> tuple[int, int]:
        """(leader_epoch, end_offset) for ``requested``, as Kafka's ``endOffsetFor`` answers.

        The largest known epoch <= ``requested`` with the start of the next epoch (or the log
        end offset for the current one); an epoch older than every known one answers itself
        with the start of the first known epoch; an unknown (-1) or too-new epoch answers
        (-1, -1), UNDEFINED_EPOCH_OFFSET. Used by OffsetForLeaderEpoch and Fetch's
        ``diverging_epoch`` so clients can detect truncation (KIP-320).
        """
        entries = self.epoch_history(current_epoch)
        if requested < 0 or not entries:
            return -1, -1
        if entries[-1][0] == requested:
            return requested, self.log_end_offset
        epochs = [e for e, _ in entries]
        higher = bisect.bisect_right(epochs, requested)
        if higher == len(entries):
            return -1, -1
        if higher == 0:
            return requested, entries[0][1]
        return entries[higher - 1][0], entries[higher][1]

    def records(self, *, include_control: bool = False) -> list[rec.Record]:
        """Every record held (decoded now), from the log start offset."""
        out: list[rec.Record] = []
        for b in self.batches:
            if b.is_control and not include_control:
                continue
            out.extend(
                r
                for r in rec.decode_records(b.data, include_control=include_control)
                if r.offset >= self.log_start_offset
            )
        return out

    # -- verbs ----------------------------------------------------------------------------

    def start_new_epoch(self, epoch: int) -> None:
        """A new leader epoch starts at the log end offset."""
        if not self.epoch_starts or self.epoch_starts[-1][0] < epoch:
            self.epoch_starts.append((epoch, self.log_end_offset))

    def delete_before(self, offset: int) -> int:
        """Advance the log start offset (DeleteRecords / retention); returns the new one."""
        offset = min(max(offset, self.log_start_offset), self.log_end_offset)
        self.log_start_offset = offset
        keep = self.batch_index(offset)
        if keep:
            for b in self.batches[:keep]:
                self.size_bytes -= b.size
            del self.batches[:keep]
            del self._bases[:keep]
        return offset

    def truncate(self, to_offset: int) -> None:
        """Drop every batch at or above ``to_offset`` (unclean election loses data)."""
        to_offset = max(to_offset, self.log_start_offset)
        i = self.batch_index(to_offset)
        if i < len(self.batches) and self.batches[i].base_offset < to_offset:
            # Batches are atomic: truncation inside one drops the whole batch.
            to_offset = self.batches[i].base_offset
        for b in self.batches[i:]:
            self.size_bytes -= b.size
        del self.batches[i:]
        del self._bases[i:]
        self.log_end_offset = to_offset
        self.epoch_starts = [(e, s) for e, s in self.epoch_starts if s <= to_offset]
        self.open_txn_first_offset = {
            p: o for p, o in self.open_txn_first_offset.items() if o < to_offset
        }
        self.aborted_txns = [t for t in self.aborted_txns if t[2] < to_offset]

"""Appending a produce request's records to a partition leader, with every broker check.

:func:`append_records` is the one path by which records enter a log -- from Produce and from
the public ``Cluster.produce`` helper alike. It validates the blob (framing, CRC, size
against ``max.message.bytes``), validates each batch as Kafka's ``LogValidator`` does
(:func:`validate_batch`: no control batches from clients, a records count that matches the
offset deltas, records that parse, a decompressed size under
``mockkafka.max.decompressed.batch.bytes``) so nothing a later read would choke on is stored,
applies idempotent-producer sequence checks (duplicates are
acknowledged with their original offsets), asks the transaction subsystem whether a
transactional batch may be written, appends, and wakes fetchers waiting on the partition.
"""

from __future__ import annotations

import struct
from collections import OrderedDict
from dataclasses import dataclass
from typing import Final

from mockkafka.cluster.limits import limits
from mockkafka.cluster.log import AppendResult
from mockkafka.cluster.producers import BatchMetadata, check_sequence, record_append
from mockkafka.cluster.state import ClusterState, Partition, Topic
from mockkafka.errors import ErrorCode
from mockkafka.protocol import records as rec
from mockkafka.protocol.codec import Message
from mockkafka.protocol.compression import UnsupportedCodecError, decompress
from mockkafka.protocol.errors import ProtocolError


@dataclass(frozen=True, slots=True)
class ProduceOutcome:
    """What a partition answers: an error, or the offsets written (or of the duplicate)."""

    error: ErrorCode = ErrorCode.NONE
    base_offset: int = -1
    log_append_time: int = -1
    message: str | None = None


class Unchecked:
    """The default of ``append_records(validated=)``: not validated yet."""


UNCHECKED: Final = Unchecked()

RecordsBlob = bytes | bytearray | memoryview

_MAGIC_POS: Final = 16
_ATTRIBUTES_LOW_POS: Final = 22  # the low byte of the int16 attributes (codec bits)
_CODEC_MASK: Final = 0x07
_LENGTH: Final = struct.Struct(">i")
_COUNT: Final = struct.Struct(">i")


#: Validation work one records blob may do on the event loop (records parsed, compressed
#: bytes inflated, bytes scanned); a blob past any of them is validated on a worker thread
#: by the server (``server/limits.py``), so no Produce blocks the loop for long.
INLINE_RECORDS: Final = 20_000
INLINE_DECOMPRESSED_BYTES: Final = 1024 * 1024
INLINE_BYTES: Final = 1024 * 1024


def produce_blobs(request: Message) -> list[RecordsBlob]:
    """Every partition's records blob of a Produce request (skipping empty ones)."""
    return [
        pd["records"]
        for td in request.get("topic_data") or []
        for pd in td.get("partition_data") or []
        if pd.get("records")
    ]


def validation_is_costly(data: RecordsBlob) -> bool:
    """Whether validating ``data`` could take long (see INLINE_RECORDS). Reads the batch
    headers; a compressed payload is inflated up to INLINE_DECOMPRESSED_BYTES only (a
    millisecond) to see whether it is bigger -- a bomb may hide in a few compressed bytes."""
    if len(data) > INLINE_BYTES:
        return True
    if (
        len(data) >= rec.V2_HEADER_SIZE
        and data[_MAGIC_POS] == 2
        and not data[_ATTRIBUTES_LOW_POS] & _CODEC_MASK
        and _LENGTH.unpack_from(data, 8)[0] + rec.LOG_OVERHEAD == len(data)
    ):  # one uncompressed v2 batch, what most clients send: its header says it all
        return bool(_COUNT.unpack_from(data, rec.V2_HEADER_SIZE - 4)[0] > INLINE_RECORDS)
    try:
        batches = rec.split_batches(data, allow_partial=False)
    except ProtocolError:
        return False  # rejected at once when validated
    records = 0
    for header, _raw in batches:
        records += max(header.records_count, 1)
        if header.compression and header.magic < 2:
            return True  # legacy wrapper messages: rare, always validated off the loop
    if records > INLINE_RECORDS:
        return True
    sections: dict[int, bytes] = {}
    for i, (header, raw) in enumerate(batches):
        if header.compression:
            try:
                sections[i] = decompress(
                    header.compression,
                    raw[rec.V2_HEADER_SIZE :],
                    max_output_size=INLINE_DECOMPRESSED_BYTES,
                )
            except ProtocolError:  # too big (or corrupt): let the worker thread decide
                return True
    if sections:
        _INFLATED.keep(data, batches, sections)
    return False


Batches = list[tuple[rec.BatchHeader, memoryview]]


class _InflatedSections:
    """The batches :func:`validation_is_costly` split and the records sections it
    decompressed, by blob, kept for the validation that follows it on the same thread
    (:func:`append_records`), so a compressed blob is split and inflated once per produce
    instead of twice. Bounded by bytes (the oldest go first: a blob whose request was
    answered some other way is simply dropped later); an entry holds its blob, so the id it
    is filed under cannot be reused, nor the blob freed under its batches, while it is kept."""

    BUDGET = 8 * 1024 * 1024

    def __init__(self) -> None:
        self._by_id: OrderedDict[int, tuple[object, Batches, dict[int, bytes], int]] = OrderedDict()
        self._bytes = 0

    def keep(self, blob: object, batches: Batches, sections: dict[int, bytes]) -> None:
        size = sum(len(b) for b in sections.values())
        if size > self.BUDGET:
            return
        self.take(blob)
        self._by_id[id(blob)] = (blob, batches, sections, size)
        self._bytes += size
        while self._bytes > self.BUDGET:
            _, (_, _, _, old) = self._by_id.popitem(last=False)
            self._bytes -= old

    def take(self, blob: object) -> tuple[Batches, dict[int, bytes]] | None:
        """The (batches, sections) kept for ``blob`` (forgotten here), or None."""
        entry = self._by_id.get(id(blob))
        if entry is None or entry[0] is not blob:
            return None
        del self._by_id[id(blob)]
        self._bytes -= entry[3]
        return entry[1], entry[2]


_INFLATED = _InflatedSections()


def validate_records(data: RecordsBlob | None, max_decompressed: int) -> ProduceOutcome | None:
    """The LogValidator verdict on a produced records blob: None when every batch may be
    stored, else the error to answer. Pure and thread-safe (the server may run it off the
    event loop)."""
    batches = _split(data)
    if isinstance(batches, ProduceOutcome):
        return batches
    return validate_batches(batches, max_decompressed)


def _split(data: RecordsBlob | None) -> list[tuple[rec.BatchHeader, memoryview]] | ProduceOutcome:
    """The batches of a produced blob, or the error answering a blob that does not split."""
    if not data:
        return ProduceOutcome(ErrorCode.CORRUPT_MESSAGE, message="empty records")
    try:
        batches = rec.split_batches(data, allow_partial=False)
    except UnsupportedCodecError as exc:
        return ProduceOutcome(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, message=str(exc))
    except ProtocolError as exc:
        return ProduceOutcome(ErrorCode.CORRUPT_MESSAGE, message=str(exc))
    return batches


def validate_batches(
    batches: list[tuple[rec.BatchHeader, memoryview]],
    max_decompressed: int,
    sections: dict[int, bytes] | None = None,
) -> ProduceOutcome | None:
    """:func:`validate_records` for batches already split (and CRC-checked); ``sections``:
    records sections already decompressed, by batch index (see :class:`_InflatedSections`)."""
    for i, (header, raw) in enumerate(batches):
        if header.is_control:
            return ProduceOutcome(
                ErrorCode.INVALID_RECORD, message="Clients are not allowed to write control records"
            )
        if header.magic >= 2 and header.records_count != header.last_offset_delta + 1:
            return ProduceOutcome(
                ErrorCode.INVALID_RECORD,
                message=f"Record count {header.records_count} does not match the last offset "
                f"delta {header.last_offset_delta} of the batch",
            )
        if header.magic >= 2 and header.records_count <= 0:
            return ProduceOutcome(ErrorCode.INVALID_RECORD, message="Batch holds no records")
        try:
            rec.check_entry(
                header,
                raw,
                max_output_size=max_decompressed,
                section=sections.get(i) if sections else None,
            )
        except UnsupportedCodecError as exc:
            return ProduceOutcome(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, message=str(exc))
        except ProtocolError as exc:
            code = (
                ErrorCode.INVALID_RECORD
                if "offset delta" in str(exc)
                else ErrorCode.CORRUPT_MESSAGE
            )
            return ProduceOutcome(code, message=str(exc))
    return None


def append_records(
    state: ClusterState,
    topic: Topic,
    p: Partition,
    data: bytes | bytearray | memoryview | None,
    *,
    transactional_id: str | None = None,
    validated: ProduceOutcome | Unchecked | None = UNCHECKED,
    tv2: bool = False,
) -> ProduceOutcome:
    """Validate and append ``data`` to ``p`` (whose leader the caller has checked).

    ``tv2``: the request may add the partition to its transaction (Produce v12+, see
    ``TransactionCoordinator.check_produce``).

    ``validated`` is :func:`validate_records` already run on ``data`` (the server runs it off
    the event loop for big requests); by default it runs here.
    """
    kept = _INFLATED.take(data)
    sections: dict[int, bytes] | None = None
    if kept is not None:  # split and inflated by validation_is_costly already
        batches, sections = kept
    else:
        split = _split(data)
        if isinstance(split, ProduceOutcome):
            return split
        batches = split
    if not batches:
        return ProduceOutcome(ErrorCode.CORRUPT_MESSAGE, message="no record batch")
    max_bytes = topic.config_int("max.message.bytes")
    for header, raw in batches:
        if len(raw) > max_bytes:
            return ProduceOutcome(
                ErrorCode.MESSAGE_TOO_LARGE,
                message=f"batch of {len(raw)} bytes exceeds max.message.bytes={max_bytes}",
            )
        if not rec.verify_crc(header, raw):
            return ProduceOutcome(ErrorCode.CORRUPT_MESSAGE, message="CRC mismatch")
    if isinstance(validated, Unchecked):
        validated = validate_batches(batches, limits(state).max_decompressed_batch_bytes, sections)
    if validated is not None:
        return validated
    first = batches[0][0]
    pid = first.producer_id if first.magic >= 2 else -1
    # Idempotence only exists for magic 2, whose headers count their records.
    count = sum(h.last_offset_delta + 1 for h, _ in batches) if pid >= 0 else 0
    if pid >= 0 and first.is_transactional:
        err = state.transactions.check_produce(
            p, pid, first.producer_epoch, transactional_id, tv2=tv2
        )
        if err != ErrorCode.NONE:
            return ProduceOutcome(err)
    if pid >= 0 and first.base_sequence >= 0:
        verdict = check_sequence(
            p.producers.get(pid),
            producer_epoch=first.producer_epoch,
            base_sequence=first.base_sequence,
            record_count=count,
            transactional=first.is_transactional,
        )
        if verdict.duplicate_of is not None:
            d = verdict.duplicate_of
            return ProduceOutcome(ErrorCode.NONE, d.base_offset, d.log_append_time)
        if verdict.error != ErrorCode.NONE:
            return ProduceOutcome(verdict.error)
    log_append = topic.config("message.timestamp.type") == "LogAppendTime"
    try:
        res: AppendResult = p.log.append_batches(
            batches, leader_epoch=p.leader_epoch, now_ms=state.now_ms(), log_append_time=log_append
        )
    except ProtocolError as exc:
        return ProduceOutcome(ErrorCode.CORRUPT_MESSAGE, message=str(exc))
    if pid >= 0 and first.base_sequence >= 0:
        last_seq = (first.base_sequence + count - 1) % (2**31)
        record_append(
            p.producers,
            producer_id=pid,
            producer_epoch=first.producer_epoch,
            meta=BatchMetadata(
                first.base_sequence, last_seq, res.base_offset, res.last_offset, res.log_append_time
            ),
        )
    state.notify(("partition", p.topic, p.index))
    return ProduceOutcome(ErrorCode.NONE, res.base_offset, res.log_append_time)

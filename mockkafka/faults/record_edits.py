"""Edits of the records a Fetch answer carries, that leave every batch valid (sans-IO).

Theory of operation
-------------------
The record-editing fault actions change what a consumer *reads*, not how the bytes reach
it: the client library must accept every batch (framing, lengths, CRCs, compression) and
hand the edited records to the application, as if the producer had written them. So each
edit here decodes a batch with the project's own codec, changes the records, and encodes
the batch again with the same format (magic 0, 1 or 2), the same codec (snappy keeps its
raw or xerial framing), the same producer fields, leader epoch, offsets and offset range,
so the result passes :func:`~mockkafka.protocol.records.decode_batch` with its CRC check.

* :func:`corrupt_payload` -- values (or keys, or header values) mutated, checksums valid;
* :func:`rewrite_schema_id` -- the Confluent schema-registry header of each value changed;
* :func:`skew_timestamps` -- CreateTime timestamps moved into the future or the past;
* :func:`prepend_batch` -- a batch the consumer already read, repeated before the answer.

Each returns the edited bytes, or ``None`` when the data holds nothing the edit applies to
(the fault engine then does not count the rule as fired on this partition). Control
batches (transaction markers) and empty batches are copied unchanged; a truncated trailing
batch (a Fetch answer cut at ``max_bytes``) is kept as it is, after the edited ones.
"""

from __future__ import annotations

import dataclasses
import random
import struct
from collections.abc import Callable, Iterable
from typing import Final, Literal

import crc32c

from mockkafka.protocol import records as rec
from mockkafka.protocol.errors import ProtocolError
from mockkafka.protocol.records import Record, TimestampType

BytesLike = bytes | bytearray | memoryview
RecordsData = BytesLike | Iterable[BytesLike]
#: What :func:`edit_records` calls per record: return the record edited, or the same one.
RecordEdit = Callable[[Record], Record]
#: Which bytes of a record :func:`corrupt_payload` mutates.
Part = Literal["value", "key", "headers"]
PARTS: Final = ("value", "key", "headers")

#: Confluent schema-registry wire format: magic byte 0, then the schema id (int32, big endian).
SCHEMA_REGISTRY_MAGIC: Final = 0
SCHEMA_REGISTRY_HEADER: Final = struct.Struct(">bi")

_XERIAL: Final = b"\x82SNAPPY\x00"
_V2_LAST_DELTA_POS: Final = 23
_V2_BASE_TS_POS: Final = 27
_V2_MAX_TS_POS: Final = 35
_V2_CRC_POS: Final = 17
_V2_ATTR_POS: Final = 21
_INT32: Final = struct.Struct(">i")
_INT64: Final = struct.Struct(">q")
_UINT32: Final = struct.Struct(">I")


def _as_bytes(data: RecordsData) -> bytes:
    if isinstance(data, bytes):
        return data
    if isinstance(data, bytearray | memoryview):
        return bytes(data)
    return b"".join(bytes(d) for d in data)


def _snappy_xerial(header: rec.BatchHeader, raw: bytes) -> bool:
    """Whether the entry's snappy payload uses xerial framing (kept when re-encoding)."""
    if header.compression is not rec.CompressionType.SNAPPY:
        return False
    if header.magic >= 2:
        return raw[rec.V2_HEADER_SIZE : rec.V2_HEADER_SIZE + len(_XERIAL)] == _XERIAL
    pos = 18 if header.magic == 0 else 26  # legacy header: key length field
    (key_len,) = _INT32.unpack_from(raw, pos)
    pos += 4 + max(key_len, 0) + 4  # the value length field
    return raw[pos : pos + len(_XERIAL)] == _XERIAL


def _encode_v2(
    header: rec.BatchHeader, raw: bytes, old: list[Record], records: list[Record]
) -> bytes:
    log_append = header.timestamp_type is TimestampType.LOG_APPEND_TIME
    ts_moved = any(a.timestamp != b.timestamp for a, b in zip(old, records, strict=True))
    base_ts = header.base_timestamp
    if ts_moved:
        # Keep every record's delta: the base moves with the first record.
        base_ts += records[0].timestamp - old[0].timestamp
    out = bytearray(
        rec.encode_batch(
            records,
            base_offset=header.base_offset,
            compression=header.compression,
            magic=2,
            producer_id=header.producer_id,
            producer_epoch=header.producer_epoch,
            base_sequence=header.base_sequence,
            is_transactional=header.is_transactional,
            partition_leader_epoch=header.partition_leader_epoch,
            timestamp_type=header.timestamp_type,
            base_timestamp=base_ts,
            snappy_xerial=_snappy_xerial(header, raw),
        )
    )
    # The offset range is the batch's, not its records' (compaction leaves gaps at the
    # end): the consumer's next fetch offset must not move.
    _INT32.pack_into(out, _V2_LAST_DELTA_POS, header.last_offset_delta)
    if log_append or not ts_moved:
        _INT64.pack_into(out, _V2_MAX_TS_POS, header.max_timestamp)
    else:
        _INT64.pack_into(out, _V2_MAX_TS_POS, max(r.timestamp for r in records))
    _INT64.pack_into(out, _V2_BASE_TS_POS, base_ts)
    _UINT32.pack_into(out, _V2_CRC_POS, crc32c.crc32c(memoryview(out)[_V2_ATTR_POS:]))
    return bytes(out)


def _encode_legacy(header: rec.BatchHeader, raw: bytes, records: list[Record]) -> bytes:
    return rec.encode_batch(
        records,
        compression=header.compression,
        magic=header.magic,
        timestamp_type=header.timestamp_type,
        snappy_xerial=_snappy_xerial(header, raw),
    )


def _skipped(header: rec.BatchHeader, create_time_only: bool) -> str | None:
    """Why :func:`edit_records` copies this batch without looking at its records (None:
    it does look)."""
    if header.is_control:
        return "they are transaction markers only (control batches)"
    if header.records_count == 0:
        return "every batch is empty (its records were compacted away)"
    if create_time_only and header.magic == 0:
        return "they are in message format v0 (Fetch v0/v1), which has no timestamps"
    if create_time_only and header.timestamp_type is TimestampType.LOG_APPEND_TIME:
        return (
            "every batch has LogAppendTime timestamps (the broker's clock, "
            "message.timestamp.type=LogAppendTime), which are left alone"
        )
    return None


def why_unedited(data: RecordsData, *, create_time_only: bool = False) -> str | None:
    """Why :func:`edit_records` can change no record of ``data`` whatever the edit, when
    the batches alone say so (all transaction markers, all LogAppendTime, none decodes...);
    None when some batch holds records an edit could change (then the edit itself found
    nothing: the action says why)."""
    blob = _as_bytes(data)
    reasons: list[str] = []
    try:
        for header, view in rec.iter_batches(blob):
            why = _skipped(header, create_time_only)
            if why is None:
                try:
                    rec.decode_batch(bytes(view))
                except ProtocolError:
                    why = "no batch decodes (a corrupt_batch rule may have got there first)"
                else:
                    return None
            reasons.append(why)
    except ProtocolError:
        reasons.append("they do not parse as record batches")
    if not reasons:
        return "they hold no complete batch"
    return reasons[0] if len(set(reasons)) == 1 else " and ".join(dict.fromkeys(reasons))


def edit_records(
    data: RecordsData, edit: RecordEdit, *, create_time_only: bool = False
) -> bytes | None:
    """``data`` with ``edit`` applied to every data record, every batch re-encoded valid.

    ``edit`` receives each :class:`~mockkafka.protocol.records.Record` (absolute offset,
    timestamp as the consumer will read it, key, value, headers) and returns it edited or
    unchanged; the offset it returns is ignored. ``create_time_only=True`` skips batches
    whose timestamps the broker set (LogAppendTime), and magic-0 messages (no timestamps).
    Batches with no changed record, and batches that do not decode (a bad CRC another
    fault put there), are copied byte for byte. Returns ``None`` when no record changed.
    """
    blob = _as_bytes(data)
    out = bytearray()
    changed = False
    end = 0
    for header, view in rec.iter_batches(blob):
        raw = bytes(view)
        end += len(raw)
        if _skipped(header, create_time_only) is not None:
            out += raw
            continue
        try:
            _, old = rec.decode_batch(raw)
        except ProtocolError:  # e.g. a corrupt_batch rule got here first: leave it be
            out += raw
            continue
        new = [dataclasses.replace(edit(r), offset=r.offset) for r in old]
        if new == old:
            out += raw
            continue
        changed = True
        if header.magic >= 2:
            out += _encode_v2(header, raw, old, new)
        else:
            out += _encode_legacy(header, raw, new)
    if not changed:
        return None
    out += blob[end:]  # a truncated trailing batch stays as the broker cut it
    return bytes(out)


# -- corrupt_payload ------------------------------------------------------------------------


def _garble(value: bytes, rng: random.Random) -> bytes:
    """Every byte XORed with a non-zero mask byte: same length, no byte left as it was."""
    return bytes(b ^ rng.randrange(1, 256) for b in value)


def corrupt_payload(
    data: RecordsData, *, part: Part = "value", seed: int | None = None
) -> bytes | None:
    """Every record's value (``part="key"``: key; ``"headers"``: every header value) with
    each byte changed, the length kept, the batch re-encoded with valid CRCs: the consumer's
    deserializer, not its client library, meets the garbage. Null and empty values are left
    alone (nothing to mutate). ``seed``: the same bytes for the same record on every run
    (None: fresh random bytes). None when no record has such a part.
    """
    if part not in PARTS:
        raise ValueError(f"part must be one of {', '.join(PARTS)}, got {part!r}")

    def rng_for(r: Record) -> random.Random:
        return random.Random(f"{seed}/{part}/{r.offset}") if seed is not None else random.Random()

    def edit(r: Record) -> Record:
        if part == "value":
            return dataclasses.replace(r, value=_garble(r.value, rng_for(r))) if r.value else r
        if part == "key":
            return dataclasses.replace(r, key=_garble(r.key, rng_for(r))) if r.key else r
        if not any(v for _, v in r.headers):
            return r
        rng = rng_for(r)
        headers = tuple((k, _garble(v, rng) if v else v) for k, v in r.headers)
        return dataclasses.replace(r, headers=headers)

    return edit_records(data, edit)


# -- schema_id --------------------------------------------------------------------------------


def check_schema_id(schema_id: int | None, magic: int | None) -> None:
    """Refuse arguments :func:`rewrite_schema_id` cannot write (``ValueError``)."""
    if schema_id is None and magic is None:
        raise ValueError(
            "give id= (a schema id the registry does not know, or another subject's) or "
            "magic= (a wrong magic byte), or both"
        )
    if schema_id is not None and (
        isinstance(schema_id, bool)
        or not isinstance(schema_id, int)
        or not -(2**31) <= schema_id < 2**31
    ):
        raise ValueError(f"id must be a 32-bit schema id (int), got {schema_id!r}")
    if magic is not None and (
        isinstance(magic, bool) or not isinstance(magic, int) or not 0 <= magic <= 255
    ):
        raise ValueError(f"magic must be a byte (0..255), got {magic!r}")


def rewrite_schema_id(
    data: RecordsData, *, schema_id: int | None = None, magic: int | None = None
) -> bytes | None:
    """Each value in the Confluent schema-registry wire format (magic byte 0, a big-endian
    int32 schema id, the payload) with its schema id replaced by ``schema_id`` and/or its
    magic byte by ``magic``; the payload is kept. Values that are not in that format (null,
    shorter than 5 bytes, or not starting with byte 0) are left alone: they were not
    written by a registry serializer, so a rewritten header would test nothing. None when
    no value is in that format.
    """
    check_schema_id(schema_id, magic)

    def edit(r: Record) -> Record:
        v = r.value
        if v is None or len(v) < SCHEMA_REGISTRY_HEADER.size or v[0] != SCHEMA_REGISTRY_MAGIC:
            return r
        old_magic, old_id = SCHEMA_REGISTRY_HEADER.unpack_from(v)
        head = SCHEMA_REGISTRY_HEADER.pack(
            old_magic if magic is None else magic - 256 if magic > 127 else magic,
            old_id if schema_id is None else schema_id,
        )
        return dataclasses.replace(r, value=head + v[SCHEMA_REGISTRY_HEADER.size :])

    return edit_records(data, edit)


# -- skew_timestamps ------------------------------------------------------------------------


def skew_timestamps(data: RecordsData, *, ms: int) -> bytes | None:
    """Every CreateTime timestamp moved by ``ms`` (positive: into the future; negative:
    into the past, not below 0, as Kafka refuses negative timestamps). Batch base and max
    timestamps follow, CRCs are recomputed. LogAppendTime batches (the broker's clock, not
    the producer's), magic-0 messages and records without a timestamp (-1) are left
    alone. None when nothing moved.
    """
    if isinstance(ms, bool) or not isinstance(ms, int) or ms == 0:
        raise ValueError(f"ms must be a non-zero int (milliseconds to move by), got {ms!r}")

    def edit(r: Record) -> Record:
        if r.timestamp < 0:
            return r
        return dataclasses.replace(r, timestamp=max(0, r.timestamp + ms))

    return edit_records(data, edit, create_time_only=True)


# -- duplicate --------------------------------------------------------------------------------


def prepend_batch(data: RecordsData, previous: BytesLike) -> bytes:
    """``previous`` (one or more complete batches already delivered, at their original
    offsets) followed by ``data``: an answer repeating what the consumer already has, as
    a broker's after a leader change. Raises ``ValueError`` if ``previous`` is not
    complete batches.
    """
    prev = bytes(previous)
    if not prev:
        raise ValueError("previous must hold at least one batch")
    try:
        rec.split_batches(prev)
    except ProtocolError as exc:
        raise ValueError(f"previous is not complete batches: {exc}") from None
    return prev + _as_bytes(data)


__all__ = [
    "PARTS",
    "SCHEMA_REGISTRY_HEADER",
    "SCHEMA_REGISTRY_MAGIC",
    "Part",
    "RecordEdit",
    "check_schema_id",
    "corrupt_payload",
    "edit_records",
    "prepend_batch",
    "rewrite_schema_id",
    "skew_timestamps",
    "why_unedited",
]

"""Kafka record batches: walk, validate, decode, encode, re-offset and down-convert them.

Theory of operation
-------------------
A *records blob* (the ``records`` field of Produce and Fetch) is a concatenation of entries
that all start with ``[int64 offset][int32 length]`` and carry their format version
("magic") at byte 16:

* **v2 record batch** (magic 2, Kafka 0.11+): a 61-byte header then the records section,
  compressed as a whole when attribute bits 0-2 name a codec. The CRC32C at bytes 17-20
  covers the attributes (byte 21) to the end, so the base offset (bytes 0-7) and the
  partition leader epoch (bytes 12-15) can be rewritten without touching it: that is how a
  broker assigns offsets on produce (:func:`set_base_offset`, :func:`assign_offsets`).
* **legacy message** (magic 0 or 1): ``[offset][size][crc32][magic][attributes]
  [timestamp, v1 only][key][value]`` with a zlib CRC32 from the magic byte to the end. A
  compressed message is a *wrapper*: its value is a compressed message set whose inner
  offsets are absolute (v0) or relative ``0..n-1`` (v1); the wrapper's own offset is the
  absolute offset of the last inner message.

:func:`iter_batches` / :func:`split_batches` cut a blob into entries and parse only their
headers, never decompressing: this is the cheap path for a broker's produce and fetch
handling. Every legacy message is one entry with a pseudo :class:`BatchHeader`. Brokers may
cut a Fetch response mid-batch, so a truncated *trailing* entry is ignored by the lenient
calls; strict calls (``allow_partial=False``) raise :class:`ProtocolError` instead, which a
broker's produce path answers with ``CORRUPT_MESSAGE``.

:func:`decode_batch` / :func:`decode_records` fully decode (decompress, verify CRCs, check
every length) into :class:`Record` values; :func:`encode_batch` writes any format with any
codec; :func:`downconvert` turns stored v2 data into v0/v1 for old Fetch versions.

Broker recipe
-------------
Produce: ``split_batches(data, check_crc=True)`` (``ProtocolError`` -> ``CORRUPT_MESSAGE``;
optionally :func:`decode_batch` on each entry for a deep check), then
``assign_offsets(data, log_end_offset, partition_leader_epoch=epoch)`` which returns the
bytes to append and how many offsets they took; :func:`set_log_append_time` if the topic
uses LogAppendTime. Fetch: walk the stored bytes with :func:`iter_batches` and return whole
entries whose ``last_offset >= fetch_offset``; for Fetch v0-v3 pass them through
:func:`downconvert`. Clients write legacy wrappers with offset 0, so decode legacy produce
data only after :func:`assign_offsets` (before it, v1 inner offsets come out negative, as
they would for any Kafka reader).

Malformed input raises :class:`~mockkafka.protocol.errors.ProtocolError` (or its subclass
:class:`~mockkafka.protocol.compression.UnsupportedCodecError`) and never another exception
type; work is bounded by the input size, never by a count read from the input. Invalid
*arguments* from the caller (bad offsets, ``str`` values, headers with magic 0/1) raise
``ValueError`` / ``TypeError``.
"""

from __future__ import annotations

import struct
import time
import zlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, Final, Literal

from mockkafka.protocol.compression import (
    DEFAULT_MAX_OUTPUT_SIZE,
    CompressionType,
    UnsupportedCodecError,
    compress,
    decompress,
)
from mockkafka.protocol.errors import ProtocolError


def _crc32c(data: Any) -> int:
    """CRC32C of ``data`` (v2 batches), from the ``crc32c`` package, loaded on first use
    (:func:`load_crc32c`)."""
    fn = _CRC32C_FN
    if fn is None:
        fn = load_crc32c()
    result: int = fn(data)
    return result


def load_crc32c() -> Any:
    """The ``crc32c`` function of the ``crc32c`` package. Its ``__init__`` reads the
    package's version from its metadata (``importlib.metadata`` and ``email``: ~10 ms of a
    ``mockkafka serve`` start, issue 33), so the extension module that computes it is
    loaded on its own; the package as a whole where that is not possible."""
    global _CRC32C_FN
    if _CRC32C_FN is None:
        _CRC32C_FN = _crc32c_extension()
    return _CRC32C_FN


def _crc32c_extension() -> Any:
    import importlib.machinery
    import importlib.util

    package = importlib.util.find_spec("crc32c")  # finds it without running its __init__
    where = package.submodule_search_locations if package is not None else None
    spec = importlib.machinery.PathFinder.find_spec("_crc32c", list(where or ()))
    if spec is not None and isinstance(spec.loader, importlib.machinery.ExtensionFileLoader):
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module.crc32c
    import crc32c  # a layout this does not know: the package's own import

    return crc32c.crc32c


_CRC32C_FN: Any = None

__all__ = [
    "LOG_OVERHEAD",
    "NO_TIMESTAMP",
    "V2_HEADER_SIZE",
    "BatchHeader",
    "CompressionType",
    "ControlRecord",
    "ControlType",
    "Record",
    "RecordLike",
    "TimestampType",
    "UnsupportedCodecError",
    "assign_offsets",
    "check_batch",
    "check_entry",
    "decode_batch",
    "decode_control_record",
    "decode_records",
    "downconvert",
    "encode_batch",
    "encode_control_batch",
    "iter_batches",
    "set_base_offset",
    "set_log_append_time",
    "set_partition_leader_epoch",
    "split_batches",
    "verify_crc",
]

BytesLike = bytes | bytearray | memoryview
Headers = tuple[tuple[str, bytes | None], ...]

#: Bytes before an entry's length-counted part: int64 offset + int32 length.
LOG_OVERHEAD: Final = 12
#: Size of a v2 record batch header, up to and including the records count.
V2_HEADER_SIZE: Final = 61
#: Timestamp value meaning "none" (magic 0 messages, or a producer that sent none).
NO_TIMESTAMP: Final = -1

_PREFIX: Final = struct.Struct(">qi")
_V2_HEADER: Final = struct.Struct(">qiibIhiqqqhii")
_LEGACY_V0: Final = struct.Struct(">qiIbB")  # offset, size, crc, magic, attributes
_LEGACY_V1: Final = struct.Struct(">qiIbBq")  # ... + timestamp
_LEGACY_V0_BODY: Final = struct.Struct(">bB")
_LEGACY_V1_BODY: Final = struct.Struct(">bBq")
_INT8: Final = struct.Struct(">B")
_INT16: Final = struct.Struct(">h")
_INT32: Final = struct.Struct(">i")
_UINT32: Final = struct.Struct(">I")
_INT64: Final = struct.Struct(">q")
_CONTROL_KEY: Final = struct.Struct(">hh")  # version, type
_CONTROL_VALUE: Final = struct.Struct(">hi")  # version, coordinator epoch

_MAGIC_POS: Final = 16
_V2_EPOCH_POS: Final = 12
_V2_CRC_POS: Final = 17
_V2_ATTR_POS: Final = 21
_V2_MAX_TS_POS: Final = 35
_LEGACY_CRC_POS: Final = 12
_LEGACY_ATTR_POS: Final = 17
_LEGACY_TS_POS: Final = 18

_MIN_V2_LENGTH: Final = V2_HEADER_SIZE - LOG_OVERHEAD  # 49
_MIN_V0_SIZE: Final = 14  # crc + magic + attributes + key length + value length
_MIN_V1_SIZE: Final = 22  # ... + timestamp

_CODEC_MASK: Final = 0x07
_TIMESTAMP_TYPE_BIT: Final = 0x08
_TRANSACTIONAL_BIT: Final = 0x10
_CONTROL_BIT: Final = 0x20
_DELETE_HORIZON_BIT: Final = 0x40

_INT32_MIN: Final = -(1 << 31)
_INT32_MAX: Final = (1 << 31) - 1
_INT64_MIN: Final = -(1 << 63)
_INT64_MAX: Final = (1 << 63) - 1


class TimestampType(IntEnum):
    """Attribute bit 3: who set the timestamps of a batch (or v1 message)."""

    CREATE_TIME = 0
    LOG_APPEND_TIME = 1


class ControlType(IntEnum):
    """Type field in the key of a control record (transaction markers)."""

    ABORT = 0
    COMMIT = 1


@dataclass(frozen=True, slots=True)
class Record:
    """One decoded record: absolute offset, timestamp (ms, or -1), key, value, headers.

    Legacy (magic 0/1) records have no headers; magic 0 records have timestamp -1. When the
    batch uses LogAppendTime the timestamp is the batch's append time, as clients report it.
    """

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: Headers = ()


#: What :func:`encode_batch` accepts per record: a :class:`Record` (its offset is absolute and
#: honoured) or a tuple ``(key, value)``, ``(key, value, headers)`` or
#: ``(key, value, headers, timestamp)`` (takes the next offset; headers may be ``None``).
RecordLike = Record | tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class BatchHeader:
    """The header of one entry of a records blob, as :func:`iter_batches` yields it.

    For a v2 batch every field is the wire value. For a legacy (magic 0/1) message it is a
    pseudo-header: ``base_offset`` is the message offset, ``batch_length`` its size field,
    ``crc`` and ``attributes`` the message's, ``base_timestamp == max_timestamp`` its
    timestamp (-1 for v0), ``last_offset_delta`` 0, producer fields -1 and ``records_count``
    1. For a *compressed* legacy wrapper the first inner offset is unknown without
    decompressing: ``base_offset`` (and ``last_offset``) is the wrapper's offset -- the
    offset of its last inner message -- and ``records_count`` is -1; call
    :func:`decode_batch` for the records.
    """

    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int

    @property
    def compression(self) -> CompressionType:
        """Codec of the records section (v2) or of the wrapper's value (legacy)."""
        return CompressionType(self.attributes & _CODEC_MASK)

    @property
    def timestamp_type(self) -> TimestampType:
        """CREATE_TIME or LOG_APPEND_TIME (always CREATE_TIME for magic 0)."""
        if self.magic == 0:
            return TimestampType.CREATE_TIME
        return TimestampType((self.attributes >> 3) & 1)

    @property
    def is_transactional(self) -> bool:
        return self.magic >= 2 and bool(self.attributes & _TRANSACTIONAL_BIT)

    @property
    def is_control(self) -> bool:
        return self.magic >= 2 and bool(self.attributes & _CONTROL_BIT)

    @property
    def has_delete_horizon(self) -> bool:
        return self.magic >= 2 and bool(self.attributes & _DELETE_HORIZON_BIT)

    @property
    def last_offset(self) -> int:
        """Offset of the last record this entry covers."""
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        """``last_offset + 1``: where the next entry's offsets start."""
        return self.base_offset + self.last_offset_delta + 1

    @property
    def size(self) -> int:
        """Total bytes of the entry, including the 12-byte offset+length prefix."""
        return self.batch_length + LOG_OVERHEAD


@dataclass(frozen=True, slots=True)
class ControlRecord:
    """A decoded control record. ``type`` is a :class:`ControlType` for transaction markers
    (other values are KRaft-internal types); ``coordinator_epoch`` is -1 when absent."""

    type: int
    version: int
    coordinator_epoch: int

    @property
    def is_commit(self) -> bool:
        return self.type == ControlType.COMMIT

    @property
    def is_abort(self) -> bool:
        return self.type == ControlType.ABORT


# =========================================================================== varints


def _read_varint_slow(buf: bytes, pos: int, max_bytes: int, bits: int) -> tuple[int, int]:
    result = 0
    shift = 0
    for i in range(max_bytes):
        byte = buf[pos + i]
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            if result >> bits:
                raise ProtocolError(f"varint at byte {pos} overflows {bits} bits")
            return (result >> 1) ^ -(result & 1), pos + i + 1
        shift += 7
    raise ProtocolError(f"varint at byte {pos} is longer than {max_bytes} bytes")


def _read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    """Zigzag varint (int32) at ``pos`` -> (value, next position). IndexError if truncated."""
    byte = buf[pos]
    if byte < 0x80:
        return (byte >> 1) ^ -(byte & 1), pos + 1
    return _read_varint_slow(buf, pos, 5, 32)


def _read_varlong(buf: bytes, pos: int) -> tuple[int, int]:
    """Zigzag varlong (int64) at ``pos`` -> (value, next position). IndexError if truncated."""
    byte = buf[pos]
    if byte < 0x80:
        return (byte >> 1) ^ -(byte & 1), pos + 1
    return _read_varint_slow(buf, pos, 10, 64)


_SMALL_VARINTS: Final = tuple(bytes((((n << 1) ^ (n >> 63)) & 0x7F,)) for n in range(-64, 64))


def _varint(value: int, *, bits: int = 32) -> bytes:
    """Zigzag-encode ``value`` as a (32-bit) varint or, with ``bits=64``, a varlong."""
    if -64 <= value < 64:
        return _SMALL_VARINTS[value + 64]
    limit = 1 << (bits - 1)
    if not -limit <= value < limit:
        raise ValueError(f"{value} does not fit a {bits}-bit varint")
    unsigned = value << 1 if value >= 0 else ((-value) << 1) - 1
    out = bytearray()
    while unsigned >= 0x80:
        out.append((unsigned & 0x7F) | 0x80)
        unsigned >>= 7
    out.append(unsigned)
    return bytes(out)


# =========================================================================== walking


def _as_view(data: BytesLike) -> memoryview:
    view = memoryview(data)
    if view.format != "B" or view.ndim != 1:
        view = view.cast("B")
    return view


def _check_codec(codec: int, offset: int) -> None:
    if codec > CompressionType.ZSTD:
        raise UnsupportedCodecError(f"entry at offset {offset}: unknown compression codec {codec}")


def _walk(view: memoryview, strict: bool) -> Iterator[tuple[BatchHeader, memoryview]]:
    n = len(view)
    pos = 0
    while pos < n:
        if n - pos < LOG_OVERHEAD:
            if strict:
                raise ProtocolError(
                    f"truncated records: {n - pos} trailing bytes at byte {pos} are not a "
                    "complete batch header"
                )
            return
        offset, length = _PREFIX.unpack_from(view, pos)
        if length < _MIN_V0_SIZE:
            raise ProtocolError(
                f"entry at offset {offset} (byte {pos}) has invalid length {length}"
            )
        end = pos + LOG_OVERHEAD + length
        if end > n:
            if strict:
                raise ProtocolError(
                    f"truncated records: entry at offset {offset} (byte {pos}) declares "
                    f"{length} bytes but only {n - pos - LOG_OVERHEAD} follow"
                )
            return
        magic = view[pos + _MAGIC_POS]
        if magic == 2:
            if length < _MIN_V2_LENGTH:
                raise ProtocolError(
                    f"record batch at offset {offset} has invalid length {length} "
                    f"(minimum {_MIN_V2_LENGTH})"
                )
            header = BatchHeader(*_V2_HEADER.unpack_from(view, pos))
            _check_codec(header.attributes & _CODEC_MASK, offset)
            if header.records_count < 0:
                raise ProtocolError(
                    f"record batch at offset {offset} has negative records count "
                    f"{header.records_count}"
                )
            if header.last_offset_delta < 0:
                raise ProtocolError(
                    f"record batch at offset {offset} has negative last offset delta "
                    f"{header.last_offset_delta}"
                )
        elif magic == 1 or magic == 0:
            if magic == 0:
                _, _, crc, _, attrs = _LEGACY_V0.unpack_from(view, pos)
                timestamp = NO_TIMESTAMP
            else:
                if length < _MIN_V1_SIZE:
                    raise ProtocolError(
                        f"message at offset {offset} has invalid size {length} "
                        f"(minimum {_MIN_V1_SIZE} for magic 1)"
                    )
                _, _, crc, _, attrs, timestamp = _LEGACY_V1.unpack_from(view, pos)
            codec = attrs & _CODEC_MASK
            _check_codec(codec, offset)
            header = BatchHeader(
                offset, length, -1, magic, crc, attrs, 0, timestamp, timestamp, -1, -1, -1,
                -1 if codec else 1,
            )  # fmt: skip
        else:
            raise ProtocolError(f"entry at offset {offset} has unknown magic {magic}")
        yield header, view[pos:end]
        pos = end


def iter_batches(data: BytesLike) -> Iterator[tuple[BatchHeader, memoryview]]:
    """Walk a records blob lazily, yielding ``(header, raw)`` per batch / legacy message.

    ``raw`` is a memoryview of the whole entry (prefix included) into ``data``: keep ``data``
    alive and unchanged while using it, or copy with ``bytes(raw)``. Nothing is decompressed
    and CRCs are not checked (use :func:`verify_crc`, or :func:`decode_batch` for a full
    check). A truncated trailing entry ends the walk silently, as a client reading a Fetch
    response does; a malformed entry header raises :class:`ProtocolError` when reached. On a
    produce path use :func:`split_batches` instead, which is strict.
    """
    return _walk(_as_view(data), False)


def split_batches(
    data: BytesLike, *, allow_partial: bool = False, check_crc: bool = False
) -> list[tuple[BatchHeader, memoryview]]:
    """Eagerly cut a records blob into ``(header, raw)`` entries, validating every header.

    With ``allow_partial=False`` (the default, for a produce path) a truncated trailing entry
    raises :class:`ProtocolError`; answer it with ``CORRUPT_MESSAGE``. ``check_crc=True`` also
    verifies each entry's CRC (outer CRC only for compressed legacy wrappers). Nothing is
    decompressed: next, assign offsets with :func:`assign_offsets`.
    """
    batches = list(_walk(_as_view(data), not allow_partial))
    if check_crc:
        for header, raw in batches:
            _require_crc(header, raw)
    return batches


def verify_crc(header: BatchHeader, raw: BytesLike) -> bool:
    """True if the CRC stored in ``header`` matches ``raw`` (one entry from iter_batches).

    v2 batches use CRC32C over attributes..end; legacy messages zlib CRC32 over magic..end.
    """
    view = raw if type(raw) is memoryview and raw.format == "B" else _as_view(raw)
    if header.magic >= 2:
        actual: int = _crc32c(view[_V2_ATTR_POS:])
    else:
        actual = zlib.crc32(view[_MAGIC_POS:])
    return actual == header.crc


def _require_crc(header: BatchHeader, raw: memoryview) -> None:
    if header.magic >= 2:
        actual: int = _crc32c(raw[_V2_ATTR_POS:])
    else:
        actual = zlib.crc32(raw[_MAGIC_POS:])
    if actual != header.crc:
        kind = "record batch" if header.magic >= 2 else "message"
        raise ProtocolError(
            f"CRC mismatch in {kind} at offset {header.base_offset} (magic {header.magic}): "
            f"stored 0x{header.crc:08x}, computed 0x{actual:08x}"
        )


# =========================================================================== decoding


def _v2_section(header: BatchHeader, raw: memoryview, max_output_size: int) -> bytes:
    """The records section of a v2 batch, decompressed (at most ``max_output_size``)."""
    payload = raw[V2_HEADER_SIZE:]
    codec = header.attributes & _CODEC_MASK
    if not codec:
        return bytes(payload)
    try:
        return decompress(codec, payload, max_output_size=max_output_size)
    except UnsupportedCodecError:
        raise
    except ProtocolError as exc:
        raise ProtocolError(f"record batch at offset {header.base_offset}: {exc}") from None


def _decode_v2_records(
    header: BatchHeader, raw: memoryview, max_output_size: int = DEFAULT_MAX_OUTPUT_SIZE
) -> list[Record]:
    count = header.records_count
    if count == 0 and len(raw) == V2_HEADER_SIZE:
        return []
    buf = _v2_section(header, raw, max_output_size)
    n = len(buf)
    base_offset = header.base_offset
    base_ts = header.base_timestamp
    append_ts = header.max_timestamp if header.attributes & _TIMESTAMP_TYPE_BIT else None
    records: list[Record] = []
    read_varint = _read_varint
    pos = 0
    index = 0
    try:
        for index in range(count):  # noqa: B007 -- index is reported in errors
            length, pos = read_varint(buf, pos)
            end = pos + length
            if length < 0 or end > n:
                raise ProtocolError(f"record length {length} overruns the records section")
            pos += 1  # record attributes: unused
            ts_delta, pos = _read_varlong(buf, pos)
            offset_delta, pos = read_varint(buf, pos)
            key_len, pos = read_varint(buf, pos)
            key: bytes | None = None
            if key_len >= 0:
                if pos + key_len > end:
                    raise ProtocolError(f"key length {key_len} overruns the record")
                key = buf[pos : pos + key_len]
                pos += key_len
            elif key_len != -1:
                raise ProtocolError(f"invalid key length {key_len}")
            value_len, pos = read_varint(buf, pos)
            value: bytes | None = None
            if value_len >= 0:
                if pos + value_len > end:
                    raise ProtocolError(f"value length {value_len} overruns the record")
                value = buf[pos : pos + value_len]
                pos += value_len
            elif value_len != -1:
                raise ProtocolError(f"invalid value length {value_len}")
            header_count, pos = read_varint(buf, pos)
            headers: Headers = ()
            if header_count:
                if header_count < 0:
                    raise ProtocolError(f"invalid header count {header_count}")
                items: list[tuple[str, bytes | None]] = []
                for _ in range(header_count):
                    if pos >= end:
                        raise ProtocolError(f"header count {header_count} overruns the record")
                    hkey_len, pos = read_varint(buf, pos)
                    if hkey_len < 0 or pos + hkey_len > end:
                        raise ProtocolError(f"invalid header key length {hkey_len}")
                    hkey = buf[pos : pos + hkey_len].decode("utf-8")
                    pos += hkey_len
                    hvalue_len, pos = read_varint(buf, pos)
                    hvalue: bytes | None = None
                    if hvalue_len >= 0:
                        if pos + hvalue_len > end:
                            raise ProtocolError(f"header value length {hvalue_len} overruns")
                        hvalue = buf[pos : pos + hvalue_len]
                        pos += hvalue_len
                    elif hvalue_len != -1:
                        raise ProtocolError(f"invalid header value length {hvalue_len}")
                    items.append((hkey, hvalue))
                headers = tuple(items)
            if pos != end:
                raise ProtocolError(
                    f"record length {length} does not match its fields ({pos - end + length} bytes)"
                )
            records.append(
                Record(
                    base_offset + offset_delta,
                    base_ts + ts_delta if append_ts is None else append_ts,
                    key,
                    value,
                    headers,
                )
            )
    except IndexError:
        raise ProtocolError(
            f"record batch at offset {base_offset}: record {index} is truncated "
            f"(records count {count})"
        ) from None
    except UnicodeDecodeError:
        raise ProtocolError(
            f"record batch at offset {base_offset}: record {index} has a header key that is "
            "not UTF-8"
        ) from None
    except ProtocolError as exc:
        raise ProtocolError(
            f"record batch at offset {base_offset}, record {index}: {exc}"
        ) from None
    if pos != n:
        raise ProtocolError(
            f"record batch at offset {base_offset}: {n - pos} bytes left after the "
            f"{count} records it declares"
        )
    return records


def _check_v2_section(buf: bytes, count: int, base_offset: int) -> None:
    """Check a v2 records section as :func:`_decode_v2_records` reads it -- every length,
    varint, header key, and offset deltas counting 0, 1, 2, ... -- without building a
    single object (the produce path validates every batch; this is its hot path).

    Records of one producer batch mostly share one shape (same lengths, headers, varint
    widths); after checking one record field by field, :func:`_uniform_run` checks the
    records that follow it with a handful of strided byte comparisons (C loops), and the
    per-record loop (:func:`_check_records`) takes over where the shape changes."""
    n = len(buf)
    pos = 0
    i = 0
    cap = _RUN_START
    backoff = _RUN_BACKOFF
    while i < count:
        if count - i < _RUN_MIN:
            pos = _check_records(buf, pos, i, count, count, base_offset)
            i = count
            break
        start = pos
        pos = _check_records(buf, pos, i, i + 1, count, base_offset)  # the run's first, checked
        i += 1
        size = pos - start
        run, window = _uniform_run(buf, start, size, i, count, cap)
        pos += run * size
        i += run
        if window and run == window:
            cap = min(cap * 2, _RUN_MAX)
            backoff = _RUN_BACKOFF
        else:  # the shape changed (or does not suit a run): go record by record for a while
            cap = _RUN_START
            stop = min(count, i + backoff)
            pos = _check_records(buf, pos, i, stop, count, base_offset)
            i = stop
            if run < _RUN_MIN:  # records of many shapes: try runs more and more rarely
                backoff = min(backoff * 2, _RUN_MAX)
    if pos != n:
        raise ProtocolError(
            f"record batch at offset {base_offset}: {n - pos} bytes left after the "
            f"{count} records it declares"
        )


#: Fewer records than this left: check them one by one.
_RUN_MIN: Final = 8
#: Records checked one by one after a run ends on a record of another shape (doubled
#: while runs stay short, so a batch of records of many shapes costs about the plain loop).
_RUN_BACKOFF: Final = 8
#: Window of the first strided comparison, doubled while runs fill it (so a batch whose
#: records all differ costs little more than the plain loop).
_RUN_START: Final = 64
_RUN_MAX: Final = 1 << 16
#: Bytes of a record whose values must repeat (lengths, header keys) beyond which the
#: strided comparison is not worth it.
_RUN_MAX_FIXED: Final = 48
# Zigzag varint bytes of offset deltas 0..8191: one byte below 64, two bytes below 8192.
_DELTA_1: Final = bytes(2 * i for i in range(64))
_DELTA_2_LOW: Final = bytes(((2 * i) & 0x7F) | 0x80 for i in range(8192))
_DELTA_2_HIGH: Final = bytes((2 * i) >> 7 for i in range(8192))
# bytes.translate tables: a continuation byte (>= 0x80) becomes 1, any other byte 0.
_CONTINUES: Final = bytes(int(b >= 0x80) for b in range(256))


def _varint_width(buf: bytes, pos: int) -> int:
    """Bytes of the varint at ``pos`` (of a record already checked)."""
    w = 1
    while buf[pos + w - 1] >= 0x80:
        w += 1
    return w


def _uniform_run(
    buf: bytes, start: int, size: int, i: int, count: int, cap: int
) -> tuple[int, int]:
    """How many of the records ``i``, ``i + 1``, ... (at ``start + size``, ...) are shaped
    exactly as the checked record at ``start`` (``size`` bytes, index ``i - 1``), each
    with offset delta equal to its index -- so the field-by-field check would accept them.
    Returns (records verified, records looked at).

    "Shaped exactly" means: the same bytes wherever the record-by-record check reads a
    length, a count or a header key; a timestamp delta varint of the same width (any
    value: it cannot overflow at 9 bytes or fewer); the canonical offset delta of each
    index, of the same width. Keys, values and header values are payload, never read."""
    # The layout of the template record: (relative position, byte) that must repeat, and
    # where the timestamp and offset deltas are.
    p = start
    fixed: list[int] = []
    w = _varint_width(buf, p)
    fixed.extend(range(w))  # record length
    p += w + 1  # attributes: not read
    ts_at = p - start
    ts_width = _varint_width(buf, p)
    if ts_width > 9:
        return 0, 0
    p += ts_width
    delta_at = p - start
    delta_width = _varint_width(buf, p)
    first = i - 1
    if delta_width == 1 and first < 64:
        seg_end = 64
    elif delta_width == 2 and 64 <= first < 8192:
        seg_end = 8192
    else:
        return 0, 0
    p += delta_width
    for _ in range(2):  # key, value: the length repeats, the bytes are payload
        w = _varint_width(buf, p)
        fixed.extend(range(p - start, p - start + w))
        length, p = _read_varint(buf, p)
        p += max(length, 0)
    w = _varint_width(buf, p)
    fixed.extend(range(p - start, p - start + w))
    headers, p = _read_varint(buf, p)
    for _ in range(headers):
        length, q = _read_varint(buf, p)
        fixed.extend(range(p - start, q + length - start))  # header key length and key
        p = q + length
        w = _varint_width(buf, p)
        fixed.extend(range(p - start, p - start + w))
        length, p = _read_varint(buf, p)
        p += max(length, 0)
    if len(fixed) > _RUN_MAX_FIXED:
        return 0, 0
    base = start + size
    window = min(cap, count - i, seg_end - i, (len(buf) - base) // size)
    if window <= 0:
        return 0, 0
    end = base + window * size
    run = window
    for r in fixed:
        b = buf[start + r]
        column = buf[base + r : end : size]
        if column.count(b) != window:
            run = min(run, window - len(column.lstrip(bytes((b,)))))
    for k in range(ts_width):
        flags = buf[base + ts_at + k : end : size].translate(_CONTINUES)
        bad = flags.find(0 if k < ts_width - 1 else 1)
        if bad >= 0:
            run = min(run, bad)
    if delta_width == 1:
        expected = [_DELTA_1[i : i + window]]
    else:
        expected = [_DELTA_2_LOW[i : i + window], _DELTA_2_HIGH[i : i + window]]
    for k, want in enumerate(expected):
        column = buf[base + delta_at + k : end : size]
        if column != want:
            run = min(run, next(j for j in range(window) if column[j] != want[j]))
    return run, window


def _check_records(
    buf: bytes, pos: int, first: int, stop: int, count: int, base_offset: int
) -> int:
    """Check records ``first`` .. ``stop - 1`` (of ``count``) one by one, from ``pos``;
    returns the position after them. Raises ProtocolError naming the record."""
    n = len(buf)
    slow = _read_varint_slow
    i = first
    try:
        for i in range(first, stop):
            b = buf[pos]
            if b < 0x80:
                length, pos = (b >> 1) ^ -(b & 1), pos + 1
            elif buf[pos + 1] < 0x80:
                v = (b & 0x7F) | (buf[pos + 1] << 7)
                length, pos = (v >> 1) ^ -(v & 1), pos + 2
            else:
                length, pos = slow(buf, pos, 5, 32)
            end = pos + length
            if length < 6 or end > n:
                raise ProtocolError(f"record length {length} overruns the records section")
            pos += 1  # attributes
            b = buf[pos]
            if b < 0x80:
                pos += 1
            elif buf[pos + 1] < 0x80:
                pos += 2
            else:
                pos = slow(buf, pos, 10, 64)[1]
            b = buf[pos]
            if b < 0x80:
                delta, pos = (b >> 1) ^ -(b & 1), pos + 1
            else:
                delta, pos = slow(buf, pos, 5, 32)
            if delta != i:
                raise ProtocolError(f"offset delta {delta} where {i} was expected")
            for _ in range(2):  # key, value
                b = buf[pos]
                if b < 0x80:
                    size, pos = (b >> 1) ^ -(b & 1), pos + 1
                elif buf[pos + 1] < 0x80:
                    v = (b & 0x7F) | (buf[pos + 1] << 7)
                    size, pos = (v >> 1) ^ -(v & 1), pos + 2
                else:
                    size, pos = slow(buf, pos, 5, 32)
                if size >= 0:
                    pos += size
                elif size != -1:
                    raise ProtocolError(f"invalid key or value length {size}")
            b = buf[pos]
            if b < 0x80:
                headers, pos = (b >> 1) ^ -(b & 1), pos + 1
            else:
                headers, pos = slow(buf, pos, 5, 32)
            if headers:
                if headers < 0 or headers > end - pos:
                    raise ProtocolError(f"invalid header count {headers}")
                for _ in range(headers):
                    size, pos = _read_varint(buf, pos)
                    if size < 0 or pos + size > end:
                        raise ProtocolError(f"invalid header key length {size}")
                    buf[pos : pos + size].decode("utf-8")
                    pos += size
                    size, pos = _read_varint(buf, pos)
                    if size >= 0:
                        pos += size
                    elif size != -1:
                        raise ProtocolError(f"invalid header value length {size}")
            if pos != end:
                raise ProtocolError(f"record length {length} does not match its fields")
    except IndexError:
        raise ProtocolError(
            f"record batch at offset {base_offset}: record {i} is truncated (records count {count})"
        ) from None
    except UnicodeDecodeError:
        raise ProtocolError(
            f"record batch at offset {base_offset}: record {i} has a header key that is not UTF-8"
        ) from None
    except ProtocolError as exc:
        raise ProtocolError(f"record batch at offset {base_offset}, record {i}: {exc}") from None
    return pos


def check_batch(raw: BytesLike, *, max_output_size: int = DEFAULT_MAX_OUTPUT_SIZE) -> BatchHeader:
    """Validate one entry (as yielded by :func:`iter_batches`) as deeply as
    :func:`decode_batch` does, without decoding records: decompresses (up to
    ``max_output_size``), and for v2 checks every record's fields and that offset deltas
    count 0, 1, 2, ...; CRCs are not checked here (see :func:`verify_crc`). Raises
    :class:`ProtocolError`; returns the header."""
    batches = split_batches(raw)
    if len(batches) != 1:
        raise ProtocolError(f"expected exactly one batch, found {len(batches)}")
    header, view = batches[0]
    check_entry(header, view, max_output_size=max_output_size)
    return header


def check_entry(
    header: BatchHeader,
    raw: memoryview,
    *,
    max_output_size: int = DEFAULT_MAX_OUTPUT_SIZE,
    section: bytes | None = None,
) -> None:
    """:func:`check_batch` of an entry :func:`split_batches` returned (not split again).

    ``section``: the v2 batch's records section already decompressed from ``raw`` (the
    produce path inflates a compressed batch once to size it, then validates that copy);
    one longer than ``max_output_size`` is inflated again, to fail as it would have."""
    if header.magic < 2:
        _decode(header, raw, False, max_output_size)
        return
    if section is None or len(section) > max_output_size:
        section = _v2_section(header, raw, max_output_size)
    _check_v2_section(section, header.records_count, header.base_offset)


# One legacy message parsed from a buffer: offset, magic, attributes, timestamp, crc,
# position of the key length field, end position.
_LegacyMessage = tuple[int, int, int, int, int, int, int]


def _parse_legacy(buf: BytesLike, pos: int, n: int) -> _LegacyMessage:
    """Parse the legacy message header at ``pos`` (strict: truncation is an error)."""
    if n - pos < LOG_OVERHEAD:
        raise ProtocolError(f"truncated message at byte {pos}")
    offset, size = _PREFIX.unpack_from(buf, pos)
    end = pos + LOG_OVERHEAD + size
    if size < _MIN_V0_SIZE or end > n:
        raise ProtocolError(f"message at offset {offset} has invalid size {size}")
    magic = buf[pos + _MAGIC_POS]
    if magic == 0:
        _, _, crc, _, attrs = _LEGACY_V0.unpack_from(buf, pos)
        return offset, 0, attrs, NO_TIMESTAMP, crc, pos + _LEGACY_V0.size, end
    if magic == 1 and size >= _MIN_V1_SIZE:
        _, _, crc, _, attrs, timestamp = _LEGACY_V1.unpack_from(buf, pos)
        return offset, 1, attrs, timestamp, crc, pos + _LEGACY_V1.size, end
    raise ProtocolError(f"message at offset {offset} has invalid magic {magic} / size {size}")


def _legacy_key_value(buf: BytesLike, pos: int, end: int) -> tuple[bytes | None, bytes | None]:
    (key_len,) = _INT32.unpack_from(buf, pos)
    pos += 4
    key: bytes | None = None
    if key_len >= 0:
        if pos + key_len + 4 > end:
            raise ProtocolError(f"key length {key_len} overruns the message")
        key = bytes(buf[pos : pos + key_len])
        pos += key_len
    elif key_len != -1:
        raise ProtocolError(f"invalid key length {key_len}")
    (value_len,) = _INT32.unpack_from(buf, pos)
    pos += 4
    value: bytes | None = None
    if value_len >= 0:
        if pos + value_len > end:
            raise ProtocolError(f"value length {value_len} overruns the message")
        value = bytes(buf[pos : pos + value_len])
        pos += value_len
    elif value_len != -1:
        raise ProtocolError(f"invalid value length {value_len}")
    if pos != end:
        raise ProtocolError(f"{end - pos} unexpected bytes after the value")
    return key, value


def _decompress_wrapper(
    header: BatchHeader, raw: memoryview, max_output_size: int = DEFAULT_MAX_OUTPUT_SIZE
) -> tuple[bytes | None, bytes, bytes]:
    """Return (key, compressed value, inner message set) of a compressed legacy wrapper."""
    start = _LEGACY_V0.size if header.magic == 0 else _LEGACY_V1.size
    try:
        key, value = _legacy_key_value(raw, start, len(raw))
    except ProtocolError as exc:
        raise ProtocolError(f"message at offset {header.base_offset}: {exc}") from None
    if value is None:
        raise ProtocolError(f"compressed message at offset {header.base_offset} has a null value")
    try:
        inner = decompress(
            header.attributes & _CODEC_MASK,
            value,
            magic=header.magic,
            max_output_size=max_output_size,
        )
    except UnsupportedCodecError:
        raise
    except ProtocolError as exc:
        raise ProtocolError(f"compressed message at offset {header.base_offset}: {exc}") from None
    return key, value, inner


def _scan_inner(header: BatchHeader, inner: bytes, check_crc: bool) -> list[_LegacyMessage]:
    """Parse every message of a decompressed inner set (strictly; no nesting allowed)."""
    messages: list[_LegacyMessage] = []
    pos = 0
    n = len(inner)
    try:
        while pos < n:
            msg = _parse_legacy(inner, pos, n)
            if msg[2] & _CODEC_MASK:
                raise ProtocolError(f"inner message at offset {msg[0]} is itself compressed")
            if check_crc and zlib.crc32(memoryview(inner)[pos + _MAGIC_POS : msg[6]]) != msg[4]:
                raise ProtocolError(f"CRC mismatch in inner message at offset {msg[0]}")
            messages.append((msg[0], msg[1], msg[2], msg[3], msg[4], pos, msg[6]))
            pos = msg[6]
    except ProtocolError as exc:
        raise ProtocolError(f"compressed message at offset {header.base_offset}: {exc}") from None
    if not messages:
        raise ProtocolError(
            f"compressed message at offset {header.base_offset} holds no inner messages"
        )
    return messages


def _decode_legacy_records(
    header: BatchHeader,
    raw: memoryview,
    check_crc: bool,
    max_output_size: int = DEFAULT_MAX_OUTPUT_SIZE,
) -> list[Record]:
    body_start = _LEGACY_V0.size if header.magic == 0 else _LEGACY_V1.size
    if not header.attributes & _CODEC_MASK:
        try:
            key, value = _legacy_key_value(raw, body_start, len(raw))
        except ProtocolError as exc:
            raise ProtocolError(f"message at offset {header.base_offset}: {exc}") from None
        return [Record(header.base_offset, header.base_timestamp, key, value)]
    _, _, inner = _decompress_wrapper(header, raw, max_output_size)
    messages = _scan_inner(header, inner, check_crc)
    wrapper_offset = header.base_offset
    # v1 wrappers hold relative inner offsets; the wrapper carries the last absolute one.
    shift = wrapper_offset - messages[-1][0] if header.magic >= 1 else 0
    append_ts = header.base_timestamp if header.timestamp_type else None
    records = []
    for offset, magic, _, timestamp, _, pos, end in messages:
        key_pos = pos + (_LEGACY_V0.size if magic == 0 else _LEGACY_V1.size)
        try:
            key, value = _legacy_key_value(inner, key_pos, end)
        except ProtocolError as exc:
            raise ProtocolError(
                f"compressed message at offset {wrapper_offset}, inner offset {offset}: {exc}"
            ) from None
        if append_ts is not None:
            timestamp = append_ts
        records.append(Record(offset + shift, timestamp, key, value))
    return records


def _decode(
    header: BatchHeader,
    raw: memoryview,
    check_crc: bool,
    max_output_size: int = DEFAULT_MAX_OUTPUT_SIZE,
) -> list[Record]:
    if check_crc:
        _require_crc(header, raw)
    if header.magic >= 2:
        return _decode_v2_records(header, raw, max_output_size)
    return _decode_legacy_records(header, raw, check_crc, max_output_size)


def decode_batch(
    raw: BytesLike, *, check_crc: bool = True, max_output_size: int = DEFAULT_MAX_OUTPUT_SIZE
) -> tuple[BatchHeader, list[Record]]:
    """Fully decode one entry (a v2 batch or legacy message, as yielded by iter_batches).

    Decompresses, checks CRCs (unless ``check_crc=False``), every length and the records
    count, and returns the header and the records -- control records included, see
    :func:`decode_control_record`. Raises :class:`ProtocolError` if anything is wrong, which
    makes this the deep validation for a produce path too. A compressed payload that would
    decompress to more than ``max_output_size`` bytes is a ProtocolError (a bomb).
    """
    batches = split_batches(raw)
    if len(batches) != 1:
        raise ProtocolError(f"expected exactly one batch, found {len(batches)}")
    header, view = batches[0]
    return header, _decode(header, view, check_crc, max_output_size)


def decode_records(
    data: BytesLike,
    *,
    include_control: bool = False,
    check_crc: bool = True,
    allow_partial: bool = True,
) -> list[Record]:
    """Decode every record of a records blob, any mix of magics and codecs, in order.

    Control batches (transaction markers) are skipped unless ``include_control=True``. A
    truncated trailing entry is ignored (as in a Fetch response) unless
    ``allow_partial=False``. Aborted transactional records are *not* filtered: that needs the
    Fetch response's aborted-transactions list.
    """
    records: list[Record] = []
    for header, raw in _walk(_as_view(data), not allow_partial):
        if header.is_control and not include_control:
            if check_crc:
                _require_crc(header, raw)
            continue
        records.extend(_decode(header, raw, check_crc))
    return records


# =========================================================================== control records


def decode_control_record(record: Record) -> ControlRecord:
    """Parse a record from a control batch into its type and coordinator epoch.

    Raises :class:`ProtocolError` if the key (int16 version, int16 type) or, for
    ABORT/COMMIT markers, the value (int16 version, int32 coordinator epoch) is malformed.
    """
    key = record.key
    if key is None or len(key) < _CONTROL_KEY.size:
        raise ProtocolError(f"control record at offset {record.offset} has a malformed key")
    version, kind = _CONTROL_KEY.unpack_from(key)
    if version < 0:
        raise ProtocolError(f"control record at offset {record.offset} has version {version}")
    epoch = -1
    if kind in (ControlType.ABORT, ControlType.COMMIT):
        value = record.value
        if value is None or len(value) < _CONTROL_VALUE.size:
            raise ProtocolError(
                f"transaction marker at offset {record.offset} has a malformed value"
            )
        value_version, epoch = _CONTROL_VALUE.unpack_from(value)
        if value_version < 0:
            raise ProtocolError(
                f"transaction marker at offset {record.offset} has value version {value_version}"
            )
        kind = ControlType(kind)
    return ControlRecord(kind, version, epoch)


def encode_control_batch(
    kind: Literal["commit", "abort"] | ControlType,
    *,
    producer_id: int,
    producer_epoch: int,
    coordinator_epoch: int,
    timestamp: int,
    base_offset: int = 0,
    partition_leader_epoch: int = -1,
) -> bytes:
    """Write a transaction marker: a transactional control batch holding one control record.

    Append it to the partition log when a transaction ends (WriteTxnMarkers / EndTxn); it
    takes one offset. Consumers see it only as a gap (``read_committed`` uses it to drop the
    aborted records).
    """
    if isinstance(kind, str):
        if kind not in ("commit", "abort"):
            raise ValueError(f"kind must be 'commit' or 'abort', not {kind!r}")
        kind = ControlType.COMMIT if kind == "commit" else ControlType.ABORT
    key = _CONTROL_KEY.pack(0, kind)
    value = _CONTROL_VALUE.pack(0, coordinator_epoch)
    return encode_batch(
        [Record(base_offset, timestamp, key, value)],
        base_offset=base_offset,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        is_transactional=True,
        is_control=True,
        partition_leader_epoch=partition_leader_epoch,
        base_timestamp=timestamp,
    )


# =========================================================================== encoding

# One normalized record: absolute offset, timestamp, key, value, headers.
_Entry = tuple[int, int, bytes | None, bytes | None, Headers]


def _as_bytes(value: Any, what: str) -> bytes | None:
    if value is None or type(value) is bytes:
        return value
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    raise TypeError(f"record {what} must be bytes or None, not {type(value).__name__}")


def _as_headers(headers: Any) -> Headers:
    if not headers:
        return ()
    out = []
    for item in headers:
        hkey, hvalue = item
        if not isinstance(hkey, str):
            raise TypeError(f"header keys must be str, not {type(hkey).__name__}")
        out.append((hkey, _as_bytes(hvalue, "header value")))
    return tuple(out)


def _normalize(
    records: Iterable[RecordLike], base_offset: int | None, base_timestamp: int | None
) -> tuple[int, list[_Entry]]:
    entries: list[_Entry] = []
    now: int | None = None
    previous: int | None = None
    for item in records:
        if isinstance(item, Record):
            offset: int | None = item.offset
            timestamp: int | None = item.timestamp
            key, value = _as_bytes(item.key, "key"), _as_bytes(item.value, "value")
            headers = _as_headers(item.headers)
        elif isinstance(item, tuple) and 2 <= len(item) <= 4:
            offset = None
            key, value = _as_bytes(item[0], "key"), _as_bytes(item[1], "value")
            headers = _as_headers(item[2]) if len(item) > 2 else ()
            timestamp = item[3] if len(item) > 3 else None
        else:
            raise TypeError(
                "records must be Record or (key, value[, headers[, timestamp]]) tuples, "
                f"not {item!r}"
            )
        if base_offset is None:
            base_offset = 0 if offset is None else offset
        if offset is None:
            offset = base_offset if previous is None else previous + 1
        elif offset < base_offset or (previous is not None and offset <= previous):
            raise ValueError(
                f"record offset {offset} must be >= base_offset {base_offset} and above the "
                f"previous record's {previous} (Record offsets are absolute)"
            )
        if timestamp is None:
            if base_timestamp is None:
                if now is None:
                    now = int(time.time() * 1000)
                timestamp = now
            else:
                timestamp = base_timestamp
        elif not isinstance(timestamp, int):
            raise TypeError(f"timestamp must be int, not {type(timestamp).__name__}")
        entries.append((offset, timestamp, key, value, headers))
        previous = offset
    return (0 if base_offset is None else base_offset), entries


def _encode_v2(
    entries: list[_Entry],
    *,
    base_offset: int,
    codec: CompressionType,
    attributes: int,
    partition_leader_epoch: int,
    producer_id: int,
    producer_epoch: int,
    base_sequence: int,
    base_timestamp: int | None,
    xerial: bool,
) -> bytes:
    if base_timestamp is None:
        base_timestamp = entries[0][1] if entries else NO_TIMESTAMP
    max_timestamp = max((e[1] for e in entries), default=base_timestamp)
    varint = _varint
    body = bytearray()
    for offset, timestamp, key, value, headers in entries:
        rec = bytearray(b"\x00")  # record attributes
        rec += varint(timestamp - base_timestamp, bits=64)
        rec += varint(offset - base_offset)
        if key is None:
            rec += b"\x01"
        else:
            rec += varint(len(key))
            rec += key
        if value is None:
            rec += b"\x01"
        else:
            rec += varint(len(value))
            rec += value
        rec += varint(len(headers))
        for hkey, hvalue in headers:
            hkey_bytes = hkey.encode("utf-8")
            rec += varint(len(hkey_bytes))
            rec += hkey_bytes
            if hvalue is None:
                rec += b"\x01"
            else:
                rec += varint(len(hvalue))
                rec += hvalue
        body += varint(len(rec))
        body += rec
    last_offset_delta = entries[-1][0] - base_offset if entries else 0
    if last_offset_delta > _INT32_MAX:
        raise ValueError(f"offset delta {last_offset_delta} does not fit a batch")
    payload = compress(codec, body, xerial=xerial) if codec else body
    buf = bytearray(V2_HEADER_SIZE)
    buf += payload
    _V2_HEADER.pack_into(
        buf, 0,
        base_offset, len(buf) - LOG_OVERHEAD, partition_leader_epoch, 2, 0,
        attributes | codec, last_offset_delta, base_timestamp, max_timestamp,
        producer_id, producer_epoch, base_sequence, len(entries),
    )  # fmt: skip
    _UINT32.pack_into(buf, _V2_CRC_POS, _crc32c(memoryview(buf)[_V2_ATTR_POS:]))
    return bytes(buf)


def _legacy_message(
    offset: int, magic: int, attributes: int, timestamp: int, key: bytes | None, value: bytes | None
) -> bytes:
    parts = [
        _LEGACY_V0_BODY.pack(0, attributes)
        if magic == 0
        else _LEGACY_V1_BODY.pack(1, attributes, timestamp)
    ]
    for field in (key, value):
        if field is None:
            parts.append(_INT32.pack(-1))
        else:
            parts.append(_INT32.pack(len(field)))
            parts.append(field)
    body = b"".join(parts)
    return _PREFIX.pack(offset, len(body) + 4) + _UINT32.pack(zlib.crc32(body)) + body


def _encode_legacy(
    entries: Sequence[_Entry],
    *,
    magic: int,
    base_offset: int,
    codec: CompressionType,
    timestamp_type: int,
    xerial: bool,
) -> bytes:
    ts_attr = _TIMESTAMP_TYPE_BIT if magic == 1 and timestamp_type else 0
    if not entries:
        return b""
    if codec is CompressionType.NONE:
        return b"".join(
            _legacy_message(offset, magic, ts_attr, ts, key, value)
            for offset, ts, key, value, _ in entries
        )
    inner = b"".join(
        _legacy_message(offset - base_offset if magic else offset, magic, ts_attr, ts, key, value)
        for offset, ts, key, value, _ in entries
    )
    wrapper_ts = max(e[1] for e in entries) if magic else NO_TIMESTAMP
    compressed = compress(codec, inner, magic=magic, xerial=xerial)
    return _legacy_message(entries[-1][0], magic, codec | ts_attr, wrapper_ts, None, compressed)


def encode_batch(
    records: Iterable[RecordLike],
    *,
    base_offset: int | None = None,
    compression: int = CompressionType.NONE,
    magic: int = 2,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    is_transactional: bool = False,
    is_control: bool = False,
    partition_leader_epoch: int = -1,
    timestamp_type: int = TimestampType.CREATE_TIME,
    base_timestamp: int | None = None,
    snappy_xerial: bool = False,
) -> bytes:
    """Encode records as one v2 batch (``magic=2``) or a legacy message set (``magic`` 0/1).

    Each item of ``records`` is either

    * a :class:`Record` -- its ``offset`` is *absolute* and kept (so gaps survive, as in a
      compacted log); its ``timestamp`` is used as is; or
    * a tuple ``(key, value)``, ``(key, value, headers)`` or ``(key, value, headers,
      timestamp)`` -- it takes the offset after the previous record's; ``headers`` is a
      sequence of ``(str, bytes | None)`` or ``None``; a missing timestamp becomes
      ``base_timestamp`` or, if that is ``None`` too, the current time.

    ``base_offset=None`` means the first record's offset (a Record's, else 0). Offsets must be
    strictly increasing and not below ``base_offset``. ``base_timestamp`` is the v2 batch's
    base timestamp (default: the first record's). ``compression`` is a
    :class:`CompressionType`: for v2 the records section is compressed; for v0/v1 the set is
    wrapped in one compressed message (inner offsets relative for v1, absolute for v0; lz4
    with magic 0 gets the old broken header checksum). ``snappy_xerial=True`` writes xerial
    snappy framing (as the Java client) instead of raw. Producer fields, transactional and
    control flags exist only in v2; headers are rejected for magic 0/1.

    Returns the bytes, ready for a Produce or Fetch ``records`` field; several results may be
    concatenated. Raises ``ValueError``/``TypeError`` for bad arguments and
    :class:`UnsupportedCodecError` for zstd with magic 0/1.
    """
    try:
        return _encode_batch(
            records,
            base_offset=base_offset,
            codec=CompressionType(compression),
            magic=magic,
            producer_id=producer_id,
            producer_epoch=producer_epoch,
            base_sequence=base_sequence,
            is_transactional=is_transactional,
            is_control=is_control,
            partition_leader_epoch=partition_leader_epoch,
            timestamp_type=timestamp_type,
            base_timestamp=base_timestamp,
            snappy_xerial=snappy_xerial,
        )
    except struct.error as exc:
        raise ValueError(f"a batch field is out of range: {exc}") from exc


def _encode_batch(
    records: Iterable[RecordLike],
    *,
    base_offset: int | None,
    codec: CompressionType,
    magic: int,
    producer_id: int,
    producer_epoch: int,
    base_sequence: int,
    is_transactional: bool,
    is_control: bool,
    partition_leader_epoch: int,
    timestamp_type: int,
    base_timestamp: int | None,
    snappy_xerial: bool,
) -> bytes:
    base, entries = _normalize(records, base_offset, base_timestamp)
    if magic == 2:
        attributes = (
            (_TIMESTAMP_TYPE_BIT if timestamp_type else 0)
            | (_TRANSACTIONAL_BIT if is_transactional else 0)
            | (_CONTROL_BIT if is_control else 0)
        )
        return _encode_v2(
            entries,
            base_offset=base,
            codec=codec,
            attributes=attributes,
            partition_leader_epoch=partition_leader_epoch,
            producer_id=producer_id,
            producer_epoch=producer_epoch,
            base_sequence=base_sequence,
            base_timestamp=base_timestamp,
            xerial=snappy_xerial,
        )
    if magic not in (0, 1):
        raise ValueError(f"magic must be 0, 1 or 2, not {magic}")
    if is_transactional or is_control or producer_id != -1 or base_sequence != -1:
        raise ValueError("producer ids, transactions and control batches need magic 2")
    if any(e[4] for e in entries):
        raise ValueError("record headers need magic 2")
    return _encode_legacy(
        entries,
        magic=magic,
        base_offset=base,
        codec=codec,
        timestamp_type=timestamp_type,
        xerial=snappy_xerial,
    )


# =========================================================================== rewriting


def _v2_copy(raw: BytesLike, what: str) -> bytearray:
    buf = bytearray(raw)
    if len(buf) < V2_HEADER_SIZE or buf[_MAGIC_POS] != 2:
        raise ValueError(f"{what} needs one v2 record batch (use assign_offsets for legacy)")
    return buf


def set_base_offset(raw: BytesLike, base_offset: int) -> bytes:
    """Return a copy of the v2 batch ``raw`` with its base offset replaced.

    The CRC does not cover the base offset, so nothing else changes. Only the first batch in
    ``raw`` is touched; for a whole produce payload, or legacy messages, use
    :func:`assign_offsets`.
    """
    buf = _v2_copy(raw, "set_base_offset")
    _INT64.pack_into(buf, 0, base_offset)
    return bytes(buf)


def stamp_batch(raw: BytesLike, base_offset: int, leader_epoch: int) -> bytes:
    """A copy of the v2 batch ``raw`` with its base offset and partition leader epoch set:
    what a leader writes to its log (neither field is under the CRC). One copy of the batch,
    where :func:`set_base_offset` then :func:`set_partition_leader_epoch` make two each.
    """
    if len(raw) < V2_HEADER_SIZE or raw[_MAGIC_POS] != 2:
        raise ValueError("stamp_batch needs one v2 record batch (use assign_offsets for legacy)")
    view = _as_view(raw)
    return b"".join(
        (
            _INT64.pack(base_offset),
            view[8:_V2_EPOCH_POS],
            _INT32.pack(leader_epoch),
            view[_V2_EPOCH_POS + 4 :],
        )
    )


def set_partition_leader_epoch(raw: BytesLike, epoch: int) -> bytes:
    """Return a copy of the v2 batch ``raw`` stamped with the leader epoch that appended it.

    The CRC does not cover this field either. Fetch v9+ clients compare it with the epochs
    from OffsetForLeaderEpoch to detect log truncation.
    """
    buf = _v2_copy(raw, "set_partition_leader_epoch")
    _INT32.pack_into(buf, _V2_EPOCH_POS, epoch)
    return bytes(buf)


def assign_offsets(
    raw: BytesLike, base_offset: int, *, partition_leader_epoch: int | None = None
) -> tuple[bytes, int]:
    """Give the records of a produce payload their log offsets, starting at ``base_offset``.

    Returns ``(new_bytes, count)`` where ``count`` is the number of offsets consumed, so the
    partition's next offset is ``base_offset + count``. v2 batches get their base offset (and
    ``partition_leader_epoch``, if given) rewritten in place -- no CRC change, no per-record
    work. Legacy uncompressed messages get their offset rewritten. Compressed legacy wrappers
    are decompressed to count their messages: a v1 wrapper with inner offsets ``0..n-1`` only
    gets its offset set to ``base + n - 1``; other wrappers (all v0 ones, whose inner offsets
    are absolute) are recompressed with new inner offsets and a new CRC.

    The payload is validated strictly (truncation -> :class:`ProtocolError`), but record
    contents and CRCs are not: call :func:`split_batches` with ``check_crc=True`` or
    :func:`decode_batch` first for that.
    """
    if not 0 <= base_offset <= _INT64_MAX:
        raise ValueError(f"base_offset {base_offset} is not a valid offset")
    try:
        return _assign_offsets(_as_view(raw), base_offset, partition_leader_epoch)
    except struct.error as exc:
        raise ValueError(f"offsets from {base_offset} overflow int64: {exc}") from exc


def _assign_offsets(
    data: memoryview, base_offset: int, partition_leader_epoch: int | None
) -> tuple[bytes, int]:
    out = bytearray()
    next_offset = base_offset
    for header, view in _walk(data, True):
        start = len(out)
        if header.magic == 2:
            out += view
            _INT64.pack_into(out, start, next_offset)
            if partition_leader_epoch is not None:
                _INT32.pack_into(out, start + _V2_EPOCH_POS, partition_leader_epoch)
            next_offset += header.last_offset_delta + 1
        elif header.records_count == 1:
            out += view
            _INT64.pack_into(out, start, next_offset)
            next_offset += 1
        else:
            if header.compression is CompressionType.ZSTD:
                raise UnsupportedCodecError(
                    f"message at offset {header.base_offset}: zstd needs message format v2"
                )
            out += _reoffset_wrapper(header, view, next_offset)
            next_offset = _INT64.unpack_from(out, start)[0] + 1
    return bytes(out), next_offset - base_offset


def _reoffset_wrapper(header: BatchHeader, view: memoryview, base_offset: int) -> bytes:
    key, value, inner = _decompress_wrapper(header, view)
    messages = _scan_inner(header, inner, False)
    count = len(messages)
    last = base_offset + count - 1
    if header.magic == 1 and all(m[0] == i for i, m in enumerate(messages)):
        buf = bytearray(view)
        _INT64.pack_into(buf, 0, last)
        return bytes(buf)
    rebuilt = bytearray(inner)
    for i, message in enumerate(messages):
        _INT64.pack_into(rebuilt, message[5], i if header.magic == 1 else base_offset + i)
    xerial = value.startswith(b"\x82SNAPPY\x00")  # keep the producer's snappy framing
    value = compress(header.attributes & _CODEC_MASK, rebuilt, magic=header.magic, xerial=xerial)
    return _legacy_message(last, header.magic, header.attributes, header.base_timestamp, key, value)


def set_log_append_time(data: BytesLike, timestamp: int) -> bytes:
    """Stamp every batch of ``data`` with LogAppendTime ``timestamp`` (``message.timestamp.type``
    = LogAppendTime on the topic).

    v2 batches get attribute bit 3 set and ``max_timestamp = timestamp`` (records keep their
    deltas; readers report the batch's max timestamp); v1 messages/wrappers get the bit and
    their timestamp replaced; v0 messages have no timestamp and stay as they are. CRCs are
    recomputed. Call it after :func:`assign_offsets` on a produce path.
    """
    out = bytearray()
    for header, view in _walk(_as_view(data), True):
        start = len(out)
        out += view
        if header.magic == 2:
            _INT16.pack_into(out, start + _V2_ATTR_POS, header.attributes | _TIMESTAMP_TYPE_BIT)
            _INT64.pack_into(out, start + _V2_MAX_TS_POS, timestamp)
            crc = _crc32c(memoryview(out)[start + _V2_ATTR_POS :])
            _UINT32.pack_into(out, start + _V2_CRC_POS, crc)
        elif header.magic == 1:
            _INT8.pack_into(out, start + _LEGACY_ATTR_POS, header.attributes | _TIMESTAMP_TYPE_BIT)
            _INT64.pack_into(out, start + _LEGACY_TS_POS, timestamp)
            crc = zlib.crc32(memoryview(out)[start + _MAGIC_POS :])
            _UINT32.pack_into(out, start + _LEGACY_CRC_POS, crc)
    return bytes(out)


def downconvert(data: BytesLike, magic: int, *, check_crc: bool = True) -> bytes:
    """Convert stored records to message format ``magic`` (0 or 1) for Fetch v0-v3 clients.

    Offsets stay absolute; each v2 batch becomes plain messages (uncompressed batches) or one
    wrapper message compressed with the same codec (lz4 with magic 0 in the broken-checksum
    form old clients expect). Headers, producer ids and control batches are dropped;
    timestamps survive only in v1. Legacy entries already at or below ``magic`` are copied
    as they are. A truncated trailing entry is ignored, so convert whole batches and apply
    the fetch size limit afterwards.

    Raises :class:`UnsupportedCodecError` for zstd data (answer ``UNSUPPORTED_COMPRESSION_TYPE``,
    as Kafka does for pre-v10 Fetch on zstd topics) and :class:`ProtocolError` for corrupt
    stored data.
    """
    if magic not in (0, 1):
        raise ValueError(f"can only down-convert to magic 0 or 1, not {magic}")
    out = bytearray()
    for header, raw in _walk(_as_view(data), False):
        if header.magic <= magic:
            if check_crc:
                _require_crc(header, raw)
            out += raw
            continue
        if header.is_control:
            continue
        records = _decode(header, raw, check_crc)
        if not records:
            continue
        codec = header.compression
        if codec is CompressionType.ZSTD:
            raise UnsupportedCodecError(
                f"batch at offset {header.base_offset} is zstd-compressed, which message "
                f"format v{magic} cannot carry"
            )
        entries: list[_Entry] = [(r.offset, r.timestamp, r.key, r.value, ()) for r in records]
        out += _encode_legacy(
            entries,
            magic=magic,
            base_offset=header.base_offset if header.magic >= 2 else entries[0][0],
            codec=codec,
            timestamp_type=header.timestamp_type,
            xerial=True,  # what the Java clients of the v0/v1 era wrote and read
        )
    return bytes(out)

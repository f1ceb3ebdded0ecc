"""Tests for mockkafka.protocol.records, checked against kafka-python's and aiokafka's codecs."""

from __future__ import annotations

import contextlib
import struct
import zlib
from collections.abc import Callable, Sequence
from typing import Any

import aiokafka.record.default_records as aio_default
import aiokafka.record.legacy_records as aio_legacy
import aiokafka.record.memory_records as aio_memory
import crc32c
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.codec import lz4_encode_old_kafka
from kafka.record.default_records import ControlRecord as KpControlRecord
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatch, LegacyRecordBatchBuilder
from kafka.record.memory_records import MemoryRecords, MemoryRecordsBuilder

from mockkafka.protocol.compression import CompressionType, UnsupportedCodecError, compress
from mockkafka.protocol.errors import ProtocolError
from mockkafka.protocol.records import (
    LOG_OVERHEAD,
    V2_HEADER_SIZE,
    BatchHeader,
    ControlType,
    Record,
    TimestampType,
    assign_offsets,
    decode_batch,
    decode_control_record,
    decode_records,
    downconvert,
    encode_batch,
    encode_control_batch,
    iter_batches,
    set_base_offset,
    set_log_append_time,
    set_partition_leader_epoch,
    split_batches,
    verify_crc,
)

ALL_CODECS = list(CompressionType)
LEGACY_CODECS = [c for c in CompressionType if c is not CompressionType.ZSTD]
MAGIC_CODECS = [(2, c) for c in ALL_CODECS] + [(m, c) for m in (0, 1) for c in LEGACY_CODECS]

Row = tuple[int, int, bytes | None, bytes | None, tuple[tuple[str, bytes | None], ...]]


def sample(n: int = 5, *, headers: bool = True, base_ts: int = 1_700_000_000_000) -> list[Any]:
    """(key, value, headers, timestamp) tuples with nulls, empties and repetitive values."""
    out = []
    for i in range(n):
        key = None if i % 4 == 3 else b"key-%d" % i
        value = None if i % 5 == 4 else (b"" if i == 1 else b"value-%d-" % i * 30)
        hdrs = [(f"h{i}", b"x"), ("n", None)] if headers and i % 2 == 0 else []
        out.append((key, value, hdrs, base_ts + i * 7))
    return out


def rows_of(records: Sequence[Record]) -> list[Row]:
    return [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in records]


def kp_rows(data: bytes, *, skip_control: bool = True) -> list[Row]:
    """Read ``data`` with kafka-python's MemoryRecords."""
    out: list[Row] = []
    records = MemoryRecords(bytes(data))
    while records.has_next():
        batch = records.next_batch()
        assert batch.validate_crc()
        for r in batch:
            if skip_control and isinstance(r, KpControlRecord):
                continue
            ts = -1 if r.timestamp is None else r.timestamp
            out.append((r.offset, ts, r.key, r.value, tuple(r.headers)))
    return out


def aio_rows(data: bytes) -> list[Row]:
    """Read ``data`` with aiokafka's MemoryRecords."""
    out: list[Row] = []
    records = aio_memory.MemoryRecords(bytes(data))
    while records.has_next():
        batch = records.next_batch()
        assert batch.validate_crc()
        for r in batch:
            ts = -1 if r.timestamp is None else r.timestamp
            out.append((r.offset, ts, r.key, r.value, tuple(r.headers)))
    return out


def expected_rows(items: list[Any], base_offset: int, magic: int = 2) -> list[Row]:
    return [
        (
            base_offset + i,
            ts if magic else -1,
            key,
            value,
            tuple(hdrs) if magic == 2 else (),
        )
        for i, (key, value, hdrs, ts) in enumerate(items)
    ]


def as_stored(data: bytes) -> bytes:
    """Assign offsets from 0 as a broker would: clients write legacy wrappers with offset 0,
    which readers would turn into negative inner offsets."""
    return assign_offsets(data, 0)[0]


def fix_v2_crc(buf: bytearray, start: int = 0) -> None:
    crc = crc32c.crc32c(bytes(buf[start + 21 :]))
    struct.pack_into(">I", buf, start + 17, crc)


def fix_legacy_crc(buf: bytearray) -> None:
    struct.pack_into(">I", buf, 12, zlib.crc32(bytes(buf[16:])))


# ============================================================================ round trips


@pytest.mark.parametrize(("magic", "codec"), MAGIC_CODECS, ids=lambda x: str(x))
def test_round_trip_every_magic_and_codec(magic: int, codec: CompressionType) -> None:
    items = sample(7, headers=magic == 2)
    if magic < 2:
        items = [(k, v, None, ts) for k, v, _, ts in items]
    data = encode_batch(items, base_offset=42, compression=codec, magic=magic)
    assert rows_of(decode_records(data)) == expected_rows(items, 42, magic)
    headers = [h for h, _ in iter_batches(data)]
    assert {h.magic for h in headers} == {magic}
    assert {h.compression for h in headers} == {codec}
    assert headers[-1].last_offset == 48
    if magic == 2 or codec is CompressionType.NONE:
        assert headers[0].base_offset == 42


@pytest.mark.parametrize("magic", [0, 1])
def test_legacy_zstd_is_unsupported(magic: int) -> None:
    with pytest.raises(UnsupportedCodecError):
        encode_batch([(b"k", b"v")], magic=magic, compression=CompressionType.ZSTD)


record_items = st.lists(
    st.tuples(
        st.none() | st.binary(max_size=20),
        st.none() | st.binary(max_size=60),
        st.lists(st.tuples(st.text(max_size=5), st.none() | st.binary(max_size=5)), max_size=3),
        st.integers(-1, 2**42),
    ),
    min_size=1,
    max_size=12,
)


@given(
    items=record_items,
    magic_codec=st.sampled_from(MAGIC_CODECS),
    base_offset=st.integers(0, 2**40),
)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_round_trip_property(
    items: list[Any], magic_codec: tuple[int, CompressionType], base_offset: int
) -> None:
    magic, codec = magic_codec
    if magic < 2:
        items = [(k, v, None, ts) for k, v, _, ts in items]
    data = encode_batch(items, base_offset=base_offset, compression=codec, magic=magic)
    expected = expected_rows(items, base_offset, magic)
    assert rows_of(decode_records(data)) == expected
    assert kp_rows(data) == expected


def test_record_offsets_are_absolute_and_gaps_survive() -> None:
    records = [Record(100, 5, b"a", b"1"), Record(103, 6, None, b"2"), Record(110, 4, b"c", None)]
    data = encode_batch(records)
    header, decoded = decode_batch(data)
    assert decoded == records
    assert (header.base_offset, header.last_offset_delta, header.records_count) == (100, 10, 3)
    assert (header.base_timestamp, header.max_timestamp) == (5, 6)
    assert kp_rows(data) == rows_of(records)
    # An explicit lower base offset leaves a leading gap.
    header, decoded = decode_batch(encode_batch(records, base_offset=90))
    assert header.base_offset == 90 and decoded == records


def test_tuples_follow_records_and_take_defaults() -> None:
    data = encode_batch(
        [Record(10, 1, b"a", b"b"), (b"k", b"v"), (b"k2", b"v2", None), (None, None, (), 9)],
        base_timestamp=7,
    )
    assert rows_of(decode_records(data)) == [
        (10, 1, b"a", b"b", ()),
        (11, 7, b"k", b"v", ()),
        (12, 7, b"k2", b"v2", ()),
        (13, 9, None, None, ()),
    ]


def test_missing_timestamp_defaults_to_now() -> None:
    import time

    before = int(time.time() * 1000)
    (record,) = decode_records(encode_batch([(b"k", b"v")]))
    assert before <= record.timestamp <= int(time.time() * 1000)
    assert record.offset == 0


def test_encode_argument_errors() -> None:
    with pytest.raises(ValueError, match="absolute"):
        encode_batch([Record(5, 0, None, None)], base_offset=10)
    with pytest.raises(ValueError, match="absolute"):
        encode_batch([Record(5, 0, None, None), Record(5, 0, None, None)])
    with pytest.raises(TypeError):
        encode_batch([("key", b"value")])
    with pytest.raises(TypeError):
        encode_batch([(b"k", b"v", [(b"bytes-key", b"v")])])
    with pytest.raises(TypeError):
        encode_batch([b"not a tuple"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="headers"):
        encode_batch([(b"k", b"v", [("h", b"v")])], magic=1)
    with pytest.raises(ValueError, match="magic 2"):
        encode_batch([(b"k", b"v")], magic=1, producer_id=5)
    with pytest.raises(ValueError, match="magic"):
        encode_batch([(b"k", b"v")], magic=3)
    with pytest.raises(ValueError):
        encode_batch([(b"k", b"v")], compression=9)
    with pytest.raises(ValueError, match="varint"):
        encode_batch([Record(0, -(2**62), None, None), Record(1, 2**62, None, None)])


def test_out_of_range_arguments_are_value_errors() -> None:
    with pytest.raises(ValueError, match="out of range"):
        encode_batch([(b"k", b"v")], producer_epoch=1 << 20)
    with pytest.raises(ValueError, match="out of range"):
        encode_batch([(b"k", b"v")], base_offset=1 << 63, magic=0)
    with pytest.raises(ValueError, match="not a valid offset"):
        assign_offsets(encode_batch([(b"k", b"v")]), -1)
    with pytest.raises(ValueError, match="overflow"):
        assign_offsets(encode_batch([(b"k", b"v")]) * 2, (1 << 63) - 1)


def test_bytes_like_inputs() -> None:
    data = encode_batch([(bytearray(b"k"), memoryview(b"v"), [("h", bytearray(b"x"))])])
    (record,) = decode_records(bytearray(data))
    assert (record.key, record.value, record.headers) == (b"k", b"v", (("h", b"x"),))
    assert decode_records(memoryview(data)) == [record]


def test_v2_header_fields() -> None:
    data = encode_batch(
        sample(3),
        base_offset=7,
        compression=CompressionType.GZIP,
        producer_id=1234,
        producer_epoch=5,
        base_sequence=77,
        is_transactional=True,
        partition_leader_epoch=9,
    )
    ((header, raw),) = list(iter_batches(data))
    assert isinstance(raw, memoryview) and bytes(raw) == data
    assert header == BatchHeader(
        base_offset=7,
        batch_length=len(data) - LOG_OVERHEAD,
        partition_leader_epoch=9,
        magic=2,
        crc=header.crc,
        attributes=0x10 | 1,
        last_offset_delta=2,
        base_timestamp=1_700_000_000_000,
        max_timestamp=1_700_000_000_014,
        producer_id=1234,
        producer_epoch=5,
        base_sequence=77,
        records_count=3,
    )
    assert header.compression is CompressionType.GZIP
    assert header.timestamp_type is TimestampType.CREATE_TIME
    assert header.is_transactional and not header.is_control and not header.has_delete_horizon
    assert (header.last_offset, header.next_offset, header.size) == (9, 10, len(data))
    assert verify_crc(header, raw)
    kp_batch = MemoryRecords(data).next_batch()
    assert (kp_batch.producer_id, kp_batch.producer_epoch, kp_batch.base_sequence) == (1234, 5, 77)
    assert kp_batch.is_transactional and kp_batch.leader_epoch == 9


def test_empty_v2_batch() -> None:
    data = encode_batch([], base_offset=5, base_timestamp=3)
    header, records = decode_batch(data)
    assert records == [] and header.records_count == 0 and header.last_offset == 5
    assert encode_batch([], magic=1) == b""


# ============================================================================ interop: decoding


@pytest.mark.parametrize("codec", ALL_CODECS, ids=lambda c: c.name)
def test_decode_kafka_python_default_builder(codec: CompressionType) -> None:
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=codec,
        is_transactional=False,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
        batch_size=1 << 20,
    )
    items = sample(6)
    for i, (key, value, hdrs, ts) in enumerate(items):
        builder.append(i, timestamp=ts, key=key, value=value, headers=hdrs)
    data = as_stored(bytes(builder.build()))
    assert rows_of(decode_records(data)) == expected_rows(items, 0)


@pytest.mark.parametrize(("magic", "codec"), MAGIC_CODECS, ids=lambda x: str(x))
def test_decode_kafka_python_memory_records_builder(magic: int, codec: CompressionType) -> None:
    builder = MemoryRecordsBuilder(magic=magic, compression_type=codec, batch_size=1 << 20)
    items = sample(6, headers=magic == 2)
    for key, value, hdrs, ts in items:
        builder.append(timestamp=ts, key=key, value=value, headers=hdrs if magic == 2 else None)
    builder.close()
    data = as_stored(bytes(builder.buffer()))
    assert rows_of(decode_records(data)) == expected_rows(items, 0, magic)


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", LEGACY_CODECS, ids=lambda c: c.name)
def test_decode_kafka_python_legacy_builder(magic: int, codec: CompressionType) -> None:
    builder = LegacyRecordBatchBuilder(magic=magic, compression_type=codec, batch_size=1 << 20)
    items = sample(5, headers=False)
    for i, (key, value, _, ts) in enumerate(items):
        builder.append(i, timestamp=ts, key=key, value=value)
    data = as_stored(bytes(builder.build()))
    assert rows_of(decode_records(data)) == expected_rows(items, 0, magic)


@pytest.mark.parametrize("codec", ALL_CODECS, ids=lambda c: c.name)
def test_decode_aiokafka_default_builder(codec: CompressionType) -> None:
    builder = aio_default.DefaultRecordBatchBuilder(
        magic=2,
        compression_type=codec,
        is_transactional=0,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
        batch_size=1 << 20,
    )
    items = sample(6)
    for i, (key, value, hdrs, ts) in enumerate(items):
        builder.append(i, timestamp=ts, key=key, value=value, headers=hdrs)
    data = as_stored(bytes(builder.build()))
    assert rows_of(decode_records(data)) == expected_rows(items, 0)


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", LEGACY_CODECS, ids=lambda c: c.name)
def test_decode_aiokafka_legacy_builder(magic: int, codec: CompressionType) -> None:
    if magic == 0 and codec is CompressionType.LZ4:
        pytest.skip("aiokafka refuses lz4 with magic 0")
    builder = aio_legacy.LegacyRecordBatchBuilder(magic, codec, 1 << 20)
    items = sample(5, headers=False)
    for i, (key, value, _, ts) in enumerate(items):
        builder.append(i, timestamp=ts, key=key, value=value)
    data = as_stored(bytes(builder.build()))
    assert rows_of(decode_records(data)) == expected_rows(items, 0, magic)


def test_decode_old_kafka_lz4_v0_wrapper() -> None:
    """A v0 wrapper with the broken lz4 header checksum, as Kafka 0.8/0.9 wrote it."""
    inner = b"".join(
        bytes(encode_batch([(b"k%d" % i, b"v%d" % i)], base_offset=i, magic=0)) for i in range(3)
    )
    value = lz4_encode_old_kafka(inner)
    body = struct.pack(">bBi", 0, CompressionType.LZ4, -1) + struct.pack(">i", len(value)) + value
    wrapper = struct.pack(">qiI", 2, len(body) + 4, zlib.crc32(body)) + body
    assert [(r.offset, r.key) for r in decode_records(wrapper)] == [
        (0, b"k0"),
        (1, b"k1"),
        (2, b"k2"),
    ]


# ============================================================================ interop: encoding


@pytest.mark.parametrize(("magic", "codec"), MAGIC_CODECS, ids=lambda x: str(x))
@pytest.mark.parametrize("xerial", [False, True])
def test_kafka_python_reads_ours(magic: int, codec: CompressionType, xerial: bool) -> None:
    items = sample(6, headers=magic == 2)
    if magic < 2:
        items = [(k, v, None, ts) for k, v, _, ts in items]
    data = encode_batch(
        items, base_offset=1000, compression=codec, magic=magic, snappy_xerial=xerial
    )
    assert kp_rows(data) == expected_rows(items, 1000, magic)


@pytest.mark.parametrize(("magic", "codec"), MAGIC_CODECS, ids=lambda x: str(x))
def test_aiokafka_reads_ours(magic: int, codec: CompressionType) -> None:
    if magic == 0 and codec is CompressionType.LZ4:
        pytest.skip("aiokafka refuses lz4 with magic 0")
    items = sample(6, headers=magic == 2)
    if magic < 2:
        items = [(k, v, None, ts) for k, v, _, ts in items]
    data = encode_batch(items, base_offset=1000, compression=codec, magic=magic)
    assert aio_rows(data) == expected_rows(items, 1000, magic)


def test_legacy_v1_wrapper_layout() -> None:
    """v1 wrapper: inner offsets relative 0..n-1, wrapper offset = last absolute offset."""
    data = encode_batch(sample(4, headers=False), base_offset=50, magic=1, compression=1)
    ((header, raw),) = list(iter_batches(data))
    assert header.base_offset == header.last_offset == 53
    assert header.records_count == -1
    assert header.max_timestamp == 1_700_000_000_021
    batch = LegacyRecordBatch(bytes(raw), 1)
    assert batch.validate_crc()
    assert [r.offset for r in batch] == [50, 51, 52, 53]
    inner = batch._buffer  # decompressed after iteration
    offsets = []
    pos = 0
    while pos < len(inner):
        offset, size = struct.unpack_from(">qi", inner, pos)
        offsets.append(offset)
        pos += 12 + size
    assert offsets == [0, 1, 2, 3]


def test_legacy_v0_wrapper_inner_offsets_are_absolute() -> None:
    data = encode_batch(sample(3, headers=False), base_offset=50, magic=0, compression=1)
    ((header, raw),) = list(iter_batches(data))
    assert header.base_offset == 52
    inner = zlib.decompress(bytes(raw[-(len(raw) - 26) :]), 47)
    assert [struct.unpack_from(">q", inner, p)[0] for p in _legacy_positions(inner)] == [50, 51, 52]


def _legacy_positions(buf: bytes) -> list[int]:
    out, pos = [], 0
    while pos < len(buf):
        out.append(pos)
        pos += 12 + struct.unpack_from(">i", buf, pos + 8)[0]
    return out


def test_mixed_magics_in_one_blob() -> None:
    blob = (
        encode_batch([(b"a", b"1")], base_offset=0, magic=0)
        + encode_batch([(b"b", b"2", None, 5)], base_offset=1, magic=1, compression=2)
        + encode_batch([(b"c", b"3", [("h", b"v")], 6)], base_offset=2, compression=3)
    )
    assert [h.magic for h, _ in iter_batches(blob)] == [0, 1, 2]
    assert rows_of(decode_records(blob)) == [
        (0, -1, b"a", b"1", ()),
        (1, 5, b"b", b"2", ()),
        (2, 6, b"c", b"3", (("h", b"v"),)),
    ]
    assert kp_rows(blob) == rows_of(decode_records(blob))


# ============================================================================ truncation


def test_truncated_trailing_batch() -> None:
    first = encode_batch(sample(3), base_offset=0)
    second = encode_batch(sample(3), base_offset=3, compression=CompressionType.LZ4)
    blob = first + second
    for cut in [1, 11, 12, 30, len(second) - 1]:
        data = blob[: len(first) + cut]
        assert [h.base_offset for h, _ in iter_batches(data)] == [0]
        assert [h.base_offset for h, _ in split_batches(data, allow_partial=True)] == [0]
        assert [r.offset for r in decode_records(data)] == [0, 1, 2]
        with pytest.raises(ProtocolError, match="truncated"):
            split_batches(data)
        with pytest.raises(ProtocolError, match="truncated"):
            decode_records(data, allow_partial=False)
        with pytest.raises(ProtocolError, match="truncated"):
            assign_offsets(data, 0)
    assert len(split_batches(blob)) == 2


@pytest.mark.parametrize("magic", [0, 1])
def test_truncated_trailing_legacy_message_ignored(magic: int) -> None:
    blob = encode_batch(sample(3, headers=False), magic=magic)
    data = blob[:-5]
    assert [r.offset for r in decode_records(data)] == [0, 1]
    assert len(kp_rows(data)) == 2  # kafka-python agrees
    with pytest.raises(ProtocolError):
        split_batches(data)


def test_empty_blob() -> None:
    assert list(iter_batches(b"")) == []
    assert split_batches(b"") == []
    assert decode_records(b"") == []
    assert assign_offsets(b"", 5) == (b"", 0)


# ============================================================================ corruption


def test_v2_crc_corruption_detected() -> None:
    data = bytearray(encode_batch(sample(3), base_offset=77))
    data[data.index(b"value-0")] ^= 0xFF
    ((header, raw),) = split_batches(data)
    assert not verify_crc(header, raw)
    with pytest.raises(ProtocolError, match=r"CRC mismatch.*offset 77"):
        decode_records(data)
    with pytest.raises(ProtocolError, match="CRC"):
        split_batches(data, check_crc=True)
    with pytest.raises(ProtocolError, match="CRC"):
        decode_batch(data)
    decode_records(data, check_crc=False)  # this corruption hit a value byte: still decodable


@pytest.mark.parametrize("codec", LEGACY_CODECS, ids=lambda c: c.name)
def test_legacy_crc_corruption_detected(codec: CompressionType) -> None:
    data = bytearray(
        encode_batch(sample(3, headers=False), base_offset=5, magic=1, compression=codec)
    )
    data[20] ^= 0x01  # timestamp byte of the first (or wrapper) message
    with pytest.raises(ProtocolError, match=r"CRC mismatch.*offset"):
        decode_records(data)


def test_inner_crc_corruption_detected() -> None:
    inner = bytearray(encode_batch([(b"k", b"v", None, 1)], magic=1))
    inner[-1] ^= 0xFF  # value byte; CRC now stale
    value = compress(1, bytes(inner))
    body = struct.pack(">bBqi", 1, 1, 1, -1) + struct.pack(">i", len(value)) + value
    wrapper = struct.pack(">qiI", 0, len(body) + 4, zlib.crc32(body)) + body
    with pytest.raises(ProtocolError, match="CRC mismatch in inner message"):
        decode_records(wrapper)
    assert decode_records(wrapper, check_crc=False)[0].value == b"\x89"


def _edit_v2(data: bytes, field: str, value: int) -> bytes:
    positions = {"count": (57, ">i"), "last_delta": (23, ">i"), "attributes": (21, ">h")}
    pos, fmt = positions[field]
    buf = bytearray(data)
    struct.pack_into(fmt, buf, pos, value)
    fix_v2_crc(buf)
    return bytes(buf)


@pytest.mark.parametrize("codec", [CompressionType.NONE, CompressionType.GZIP])
@pytest.mark.parametrize("count", [0, 2, 4, 2**31 - 1])
def test_records_count_mismatch(codec: CompressionType, count: int) -> None:
    data = _edit_v2(encode_batch(sample(3), compression=codec), "count", count)
    with pytest.raises(ProtocolError, match="offset 0"):
        decode_records(data)


def test_negative_counts_and_unknown_codec_rejected_by_walk() -> None:
    data = encode_batch(sample(2))
    with pytest.raises(ProtocolError, match="negative records count"):
        split_batches(_edit_v2(data, "count", -1))
    with pytest.raises(ProtocolError, match="negative last offset delta"):
        split_batches(_edit_v2(data, "last_delta", -3))
    with pytest.raises(UnsupportedCodecError, match="codec 6"):
        list(iter_batches(_edit_v2(data, "attributes", 6)))


def test_garbage_headers_rejected() -> None:
    good = encode_batch(sample(2))
    bad_magic = bytearray(good)
    bad_magic[16] = 3
    with pytest.raises(ProtocolError, match="unknown magic 3"):
        split_batches(bad_magic)
    short = bytearray(good)
    struct.pack_into(">i", short, 8, 5)
    with pytest.raises(ProtocolError, match="invalid length 5"):
        list(iter_batches(short))
    v2_short = bytearray(good[:40])
    struct.pack_into(">i", v2_short, 8, 28)
    with pytest.raises(ProtocolError, match="minimum 49"):
        split_batches(v2_short)


def _v2_with_records_section(section: bytes, count: int) -> bytes:
    buf = bytearray(encode_batch([(b"k", b"v", None, 0)]))[:V2_HEADER_SIZE] + section
    struct.pack_into(">i", buf, 8, len(buf) - 12)
    struct.pack_into(">i", buf, 57, count)
    fix_v2_crc(buf)
    return bytes(buf)


def rec(body: bytes) -> bytes:
    """A record: zigzag varint length (bodies here are < 64 bytes) then the body."""
    return bytes([len(body) << 1]) + body


@pytest.mark.parametrize(
    ("section", "match"),
    [
        (b"\xff" * 12, "longer than 5 bytes"),  # absurd varint record length
        (rec(b"\x00" + b"\xff" * 10 + b"\x01"), "longer than 10 bytes"),  # absurd varlong
        (rec(b"\x00\x00\x00\x03\x01\x00"), "invalid key length -2"),
        (rec(b"\x00\x00\x00\x01\x05\x00"), "invalid value length -3"),
        (rec(b"\x00\x00\x00\x7eabc\x01\x00"), "key length 63 overruns"),
        (rec(b"\x00\x00\x00\x01\x7eabc\x00"), "value length 63 overruns"),
        (b"\x7f\x00", "overruns"),  # record length beyond the section
        (b"\x01", "length -1"),  # negative record length
        (rec(b"\x00\x00\x00\x01\x01"), "truncated"),  # no header count
        (rec(b"\x00\x00\x00\x01\x01\x00") + b"\x00\x00", "truncated"),  # second record cut
        (rec(b"\x00\x00\x00\x01\x01\x00\x00"), "length 7 does not match its fields \\(6"),
        (rec(b"\x00\x00\x00\x01\x01\x03"), "invalid header count -2"),
        (rec(b"\x00\x00\x00\x01\x01\xfe\xff\xff\xff\x0f"), "header count .* overruns"),
        (rec(b"\x00\x00\x00\x01\x01\x02\x04\xff\xfe\x01"), "UTF-8"),  # bad header key
        (rec(b"\x00\x00\x00\x01\x01\x02\x01\x01"), "invalid header key length -1"),
        (rec(b"\x00\x00\x00\x01\x01\x02\x02h\x07"), "invalid header value length -4"),
        (rec(b"\x00\x00\x00\x01\x01\x02\x02h\x08"), "header value length 4 overruns"),
        (rec(b"\x00\x00\x00\x01\x01\x00") + b"\x00", "left after"),  # bytes after the records
    ],
)
def test_malformed_records(section: bytes, match: str) -> None:
    data = _v2_with_records_section(section, 2 if match == "truncated" and len(section) > 8 else 1)
    with pytest.raises(ProtocolError, match=match):
        decode_records(data)


def test_varint_overflowing_32_bits() -> None:
    section = b"\x0e\x00\x00" + b"\xff\xff\xff\xff\x7f" + b"\x01\x01\x00"
    with pytest.raises(ProtocolError, match="overflows 32 bits"):
        decode_records(_v2_with_records_section(section, 1))


def test_compressed_section_corrupt() -> None:
    data = bytearray(encode_batch(sample(4), compression=CompressionType.ZSTD))
    data[V2_HEADER_SIZE + 6] ^= 0xFF
    fix_v2_crc(data)
    with pytest.raises(ProtocolError, match="offset 0: zstd"):
        decode_records(data)


@pytest.mark.parametrize("codec", LEGACY_CODECS[1:], ids=lambda c: c.name)
def test_empty_or_null_wrapper_rejected(codec: CompressionType) -> None:
    for value in (compress(codec, b""), None):
        vbytes = struct.pack(">i", -1) if value is None else struct.pack(">i", len(value)) + value
        body = struct.pack(">bBqi", 1, codec, 0, -1) + vbytes
        wrapper = struct.pack(">qiI", 0, len(body) + 4, zlib.crc32(body)) + body
        with pytest.raises(ProtocolError, match=r"no inner messages|null value"):
            decode_records(wrapper)


def test_nested_compression_rejected() -> None:
    inner = encode_batch([(b"k", b"v", None, 1)], magic=1, compression=1)
    value = compress(1, inner)
    body = struct.pack(">bBqi", 1, 1, 1, -1) + struct.pack(">i", len(value)) + value
    wrapper = struct.pack(">qiI", 0, len(body) + 4, zlib.crc32(body)) + body
    with pytest.raises(ProtocolError, match="itself compressed"):
        decode_records(wrapper)


def test_decode_batch_wants_exactly_one() -> None:
    two = encode_batch([(b"a", b"1")]) + encode_batch([(b"b", b"2")], base_offset=1)
    with pytest.raises(ProtocolError, match="exactly one"):
        decode_batch(two)


ALL_API: list[Callable[[bytes], object]] = [
    lambda d: list(iter_batches(d)),
    lambda d: split_batches(d),
    lambda d: decode_records(d, include_control=True),
    lambda d: decode_records(d, check_crc=False, allow_partial=False),
    lambda d: decode_batch(d, check_crc=False),
    lambda d: assign_offsets(d, 0),
    lambda d: downconvert(d, 1, check_crc=False),
    lambda d: downconvert(d, 0, check_crc=False),
    lambda d: set_log_append_time(d, 1),
]


@given(st.binary(max_size=300))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_garbage_only_raises_protocol_error(data: bytes) -> None:
    for call in ALL_API:
        with contextlib.suppress(ProtocolError):
            call(data)


SEEDS = (
    [encode_batch(sample(3), compression=c, base_offset=3) for c in ALL_CODECS]
    + [
        encode_batch(sample(3, headers=False), compression=c, magic=m)
        for m in (0, 1)
        for c in LEGACY_CODECS
    ]
    + [
        encode_control_batch(
            "commit", producer_id=1, producer_epoch=0, coordinator_epoch=0, timestamp=0
        )
    ]
)


@given(st.data())
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_mutated_batches_only_raise_protocol_error(data: st.DataObject) -> None:
    seed = bytearray(data.draw(st.sampled_from(SEEDS)))
    for _ in range(data.draw(st.integers(1, 6))):
        pos = data.draw(st.integers(0, len(seed) - 1))
        seed[pos] = data.draw(st.integers(0, 255))
    if data.draw(st.booleans()):
        if seed[16] == 2:
            fix_v2_crc(seed)
        else:
            fix_legacy_crc(seed)
    cut = data.draw(st.integers(0, len(seed)))
    for blob in (bytes(seed), bytes(seed[:cut])):
        for call in ALL_API:
            with contextlib.suppress(ProtocolError):
                call(blob)


# ============================================================================ offsets


def test_set_base_offset_and_leader_epoch_keep_crc_valid() -> None:
    data = encode_batch(sample(3), compression=CompressionType.SNAPPY)
    moved = set_partition_leader_epoch(set_base_offset(data, 1_000_000), 17)
    ((header, _raw),) = split_batches(moved, check_crc=True)
    assert (header.base_offset, header.partition_leader_epoch) == (1_000_000, 17)
    assert header.crc == split_batches(data)[0][0].crc
    assert [r.offset for r in decode_records(moved)] == [1_000_000, 1_000_001, 1_000_002]
    assert MemoryRecords(moved).next_batch().leader_epoch == 17
    assert len(kp_rows(moved)) == 3
    with pytest.raises(ValueError, match="v2"):
        set_base_offset(encode_batch([(b"k", b"v")], magic=1), 5)
    with pytest.raises(ValueError, match="v2"):
        set_partition_leader_epoch(b"short", 5)


def test_assign_offsets_v2_multi_batch() -> None:
    blob = (
        encode_batch(sample(3), base_offset=0)
        + encode_batch(sample(2), base_offset=0, compression=1)
        + encode_control_batch(
            "abort", producer_id=3, producer_epoch=0, coordinator_epoch=2, timestamp=1
        )
    )
    out, count = assign_offsets(blob, 500, partition_leader_epoch=4)
    assert count == 6
    headers = split_batches(out, check_crc=True)
    assert [(h.base_offset, h.last_offset) for h, _ in headers] == [
        (500, 502),
        (503, 504),
        (505, 505),
    ]
    assert {h.partition_leader_epoch for h, _ in headers} == {4}
    assert [r.offset for r in decode_records(out, include_control=True)] == list(range(500, 506))
    assert len(out) == len(blob)


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", LEGACY_CODECS, ids=lambda c: c.name)
def test_assign_offsets_legacy(magic: int, codec: CompressionType) -> None:
    items = sample(4, headers=False)
    blob = encode_batch(items, magic=magic, compression=codec) + encode_batch(
        items[:2], magic=magic, compression=codec
    )
    out, count = assign_offsets(blob, 1000)
    assert count == 6
    assert [r.offset for r in decode_records(out)] == list(range(1000, 1006))
    assert [r[0] for r in kp_rows(out)] == list(range(1000, 1006))
    assert [r.key for r in decode_records(out)] == [i[0] for i in items + items[:2]]
    split_batches(out, check_crc=True)
    if magic == 1 and codec:
        assert len(out) == len(blob)  # relative inner offsets: wrapper offset rewritten in place


def test_assign_offsets_recompresses_v1_wrapper_with_absolute_inner_offsets() -> None:
    builder = LegacyRecordBatchBuilder(magic=1, compression_type=1, batch_size=1 << 20)
    for i in range(3):
        builder.append(10 + i, timestamp=5, key=b"k%d" % i, value=b"v")  # not 0..n-1
    out, count = assign_offsets(bytes(builder.build()), 200)
    assert count == 3
    assert [r.offset for r in decode_records(out)] == [200, 201, 202]
    assert [r[0] for r in kp_rows(out)] == [200, 201, 202]


def test_assign_offsets_keeps_xerial_framing_when_recompressing() -> None:
    data = encode_batch(sample(3, headers=False), magic=0, compression=2, snappy_xerial=True)
    out, _ = assign_offsets(data, 9)
    assert b"\x82SNAPPY\x00" in out
    assert [r.offset for r in decode_records(out)] == [9, 10, 11]


def test_assign_offsets_rejects_legacy_zstd() -> None:
    value = compress(4, encode_batch([(b"k", b"v")], magic=0))
    body = struct.pack(">bBi", 0, 4, -1) + struct.pack(">i", len(value)) + value
    wrapper = struct.pack(">qiI", 0, len(body) + 4, zlib.crc32(body)) + body
    assert decode_records(wrapper)[0].key == b"k"  # readable, but not acceptable on produce
    with pytest.raises(UnsupportedCodecError):
        assign_offsets(wrapper, 0)


def test_iter_batches_is_cheap_on_big_blobs() -> None:
    one = encode_batch(sample(2))
    blob = one * 5000
    headers = [h for h, _ in iter_batches(blob)]
    assert len(headers) == 5000
    out, count = assign_offsets(blob, 0)
    assert count == 10_000
    assert [h.base_offset for h, _ in iter_batches(out)][-2:] == [9996, 9998]


# ============================================================================ timestamps


def test_log_append_time() -> None:
    blob = encode_batch(sample(3), compression=1) + encode_batch(
        sample(2, headers=False), base_offset=3, magic=1
    )
    stamped = set_log_append_time(blob, 99)
    headers = split_batches(stamped, check_crc=True)
    assert all(h.timestamp_type is TimestampType.LOG_APPEND_TIME for h, _ in headers)
    assert [r.timestamp for r in decode_records(stamped)] == [99] * 5
    assert [r[1] for r in kp_rows(stamped)] == [99] * 5
    batch = MemoryRecords(stamped).next_batch()
    assert batch.timestamp_type == 1


def test_log_append_time_on_legacy_wrapper_overrides_inner() -> None:
    data = encode_batch(sample(3, headers=False), magic=1, compression=2)
    stamped = set_log_append_time(data, 12345)
    assert [r.timestamp for r in decode_records(stamped)] == [12345] * 3
    assert [r[1] for r in kp_rows(stamped)] == [12345] * 3


def test_encode_with_log_append_time_type() -> None:
    data = encode_batch(sample(2), timestamp_type=TimestampType.LOG_APPEND_TIME)
    header, records = decode_batch(data)
    assert header.timestamp_type is TimestampType.LOG_APPEND_TIME
    assert {r.timestamp for r in records} == {header.max_timestamp}


def test_negative_timestamp_deltas_and_no_timestamp() -> None:
    records = [Record(0, 1000, None, b"a"), Record(1, -1, None, b"b"), Record(2, 5, None, b"c")]
    header, decoded = decode_batch(encode_batch(records))
    assert decoded == records and header.base_timestamp == 1000 and header.max_timestamp == 1000


# ============================================================================ control batches


@pytest.mark.parametrize("kind", ["commit", "abort", ControlType.COMMIT])
def test_control_batch(kind: Any) -> None:
    data = encode_control_batch(
        kind, producer_id=42, producer_epoch=3, coordinator_epoch=7, base_offset=10, timestamp=55
    )
    header, records = decode_batch(data)
    assert header.is_control and header.is_transactional
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (42, 3, -1)
    assert (header.base_offset, header.records_count, header.max_timestamp) == (10, 1, 55)
    marker = decode_control_record(records[0])
    is_commit = kind != "abort"
    assert marker.type == (ControlType.COMMIT if is_commit else ControlType.ABORT)
    assert (marker.is_commit, marker.is_abort) == (is_commit, not is_commit)
    assert (marker.version, marker.coordinator_epoch) == (0, 7)
    # Skipped by default, included on request.
    assert decode_records(data) == []
    assert decode_records(data, include_control=True) == records
    # kafka-python and aiokafka see a control batch with the right marker.
    kp_batch = MemoryRecords(data).next_batch()
    assert kp_batch.is_control_batch and kp_batch.is_transactional
    (kp_record,) = list(kp_batch)
    assert isinstance(kp_record, KpControlRecord) and kp_record.commit == is_commit
    aio_batch = aio_memory.MemoryRecords(data).next_batch()
    assert aio_batch.is_control_batch
    assert aio_rows(data)[0][2] == struct.pack(">hh", 0, 1 if is_commit else 0)


def test_control_record_errors() -> None:
    with pytest.raises(ProtocolError, match="malformed key"):
        decode_control_record(Record(0, 0, b"\x00", None))
    with pytest.raises(ProtocolError, match="malformed value"):
        decode_control_record(Record(0, 0, struct.pack(">hh", 0, 1), b"\x00"))
    with pytest.raises(ProtocolError, match="version"):
        decode_control_record(Record(0, 0, struct.pack(">hh", -1, 1), None))
    other = decode_control_record(Record(0, 0, struct.pack(">hh", 0, 3), None))
    assert (other.type, other.coordinator_epoch, other.is_commit) == (3, -1, False)
    with pytest.raises(ValueError):
        encode_control_batch(
            "maybe",  # type: ignore[arg-type]
            producer_id=1,
            producer_epoch=0,
            coordinator_epoch=0,
            timestamp=0,
        )


# ============================================================================ down-conversion


def _kp_legacy_rows(data: bytes, magic: int) -> list[tuple[int, int | None, Any, Any]]:
    rows: list[tuple[int, int | None, Any, Any]] = []
    records = MemoryRecords(data)
    while records.has_next():
        batch = records.next_batch()
        assert isinstance(batch, LegacyRecordBatch) and batch.magic == magic
        assert batch.validate_crc()
        rows.extend((r.offset, r.timestamp, r.key, r.value) for r in batch)
    return rows


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", LEGACY_CODECS, ids=lambda c: c.name)
def test_downconvert(magic: int, codec: CompressionType) -> None:
    items = sample(5)
    blob = (
        encode_batch(items, base_offset=100, compression=codec)
        + encode_control_batch(
            "commit",
            producer_id=1,
            producer_epoch=0,
            coordinator_epoch=0,
            base_offset=105,
            timestamp=0,
        )
        + encode_batch(
            [Record(106, 1, b"x", b"y"), Record(110, 2, None, b"gap")], compression=codec
        )
    )
    old = downconvert(blob, magic)
    expected = [(o, ts if magic else None, k, v) for o, ts, k, v, _ in expected_rows(items, 100)]
    expected += [(106, 1 if magic else None, b"x", b"y"), (110, 2 if magic else None, None, b"gap")]
    assert _kp_legacy_rows(old, magic) == expected
    assert {h.magic for h, _ in iter_batches(old)} == {magic}
    assert {h.compression for h, _ in iter_batches(old)} == {codec}
    ours = rows_of(decode_records(old))
    assert [(o, k, v) for o, _, k, v, _ in ours] == [(o, k, v) for o, _, k, v in expected]
    if codec is CompressionType.LZ4 and magic == 0:
        # Old-Kafka lz4: only the broken-checksum-aware reader works.
        assert len(_kp_legacy_rows(old, 0)) == 7


def test_downconvert_log_append_time_and_passthrough() -> None:
    v2 = set_log_append_time(encode_batch(sample(2), base_offset=0, compression=1), 777)
    legacy0 = encode_batch([(b"old", b"msg")], base_offset=2, magic=0)
    old = downconvert(v2 + legacy0, 1)
    assert [(r.offset, r.timestamp) for r in decode_records(old)] == [(0, 777), (1, 777), (2, -1)]
    assert old.endswith(legacy0)  # already old enough: copied byte for byte
    assert [(o, t) for o, t, _, _ in _kp_legacy_rows(old[: -len(legacy0)], 1)] == [
        (0, 777),
        (1, 777),
    ]
    # v1 -> v0 is converted.
    v1 = encode_batch(sample(2, headers=False), base_offset=8, magic=1, compression=3)
    assert [r[0] for r in _kp_legacy_rows(downconvert(v1, 0), 0)] == [8, 9]


def test_downconvert_zstd_is_unsupported() -> None:
    with pytest.raises(UnsupportedCodecError):
        downconvert(encode_batch(sample(2), compression=CompressionType.ZSTD), 1)
    with pytest.raises(ValueError):
        downconvert(b"", 2)


def test_downconvert_ignores_truncated_tail_and_empty_batches() -> None:
    blob = (
        encode_batch(sample(2))
        + encode_batch([], base_offset=2)
        + encode_batch(sample(2), base_offset=3)
    )
    old = downconvert(blob[:-4], 1)
    assert [r.offset for r in decode_records(old)] == [0, 1]


@given(items=record_items, codec=st.sampled_from(LEGACY_CODECS), magic=st.sampled_from([0, 1]))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_downconvert_property(items: list[Any], codec: CompressionType, magic: int) -> None:
    data = encode_batch(items, base_offset=3, compression=codec)
    expected = [(o, ts if magic else None, k, v) for o, ts, k, v, _ in expected_rows(items, 3)]
    assert _kp_legacy_rows(downconvert(data, magic), magic) == expected

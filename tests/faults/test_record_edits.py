"""The record edits behind the record-editing fault actions (``faults/record_edits.py``).

Each edit must yield batches the project's own decoder accepts with its CRC check, in the
format, codec and offset range of the original, with only the intended part of each record
changed.
"""

from __future__ import annotations

import dataclasses
import struct
from typing import Any

import crc32c
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockkafka.faults.record_edits import (
    corrupt_payload,
    edit_records,
    prepend_batch,
    rewrite_schema_id,
    skew_timestamps,
)
from mockkafka.protocol.compression import CompressionType
from mockkafka.protocol.records import (
    BatchHeader,
    Record,
    TimestampType,
    decode_records,
    encode_batch,
    encode_control_batch,
    iter_batches,
    split_batches,
)

LEGACY_CODECS = [c for c in CompressionType if c is not CompressionType.ZSTD]
FORMATS = [(2, c) for c in CompressionType] + [(m, c) for m in (0, 1) for c in LEGACY_CODECS]
TS = 1_700_000_000_000

values = st.none() | st.binary(max_size=24)
registry_values = st.builds(
    lambda sid, payload: struct.pack(">bi", 0, sid) + payload,
    st.integers(0, 2**31 - 1),
    st.binary(max_size=12),
)


@st.composite
def blobs(draw: Any) -> tuple[bytes, int]:
    """A Fetch partition's records: 1-3 batches (any magic and codec, snappy raw or xerial,
    producer fields, LogAppendTime), maybe a transaction marker, maybe a cut trailing batch.
    Returns (blob, length of the complete part)."""
    out = b""
    offset = draw(st.integers(0, 2**32))
    for _ in range(draw(st.integers(1, 3))):
        magic, codec = draw(st.sampled_from(FORMATS))
        n = draw(st.integers(1, 5))
        headers = st.lists(st.tuples(st.text(max_size=4), values), max_size=2)
        recs = [
            Record(
                offset + i,
                draw(st.integers(0, 2**41)) if magic else -1,
                draw(values),
                draw(values | registry_values),
                tuple(draw(headers)) if magic == 2 else (),
            )
            for i in range(n)
        ]
        v2: dict[str, Any] = {}
        if magic == 2 and draw(st.booleans()):
            v2 = {"producer_id": 7, "producer_epoch": 1, "base_sequence": 3}
        out += encode_batch(
            recs,
            base_offset=offset,
            compression=codec,
            magic=magic,
            partition_leader_epoch=4 if magic == 2 else -1,
            timestamp_type=draw(st.sampled_from(list(TimestampType))) if magic else 0,
            snappy_xerial=draw(st.booleans()),
            **v2,
        )
        offset += n
        if draw(st.booleans()):
            out += encode_control_batch(
                "commit", producer_id=7, producer_epoch=1, coordinator_epoch=0,
                timestamp=TS, base_offset=offset,
            )  # fmt: skip
            offset += 1
    complete = len(out)
    if draw(st.booleans()):
        out += encode_batch([(b"k", b"v" * 30)], base_offset=offset)[:40]
    return out, complete


def entries(data: bytes) -> list[tuple[BatchHeader, list[Record]]]:
    """Every complete entry, CRC-checked, with its records (control ones included)."""
    return [
        (h, decode_records(bytes(raw), include_control=True))
        for h, raw in split_batches(data, check_crc=True)
    ]


def complete(edited: bytes, original: tuple[bytes, int]) -> bytes:
    """The complete batches of ``edited`` (without the original's cut trailing batch)."""
    cut = len(original[0]) - original[1]
    return edited[: len(edited) - cut] if cut else edited


def same_frame(h: BatchHeader, g: BatchHeader) -> bool:
    keep = ("base_offset", "magic", "partition_leader_epoch", "producer_id", "producer_epoch")
    return (
        all(getattr(h, k) == getattr(g, k) for k in keep)
        and (h.next_offset, h.compression, h.timestamp_type) == (g.next_offset, g.compression, g.timestamp_type)
        and (h.base_sequence, h.is_transactional, h.is_control)
        == (g.base_sequence, g.is_transactional, g.is_control)
    )  # fmt: skip


def check_edit(
    original: tuple[bytes, int], edited: bytes | None, expect: Any, *, xerial_kept: bool = True
) -> None:
    """``edited`` is valid, framed like the original, and each record is ``expect(record,
    header)``; ``edited`` is None exactly when no record would change."""
    blob, complete = original
    before = entries(blob[:complete])
    wanted = [(h, [expect(r, h) for r in rs]) for h, rs in before]
    if all(rs == [expect(r, h) for r in rs] for h, rs in before):
        assert edited is None
        return
    assert edited is not None
    assert edited.endswith(blob[complete:])  # a cut trailing batch is kept as it was
    after = entries(
        edited[: len(edited) - (len(blob) - complete)] if complete < len(blob) else edited
    )
    assert len(after) == len(wanted)
    for (h, rs), (g, got) in zip(wanted, after, strict=True):
        assert same_frame(h, g)
        assert got == rs
    if xerial_kept:
        for (h, raw), (_g, raw2) in zip(iter_batches(blob), iter_batches(edited), strict=False):
            if h.compression is CompressionType.SNAPPY:
                assert (b"\x82SNAPPY\x00" in bytes(raw)) == (b"\x82SNAPPY\x00" in bytes(raw2))


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@given(blob=blobs(), part=st.sampled_from(["value", "key", "headers"]), seed=st.integers(0, 9))
@SETTINGS
def test_corrupt_payload_changes_every_byte_of_one_part_only(
    blob: tuple[bytes, int], part: str, seed: int
) -> None:
    edited = corrupt_payload(blob[0], part=part, seed=seed)  # type: ignore[arg-type]
    if edited is None:
        check_edit(blob, None, lambda r, h: r)
        return
    got = {r.offset: r for _h, rs in entries(complete(edited, blob)) for r in rs}
    for h, rs in entries(blob[0][: blob[1]]):
        for r in rs:
            g = got[r.offset]
            if h.is_control:
                assert g == r
                continue
            old = getattr(r, part) if part != "headers" else r.headers
            new = getattr(g, part) if part != "headers" else g.headers
            others = [f for f in ("key", "value", "headers", "timestamp") if f != part]
            assert all(getattr(g, f) == getattr(r, f) for f in others)
            if part == "headers":
                assert [k for k, _ in new] == [k for k, _ in old]
                pairs = [(a, b) for (_, a), (_, b) in zip(old, new, strict=True)]
            else:
                pairs = [(old, new)]
            for a, b in pairs:
                if not a:
                    assert a == b
                else:
                    assert b is not None and len(a) == len(b)
                    assert all(x != y for x, y in zip(a, b, strict=True))
    # Deterministic for a seed: the same bytes on a second firing.
    assert corrupt_payload(blob[0], part=part, seed=seed) == edited  # type: ignore[arg-type]


@given(
    blob=blobs(),
    sid=st.none() | st.integers(-(2**31), 2**31 - 1),
    magic=st.none() | st.integers(0, 255),
)
@SETTINGS
def test_schema_id_rewrites_only_registry_headers(
    blob: tuple[bytes, int], sid: int | None, magic: int | None
) -> None:
    if sid is None and magic is None:
        with pytest.raises(ValueError, match="id="):
            rewrite_schema_id(blob[0])
        return

    def expect(r: Record, h: BatchHeader) -> Record:
        v = r.value
        if h.is_control or v is None or len(v) < 5 or v[0] != 0:
            return r
        m, i = struct.unpack_from(">Bi", v)
        head = struct.pack(">Bi", m if magic is None else magic, i if sid is None else sid)
        return dataclasses.replace(r, value=head + v[5:])

    check_edit(blob, rewrite_schema_id(blob[0], schema_id=sid, magic=magic), expect)


@given(blob=blobs(), ms=st.integers(-(2**40), 2**40).filter(bool))
@SETTINGS
def test_skew_moves_create_time_only(blob: tuple[bytes, int], ms: int) -> None:
    def expect(r: Record, h: BatchHeader) -> Record:
        if h.is_control or h.magic == 0 or h.timestamp_type is TimestampType.LOG_APPEND_TIME:
            return r
        return dataclasses.replace(r, timestamp=max(0, r.timestamp + ms)) if r.timestamp >= 0 else r

    edited = skew_timestamps(blob[0], ms=ms)
    check_edit(blob, edited, expect)
    if edited is not None:
        for h, rs in entries(complete(edited, blob)):
            if (
                h.magic == 2
                and rs
                and h.timestamp_type is TimestampType.CREATE_TIME
                and not h.is_control
            ):
                assert h.max_timestamp == max(r.timestamp for r in rs)


def test_skew_keeps_each_record_delta_in_a_v2_batch() -> None:
    data = encode_batch([(b"a", b"1", None, TS), (b"b", b"2", None, TS + 5)])
    out = skew_timestamps(data, ms=-60_000)
    assert out is not None
    ((h, _raw),) = split_batches(out, check_crc=True)
    assert (h.base_timestamp, h.max_timestamp) == (TS - 60_000, TS - 60_000 + 5)
    assert [r.timestamp for r in decode_records(out)] == [TS - 60_000, TS - 59_995]


def test_compacted_batch_keeps_its_offset_range() -> None:
    """A batch whose last records were compacted away ends past its last record: the edit
    must keep that end, or the consumer would fetch the gap again."""
    data = encode_batch([Record(10, TS, b"k", b"\x00\x00\x00\x00\x01v")], base_offset=10)
    raw = bytearray(data)
    struct.pack_into(">i", raw, 23, 4)  # last offset delta 4: offsets 10..14
    struct.pack_into(">I", raw, 17, crc32c.crc32c(bytes(raw[21:])))
    for out in (
        corrupt_payload(bytes(raw), seed=1),
        rewrite_schema_id(bytes(raw), schema_id=9),
        skew_timestamps(bytes(raw), ms=1),
    ):
        assert out is not None
        ((h, _),) = split_batches(out, check_crc=True)
        assert (h.base_offset, h.next_offset) == (10, 15)


def test_a_batch_that_does_not_decode_is_left_as_it_is() -> None:
    """Another rule (corrupt_batch) may have broken a batch first: the edit skips it."""
    bad = bytearray(encode_batch([(b"k", b"\x00\x00\x00\x00\x01v")]))
    bad[-1] ^= 0xFF
    good = encode_batch([(b"k", b"value")], base_offset=1)
    out = corrupt_payload(bytes(bad) + good, seed=1)
    assert out is not None and out.startswith(bytes(bad))
    assert rewrite_schema_id(bytes(bad), schema_id=5) is None


def test_nothing_to_edit_is_none() -> None:
    plain = encode_batch([(b"k", b"not registry framed"), (None, None)])
    assert rewrite_schema_id(plain, schema_id=1) is None
    assert corrupt_payload(encode_batch([(None, b"")])) is None
    assert corrupt_payload(plain, part="headers") is None
    assert skew_timestamps(encode_batch([(b"k", b"v")], magic=0), ms=5) is None
    appended = encode_batch([(b"k", b"v", None, TS)], timestamp_type=TimestampType.LOG_APPEND_TIME)
    assert skew_timestamps(appended, ms=5) is None
    assert edit_records(b"", lambda r: r) is None


def test_bad_arguments_are_refused() -> None:
    data = encode_batch([(b"k", b"v")])
    with pytest.raises(ValueError, match="part must be one of"):
        corrupt_payload(data, part="body")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="32-bit"):
        rewrite_schema_id(data, schema_id=2**31)
    with pytest.raises(ValueError, match="byte"):
        rewrite_schema_id(data, magic=256)
    with pytest.raises(ValueError, match="non-zero"):
        skew_timestamps(data, ms=0)
    with pytest.raises(ValueError, match="complete batches"):
        prepend_batch(data, data[:30])


def test_prepend_batch_repeats_delivered_records_at_their_offsets() -> None:
    first = encode_batch([(b"a", b"1"), (b"b", b"2")], base_offset=0)
    second = encode_batch([(b"c", b"3")], base_offset=2)
    out = prepend_batch(second, first)
    assert [(r.offset, r.value) for r in decode_records(out)] == [(0, b"1"), (1, b"2"), (2, b"3")]

"""The produce path's record check: its strided fast path for runs of same-shaped records
must give exactly the verdict (and message) of the record-by-record check, for valid
batches and for every corruption."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockkafka.protocol.errors import ProtocolError
from mockkafka.protocol.records import (
    V2_HEADER_SIZE,
    _check_records,
    _check_v2_section,
    _read_varint,
    encode_batch,
)


def verdict_one_by_one(section: bytes, count: int) -> str:
    """What the record-by-record check alone says ("ok" or the error message)."""
    try:
        pos = _check_records(section, 0, 0, count, count, 7)
    except ProtocolError as exc:
        return str(exc)
    if pos != len(section):
        return (
            f"record batch at offset 7: {len(section) - pos} bytes left after the "
            f"{count} records it declares"
        )
    return "ok"


def verdict(section: bytes, count: int) -> str:
    try:
        _check_v2_section(section, count, 7)
    except ProtocolError as exc:
        return str(exc)
    return "ok"


@st.composite
def sections(draw: st.DrawFn) -> tuple[bytes, int]:
    """A records section of one producer batch: mostly same-shaped records (as a client
    batches them), sometimes a shape change, then a few corrupted bytes."""
    count = draw(st.integers(1, 300))
    key = draw(st.one_of(st.none(), st.binary(max_size=3)))
    size = draw(st.sampled_from([0, 5, 63, 64, 100, 200]))
    headers = draw(st.sampled_from([(), (("h", b"v"),), (("trace", None), ("é", b"x" * 70))]))
    odd = draw(st.sets(st.integers(0, count - 1), max_size=3))  # records of another shape
    ts_step = draw(st.sampled_from([0, 1, 3, 50]))
    records = [
        (key, b"v" * (size + (7 if i in odd else 0)), headers, 1000 + i * ts_step)
        for i in range(count)
    ]
    section = bytearray(encode_batch(records, base_timestamp=1000)[V2_HEADER_SIZE:])
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(section) - 1))
        section[at] = draw(st.integers(0, 255))
    declared = count + draw(st.sampled_from([0, 0, 0, -1, 1]))
    return bytes(section), max(declared, 0)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sections())
def test_fast_path_agrees_with_the_record_by_record_check(case: tuple[bytes, int]) -> None:
    section, count = case
    assert verdict(section, count) == verdict_one_by_one(section, count)


@pytest.mark.parametrize("at", [0, 1, 63, 64, 65, 150, 299])
@pytest.mark.parametrize("field", ["delta", "length", "header_key"])
def test_a_bad_record_deep_in_a_uniform_run_is_named(at: int, field: str) -> None:
    records = [(None, b"v" * 100, (("hk", b"1"),), 5) for _ in range(300)]
    section = bytearray(encode_batch(records, base_timestamp=5)[V2_HEADER_SIZE:])
    pos = 0
    for _ in range(at + 1):
        start = pos
        length, body = _read_varint(section, pos)
        pos = body + length
    if field == "delta":  # after the length, the attributes and a 1-byte timestamp delta
        section[body + 2] ^= 0x02
    elif field == "length":
        section[start] ^= 0x02
    else:  # the header key's first byte (key "hk", value "1" end the record), not UTF-8
        section[pos - 4] = 0xFF
    got = verdict(bytes(section), 300)
    assert got != "ok"
    assert got == verdict_one_by_one(bytes(section), 300)
    if field != "length":
        assert f"record {at}" in got

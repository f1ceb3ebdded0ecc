"""Strategies for what travels in Kafka messages: headers, records, encoded record batches."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import hypothesis.strategies as st
from hypothesis.errors import InvalidArgument

from mockkafka.protocol import records as rec
from mockkafka.protocol.compression import CompressionType
from mockkafka.strategies._common import check_bool, check_choices, check_int, named

#: Codec names as Kafka's ``compression.type`` spells them.
COMPRESSIONS = ("none", "gzip", "snappy", "lz4", "zstd")
MAGICS = (0, 1, 2)

_HEADER_KEYS = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=12
)


def _bytes_or_none(max_size: int, nullable: bool) -> st.SearchStrategy[bytes | None]:
    b = st.binary(max_size=max_size)
    return st.none() | b if nullable else b


def headers(
    *, max_size: int = 3, max_value_size: int = 16
) -> st.SearchStrategy[tuple[tuple[str, bytes | None], ...]]:
    """Record headers: a tuple of ``(key, value)`` with UTF-8 keys (duplicates allowed, as
    Kafka allows them) and values that may be None."""
    check_int(max_size, "max_size")
    check_int(max_value_size, "max_value_size")
    return _headers(max_size=max_size, max_value_size=max_value_size)


@st.composite
@named("headers")
def _headers(
    draw: st.DrawFn, *, max_size: int, max_value_size: int
) -> tuple[tuple[str, bytes | None], ...]:
    pair = st.tuples(_HEADER_KEYS, _bytes_or_none(max_value_size, True))
    return tuple(draw(st.lists(pair, max_size=max_size)))


def records(
    *,
    max_key_size: int = 16,
    max_value_size: int = 64,
    null_keys: bool = True,
    null_values: bool = True,
    with_headers: bool = True,
) -> st.SearchStrategy[rec.Record]:
    """One :class:`mockkafka.Record` (offset 0; a timestamp in ms >= 0; key, value and headers
    drawn). Give its key/value/headers to a producer, or lists of them to
    :func:`record_batches`. ``null_values=True`` includes tombstones."""
    check_int(max_key_size, "max_key_size")
    check_int(max_value_size, "max_value_size")
    for arg, v in (("null_keys", null_keys), ("null_values", null_values)):
        check_bool(v, arg)
    check_bool(with_headers, "with_headers")
    return _records(
        max_key_size=max_key_size,
        max_value_size=max_value_size,
        null_keys=null_keys,
        null_values=null_values,
        with_headers=with_headers,
    )


@st.composite
@named("records")
def _records(
    draw: st.DrawFn,
    *,
    max_key_size: int,
    max_value_size: int,
    null_keys: bool,
    null_values: bool,
    with_headers: bool,
) -> rec.Record:
    key = draw(_bytes_or_none(max_key_size, null_keys))
    value = draw(_bytes_or_none(max_value_size, null_values))
    hdrs = draw(_headers(max_size=3, max_value_size=16)) if with_headers else ()
    ts = draw(st.integers(min_value=0, max_value=2**41))
    return rec.Record(0, ts, key, value, hdrs)


@dataclass(frozen=True, slots=True)
class RecordBatch:
    """A drawn record batch: what was encoded and the wire bytes.

    ``records`` hold absolute offsets from ``base_offset``; for magic 0 the timestamps are -1
    and for magic 0/1 there are no headers (those formats have none). ``data`` is ready for a
    Produce ``records`` field; :func:`mockkafka.protocol.records.decode_records` gives back
    ``records``. The repr is valid Python.
    """

    magic: int
    compression: str
    base_offset: int
    records: tuple[rec.Record, ...]
    data: bytes
    snappy_xerial: bool = False

    @property
    def compression_type(self) -> CompressionType:
        return CompressionType[self.compression.upper()]


def record_batches(
    *,
    magics: Any = MAGICS,
    compressions: Any = COMPRESSIONS,
    min_records: int = 1,
    max_records: int = 5,
    max_value_size: int = 64,
) -> st.SearchStrategy[RecordBatch]:
    """Record batches in every message format (``magics`` 0, 1, 2) and codec
    (``compressions``: none, gzip, snappy raw and xerial, lz4, zstd), encoded with mockkafka's
    own codec. zstd is drawn only with magic 2 (Kafka allows it nowhere else); when that
    leaves no combination, InvalidArgument says so."""
    ms = (magics,) if isinstance(magics, int) else tuple(magics)
    for m in ms:
        if m not in MAGICS:
            raise InvalidArgument(f"magics: {m!r} is not a message format; valid: 0, 1, 2")
    if not ms:
        raise InvalidArgument("magics must not be empty; valid: 0, 1, 2")
    cs = check_choices(compressions, "compressions", COMPRESSIONS)
    if set(cs) == {"zstd"} and 2 not in ms:
        raise InvalidArgument("compressions=['zstd'] needs magic 2 in magics (zstd is v2-only)")
    check_int(min_records, "min_records")
    check_int(max_records, "max_records", minimum=max(min_records, 1))
    check_int(max_value_size, "max_value_size")
    return _record_batches(
        magics=ms,
        compressions=cs,
        min_records=min_records,
        max_records=max_records,
        max_value_size=max_value_size,
    )


@st.composite
@named("record_batches")
def _record_batches(
    draw: st.DrawFn,
    *,
    magics: tuple[int, ...],
    compressions: tuple[str, ...],
    min_records: int,
    max_records: int,
    max_value_size: int,
) -> RecordBatch:
    magic = draw(st.sampled_from(magics))
    allowed = [c for c in compressions if magic == 2 or c != "zstd"]
    if not allowed:
        magic = 2
        allowed = list(compressions)
    compression = draw(st.sampled_from(allowed))
    xerial = compression == "snappy" and draw(st.booleans())
    base = draw(st.integers(min_value=0, max_value=2**40))
    n = draw(st.integers(min_value=min_records, max_value=max_records))
    drawn = []
    for i in range(n):
        r = draw(
            _records(
                max_key_size=16,
                max_value_size=max_value_size,
                null_keys=True,
                null_values=magic == 2,
                with_headers=magic == 2,
            )
        )
        ts = -1 if magic == 0 else r.timestamp
        drawn.append(rec.Record(base + i, ts, r.key, r.value, r.headers))
    data = rec.encode_batch(
        drawn,
        base_offset=base,
        compression=CompressionType[compression.upper()],
        magic=magic,
        snappy_xerial=xerial,
    )
    return RecordBatch(magic, compression, base, tuple(drawn), data, xerial)

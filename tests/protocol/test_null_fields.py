"""Null where the schema forbids it is refused while decoding, for every message and version.

Kafka's generated parsers throw on a null in a non-nullable string, bytes or array field,
and the broker closes the connection without answering (``tests/oracle`` checks that
against a real broker). mockkafka's decoder does the same, so no handler ever sees such a
request. The frames here come from an encoder written independently of the codec (below):
every field present, arrays with one element so nested fields are reached, and exactly one
non-nullable field (top-level, nested or tagged) sent as null.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any

import pytest

from mockkafka.protocol.codec import MESSAGES, codec
from mockkafka.protocol.errors import ProtocolError

_FIXED = {"int8": 1, "bool": 1, "int16": 2, "uint16": 2, "int32": 4, "uint32": 4}
_FIXED |= {"int64": 8, "float64": 8, "uuid": 16}

Field = tuple[Any, ...]
Path = tuple[int, ...]


def _in(rng: Any, v: int) -> bool:
    return rng is not None and rng[0] <= v <= rng[1]


def _uvarint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


class _Writer:
    def __init__(self, version: int, flexible: bool) -> None:
        self.v = version
        self.flex = flexible

    def length(self, n: int, *, short: bool) -> bytes:
        """A string/bytes/array length; -1 is null."""
        if self.flex:
            return _uvarint(n + 1)
        return struct.pack(">h" if short else ">i", n)

    def value(self, ftype: str, sub: list[Field] | None, nullable: Any, null: Path | None) -> bytes:
        """One value; ``null == ()`` writes it as null, a longer path goes inside it."""
        if ftype in _FIXED:
            return bytes(_FIXED[ftype])
        if ftype in ("string", "bytes", "records"):
            if null == ():
                return self.length(-1, short=ftype == "string")
            return self.length(1, short=ftype == "string") + b"x"
        if ftype.startswith("[]"):
            if null == ():
                return self.length(-1, short=False)
            elem = ftype[2:]
            inner = null[1:] if null else None
            if elem == "struct":
                assert sub is not None
                return self.length(1, short=False) + self.fields(sub, inner)
            return self.length(1, short=False) + self.value(elem, None, None, inner)
        assert ftype == "struct" and sub is not None
        marker = b"\x01" if _in(nullable, self.v) else b""
        return marker + self.fields(sub, null)

    def fields(self, fields: list[Field], null: Path | None) -> bytes:
        """A struct: ``null[0]`` is the index (in ``fields``) of the field on the path."""
        out = b""
        tags: list[tuple[int, bytes]] = []
        for i, (_name, ftype, versions, nullable, tagged, tag, _d, sub, _j) in enumerate(fields):
            if not _in(versions, self.v):
                continue
            here = null[1:] if null and null[0] == i else None
            if self.flex and _in(tagged, self.v):
                if here is not None:
                    tags.append((int(tag), self.value(ftype, sub, nullable, here)))
                continue
            out += self.value(ftype, sub, nullable, here)
        if self.flex:
            out += _uvarint(len(tags))
            for tag, payload in tags:
                out += _uvarint(tag) + _uvarint(len(payload)) + payload
        return out


def _forbidden_nulls(fields: list[Field], v: int, flex: bool, path: Path = ()) -> Iterator[Path]:
    """Paths of every string/bytes/array field carried at ``v`` that may not be null (and of
    non-nullable strings/arrays inside arrays); a path ends with ``()`` for the element."""
    for i, (_name, ftype, versions, nullable, _tagged, _tag, _d, sub, _j) in enumerate(fields):
        if not _in(versions, v):
            continue
        here = (*path, i)
        if (ftype in ("string", "bytes") or ftype.startswith("[]")) and not _in(nullable, v):
            yield here
        if ftype == "struct" and sub:
            yield from _forbidden_nulls(sub, v, flex, here)
        elif ftype == "[]struct" and sub:
            # inside an element: the path steps through the array (an extra 0 index)
            for inner in _forbidden_nulls(sub, v, flex, ()):
                yield (*here, 0, *inner)
        elif ftype in ("[]string", "[]bytes"):
            yield (*here, 0)  # an element of an array of strings is never nullable


_MESSAGES = sorted(n for n, m in MESSAGES.items() if n not in ("RequestHeader", "ResponseHeader"))


@pytest.mark.parametrize("name", _MESSAGES)
def test_null_in_each_non_nullable_field_is_refused_at_decode(name: str) -> None:
    for lo, hi, flex_from, fields in MESSAGES[name]["segments"]:
        for v in range(lo, hi + 1):
            flex = flex_from is not None and v >= flex_from
            w = _Writer(v, flex)
            c = codec(name, v)
            valid = w.fields(fields, None)
            _msg, end = c.decode(valid)  # the independent writer agrees with the codec
            assert end == len(valid), (name, v)
            for path in _forbidden_nulls(fields, v, flex):
                with pytest.raises(ProtocolError, match="non-nullable"):
                    c.decode(w.fields(fields, path))
                    pytest.fail(f"{name} v{v}: null at field path {path} was accepted")


@pytest.mark.parametrize("version", [1, 12])
def test_a_nullable_field_still_decodes_null(version: int) -> None:
    c = codec("MetadataRequest", version)  # topics: nullable from v1 (all topics)
    assert c.decode(c.encode({"topics": None}))[0]["topics"] is None


def test_the_sweep_reaches_thousands_of_fields() -> None:
    """Guards the walker above: it must find the non-nullable fields it claims to test."""
    total = 0
    for name in _MESSAGES:
        for lo, hi, flex_from, fields in MESSAGES[name]["segments"]:
            for v in range(lo, hi + 1):
                flex = flex_from is not None and v >= flex_from
                total += sum(1 for _ in _forbidden_nulls(fields, v, flex))
    assert total > 2000, total

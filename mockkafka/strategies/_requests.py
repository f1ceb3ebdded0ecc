"""``requests()``: request bodies for any API and version, drawn from the message schemas."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import hypothesis.strategies as st
from hypothesis.errors import InvalidArgument

from mockkafka.protocol.apis import API_BY_NAME
from mockkafka.protocol.codec import Field, field_in_version, message_fields
from mockkafka.strategies._common import check_apis, check_names, named
from mockkafka.strategies._data import record_batches

_INT_BOUNDS = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "uint16": (0, 2**16 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
}


@dataclass(frozen=True, slots=True)
class DrawnRequest:
    """One drawn request: the API, the version and the body (a dict the codec encodes).
    The repr is valid Python."""

    api: str
    version: int
    body: dict[str, Any]


def requests(
    *, apis: Any = None, names: Any = ("orders",), max_array: int = 2
) -> st.SearchStrategy[DrawnRequest]:
    """Well-formed requests of ``apis`` (default: every API) at every version the schemas
    define, with field values drawn from their types: edge integers, ``names`` mixed into
    strings (so some requests hit real topics and groups), arrays of up to ``max_array``
    items, record batches in every format. Encode one with
    :class:`mockkafka.protocol.framing.ClientConnection` and send it to a broker."""
    api_names = check_apis(apis, tuple(sorted(API_BY_NAME)))
    check_names(names, "names")
    if isinstance(max_array, bool) or not isinstance(max_array, int) or not 0 <= max_array <= 10:
        raise InvalidArgument(f"max_array must be an integer in [0, 10], got {max_array!r}")
    return _requests(apis=api_names, names=tuple(names), max_array=max_array)


@st.composite
@named("requests")
def _requests(
    draw: st.DrawFn, *, apis: tuple[str, ...], names: tuple[str, ...], max_array: int
) -> DrawnRequest:
    api = API_BY_NAME[draw(st.sampled_from(apis))]
    version = draw(st.integers(api.min_version, api.max_version))
    body = draw(_struct(message_fields(api.request_name, version), version, names, max_array))
    return DrawnRequest(api.name, version, body)


def _value(ftype: str, sub: Any, version: int, names: tuple[str, ...], n: int) -> Any:
    if ftype in _INT_BOUNDS:
        lo, hi = _INT_BOUNDS[ftype]
        edges = [v for v in (0, 1, -1, lo, hi) if lo <= v <= hi]
        return st.sampled_from(edges) | st.integers(max(lo, -5), min(hi, 100))
    if ftype == "bool":
        return st.booleans()
    if ftype == "float64":
        return st.floats(allow_nan=False, allow_infinity=False)
    if ftype == "string":
        return st.sampled_from(names) | st.text(max_size=8)
    if ftype == "bytes":
        return st.binary(max_size=16)
    if ftype == "uuid":
        return st.just(uuid.UUID(int=0)) | st.uuids()
    if ftype == "records":
        return st.none() | record_batches(max_records=2, max_value_size=8).map(lambda b: b.data)
    if ftype == "struct":
        return _struct(sub, version, names, n)
    if ftype.startswith("[]"):
        return st.lists(_value(ftype[2:], sub, version, names, n), max_size=n)
    raise AssertionError(f"no strategy for schema type {ftype}")


@st.composite
def _struct(
    draw: st.DrawFn, fields: list[Field], version: int, names: tuple[str, ...], n: int
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in fields:
        name, ftype, _versions, nullable, _tagged, _tag, _default, sub = f[:8]
        if not field_in_version(f, version):
            continue
        values = _value(ftype, sub, version, names, n)
        if nullable is not None and nullable[0] <= version <= nullable[1]:
            values = st.none() | values
        out[name] = draw(values)
    return out

"""Message codec: every Kafka API message at every version, both directions.

Theory of operation
-------------------
``MESSAGES`` (generated from Kafka's JSON schemas, see ``_schema_data``) describes each message as
version segments with a field tree. The first time a (message, version) is used, this module
writes the Python source of two specialised functions for it -- a decoder and an encoder, with
nested structs inlined and runs of fixed-width fields folded into one ``struct`` call -- and
compiles them with ``exec``. Later calls cost one dict lookup. The generated code inlines
the common cases -- one-byte varints, empty tagged-field sections, short arrays of
fixed-width elements -- and calls the helpers below only for the rare ones; ``source`` on a
:class:`MessageCodec` shows what was generated. ``benchmarks/bench_codec.py`` measures it.

One field breaks the schema's own rule: the request header's ``client_id`` keeps its int16
length even in the flexible header v2 (``"flexibleVersions": "none"`` in the JSON, which the
generated table does not carry), so that any broker can read the header of an ApiVersions
request of any version. :func:`codec` special-cases it.

Messages are plain ``dict`` objects keyed by snake_case field names (``throttle_time_ms``,
``partition_index``): arrays are lists, structs are dicts, ``uuid`` is :class:`uuid.UUID`,
``bytes`` is :class:`bytes`, and ``records`` stays raw bytes (see ``records.py`` to look
inside). Decoding fills every field of the message's schema, using the schema default for
fields the version does not carry; encoding takes defaults for missing keys, so a handler
only names the fields it cares about. Tagged fields are written only when they differ from
their default, and unknown tags are skipped on read.

Malformed input raises :class:`~mockkafka.protocol.errors.ProtocolError`, never another
exception type.

Strict encoding (:func:`set_strict_encode` or ``MOCKKAFKA_STRICT_ENCODE=1``, on in the
project's own tests) also refuses a
key that is no field of the message at any version -- a misspelt field would otherwise be
dropped silently -- with a did-you-mean. Keys of fields other versions carry stay allowed,
so a handler may fill one dict for every version.
"""

from __future__ import annotations

import ast
import difflib
import os
import struct
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, cast

from mockkafka.protocol._schema_data import FIELDS as _FIELDS
from mockkafka.protocol._schema_data import SUMMARY as _SUMMARY
from mockkafka.protocol.errors import ProtocolError, UnsupportedVersion

SUMMARY = cast(
    "dict[str, tuple[int | None, str, tuple[tuple[int, int, int | None], ...]]]", _SUMMARY
)
"""Each message's api key, type and version segments (lo, hi, flexible_from), without its
fields: what the API table (``apis.py``) needs, read at import."""


class _Messages(Mapping[str, dict[str, Any]]):
    """The schema table, name -> ``{api_key, type, segments: [(lo, hi, flexible_from,
    fields)]}``: a message's fields are parsed from the generated source (``_schema_data``)
    the first time it is asked for, so a process pays for the messages it speaks only (all
    of them took tens of milliseconds of every start). Raises KeyError for an unknown name."""

    def __init__(self) -> None:
        self._parsed: dict[str, dict[str, Any]] = {}

    def __getitem__(self, name: str) -> dict[str, Any]:
        msg = self._parsed.get(name)
        if msg is None:
            api_key, kind, bounds = SUMMARY[name]
            fields = ast.literal_eval(_FIELDS[name])
            segments = [(lo, hi, flex, f) for (lo, hi, flex), f in zip(bounds, fields, strict=True)]
            msg = self._parsed[name] = {"api_key": api_key, "type": kind, "segments": segments}
        return msg

    def __iter__(self) -> Iterator[str]:
        return iter(SUMMARY)

    def __len__(self) -> int:
        return len(SUMMARY)


MESSAGES: Mapping[str, dict[str, Any]] = _Messages()
"""The generated schema table (see ``_schema_data`` and :class:`_Messages`)."""

Message = dict[str, Any]
Decoder = Callable[[bytes, int], tuple[Message, int]]
Encoder = Callable[[bytearray, Message], None]

ZERO_UUID = uuid.UUID(int=0)

_FIXED = {
    "int8": ("b", 1),
    "int16": ("h", 2),
    "uint16": ("H", 2),
    "int32": ("i", 4),
    "uint32": ("I", 4),
    "int64": ("q", 8),
    "float64": ("d", 8),
    "bool": ("?", 1),
}


class _Truncated(Exception):
    pass


# ---------------------------------------------------------------------------------------------
# Runtime helpers used by generated code (the common cases are inlined there).
# ---------------------------------------------------------------------------------------------


def _ruv(b: bytes, p: int) -> tuple[int, int]:
    """Read an unsigned varint of at most 5 bytes."""
    x = b[p]
    if x < 0x80:
        return x, p + 1
    result = x & 0x7F
    shift = 7
    while True:
        p += 1
        x = b[p]
        result |= (x & 0x7F) << shift
        if x < 0x80:
            return result, p + 1
        shift += 7
        if shift > 28:
            raise ProtocolError("unsigned varint longer than 5 bytes")


def _wuv(o: bytearray, v: int) -> None:
    """Write an unsigned varint."""
    if v < 0:
        raise OverflowError(f"unsigned varint cannot hold {v}")
    while v >= 0x80:
        o.append((v & 0x7F) | 0x80)
        v >>= 7
    o.append(v)


def _skip_tags(b: bytes, p: int) -> int:
    """Skip a tagged-field section none of whose tags the schema knows."""
    n, p = _ruv(b, p)
    for _ in range(n):
        _tag, p = _ruv(b, p)
        size, p = _ruv(b, p)
        p += size
        if p > len(b):
            raise _Truncated
    return p


_SMALL_ARRAY = 64
"""Arrays of fixed-width elements shorter than this use a precompiled struct per length."""

_ARRAY_UNPACK = {
    fmt: tuple(struct.Struct(f">{k}{fmt}").unpack_from for k in range(_SMALL_ARRAY))
    for fmt in {f for f, _size in _FIXED.values()}
}
_ARRAY_PACK = {
    fmt: tuple(struct.Struct(f">{k}{fmt}").pack for k in range(_SMALL_ARRAY))
    for fmt in {f for f, _size in _FIXED.values()}
}


def _rarray(b: bytes, p: int, n: int, fmt: str, size: int) -> tuple[list[Any], int]:
    """Read ``n`` fixed-width elements (the long-array case)."""
    end = p + n * size
    if end > len(b):
        raise _Truncated
    return list(struct.unpack_from(f">{n}{fmt}", b, p)), end


def _warray(o: bytearray, fmt: str, values: list[Any]) -> None:
    o += struct.pack(f">{len(values)}{fmt}", *values)


def _uuid_from_int(value: int) -> uuid.UUID:
    """``uuid.UUID(int=value)`` without the argument checks (a third of the cost)."""
    u = _new_object(_UUID)
    _set_attribute(u, "int", value)
    _set_attribute(u, "is_safe", _SAFE_UNKNOWN)
    return u


_UUID = uuid.UUID
_SAFE_UNKNOWN = uuid.SafeUUID.unknown
_new_object = object.__new__
_set_attribute = object.__setattr__
if _uuid_from_int(12345) != uuid.UUID(int=12345):  # pragma: no cover - a future uuid module

    def _uuid_from_int(value: int) -> uuid.UUID:
        return uuid.UUID(int=value)


def _ruuid(b: bytes, p: int) -> tuple[uuid.UUID, int]:
    end = p + 16
    if end > len(b):
        raise _Truncated
    value = int.from_bytes(b[p:end])
    if value == 0:
        return ZERO_UUID, end
    return _uuid_from_int(value), end


_ZERO16 = bytes(16)
_I32 = struct.Struct(">i")
_I16 = struct.Struct(">h")
_NULL16 = b"\xff\xff"
_NULL32 = b"\xff\xff\xff\xff"


def _as_bytes(v: Any) -> bytes | bytearray | memoryview:
    if isinstance(v, bytes | bytearray | memoryview):
        return v
    if isinstance(v, list | tuple):
        return b"".join(v)
    raise TypeError(f"expected bytes, got {type(v).__name__}")


def _wbytes(o: bytearray, v: Any) -> None:
    if v is None:
        o += _NULL32
        return
    v = _as_bytes(v)
    o += _I32.pack(len(v))
    o += v


def _wcbytes(o: bytearray, v: Any) -> None:
    if v is None:
        o.append(0)
        return
    v = _as_bytes(v)
    _wuv(o, len(v) + 1)
    o += v


def _wuuid(o: bytearray, v: uuid.UUID | None) -> None:
    o += _ZERO16 if v is None else v.bytes


# ---------------------------------------------------------------------------------------------
# Schema lookup
# ---------------------------------------------------------------------------------------------

Field = tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class _Segment:
    lo: int
    hi: int
    flexible_from: int | None
    fields: list[Field]


def _segment(name: str, version: int) -> _Segment:
    msg = MESSAGES.get(name)
    if msg is None:
        raise KeyError(name)
    for lo, hi, flex, fields in msg["segments"]:
        if lo <= version <= hi:
            return _Segment(lo, hi, flex, fields)
    raise UnsupportedVersion(
        msg["api_key"] if msg["api_key"] is not None else -1,
        version,
        f"{name} has no version {version}",
    )


def _in(rng: tuple[int, int] | None, v: int) -> bool:
    return rng is not None and rng[0] <= v <= rng[1]


# ---------------------------------------------------------------------------------------------
# Code generation
# ---------------------------------------------------------------------------------------------


class _Gen:
    """Writes the source of one decoder/encoder pair.

    The generated code inlines the common cases -- one-byte varints, empty tagged-field
    sections, short arrays of fixed-width elements (one precompiled ``struct`` per length)
    -- and calls the runtime helpers above only for the rare ones.
    """

    def __init__(self, version: int, flexible: bool) -> None:
        self.version = version
        self.flexible = flexible
        self.lines: list[str] = []
        self.ns: dict[str, Any] = {
            "_ruv": _ruv,
            "_wuv": _wuv,
            "_skip_tags": _skip_tags,
            "_rarray": _rarray,
            "_warray": _warray,
            "_ruuid": _ruuid,
            "_wbytes": _wbytes,
            "_wcbytes": _wcbytes,
            "_wuuid": _wuuid,
            "_Truncated": _Truncated,
            "_ProtocolError": ProtocolError,
            "_ZERO_UUID": ZERO_UUID,
            "_read_i16": _I16.unpack_from,
            "_read_i32": _I32.unpack_from,
            "_pack_i16": _I16.pack,
            "_pack_i32": _I32.pack,
            "_NULL16": _NULL16,
            "_NULL32": _NULL32,
            "_bytes": bytes,
        }
        self.n = 0

    def var(self, stem: str = "v") -> str:
        self.n += 1
        return f"{stem}{self.n}"

    def const(self, value: Any, stem: str = "C") -> str:
        name = self.var("_" + stem)
        self.ns[name] = value
        return name

    def emit(self, indent: int, line: str) -> None:
        self.lines.append("    " * indent + line)

    # -- defaults ---------------------------------------------------------------------------

    def default_expr(self, field: Field) -> str:
        """A Python expression giving a fresh default value for ``field``."""
        _name, ftype, _versions, _nullable, _tagged, _tag, default, sub, _j = field
        if ftype == "struct":
            if default is None:
                return "None"
            return self.struct_default_expr(sub)
        if ftype.startswith("[]"):
            return "None" if default is None else "[]"
        if ftype == "uuid":
            return "_ZERO_UUID"
        return repr(default)

    def struct_default_expr(self, fields: list[Field]) -> str:
        parts = [f"{f[0]!r}: {self.default_expr(f)}" for f in fields]
        return "{" + ", ".join(parts) + "}"

    # -- decoding ---------------------------------------------------------------------------

    def dec_uv(self, indent: int, var: str) -> None:
        """Read an unsigned varint at ``p`` into ``var``; one-byte values inline."""
        self.emit(indent, f"{var} = b[p]")
        self.emit(indent, f"if {var} < 128:")
        self.emit(indent + 1, "p += 1")
        self.emit(indent, "else:")
        self.emit(indent + 1, f"{var}, p = _ruv(b, p)")

    def dec_count(self, indent: int, var: str, compact: bool) -> None:
        """Read an array or string length (-1 for null) into ``var``."""
        if compact:
            self.dec_uv(indent, var)
            self.emit(indent, f"{var} -= 1")
        else:
            self.emit(indent, f"{var}, = _read_i32(b, p)")
            self.emit(indent, "p += 4")

    def dec_struct(self, fields: list[Field], indent: int, target: str) -> None:
        """Emit statements decoding a struct at ``p`` in ``b`` into the dict ``target``."""
        v = self.version
        values: dict[str, str] = {}
        run: list[tuple[str, str, int]] = []  # (var, fmt, size)

        def flush() -> None:
            if not run:
                return
            fmt = ">" + "".join(r[1] for r in run)
            size = sum(r[2] for r in run)
            unpack = self.const(struct.Struct(fmt).unpack_from, "S")
            names = ", ".join(r[0] for r in run)
            self.emit(indent, f"{names}, = {unpack}(b, p)")
            self.emit(indent, f"p += {size}")
            run.clear()

        tagged: list[Field] = []
        for f in fields:
            name, ftype, versions, _nullable, tagged_v, _tag, _d, _sub, _j = f
            if not _in(versions, v):
                values[name] = self.default_expr(f)
                continue
            if self.flexible and _in(tagged_v, v):
                tagged.append(f)
                continue
            var = self.var()
            values[name] = var
            if ftype in _FIXED:
                fmt, size = _FIXED[ftype]
                run.append((var, fmt, size))
                continue
            flush()
            self.dec_value(f, indent, var)
        flush()
        if self.flexible:
            self.dec_tags(tagged, values, indent)
        items = ", ".join(f"{k!r}: {val}" for k, val in values.items())
        self.emit(indent, f"{target} = {{{items}}}")

    def dec_tags(self, tagged: list[Field], values: dict[str, str], indent: int) -> None:
        """Emit the tagged-field section: known tags decoded, unknown ones skipped."""
        if not tagged:
            self.emit(indent, "if b[p]:")
            self.emit(indent + 1, "p = _skip_tags(b, p)")
            self.emit(indent, "else:")
            self.emit(indent + 1, "p += 1")
            return
        tag_vars: dict[int, tuple[Field, str]] = {}
        for f in tagged:
            var = self.var()
            values[f[0]] = var
            tag_vars[f[5]] = (f, var)
            self.emit(indent, f"{var} = {self.default_expr(f)}")
        self.emit(indent, "if b[p]:")
        cnt = self.var("n")
        self.dec_uv(indent + 1, cnt)
        i = self.var("i")
        self.emit(indent + 1, f"for {i} in range({cnt}):")
        tg = self.var("t")
        sz = self.var("z")
        end = self.var("e")
        self.dec_uv(indent + 2, tg)
        self.dec_uv(indent + 2, sz)
        self.emit(indent + 2, f"{end} = p + {sz}")
        self.emit(indent + 2, f"if {end} > lb: raise _Truncated")
        first = True
        for tag in sorted(tag_vars):
            f, var = tag_vars[tag]
            kw = "if" if first else "elif"
            first = False
            self.emit(indent + 2, f"{kw} {tg} == {tag}:")
            self.dec_value(f, indent + 3, var)
        self.emit(indent + 2, f"p = {end}")
        self.emit(indent, "else:")
        self.emit(indent + 1, "p += 1")

    def dec_null(self, f: Field, indent: int, var: str) -> None:
        """Emit the null case of a string, bytes or array field: None where the schema lets
        the version carry null, else a ProtocolError (Kafka refuses such a request while
        parsing it, and closes the connection)."""
        name, _ftype, _versions, nullable, *_rest = f
        if _in(nullable, self.version):
            self.emit(indent, f"{var} = None")
        else:
            what = self.const(f"non-nullable field {name or 'array element'} was null", "N")
            self.emit(indent, f"raise _ProtocolError({what})")

    def dec_value(self, f: Field, indent: int, var: str) -> None:
        """Emit statements decoding one non-fixed (or tagged) field value into ``var``."""
        _name, ftype, _versions, nullable, _tagged, _tag, _d, sub, _j = f
        flex = self.flexible
        if ftype in _FIXED:
            fmt, size = _FIXED[ftype]
            unpack = self.const(struct.Struct(">" + fmt).unpack_from, "S")
            self.emit(indent, f"{var}, = {unpack}(b, p)")
            self.emit(indent, f"p += {size}")
        elif ftype in ("string", "legacy_string", "bytes", "records"):
            text = ftype in ("string", "legacy_string")
            n = self.var("n")
            if flex and ftype != "legacy_string":
                self.dec_count(indent, n, compact=True)
            elif text:
                self.emit(indent, f"{n}, = _read_i16(b, p)")
                self.emit(indent, "p += 2")
            else:
                self.dec_count(indent, n, compact=False)
            end = self.var("e")
            self.emit(indent, f"if {n} < 0:")
            self.dec_null(f, indent + 1, var)
            self.emit(indent, "else:")
            self.emit(indent + 1, f"{end} = p + {n}")
            self.emit(indent + 1, f"if {end} > lb: raise _Truncated")
            # Malformed UTF-8 is replaced, not refused: Kafka reads strings with
            # new String(bytes, UTF_8), so a client id or name with a bad byte gets an answer.
            decode = ".decode('utf-8', 'replace')" if text else ""
            self.emit(indent + 1, f"{var} = b[p:{end}]{decode}")
            self.emit(indent + 1, f"p = {end}")
        elif ftype == "uuid":
            self.emit(indent, f"{var}, p = _ruuid(b, p)")
        elif ftype == "struct":
            if _in(nullable, self.version):
                m = self.var("m")
                self.emit(indent, f"{m} = b[p]")
                self.emit(indent, "p += 1")
                self.emit(indent, f"if {m} > 127:")
                self.emit(indent + 1, f"{var} = None")
                self.emit(indent, "else:")
                self.dec_struct(sub, indent + 1, var)
            else:
                self.dec_struct(sub, indent, var)
        elif ftype.startswith("[]"):
            cnt = self.var("n")
            self.dec_count(indent, cnt, compact=flex)
            self.emit(indent, f"if {cnt} < 0:")
            self.dec_null(f, indent + 1, var)
            elem = ftype[2:]
            if elem in _FIXED:
                fmt, size = _FIXED[elem]
                small = self.const(_ARRAY_UNPACK[fmt], "AU")
                self.emit(indent, f"elif {cnt} < {_SMALL_ARRAY}:")
                self.emit(indent + 1, f"{var} = list({small}[{cnt}](b, p))")
                self.emit(indent + 1, f"p += {cnt} * {size}")
                self.emit(indent, "else:")
                self.emit(indent + 1, f"{var}, p = _rarray(b, p, {cnt}, {fmt!r}, {size})")
                return
            self.emit(indent, "else:")
            self.emit(indent + 1, f"if p + {cnt} > lb: raise _Truncated")
            self.emit(indent + 1, f"{var} = []")
            app = self.var("a")
            self.emit(indent + 1, f"{app} = {var}.append")
            i = self.var("i")
            self.emit(indent + 1, f"for {i} in range({cnt}):")
            ev = self.var("x")
            if elem == "struct":
                self.dec_struct(sub, indent + 2, ev)
            else:
                self.dec_value(
                    (None, elem, None, None, None, None, None, None, None), indent + 2, ev
                )
            self.emit(indent + 2, f"{app}({ev})")
        else:  # pragma: no cover - generator guarantees known types
            raise AssertionError(ftype)

    # -- encoding ---------------------------------------------------------------------------

    def enc_uv(self, indent: int, expr: str) -> None:
        """Write ``expr`` as an unsigned varint; one-byte values inline."""
        k = self.var("k")
        self.emit(indent, f"{k} = {expr}")
        self.emit(indent, f"if {k} < 128: o.append({k})")
        self.emit(indent, f"else: _wuv(o, {k})")

    def enc_struct(self, fields: list[Field], indent: int, src: str) -> None:
        """Emit statements encoding the dict ``src`` onto bytearray ``o``."""
        v = self.version
        run: list[tuple[str, str, int]] = []

        def flush() -> None:
            if not run:
                return
            fmt = ">" + "".join(r[1] for r in run)
            pack = self.const(struct.Struct(fmt).pack, "P")
            self.emit(indent, f"o += {pack}({', '.join(r[0] for r in run)})")
            run.clear()

        tagged: list[Field] = []
        for f in fields:
            name, ftype, versions, _nullable, tagged_v, _tag, default, _sub, _j = f
            if not _in(versions, v):
                continue
            if self.flexible and _in(tagged_v, v):
                tagged.append(f)
                continue
            if ftype in _FIXED:
                run.append((f"{src}.get({name!r}, {default!r})", _FIXED[ftype][0], 0))
                continue
            flush()
            var = self.var()
            self.emit(indent, f"{var} = {src}.get({name!r})")
            self.enc_value(f, indent, var)
        flush()
        if not self.flexible:
            return
        if not tagged:
            self.emit(indent, "o.append(0)")
            return
        tl = self.var("tl")
        self.emit(indent, f"{tl} = []")
        for f in sorted(tagged, key=lambda f: f[5]):
            name, _ftype, _versions, _nullable, _tv, tag, _default, _sub, _j = f
            var = self.var()
            self.emit(indent, f"{var} = {src}.get({name!r})")
            # Compute the encoding of the default once, at compile time.
            default_bytes = self._encode_default(f)
            db = self.const(default_bytes, "D")
            saved = self.var("so")
            self.emit(indent, f"if {var} is not None:")
            self.emit(indent + 1, f"{saved} = o")
            self.emit(indent + 1, "o = bytearray()")
            self.enc_value(f, indent + 1, var)
            self.emit(indent + 1, f"if o != {db}: {tl}.append(({tag}, o))")
            self.emit(indent + 1, f"o = {saved}")
        self.emit(indent, f"if {tl}:")
        self.enc_uv(indent + 1, f"len({tl})")
        tg = self.var("t")
        tb = self.var("tb")
        self.emit(indent + 1, f"for {tg}, {tb} in {tl}:")
        self.enc_uv(indent + 2, tg)
        self.enc_uv(indent + 2, f"len({tb})")
        self.emit(indent + 2, f"o += {tb}")
        self.emit(indent, "else:")
        self.emit(indent + 1, "o.append(0)")

    def _encode_default(self, f: Field) -> bytes:
        sub_gen = _Gen(self.version, self.flexible)
        sub_gen.emit(0, "def _enc(o):")
        sub_gen.emit(1, f"v0 = {sub_gen.default_expr(f)}")
        sub_gen.emit(1, "if v0 is None: return")
        sub_gen.enc_value(f, 1, "v0")
        ns = sub_gen.compile()
        o = bytearray()
        ns["_enc"](o)
        return bytes(o)

    def enc_value(self, f: Field, indent: int, var: str) -> None:
        _name, ftype, _versions, nullable, _tv, _tag, default, sub, _j = f
        flex = self.flexible
        is_nullable = _in(nullable, self.version)
        if ftype in _FIXED:
            pack = self.const(struct.Struct(">" + _FIXED[ftype][0]).pack, "P")
            self.emit(indent, f"o += {pack}({var} if {var} is not None else {default!r})")
        elif ftype in ("string", "legacy_string"):
            compact = flex and ftype == "string"
            if default is not None and not is_nullable:
                self.emit(indent, f"if {var} is None: {var} = {default!r}")
            e = self.var("e")
            self.emit(indent, f"if {var} is None:")
            self.emit(indent + 1, "o.append(0)" if compact else "o += _NULL16")
            self.emit(indent, "else:")
            self.emit(indent + 1, f"{e} = {var}.encode()")
            if compact:
                self.enc_uv(indent + 1, f"len({e}) + 1")
            else:
                self.emit(indent + 1, f"o += _pack_i16(len({e}))")
            self.emit(indent + 1, f"o += {e}")
        elif ftype in ("bytes", "records"):
            if ftype == "bytes" and not is_nullable:
                self.emit(indent, f"if {var} is None: {var} = b''")
            self.emit(indent, f"if {var}.__class__ is _bytes:")
            if flex:
                self.enc_uv(indent + 1, f"len({var}) + 1")
            else:
                self.emit(indent + 1, f"o += _pack_i32(len({var}))")
            self.emit(indent + 1, f"o += {var}")
            self.emit(indent, "else:")
            self.emit(indent + 1, f"{'_wcbytes' if flex else '_wbytes'}(o, {var})")
        elif ftype == "uuid":
            self.emit(indent, f"_wuuid(o, {var})")
        elif ftype == "struct":
            if is_nullable:
                self.emit(indent, f"if {var} is None:")
                self.emit(indent + 1, "o.append(255)")
                self.emit(indent, "else:")
                self.emit(indent + 1, "o.append(1)")
                self.enc_struct(sub, indent + 1, var)
            else:
                self.emit(indent, f"if {var} is None: {var} = {{}}")
                self.enc_struct(sub, indent, var)
        elif ftype.startswith("[]"):
            elem = ftype[2:]
            self.emit(indent, f"if {var} is None:")
            if is_nullable:
                self.emit(indent + 1, "o.append(0)" if flex else "o += _NULL32")
            else:
                self.emit(indent + 1, "o.append(1)" if flex else "o += bytes(4)")
            self.emit(indent, "else:")
            k = self.var("k")
            self.emit(indent + 1, f"{k} = len({var})")
            if flex:
                self.enc_uv(indent + 1, f"{k} + 1")
            else:
                self.emit(indent + 1, f"o += _pack_i32({k})")
            if elem in _FIXED:
                fmt = _FIXED[elem][0]
                small = self.const(_ARRAY_PACK[fmt], "AP")
                self.emit(indent + 1, f"if {k} < {_SMALL_ARRAY}: o += {small}[{k}](*{var})")
                self.emit(indent + 1, f"else: _warray(o, {fmt!r}, {var})")
                return
            ev = self.var("x")
            self.emit(indent + 1, f"for {ev} in {var}:")
            if elem == "struct":
                self.enc_struct(sub, indent + 2, ev)
            else:
                self.enc_value(
                    (None, elem, None, None, None, None, None, None, None), indent + 2, ev
                )
        else:  # pragma: no cover
            raise AssertionError(ftype)

    def compile(self) -> dict[str, Any]:
        src = "\n".join(self.lines)
        ns = dict(self.ns)
        try:
            exec(compile(src, "<mockkafka-codec>", "exec"), ns)
        except SyntaxError as exc:  # pragma: no cover - a generator bug
            raise AssertionError(f"{exc}\n{src}") from exc
        ns["__source__"] = src
        return ns


_DECODE_ERRORS = (
    _Truncated,
    struct.error,
    IndexError,
    UnicodeDecodeError,
    ValueError,
    OverflowError,
    MemoryError,
    RecursionError,
)


@dataclass(frozen=True, slots=True)
class MessageCodec:
    """Encoder and decoder of one message at one version.

    ``decode(data, pos)`` returns ``(message, end)``; ``encode(message)`` returns bytes and
    ``encode_into(out, message)`` appends to a bytearray. Build it with :func:`codec`.
    """

    name: str
    version: int
    flexible: bool
    _decode: Decoder
    _encode: Encoder
    source: str

    def decode(self, data: bytes | bytearray | memoryview, pos: int = 0) -> tuple[Message, int]:
        """Decode one message starting at ``pos``; raises ProtocolError on malformed input."""
        if not isinstance(data, bytes):
            data = bytes(data)
        try:
            return self._decode(data, pos)
        except ProtocolError as exc:
            raise ProtocolError(f"malformed {self.name} v{self.version}: {exc}") from None
        except _DECODE_ERRORS as exc:
            raise ProtocolError(
                f"malformed {self.name} v{self.version}: "
                f"{'truncated' if isinstance(exc, _Truncated | IndexError | struct.error) else exc}"
            ) from None

    def encode(self, message: Message) -> bytes:
        """Encode ``message`` (missing keys take schema defaults)."""
        out = bytearray()
        self.encode_into(out, message)
        return bytes(out)

    def encode_into(self, out: bytearray, message: Message) -> None:
        """Append the encoding of ``message`` to ``out``.

        A value of the wrong type raises ``ValueError`` naming the message and version; so
        does an unknown key in strict mode (:func:`set_strict_encode`).
        """
        if _strict_encode:
            check_keys(self.name, self.version, message)
        try:
            self._encode(out, message)
        except (struct.error, TypeError, AttributeError, OverflowError) as exc:
            raise ValueError(f"cannot encode {self.name} v{self.version}: {exc}") from exc

    def default(self) -> Message:
        """A message with every field at its schema default (start a response from it)."""
        msg, _ = self._decode_defaults()
        return msg

    def _decode_defaults(self) -> tuple[Message, int]:
        return self.decode(self.encode({}))


_CACHE: dict[tuple[str, int], MessageCodec] = {}

#: Strict from the start when the environment says so (inherited by `mockkafka serve`
#: subprocesses of the test suite).
_strict_encode = os.environ.get("MOCKKAFKA_STRICT_ENCODE", "") not in ("", "0")


def set_strict_encode(strict: bool) -> bool:
    """Refuse unknown keys when encoding (True) or ignore them (False, the default);
    returns the previous setting. The project's tests turn it on for every test."""
    global _strict_encode
    previous, _strict_encode = _strict_encode, bool(strict)
    return previous


# message -> {field name: subfields (None for a scalar)}, over every version and segment.
_KEYS: dict[str, dict[str, Any]] = {}


def _merge_keys(tree: dict[str, Any], fields: list[Field]) -> dict[str, Any]:
    for f in fields:
        if f[7]:
            tree[f[0]] = _merge_keys(tree.get(f[0]) or {}, f[7])
        else:
            tree.setdefault(f[0], None)
    return tree


def check_keys(name: str, version: int, message: Message) -> None:
    """Raise ValueError naming any key of ``message`` (nested ones too) that is no field of
    message ``name`` at any version."""
    tree = _KEYS.get(name)
    if tree is None:
        msg = MESSAGES.get(name)
        if msg is None:
            raise KeyError(name)
        tree = {}
        for _lo, _hi, _flex, fields in msg["segments"]:
            _merge_keys(tree, fields)
        _KEYS[name] = tree
    _check(tree, message, f"{name} v{version}", "")


def _check(tree: dict[str, Any], value: Any, where: str, path: str) -> None:
    if isinstance(value, list):
        for i, item in enumerate(value):
            _check(tree, item, where, f"{path}[{i}]")
        return
    if not isinstance(value, dict):
        return
    for key, item in value.items():
        if key not in tree:
            close = difflib.get_close_matches(str(key), list(tree), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ValueError(
                f"cannot encode {where}: unknown field {path + '.' if path else ''}{key}{hint}"
            )
        sub = tree[key]
        if sub is not None:
            _check(sub, item, where, f"{path}.{key}" if path else str(key))


def codec(name: str, version: int) -> MessageCodec:
    """The codec of message ``name`` (e.g. ``"FetchResponse"``) at ``version``.

    Raises :class:`UnsupportedVersion` when the schemas have no such version and ``KeyError``
    for an unknown message name.
    """
    key = (name, version)
    c = _CACHE.get(key)
    if c is not None:
        return c
    seg = _segment(name, version)
    flexible = seg.flexible_from is not None and version >= seg.flexible_from
    if name == "RequestHeader":
        flexible = version >= 2
    elif name == "ResponseHeader":
        flexible = version >= 1
    gen = _Gen(version, flexible)
    fields = seg.fields
    if name == "RequestHeader":
        # The client id keeps its two-byte length even in the flexible header v2, so that
        # any broker can read the header of an ApiVersions request of any version.
        fields = [
            ("client_id", "legacy_string", *f[2:]) if f[0] == "client_id" else f for f in fields
        ]
    gen.emit(0, "def _decode(b, p):")
    gen.emit(1, "lb = len(b)")
    gen.dec_struct(fields, 1, "m")
    gen.emit(1, "return m, p")
    gen.emit(0, "def _encode(o, m):")
    start = len(gen.lines)
    gen.enc_struct(fields, 1, "m")
    if len(gen.lines) == start:
        gen.emit(1, "pass")
    ns = gen.compile()
    c = MessageCodec(name, version, flexible, ns["_decode"], ns["_encode"], ns["__source__"])
    _CACHE[key] = c
    return c


def message_fields(name: str, version: int) -> list[Field]:
    """The schema field tuples of a message at a version (all of its segment).

    Each is ``(name, type, versions, nullable, tagged, tag, default, subfields, json_name)``.
    """
    return _segment(name, version).fields


def field_in_version(field: Field, version: int) -> bool:
    """Whether the schema field is carried at ``version``."""
    return _in(field[2], version)


def field_names(name: str, version: int) -> list[str]:
    """Top-level field names of a message at a version (those the version carries)."""
    seg = _segment(name, version)
    return [f[0] for f in seg.fields if _in(f[2], version)]

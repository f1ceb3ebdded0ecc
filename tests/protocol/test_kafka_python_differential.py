"""Differential test: our codec and kafka-python's protocol classes write the same bytes.

kafka-python 3 builds its request/response classes from Kafka's JSON schemas (the same files
our ``4.3-kafka-python`` schema folder holds) with an independent code generator. For every
message and version both support, a hypothesis-generated message is built in both libraries;
the body bytes must be identical, and our decoder must read kafka-python's bytes back to the
same message.

Translation rules (each a documented kafka-python convention, not a wire difference):

- kafka-python names fields ``underscore_name(json name)``; fields are matched by their JSON
  name, so naming never matters.
- A few kafka-python schemas are patched to read an ``int32`` authorized-operations field as
  a ``bitfield`` (a set of bit numbers), some also renaming it ``authorized_operations``; the
  int is converted to that set.
- Kafka 4.4 renamed a few fields that kafka-python's 4.3 copies still call by the old name
  (same type, same position, same bytes): :data:`RENAMED_SINCE_4_3` maps new to old.
- A tagged field is "absent" in kafka-python when it equals kafka-python's default, which for
  tagged structs is None and for uuids is None; our codec omits a tagged field whose
  encoding equals the schema default's. A tagged value equal to our default is therefore
  handed to kafka-python as kafka-python's default.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from mockkafka.protocol.codec import MESSAGES, ZERO_UUID, Message, codec

try:  # the test modules of this folder import as top-level modules (no __init__.py) ...
    from test_codec import (  # type: ignore[import-not-found]
        ROUND_TRIP_EXAMPLES,
        Field,
        in_range,
        message_dicts,
        project,
        schema_fields,
    )
except ImportError:  # ... or as a package when the folder has one
    from tests.protocol.test_codec import (
        ROUND_TRIP_EXAMPLES,
        Field,
        in_range,
        message_dicts,
        project,
        schema_fields,
    )

kafka_protocol = pytest.importorskip("kafka.protocol")
from kafka.protocol.api_message import ApiMessage  # noqa: E402
from kafka.protocol.schemas.fields.codecs.types import BitField  # noqa: E402


def _kafka_python_classes() -> dict[str, Any]:
    """Every kafka-python request/response class, by its schema name."""
    for mod in pkgutil.walk_packages(kafka_protocol.__path__, "kafka.protocol."):
        if ".old" not in mod.name and "generate_stubs" not in mod.name:
            importlib.import_module(mod.name)
    found: dict[str, Any] = {}
    todo = list(ApiMessage.__subclasses__())
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if getattr(cls, "_class_version", None) is None and getattr(cls, "_json", None):
            found[cls.name] = cls
    return found


KP_CLASSES = _kafka_python_classes()


def _cases() -> list[tuple[str, int]]:
    cases = []
    for name, cls in sorted(KP_CLASSES.items()):
        if name not in MESSAGES:
            continue
        lo, hi = cls.valid_versions
        ours = {
            v
            for seg_lo, seg_hi, _f, _fs in MESSAGES[name]["segments"]
            for v in range(seg_lo, seg_hi + 1)
        }
        cases += [(name, v) for v in range(lo, hi + 1) if v in ours]
    return cases


CASES = _cases()


def test_kafka_python_covers_the_client_facing_apis() -> None:
    names = {n for n, _ in CASES}
    assert {"ProduceRequest", "FetchResponse", "MetadataResponse", "JoinGroupRequest"} <= names
    assert len(CASES) > 400


# ---------------------------------------------------------------------------------------------
# Our message dict -> kafka-python object
# ---------------------------------------------------------------------------------------------


def _our_default(f: Field, version: int) -> Any:
    """The value our decoder gives a field absent from the wire (in-version fields only)."""
    ftype, default, sub = f[1], f[6], f[7]
    if ftype == "struct":
        if default is None:
            return None
        return {s[0]: _our_default(s, version) for s in sub if in_range(s[2], version)}
    if ftype.startswith("[]"):
        return None if default is None else []
    if ftype == "uuid":
        return ZERO_UUID
    return default


def _to_kp_value(kf: Any, f: Field, value: Any, version: int, flexible: bool) -> Any:
    if value is None:
        return None
    if kf.is_struct():
        return _to_kp_struct(kf, kf.data_class, f[7], value, version, flexible)
    if kf.is_struct_array():
        return [
            _to_kp_struct(kf.array_of, kf.data_class, f[7], x, version, flexible) for x in value
        ]
    if kf.is_array():
        return list(value)
    if kf.type_str == "bitfield":
        return BitField.from_32_bit_field(value & 0xFFFFFFFF)
    return value


# Kafka 4.4 JSON name -> the name in kafka-python's 4.3 schemas (a rename, not a wire change).
RENAMED_SINCE_4_3 = {"GenerationIdOrMemberEpoch": "GenerationId"}


def _to_kp_struct(
    kp_struct: Any,
    data_class: Any,
    fields: list[Field],
    value: Message,
    version: int,
    flexible: bool,
) -> Any:
    by_json_name = {kf._name: kf for kf in kp_struct._fields}
    kwargs = {}
    for f in fields:
        if not in_range(f[2], version):
            continue
        kf = by_json_name.get(f[8]) or by_json_name.get(RENAMED_SINCE_4_3.get(f[8], ""))
        if kf is None and f[8].endswith("AuthorizedOperations"):
            kf = by_json_name.get("authorized_operations")  # kafka-python's json_patch
        if kf is None:  # pragma: no cover - the schemas come from the same files
            pytest.fail(f"kafka-python has no field {f[8]} in {kp_struct.name} v{version}")
        v = value[f[0]]
        if flexible and in_range(f[4], version) and v == _our_default(f, version):
            kwargs[kf.name] = kf.default
        else:
            kwargs[kf.name] = _to_kp_value(kf, f, v, version, flexible)
    return data_class(version=version, **kwargs)


def kafka_python_encode(name: str, version: int, msg: Message) -> bytes:
    cls = KP_CLASSES[name]
    flexible = cls.flexible_version_q(version)
    obj = _to_kp_struct(cls._struct, cls, schema_fields(name, version), msg, version, flexible)
    return bytes(obj.encode(version=version))


# ---------------------------------------------------------------------------------------------
# The differential test
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "version"), CASES, ids=[f"{n}-v{v}" for n, v in CASES])
def test_same_bytes_as_kafka_python(name: str, version: int) -> None:
    ours = codec(name, version)
    fields = schema_fields(name, version)

    @settings(
        max_examples=max(ROUND_TRIP_EXAMPLES // 2, 1),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(message_dicts(name, version))
    def check(msg: Message) -> None:
        theirs = kafka_python_encode(name, version, msg)
        assert ours.encode(msg) == theirs
        decoded, end = ours.decode(theirs)
        assert end == len(theirs)
        assert project(decoded, fields, version) == msg

    check()

"""Kafka's own serializers agree with mockkafka's codec, message by message, version by version.

``java/wire-src/WireCheck.java`` runs against the kafka-clients 4.4.0 jar: for each line
``MessageName version hex`` it reads our bytes with Kafka's generated ``*Data`` class (the
code the Java client and broker use), writes the message back with Kafka's serializer and
dumps every field it read. For every message Kafka 4.4 defines and every version it
supports, random messages built from our schema data must

* be read by Kafka with no byte left over and no error;
* come back from Kafka's writer as exactly our bytes;
* hold, field by field, the values we encoded (so a field written at the wrong place or with
  the wrong type cannot hide behind a symmetric mistake).

Kafka's version range of each message must lie inside ours (the generator covers 4.4), so a
version our codec lacks fails here. Versions only older Kafka served (e.g. Produce v0-v2)
come from the older schema folders and are checked by the golden and kafka-python tests.
"""

from __future__ import annotations

import json
import random
import subprocess
import uuid
from typing import Any

import pytest

from mockkafka.protocol.codec import MESSAGES, ZERO_UUID, Message, codec
from tests.interop._build import KAFKA_CLIENTS_VERSIONS, Program, build_java_wire

pytestmark = [pytest.mark.java, pytest.mark.interop]

Field = tuple[Any, ...]
#: Random messages per (message, version), besides the all-defaults one.
EXAMPLES = 3
SEED = 20260425

_INT_RANGES = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "uint16": (0, 2**16 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "uint32": (0, 2**32 - 1),
    "int64": (-(2**63), 2**63 - 1),
}


def _in(rng: tuple[int, int] | None, version: int) -> bool:
    return rng is not None and rng[0] <= version <= rng[1]


def _fields(name: str, version: int) -> list[Field]:
    for lo, hi, _flex, fields in MESSAGES[name]["segments"]:
        if lo <= version <= hi:
            return list(fields)
    raise KeyError((name, version))


def _versions(name: str) -> set[int]:
    return {v for lo, hi, _f, _fs in MESSAGES[name]["segments"] for v in range(lo, hi + 1)}


def _random_value(rnd: random.Random, f: Field, version: int, depth: int = 0) -> Any:
    ftype, nullable, sub = f[1], _in(f[3], version), f[7]
    if nullable and rnd.random() < 0.2:
        return None
    if ftype.startswith("[]"):
        elem = (f[0], ftype[2:], f[2], None, None, None, None, sub, f[8])
        n = rnd.randint(0, 2 if depth < 3 else 0)
        return [_random_value(rnd, elem, version, depth + 1) for _ in range(n)]
    if ftype == "struct":
        return _random_struct(rnd, sub, version, depth + 1)
    if ftype in _INT_RANGES:
        lo, hi = _INT_RANGES[ftype]
        return rnd.choice([lo, hi, 0, -1 if lo < 0 else 1, rnd.randint(lo, hi)])
    if ftype == "float64":
        return rnd.choice([0.0, -1.5, rnd.uniform(-1e9, 1e9)])
    if ftype == "bool":
        return rnd.random() < 0.5
    if ftype == "string":
        return "".join(rnd.choice("ab-_.Zé€😀") for _ in range(rnd.randint(0, 6)))
    if ftype in ("bytes", "records"):
        return rnd.randbytes(rnd.randint(0, 8))
    if ftype == "uuid":
        return ZERO_UUID if rnd.random() < 0.2 else uuid.UUID(int=rnd.getrandbits(128))
    raise AssertionError(f"unknown schema type {ftype}")


def _random_struct(rnd: random.Random, fields: list[Field], version: int, depth: int) -> Message:
    return {f[0]: _random_value(rnd, f, version, depth) for f in fields if _in(f[2], version)}


def _java_name(json_name: str) -> str:
    return json_name[0].lower() + json_name[1:]


def _expected(value: Any, f: Field, version: int) -> Any:
    """Our value as WireCheck dumps Kafka's (uuids and bytes as hex)."""
    if value is None:
        return None
    ftype = f[1]
    if ftype == "struct":
        return _expected_struct(value, f[7], version)
    if ftype.startswith("[]"):
        elem = (f[0], ftype[2:], f[2], None, None, None, None, f[7], f[8])
        return [_expected(x, elem, version) for x in value]
    if ftype == "uuid":
        return f"{value.int:032x}"
    if ftype in ("bytes", "records"):
        return bytes(value).hex()
    if ftype == "float64":
        return float(value)
    return value


def _expected_struct(value: Message, fields: list[Field], version: int) -> Message:
    return {
        _java_name(f[8]): _expected(value[f[0]], f, version) for f in fields if _in(f[2], version)
    }


def _project(java: Any, fields: list[Field], version: int, where: str) -> Message:
    """Kafka's dump reduced to the fields ``version`` carries (Kafka's objects hold all)."""
    out: Message = {}
    for f in fields:
        if not _in(f[2], version):
            continue
        key = _java_name(f[8])
        assert key in java, f"{where}: Kafka's class has no field {key}"
        v = java[key]
        if v is not None and f[1] == "struct":
            v = _project(v, f[7], version, f"{where}.{key}")
        elif v is not None and f[1] == "[]struct":
            v = [_project(x, f[7], version, f"{where}.{key}[]") for x in v]
        elif v is not None and f[1] == "float64":
            v = float(v)
        out[key] = v
    return out


@pytest.fixture(scope="module")
def wire() -> Program:
    return build_java_wire(KAFKA_CLIENTS_VERSIONS[0])


def _ask(program: Program, lines: list[str]) -> list[dict[str, Any]]:
    proc = subprocess.run(
        list(program.command),
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    answers = [json.loads(x) for x in proc.stdout.splitlines()]
    assert len(answers) == len(lines), proc.stderr[-4000:]
    return answers


KAFKA_MESSAGES = sorted(n for n, m in MESSAGES.items() if m["type"] in ("request", "response"))


def _kafka_ranges(wire: Program) -> dict[str, list[int]]:
    """message -> [lowest, highest] version kafka-clients knows (absent: Kafka removed it)."""
    answers = _ask(wire, [f"range {n}" for n in KAFKA_MESSAGES])
    return {n: a["range"] for n, a in zip(KAFKA_MESSAGES, answers, strict=True) if "range" in a}


def test_every_message_kafka_4_4_defines_is_in_the_codec_at_every_version(wire: Program) -> None:
    ranges = _kafka_ranges(wire)
    # Kafka 4.4 removed only the ZooKeeper-era inter-broker APIs.
    gone = sorted(set(KAFKA_MESSAGES) - set(ranges))
    assert all(
        n.removesuffix("Request").removesuffix("Response")
        in {"ControlledShutdown", "LeaderAndIsr", "StopReplica", "UpdateMetadata"}
        for n in gone
    ), gone
    missing = {
        n: sorted(set(range(lo, hi + 1)) - _versions(n))
        for n, (lo, hi) in ranges.items()
        if not set(range(lo, hi + 1)) <= _versions(n)
    }
    assert not missing, f"versions Kafka 4.4 has and our codec lacks: {missing}"
    # 4.4 dropped the early-access v0 share APIs (the 4.0 folder still supplies them).
    assert ranges["ShareFetchRequest"] == [1, 2] and ranges["StreamsGroupHeartbeatRequest"] == [
        0,
        1,
    ]


def test_kafka_reads_our_bytes_and_writes_them_back_identically(wire: Program) -> None:
    ranges = _kafka_ranges(wire)
    rnd = random.Random(SEED)
    cases: list[tuple[str, int, Message]] = []
    for name, (lo, hi) in sorted(ranges.items()):
        for version in range(lo, hi + 1):
            fields = _fields(name, version)
            cases.append((name, version, _random_struct(rnd, [], version, 0)))  # all defaults
            cases += [
                (name, version, _random_struct(rnd, fields, version, 0)) for _ in range(EXAMPLES)
            ]
    lines = [f"{n} {v} {codec(n, v).encode(m).hex()}" for n, v, m in cases]
    answers = _ask(wire, lines)
    failures: list[str] = []
    for (name, version, _msg), line, answer in zip(cases, lines, answers, strict=True):
        where = f"{name} v{version}"
        ours = line.split(" ")[2]
        if "hex" not in answer:
            failures.append(f"{where}: Kafka could not read our bytes: {answer} ({ours})")
            continue
        if answer["hex"] != ours:
            failures.append(f"{where}: ours {ours}\n  Kafka's {answer['hex']}")
            continue
        fields = _fields(name, version)
        decoded, _end = codec(name, version).decode(bytes.fromhex(ours))
        want = _expected_struct(decoded, fields, version)
        got = _project(answer["value"], fields, version, where)
        if got != want:
            failures.append(f"{where}: Kafka read {got}\n  we encoded {want}")
    assert not failures, f"{len(failures)} of {len(cases)} differ:\n" + "\n".join(failures[:10])
    assert len(cases) > 1500  # every (message, version) of Kafka 4.4, four messages each

"""The message codec: every (message, version) round-trips, and the wire details are Kafka's.

The hypothesis strategy builder here (:func:`message_dicts`) walks the generated schema
(``MESSAGES``) and draws a valid message dict of one message at one version: only the fields
that version carries, nullable values only where the version allows null. The kafka-python
differential test reuses it.
"""

from __future__ import annotations

import contextlib
import functools
import os
import struct
import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockkafka.protocol.apis import request_header_version, response_header_version
from mockkafka.protocol.codec import MESSAGES, ZERO_UUID, Message, codec, field_names
from mockkafka.protocol.errors import ProtocolError, UnsupportedVersion
from mockkafka.protocol.framing import (
    NEED_DATA,
    ClientConnection,
    Request,
    Response,
    ServerConnection,
)

Field = tuple[Any, ...]  # (name, type, versions, nullable, tagged, tag, default, sub, json_name)

ROUND_TRIP_EXAMPLES = int(os.environ.get("MOCKKAFKA_CODEC_EXAMPLES", "10"))
"""Examples per (message, version); raise it for a deeper local run (80 takes ~1.5 min)."""

# ---------------------------------------------------------------------------------------------
# Schema walking and the strategy builder
# ---------------------------------------------------------------------------------------------


def in_range(rng: tuple[int, int] | None, version: int) -> bool:
    return rng is not None and rng[0] <= version <= rng[1]


def schema_fields(name: str, version: int) -> list[Field]:
    """The top-level field tuples of ``name`` in the segment covering ``version``."""
    for lo, hi, _flex, fields in MESSAGES[name]["segments"]:
        if lo <= version <= hi:
            return list(fields)
    raise KeyError((name, version))


ALL_MESSAGE_VERSIONS: list[tuple[str, int]] = [
    (name, v)
    for name, msg in sorted(MESSAGES.items())
    for lo, hi, _flex, _fields in msg["segments"]
    for v in range(lo, hi + 1)
]

_INT_RANGES = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "uint16": (0, 2**16 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "uint32": (0, 2**32 - 1),
    "int64": (-(2**63), 2**63 - 1),
}


def value_strategy(
    ftype: str, nullable: bool, sub: list[Field] | None, version: int
) -> st.SearchStrategy[Any]:
    """Values of one schema type at ``version`` (``nullable``: may be None there)."""
    base: st.SearchStrategy[Any]
    if ftype in _INT_RANGES:
        lo, hi = _INT_RANGES[ftype]
        base = st.integers(lo, hi)
    elif ftype == "float64":
        base = st.floats(allow_nan=False)
    elif ftype == "bool":
        base = st.booleans()
    elif ftype == "string":
        base = st.text(st.characters(codec="utf-8"), max_size=10)
    elif ftype in ("bytes", "records"):
        base = st.binary(max_size=12)
    elif ftype == "uuid":
        base = st.one_of(st.just(ZERO_UUID), st.uuids())
    elif ftype == "struct":
        assert sub is not None
        base = struct_strategy(sub, version)
    elif ftype.startswith("[]"):
        base = st.lists(value_strategy(ftype[2:], False, sub, version), max_size=3)
    else:  # pragma: no cover - the generator knows no other types
        raise AssertionError(ftype)
    return st.none() | base if nullable else base


def struct_strategy(fields: list[Field], version: int) -> st.SearchStrategy[Message]:
    return st.fixed_dictionaries(
        {
            f[0]: value_strategy(f[1], in_range(f[3], version), f[7], version)
            for f in fields
            if in_range(f[2], version)
        }
    )


@functools.cache
def message_dicts(name: str, version: int) -> st.SearchStrategy[Message]:
    """Valid messages of ``name`` at ``version``: exactly the fields that version carries."""
    return struct_strategy(schema_fields(name, version), version)


def project(decoded: Message, fields: list[Field], version: int) -> Message:
    """``decoded`` reduced to the fields ``version`` carries (recursively).

    Asserts on the way that decoding filled every field of the schema, in-version or not.
    """
    assert set(decoded) == {f[0] for f in fields}
    out: Message = {}
    for f in fields:
        if not in_range(f[2], version):
            continue
        value = decoded[f[0]]
        if value is not None and f[1] == "struct":
            value = project(value, f[7], version)
        elif value is not None and f[1] == "[]struct":
            value = [project(x, f[7], version) for x in value]
        out[f[0]] = value
    return out


# ---------------------------------------------------------------------------------------------
# Round trip of every message at every version
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "version"), ALL_MESSAGE_VERSIONS, ids=[f"{n}-v{v}" for n, v in ALL_MESSAGE_VERSIONS]
)
def test_every_message_version_round_trips(name: str, version: int) -> None:
    c = codec(name, version)
    fields = schema_fields(name, version)

    @settings(
        max_examples=ROUND_TRIP_EXAMPLES,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(message_dicts(name, version))
    def check(msg: Message) -> None:
        data = c.encode(msg)
        decoded, end = c.decode(data)
        assert end == len(data)
        assert project(decoded, fields, version) == msg
        assert c.encode(decoded) == data
        # Decoding from an offset inside a larger buffer gives the same message.
        assert c.decode(b"\xaa\xbb" + data + b"\xcc", 2) == (decoded, len(data) + 2)

    check()


@given(st.data())
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_corrupted_messages_decode_or_raise_protocol_error(data: st.DataObject) -> None:
    name, version = data.draw(st.sampled_from(ALL_MESSAGE_VERSIONS))
    c = codec(name, version)
    wire = bytearray(c.encode(data.draw(message_dicts(name, version))))
    for _ in range(data.draw(st.integers(0, 4))):
        if wire:
            wire[data.draw(st.integers(0, len(wire) - 1))] = data.draw(st.integers(0, 255))
    wire += data.draw(st.binary(max_size=4))
    cut = data.draw(st.integers(0, len(wire)))
    with contextlib.suppress(ProtocolError):
        c.decode(bytes(wire[:cut]))


def test_default_messages_round_trip_and_are_fresh_objects() -> None:
    for name, version in ALL_MESSAGE_VERSIONS:
        c = codec(name, version)
        d = c.default()
        data = c.encode(d)
        assert c.decode(data) == (d, len(data))
    a = codec("FetchResponse", 12).default()
    a["responses"].append({"topic": "x"})
    assert codec("FetchResponse", 12).default()["responses"] == []


# ---------------------------------------------------------------------------------------------
# Wire details
# ---------------------------------------------------------------------------------------------


def test_tagged_field_is_written_only_when_it_differs_from_its_default() -> None:
    c = codec("ApiVersionsResponse", 3)
    # error_code, api_keys (compact, empty), throttle_time_ms, no tagged fields
    empty = bytes.fromhex("0000 01 00000000 00")
    assert c.encode({}) == empty
    assert c.encode({"finalized_features_epoch": -1, "zk_migration_ready": False}) == empty
    assert c.encode({"finalized_features_epoch": 7}) == bytes.fromhex(
        "0000 01 00000000 01 01 08 0000000000000007"
    )
    # Tags are written in ascending order whatever the dict order.
    both = c.encode({"zk_migration_ready": True, "finalized_features_epoch": 7})
    assert both.endswith(bytes.fromhex("02 01 08 0000000000000007 03 01 01"))


def test_tagged_struct_with_default_value_is_omitted() -> None:
    c = codec("FetchResponse", 12)
    part = {"partition_index": 0, "records": b"", "current_leader": {"leader_id": -1}}
    plain = c.encode({"responses": [{"topic": "t", "partitions": [part]}]})
    # empty records, then the partition, topic and message tag sections, all empty
    assert plain.endswith(b"\x01\x00\x00\x00")
    part["current_leader"] = {"leader_id": 3, "leader_epoch": 9}
    tagged = c.encode({"responses": [{"topic": "t", "partitions": [part]}]})
    # tag count 1, tag 1, size 9: leader_id, leader_epoch, empty nested tags
    assert bytes.fromhex("01 01 09 00000003 00000009 00") in tagged
    decoded, _ = c.decode(tagged)
    assert decoded["responses"][0]["partitions"][0]["current_leader"] == {
        "leader_id": 3,
        "leader_epoch": 9,
    }


def test_unknown_tags_are_skipped_on_read() -> None:
    c = codec("ApiVersionsResponse", 3)
    body = bytes.fromhex("0000 01 00000000")
    # Two tags: the known tag 1 (finalized_features_epoch) and an unknown tag 300 (a 2-byte
    # varint) whose 3 bytes must be skipped.
    tags = bytes.fromhex("02 01 08 0000000000000005 ac02 03 aabbcc")
    msg, end = c.decode(body + tags + b"tail")
    assert end == len(body + tags)
    assert msg["finalized_features_epoch"] == 5
    # Re-encoding drops what it does not know.
    assert c.encode(msg) == body + bytes.fromhex("01 01 08 0000000000000005")


def test_unknown_tags_in_a_struct_without_known_tags_are_skipped() -> None:
    c = codec("HeartbeatRequest", 4)
    base = c.encode({"group_id": "g", "generation_id": 1, "member_id": "m"})
    assert base.endswith(b"\x00")
    with_tags = base[:-1] + bytes.fromhex("01 05 02 abcd")
    assert c.decode(with_tags)[0] == c.decode(base)[0]


def test_a_tag_whose_size_overruns_the_buffer_is_a_protocol_error() -> None:
    c = codec("HeartbeatRequest", 4)
    base = c.encode({"group_id": "g"})
    with pytest.raises(ProtocolError):
        c.decode(base[:-1] + bytes.fromhex("01 05 10 ab"))


def test_nullable_struct_uses_a_one_byte_marker() -> None:
    c = codec("DescribeTopicPartitionsRequest", 0)
    # topics (empty), response_partition_limit 2000, cursor null (-1), no tags
    assert c.encode({}) == bytes.fromhex("01 000007d0 ff 00")
    cursor = {"topic_name": "t", "partition_index": 3}
    data = c.encode({"cursor": cursor})
    assert data == bytes.fromhex("01 000007d0 01 0274 00000003 00 00")
    assert c.decode(data)[0]["cursor"] == cursor
    # Any negative marker reads as null, as in Kafka.
    assert c.decode(bytes.fromhex("01 000007d0 80 00"))[0]["cursor"] is None


def test_legacy_and_compact_strings_and_arrays() -> None:
    topics = {"topics": [{"name": "ab"}], "allow_auto_topic_creation": True}
    # v8: int32 array length, int16 string length
    assert codec("MetadataRequest", 8).encode(topics) == bytes.fromhex(
        "00000001 0002 6162 01 00 00"
    )
    # v9: varint length + 1, string varint length + 1, tagged-field sections
    assert codec("MetadataRequest", 9).encode(topics) == bytes.fromhex("02 03 6162 00 01 00 00 00")
    # Null arrays: -1 in legacy versions, 0 in compact ones.
    assert codec("MetadataRequest", 8).encode({"topics": None})[:4] == b"\xff\xff\xff\xff"
    assert codec("MetadataRequest", 9).encode({"topics": None})[:1] == b"\x00"
    # Null and empty strings.
    legacy, compact = codec("ProduceRequest", 8), codec("ProduceRequest", 9)
    assert legacy.encode({"transactional_id": None})[:2] == b"\xff\xff"
    assert legacy.encode({"transactional_id": ""})[:2] == b"\x00\x00"
    assert compact.encode({"transactional_id": None})[:1] == b"\x00"
    assert compact.encode({"transactional_id": ""})[:1] == b"\x01"
    for c in (legacy, compact):
        for tid in (None, "", "tx-1"):
            assert c.decode(c.encode({"transactional_id": tid}))[0]["transactional_id"] == tid


def test_multi_byte_varint_lengths_round_trip() -> None:
    c = codec("MetadataRequest", 9)
    msg = {"topics": [{"name": "t" * 200}] * 130}
    data = c.encode(msg)
    assert data[:2] == bytes.fromhex("8301")  # 131 as a varint
    assert data[2:4] == bytes.fromhex("c901")  # 201 as a varint
    assert [t["name"] for t in c.decode(data)[0]["topics"]] == ["t" * 200] * 130


@pytest.mark.parametrize("n", [0, 1, 63, 64, 65, 1000])
def test_fixed_width_arrays_of_any_length_round_trip(n: int) -> None:
    for version in (8, 12):  # legacy and compact
        c = codec("MetadataResponse", version)
        part = {"partition_index": 1, "replica_nodes": list(range(n)), "isr_nodes": [-1] * n}
        msg = {"topics": [{"name": "t", "partitions": [part]}]}
        decoded = c.decode(c.encode(msg))[0]
        got = decoded["topics"][0]["partitions"][0]
        assert got["replica_nodes"] == list(range(n))
        assert got["isr_nodes"] == [-1] * n


def test_varints_longer_than_five_bytes_are_rejected() -> None:
    c = codec("MetadataRequest", 9)
    with pytest.raises(ProtocolError, match="varint"):
        c.decode(bytes.fromhex("ffffffffff01 000000"))
    # Five bytes are fine (here a huge count, which then fails as truncated input).
    with pytest.raises(ProtocolError, match="truncated"):
        c.decode(bytes.fromhex("ffffffff0f 000000"))


def test_decoding_fills_defaults_for_fields_the_version_lacks() -> None:
    msg, end = codec("MetadataRequest", 0).decode(bytes.fromhex("00000000"))
    assert end == 4
    assert msg == {
        "topics": [],
        "allow_auto_topic_creation": True,
        "include_cluster_authorized_operations": False,
        "include_topic_authorized_operations": False,
    }
    resp, _ = codec("MetadataResponse", 0).decode(bytes.fromhex("00000000 00000000"))
    assert resp["cluster_id"] is None
    assert resp["controller_id"] == -1
    assert resp["throttle_time_ms"] == 0


def test_encoding_takes_schema_defaults_for_missing_keys() -> None:
    # FetchRequest v4: replica_id -1, max_wait_ms, min_bytes, max_bytes 0x7fffffff,
    # isolation_level, topics (empty)
    assert codec("FetchRequest", 4).encode({}) == bytes.fromhex(
        "ffffffff 00000000 00000000 7fffffff 00 00000000"
    )
    # A non-nullable string given None is written as its default.
    assert codec("HeartbeatRequest", 0).encode({"group_id": None})[:2] == b"\x00\x00"


def test_every_prefix_of_a_message_is_a_protocol_error() -> None:
    c = codec("FetchResponse", 13)
    part = {"partition_index": 2, "records": b"abc", "aborted_transactions": [{}]}
    data = c.encode({"responses": [{"topic_id": uuid.uuid4(), "partitions": [part]}]})
    for cut in range(len(data)):
        with pytest.raises(ProtocolError):
            c.decode(data[:cut])


def test_invalid_utf8_is_replaced_as_kafka_reads_it() -> None:
    """Kafka reads strings with ``new String(bytes, UTF_8)``: a malformed byte becomes U+FFFD
    and the request is answered (a client id with a stray byte once closed the connection)."""
    msg, _ = codec("HeartbeatRequest", 0).decode(bytes.fromhex("0002ff00 00000001 0000"))
    assert msg["group_id"] == "\ufffd\x00"


def test_encoding_a_value_of_the_wrong_type_names_the_message() -> None:
    with pytest.raises(ValueError, match="HeartbeatRequest v0"):
        codec("HeartbeatRequest", 0).encode({"generation_id": "one"})
    with pytest.raises(ValueError, match="MetadataRequest v9"):
        codec("MetadataRequest", 9).encode({"topics": [{"name": 5}]})


def test_uuids_decode_to_real_uuid_objects() -> None:
    u = uuid.UUID("0123456789abcdef0123456789abcdef")
    c = codec("MetadataRequest", 12)
    msg = c.decode(c.encode({"topics": [{"topic_id": u, "name": None}]}))[0]
    got = msg["topics"][0]["topic_id"]
    assert got == u
    assert hash(got) == hash(u)
    assert str(got) == str(u)
    assert isinstance(got, uuid.UUID)
    zero = c.decode(c.encode({"topics": [{"topic_id": None}]}))[0]["topics"][0]["topic_id"]
    assert zero == ZERO_UUID


def test_memoryview_and_bytearray_input_decode_like_bytes() -> None:
    c = codec("HeartbeatRequest", 4)
    data = c.encode({"group_id": "g", "member_id": "m"})
    assert c.decode(memoryview(data)) == c.decode(data) == c.decode(bytearray(data))


def test_records_and_bytes_accept_buffers() -> None:
    c = codec("ProduceRequest", 9)
    topic = {"name": "t", "partition_data": [{"index": 0, "records": memoryview(b"xyz")}]}
    decoded = c.decode(c.encode({"topic_data": [topic]}))[0]
    assert decoded["topic_data"][0]["partition_data"][0]["records"] == b"xyz"


def test_unknown_message_and_version() -> None:
    with pytest.raises(KeyError):
        codec("NoSuchRequest", 0)
    with pytest.raises(UnsupportedVersion) as info:
        codec("MetadataRequest", 500)
    assert info.value.api_key == 3
    assert info.value.api_version == 500
    assert "topics" in field_names("MetadataRequest", 12)


# ---------------------------------------------------------------------------------------------
# Headers
# ---------------------------------------------------------------------------------------------


def test_api_versions_responses_always_use_header_v0() -> None:
    for v in (0, 3, 4, 127):
        assert response_header_version(18, v) == 0
    frame = ServerConnection.encode_response(_header(18, 3), {"api_keys": []})
    # size, correlation id, then the body directly (no tagged-field byte)
    assert frame[8:10] == b"\x00\x00"  # error_code
    assert len(frame) == 4 + 4 + len(codec("ApiVersionsResponse", 3).encode({"api_keys": []}))


def test_flexible_responses_use_header_v1() -> None:
    assert response_header_version(3, 8) == 0
    assert response_header_version(3, 9) == 1
    frame = ServerConnection.encode_response(_header(3, 9), {})
    assert frame[4:9] == bytes.fromhex("00000007 00")


def test_controlled_shutdown_v0_uses_request_header_v0() -> None:
    assert request_header_version(7, 0) == 0
    assert request_header_version(7, 1) == 1
    assert request_header_version(7, 3) == 2
    client = ClientConnection(client_id="ignored")
    frame = client.send_request("ControlledShutdown", 0, {"broker_id": 5}, correlation_id=9)
    assert frame == bytes.fromhex("0000000c 0007 0000 00000009 00000005")
    server = ServerConnection()
    server.receive_data(frame)
    req = server.next_event()
    assert isinstance(req, Request)
    assert req.header.client_id is None
    assert req.body is not None and req.body["broker_id"] == 5


def test_request_header_v2_keeps_a_two_byte_client_id() -> None:
    """Regression: the flexible header v2 writes client_id with an int16 length, not compact.

    Every client sends it that way so that a broker can read the header of an ApiVersions
    request of any version; a compact client id broke every flexible request.
    """
    assert request_header_version(3, 9) == 2
    frame = ClientConnection(client_id="abc").send_request("Metadata", 9, {}, correlation_id=1)
    assert frame[4:18] == bytes.fromhex("0003 0009 00000001 0003 616263 00")
    null_id = ClientConnection(client_id=None).send_request("Metadata", 9, {}, correlation_id=1)
    assert null_id[12:15] == bytes.fromhex("ffff 00")
    hdr, end = codec("RequestHeader", 2).decode(frame, 4)
    assert hdr["client_id"] == "abc"
    assert end == 18


def _header(api_key: int, version: int) -> Any:
    from mockkafka.protocol.framing import RequestHeader

    return RequestHeader(api_key, version, 7, "c")


def test_client_connection_decodes_responses_fed_one_byte_at_a_time() -> None:
    client = ClientConnection()
    client.send_request("Metadata", 12, {}, correlation_id=7)
    body = {"brokers": [{"node_id": 1, "host": "h", "port": 9092}], "cluster_id": "c"}
    frame = ServerConnection.encode_response(_header(3, 12), body)
    for i, byte in enumerate(frame):
        client.receive_data(bytes([byte]))
        event = client.next_event()
        if i < len(frame) - 1:
            assert event is NEED_DATA
    assert isinstance(event, Response)
    assert event.correlation_id == 7
    assert event.body["brokers"][0]["host"] == "h"
    assert event.body["cluster_id"] == "c"


def test_struct_packing_of_fixed_runs_matches_field_by_field_encoding() -> None:
    # A run of fixed-width fields is folded into one struct call; check it against a
    # hand-written layout.
    msg = {"partition_index": 1, "error_code": 2, "high_watermark": 3, "last_stable_offset": 4}
    data = codec("FetchResponse", 4).encode({"responses": [{"topic": "", "partitions": [msg]}]})
    expected = struct.pack(">ihqq", 1, 2, 3, 4)
    assert expected in data


def test_strict_encode_refuses_a_misspelt_field_and_names_its_path() -> None:
    from mockkafka.protocol.codec import set_strict_encode

    assert set_strict_encode(True) is True  # the suite runs strict (tests/conftest.py)
    c = codec("MetadataResponse", 12)
    with pytest.raises(ValueError, match=r"unknown field throtle_time_ms \(did you mean"):
        c.encode({"throtle_time_ms": 1})
    with pytest.raises(ValueError, match=r"topics\[0\]\.partitions\[0\]\.leader .*'leader_id'"):
        c.encode({"topics": [{"name": "a", "partitions": [{"partition_index": 0, "leader": 1}]}]})
    # A field another version carries is fine: handlers fill one dict for every version.
    assert codec("MetadataResponse", 0).encode({"throttle_time_ms": 5, "cluster_id": "x"})
    previous = set_strict_encode(False)
    try:
        assert c.encode({"throtle_time_ms": 1}) == c.encode({})  # lenient: dropped
    finally:
        set_strict_encode(previous)

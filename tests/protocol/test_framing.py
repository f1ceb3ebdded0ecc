"""Sans-IO framing: bytes in any chunking give the same requests; bad frames fail cleanly."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mockkafka.protocol.apis import API_BY_KEY
from mockkafka.protocol.codec import codec
from mockkafka.protocol.errors import FrameTooLarge, ProtocolError, UnsupportedVersion
from mockkafka.protocol.framing import (
    NEED_DATA,
    ClientConnection,
    Request,
    RequestHeader,
    Response,
    SaslToken,
    ServerConnection,
)


def frames() -> list[bytes]:
    """A few real request frames: legacy and flexible headers, header v0, a big body."""
    client = ClientConnection(client_id="framing-test")
    produce = {
        "acks": -1,
        "timeout_ms": 1000,
        "topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": b"r" * 300}]}],
    }
    return [
        client.send_request("ApiVersions", 3, {"client_software_name": "x"}),
        client.send_request("Metadata", 12, {"topics": [{"name": "orders"}]}),
        client.send_request("Produce", 9, produce),
        client.send_request("Produce", 3, produce),
        client.send_request("ControlledShutdown", 0, {"broker_id": 1}),
        client.send_request("Heartbeat", 0, {"group_id": "g"}),
    ]


def drain(server: ServerConnection) -> list[Request]:
    out: list[Request] = []
    while True:
        event = server.next_event()
        if event is NEED_DATA:
            return out
        assert isinstance(event, Request)
        out.append(event)


def expected_requests() -> list[tuple[RequestHeader, object]]:
    server = ServerConnection()
    server.receive_data(b"".join(frames()))
    return [(r.header, r.body) for r in drain(server)]


def test_requests_fed_one_byte_at_a_time() -> None:
    server = ServerConnection()
    got: list[Request] = []
    for frame in frames():
        for i in range(len(frame)):
            server.receive_data(frame[i : i + 1])
            events = drain(server)
            if i < len(frame) - 1:
                assert events == []
                assert server.buffered == i + 1
            got += events
        assert server.buffered == 0
    assert [(r.header, r.body) for r in got] == expected_requests()
    assert [r.header.api_key for r in got] == [18, 3, 0, 0, 7, 12]
    assert [r.size + 4 for r in got] == [len(f) for f in frames()]


def test_many_frames_in_one_chunk() -> None:
    server = ServerConnection()
    server.receive_data(b"".join(frames()) * 3)
    got = drain(server)
    assert len(got) == 18
    assert [(r.header, r.body) for r in got[:6]] == expected_requests()
    assert got[2].body is not None
    assert got[2].body["topic_data"][0]["partition_data"][0]["records"] == b"r" * 300


@given(st.lists(st.integers(1, 64), min_size=1, max_size=40))
@settings(max_examples=50, deadline=None)
def test_any_chunking_gives_the_same_requests(sizes: list[int]) -> None:
    data = b"".join(frames())
    server = ServerConnection()
    got: list[Request] = []
    pos = 0
    i = 0
    while pos < len(data):
        n = sizes[i % len(sizes)]
        server.receive_data(memoryview(data)[pos : pos + n])
        pos += n
        i += 1
        got += drain(server)
    assert [(r.header, r.body) for r in got] == expected_requests()


def test_buffer_compaction_over_many_large_frames() -> None:
    client = ClientConnection()
    big = {"topic_data": [{"name": "t", "partition_data": [{"records": b"x" * 30000}]}]}
    data = b"".join(client.send_request("Produce", 9, big) for _ in range(10))
    server = ServerConnection()
    server.receive_data(data[:-5])
    assert len(drain(server)) == 9
    server.receive_data(data[-5:])
    assert len(drain(server)) == 1
    assert server.buffered == 0


def test_oversized_frame_fails_before_its_body_is_buffered() -> None:
    server = ServerConnection(max_frame_size=1000)
    server.receive_data(struct.pack(">i", 1001))  # the size prefix alone
    with pytest.raises(FrameTooLarge, match="1001"):
        server.next_event()
    default = ServerConnection()
    default.receive_data(b"GET / HTTP/1.1\r\n")  # "GET " read as a size of ~1.1 GB
    with pytest.raises(FrameTooLarge):
        default.next_event()


def test_frame_at_the_limit_is_accepted() -> None:
    frame = ClientConnection().send_request("Heartbeat", 0, {"group_id": "g"})
    server = ServerConnection(max_frame_size=len(frame) - 4)
    server.receive_data(frame)
    assert isinstance(server.next_event(), Request)


def test_negative_frame_size_is_a_protocol_error() -> None:
    server = ServerConnection()
    server.receive_data(struct.pack(">i", -1))
    with pytest.raises(ProtocolError, match="negative") as info:
        server.next_event()
    assert not isinstance(info.value, FrameTooLarge)


def test_frame_shorter_than_a_header_is_a_protocol_error() -> None:
    server = ServerConnection()
    server.receive_data(struct.pack(">i", 5) + b"\x00\x03\x00\x01\x00")
    with pytest.raises(ProtocolError, match="shorter than a header"):
        server.next_event()


def test_garbage_after_a_valid_header_is_a_protocol_error() -> None:
    header = bytes.fromhex("0003 000c 00000001 0001 63 00")  # Metadata v12
    garbage = b"\xff\xff\xff\xff\xff\xff\xff"  # a varint that never ends
    server = ServerConnection()
    server.receive_data(struct.pack(">i", len(header + garbage)) + header + garbage)
    with pytest.raises(ProtocolError, match="Metadata"):
        server.next_event()


def test_bad_client_id_is_a_protocol_error() -> None:
    header = bytes.fromhex("000c 0000 00000001 0050 6363")  # says 80 bytes, has 2
    server = ServerConnection()
    server.receive_data(struct.pack(">i", len(header)) + header)
    with pytest.raises(ProtocolError):
        server.next_event()


@pytest.mark.parametrize("index", range(len(frames())))
def test_truncated_bodies_are_protocol_errors(index: int) -> None:
    frame = frames()[index]
    for cut in range(4, len(frame)):  # every cut inside the header or the body
        short = frame[4:cut]
        server = ServerConnection()
        server.receive_data(struct.pack(">i", len(short)) + short)
        with pytest.raises(ProtocolError):
            server.next_event()


def test_unknown_api_key_gives_a_request_with_an_error() -> None:
    header = bytes.fromhex("03e7 0000 0000002a 0001 63")  # api key 999
    server = ServerConnection()
    server.receive_data(struct.pack(">i", len(header) + 3) + header + b"abc")
    req = server.next_event()
    assert isinstance(req, Request)
    assert req.header == RequestHeader(999, 0, 42, "c")
    assert req.api is None
    assert req.body is None
    assert isinstance(req.error, UnsupportedVersion)
    assert req.error.api_key == 999
    assert req.api_name == "Unknown(999)"


def test_unsupported_version_of_a_known_api_gives_a_request_with_an_error() -> None:
    header = bytes.fromhex("0003 0063 00000005 0001 63 00")  # Metadata v99
    server = ServerConnection()
    server.receive_data(struct.pack(">i", len(header)) + header)
    req = server.next_event()
    assert isinstance(req, Request)
    assert req.api is API_BY_KEY[3]
    assert req.body is None
    assert isinstance(req.error, UnsupportedVersion)
    assert req.error.api_version == 99


@pytest.mark.parametrize("header_version", [1, 2])
def test_api_versions_of_an_unknown_version_can_be_answered_in_v0(header_version: int) -> None:
    # The Java client opens with its newest ApiVersions; a broker that does not know that
    # version reads the header anyway and answers in the v0 body format with error 35.
    header = bytes.fromhex("0012 007f 00000003 0004 6a617661")  # ApiVersions v127
    if header_version == 2:
        header += b"\x00"
    body = bytes.fromhex("0b 6a6176612d636c69656e74 04 332e39 00")
    server = ServerConnection()
    server.receive_data(struct.pack(">i", len(header + body)) + header + body)
    req = server.next_event()
    assert isinstance(req, Request)
    assert req.header == RequestHeader(18, 127, 3, "java")
    assert isinstance(req.error, UnsupportedVersion)
    ranges = [
        {"api_key": a.key, "min_version": a.min_version, "max_version": a.max_version}
        for a in API_BY_KEY.values()
    ]
    reply = ServerConnection.encode_response(
        req.header, {"error_code": 35, "api_keys": ranges}, version=0
    )
    # Header v0 (correlation id only), then the v0 body.
    assert reply[4:8] == b"\x00\x00\x00\x03"
    body_v0, end = codec("ApiVersionsResponse", 0).decode(reply, 8)
    assert end == len(reply)
    assert body_v0["error_code"] == 35
    assert body_v0["api_keys"] == ranges


def test_client_reads_an_unsupported_version_answer_in_the_v0_format() -> None:
    client = ClientConnection()
    client.send_request(
        "ApiVersions",
        3,
        {"client_software_name": "t", "client_software_version": "1"},
        correlation_id=11,
    )
    reply = ServerConnection.encode_response(
        RequestHeader(18, 3, 11, "x"),
        {"error_code": 35, "api_keys": [{"api_key": 18, "min_version": 0, "max_version": 2}]},
        version=0,
    )
    client.receive_data(reply)
    resp = client.next_event()
    assert isinstance(resp, Response)
    assert resp.version == 0
    assert resp.body["api_keys"] == [{"api_key": 18, "min_version": 0, "max_version": 2}]


def test_client_rejects_an_unknown_correlation_id() -> None:
    client = ClientConnection()
    client.send_request("Heartbeat", 0, {}, correlation_id=1)
    client.receive_data(ServerConnection.encode_response(RequestHeader(12, 0, 2, None), {}))
    with pytest.raises(ProtocolError, match="correlation id 2"):
        client.next_event()


def test_produce_with_acks_0_expects_no_response() -> None:
    client = ClientConnection()
    client.send_request("Produce", 9, {"acks": 0}, correlation_id=1, expect_response=False)
    client.receive_data(ServerConnection.encode_response(RequestHeader(0, 9, 1, None), {}))
    with pytest.raises(ProtocolError):
        client.next_event()


def test_client_correlation_ids_count_up() -> None:
    client = ClientConnection(client_id=None)
    server = ServerConnection()
    for _ in range(3):
        server.receive_data(client.send_request("Heartbeat", 4, {"group_id": "g"}))
    assert [r.header.correlation_id for r in drain(server)] == [0, 1, 2]


_KNOWN = sorted((a.key, v) for a in API_BY_KEY.values() for v in (a.min_version, a.max_version))


@st.composite
def hostile_frames(draw: st.DrawFn) -> bytes:
    """Frames with a plausible header (a known API and version) and a random body."""
    key, version = draw(st.sampled_from(_KNOWN))
    client_id = draw(st.binary(max_size=6))
    header = struct.pack(">hhih", key, version, draw(st.integers(0, 99)), len(client_id))
    body = draw(st.binary(max_size=60))
    payload = header + client_id + body
    return struct.pack(">i", len(payload)) + payload


@given(
    st.lists(st.one_of(st.binary(max_size=80), hostile_frames()), min_size=1, max_size=5),
    st.integers(1, 17),
)
@settings(max_examples=300, deadline=None)
def test_random_bytes_only_ever_raise_protocol_errors(chunks: list[bytes], step: int) -> None:
    data = b"".join(chunks)
    server = ServerConnection(max_frame_size=10_000)
    try:
        for pos in range(0, len(data), step):
            server.receive_data(data[pos : pos + step])
            drain(server)
    except ProtocolError:
        pass


def test_unframed_sasl_tokens_after_a_handshake_v0_fed_one_byte_at_a_time() -> None:
    client = ClientConnection(client_id="old")
    server = ServerConnection()
    server.receive_data(client.send_request("SaslHandshake", 0, {"mechanism": "PLAIN"}))
    first = server.next_event()
    assert isinstance(first, Request) and first.header.api_version == 0
    server.unframed_sasl = True  # what the server does once it answered the handshake
    token = b"\x00alice\x00secret"
    got: list[object] = []
    for byte in struct.pack(">i", len(token)) + token:
        server.receive_data(bytes([byte]))
        ev = server.next_event()
        if ev is not NEED_DATA:
            got.append(ev)
    assert got == [SaslToken(token)]
    assert ServerConnection.encode_sasl_token(b"") == b"\x00\x00\x00\x00"
    server.unframed_sasl = False  # authenticated: requests again
    server.receive_data(client.send_request("Metadata", 12, {"topics": None}))
    again = server.next_event()
    assert isinstance(again, Request) and again.api is not None and again.api.name == "Metadata"

"""Bad client input over real sockets: the broker answers as Kafka would and keeps serving.

An unparseable frame, an oversized or negative size prefix, an unknown API key or an
unsupported version of a known API closes that connection (Kafka cannot answer what it
cannot parse); ApiVersions with an unknown version gets UNSUPPORTED_VERSION in the v0
format; bad records in a well-formed Produce get CORRUPT_MESSAGE. In every case other
connections are unaffected, and nothing is recorded as an error inside the broker.
"""

from __future__ import annotations

import socket
import struct
import time
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Producer

import mockkafka
from mockkafka.errors import ErrorCode
from mockkafka.protocol import records as rec
from mockkafka.protocol.framing import NEED_DATA, ClientConnection, Response
from tests.interop.conftest import unique

pytestmark = [pytest.mark.interop, pytest.mark.timeout(30)]


class RawClient:
    """A blocking socket speaking frames through ClientConnection (every wait bounded)."""

    def __init__(self, cluster: mockkafka.Cluster, broker: int = 1) -> None:
        b = next(b for b in cluster.brokers if b.node_id == broker)
        self.sock = socket.create_connection((b.host, b.port), timeout=5)
        self.conn = ClientConnection(client_id="raw")

    def close(self) -> None:
        self.sock.close()

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def request(self, api: str, version: int, body: dict[str, Any]) -> Any:
        self.sock.sendall(self.conn.send_request(api, version, body))
        return self.response().body

    def response(self) -> Response:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            ev = self.conn.next_event()
            if ev is not NEED_DATA:
                assert isinstance(ev, Response)
                return ev
            data = self.sock.recv(65536)
            if not data:
                raise ConnectionError("closed by the broker")
            self.conn.receive_data(data)
        raise TimeoutError("no response within 5 s")

    def closed_by_peer(self, timeout: float = 5.0) -> bool:
        """True once the broker closes the connection (reads and drops anything it sends)."""
        self.sock.settimeout(timeout)
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline:
                if not self.sock.recv(65536):
                    return True
        except ConnectionResetError:
            return True
        except TimeoutError:
            return False
        return False


@pytest.fixture
def raw(cluster: mockkafka.Cluster) -> Iterator[RawClient]:
    c = RawClient(cluster)
    try:
        yield c
    finally:
        c.close()


def assert_still_serving(cluster: mockkafka.Cluster) -> None:
    """A fresh connection works, on every broker."""
    for b in cluster.brokers:
        c = RawClient(cluster, b.node_id)
        try:
            body = c.request("Metadata", 12, {"topics": None})
            assert {n["node_id"] for n in body["brokers"]} == {1, 2, 3}
        finally:
            c.close()
    assert not cluster._server.errors, cluster._server.errors


def frame(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


def test_garbage_frame_closes_the_connection(cluster: mockkafka.Cluster, raw: RawClient) -> None:
    raw.send_raw(frame(b"\x00\x03\x00\x0c\x00\x00\x00\x01\xff\xff" + b"\xde\xad\xbe\xef" * 10))
    assert raw.closed_by_peer()
    assert_still_serving(cluster)


def test_short_frame_closes_the_connection(cluster: mockkafka.Cluster, raw: RawClient) -> None:
    raw.send_raw(frame(b"\x00\x03"))  # shorter than a request header
    assert raw.closed_by_peer()
    assert_still_serving(cluster)


def test_oversized_frame_closes_at_once_without_reading_it() -> None:
    with mockkafka.Cluster(brokers=3, max_request_size=10_000) as cluster:
        c = RawClient(cluster)
        try:
            c.send_raw(struct.pack(">i", 50_000) + b"\x00" * 100)  # the rest never comes
            assert c.closed_by_peer()
        finally:
            c.close()
        c = RawClient(cluster)
        try:
            c.send_raw(struct.pack(">i", 2**31 - 1))
            assert c.closed_by_peer()
        finally:
            c.close()
        assert_still_serving(cluster)


def test_negative_frame_size_closes_the_connection(
    cluster: mockkafka.Cluster, raw: RawClient
) -> None:
    raw.send_raw(struct.pack(">i", -5) + b"\x00" * 8)
    assert raw.closed_by_peer()
    assert_still_serving(cluster)


def test_unknown_api_key_closes_the_connection(cluster: mockkafka.Cluster, raw: RawClient) -> None:
    raw.send_raw(frame(struct.pack(">hhih", 9999, 0, 7, -1)))
    assert raw.closed_by_peer()
    assert_still_serving(cluster)


def test_unsupported_version_of_a_known_api_closes_the_connection(
    cluster: mockkafka.Cluster, raw: RawClient
) -> None:
    raw.send_raw(frame(struct.pack(">hhih", 1, 99, 7, -1) + b"\x00" * 20))  # Fetch v99
    assert raw.closed_by_peer()
    assert_still_serving(cluster)


def test_version_capped_by_cap_api_versions_is_not_served(cluster: mockkafka.Cluster) -> None:
    cluster.cap_api_versions({"Metadata": 8})
    c = RawClient(cluster)
    try:
        keys = {
            k["api_key"]: k
            for k in c.request(
                "ApiVersions", 3, {"client_software_name": "t", "client_software_version": "1"}
            )["api_keys"]
        }
        assert keys[3]["max_version"] == 8
        c.send_raw(c.conn.send_request("Metadata", 12, {"topics": None}))
        assert c.closed_by_peer()
    finally:
        c.close()


def test_unknown_api_versions_version_gets_v0_error_with_ranges(
    cluster: mockkafka.Cluster, raw: RawClient
) -> None:
    # ApiVersions v127 (a client newer than the broker): answer in v0 format, error 35.
    raw.send_raw(frame(struct.pack(">hhih", 18, 127, 42, 3) + b"raw"))
    data = b""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        data += raw.sock.recv(65536)
        if len(data) >= 4 and len(data) >= 4 + struct.unpack_from(">i", data)[0]:
            break
    (_size, cid, error) = struct.unpack_from(">iih", data)
    assert cid == 42
    assert error == ErrorCode.UNSUPPORTED_VERSION
    (n,) = struct.unpack_from(">i", data, 10)
    ranges = {struct.unpack_from(">hhh", data, 14 + 6 * i)[0] for i in range(n)}
    assert {0, 1, 3, 18} <= ranges  # Produce, Fetch, Metadata, ApiVersions advertised
    # The connection stays open and speaks the version the client picks next.
    assert (
        raw.request(
            "ApiVersions", 3, {"client_software_name": "t", "client_software_version": "1"}
        )["error_code"]
        == 0
    )


def test_truncated_request_body_closes_the_connection(
    cluster: mockkafka.Cluster, raw: RawClient
) -> None:
    full = raw.conn.send_request("Metadata", 4, {"topics": [{"name": "x" * 50}]})
    raw.send_raw(struct.pack(">i", len(full) - 4 - 30) + full[4:-30])
    assert raw.closed_by_peer()
    assert_still_serving(cluster)


def test_half_a_frame_then_hang_up_is_harmless(cluster: mockkafka.Cluster) -> None:
    for _ in range(20):
        c = RawClient(cluster)
        c.send_raw(struct.pack(">i", 200) + b"\x00\x03\x00")
        c.close()
    assert_still_serving(cluster)


def test_corrupt_records_in_a_good_produce_get_corrupt_message(
    cluster: mockkafka.Cluster, raw: RawClient
) -> None:
    topic = unique("bad-records")
    cluster.create_topic(topic)
    leader = cluster.topic(topic).partition(0).leader
    c = RawClient(cluster, leader)
    try:
        good = bytearray(rec.encode_batch([(b"k", b"v")]))
        good[-1] ^= 0xFF
        for records in (bytes(good), b"\x00\x00\x00\x01garbage"):
            body = c.request(
                "Produce",
                9,
                {
                    "acks": -1,
                    "timeout_ms": 1000,
                    "topic_data": [
                        {"name": topic, "partition_data": [{"index": 0, "records": records}]}
                    ],
                },
            )
            part = body["responses"][0]["partition_responses"][0]
            assert part["error_code"] == ErrorCode.CORRUPT_MESSAGE
    finally:
        c.close()
    assert cluster.topic(topic).partition(0).high_watermark == 0
    assert_still_serving(cluster)


def test_a_real_client_is_unaffected_by_a_misbehaving_neighbour(
    cluster: mockkafka.Cluster,
) -> None:
    topic = unique("bad-neighbour")
    cluster.create_topic(topic, partitions=3, replication_factor=3)
    p = Producer({"bootstrap.servers": cluster.bootstrap_servers, "linger.ms": 1})
    try:
        for i in range(30):
            p.produce(topic, f"v{i}".encode())
            c = RawClient(cluster, i % 3 + 1)
            try:
                c.send_raw(frame(bytes(range(256)) * (i + 1)))
                assert c.closed_by_peer()
            finally:
                c.close()
            p.poll(0)
        assert p.flush(10) == 0
    finally:
        p.flush(1)
    assert len(cluster.topic(topic).records()) == 30
    assert_still_serving(cluster)

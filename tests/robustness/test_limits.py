"""The broker's limits (cluster/limits.py, server/limits.py) over real sockets, in process.

Each limit has Kafka's config name and is set through ``broker_configs``; each test shows
the limit biting (a Kafka error code, or a closed connection) while the cluster keeps
serving other connections.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Iterator
from typing import Any

import pytest

import mockkafka
from mockkafka.errors import ErrorCode
from mockkafka.protocol import records as rec
from mockkafka.protocol.framing import ClientConnection
from mockkafka.server.limits import MAX_ERRORS, QueuedBytes, keep_error
from tests.robustness._wire import Raw, fetch_body, health, partition_response, produce_body

pytestmark = pytest.mark.timeout(60)


def _cluster(**configs: str) -> mockkafka.Cluster:
    return mockkafka.Cluster(broker_configs=tuple(configs.items()))


@pytest.fixture
def cluster() -> Iterator[mockkafka.Cluster]:
    with mockkafka.Cluster() as c:
        c.create_topic("t", partitions=1)
        yield c


def _raw(c: mockkafka.Cluster, **kw: Any) -> Raw:
    b = c.brokers[0]
    return Raw(b.host, b.port, **kw)


def _produce(c: Raw, records: bytes) -> dict[str, Any]:
    return partition_response(c.request("Produce", 9, produce_body(records)))


def _with_crc(raw: bytearray) -> bytes:
    import crc32c

    struct.pack_into(">I", raw, 17, crc32c.crc32c(bytes(raw[21:])))
    return bytes(raw)


# -- Produce: LogValidator -----------------------------------------------------------------


def test_produce_rejects_record_count_that_disagrees_with_offset_delta(
    cluster: mockkafka.Cluster,
) -> None:
    good = bytearray(rec.encode_batch([rec.Record(0, 0, None, b"a")], base_offset=0))
    struct.pack_into(">i", good, 23, 2**31 - 2)  # last offset delta
    with _raw(cluster) as c:
        out = _produce(c, _with_crc(good))
    assert out["error_code"] == ErrorCode.INVALID_RECORD
    assert cluster.topic("t").partition(0).high_watermark == 0


def test_produce_rejects_records_that_do_not_parse(cluster: mockkafka.Cluster) -> None:
    good = bytearray(rec.encode_batch([rec.Record(0, 0, b"k", b"value")], base_offset=0))
    good[rec.V2_HEADER_SIZE + 4] = 0x7F  # the key length now overruns the record
    with _raw(cluster) as c:
        out = _produce(c, _with_crc(good))
    assert out["error_code"] == ErrorCode.CORRUPT_MESSAGE
    assert cluster.topic("t").partition(0).high_watermark == 0
    assert cluster.broker_errors == []


def test_produce_rejects_control_batches_from_clients(cluster: mockkafka.Cluster) -> None:
    marker = rec.encode_control_batch(
        "commit", producer_id=1, producer_epoch=0, coordinator_epoch=0, timestamp=0
    )
    with _raw(cluster) as c:
        out = _produce(c, marker)
    assert out["error_code"] == ErrorCode.INVALID_RECORD
    assert cluster.topic("t").partition(0).high_watermark == 0


def test_produce_rejects_a_decompression_bomb(cluster: mockkafka.Cluster) -> None:
    import zstandard

    head = bytearray(rec.encode_batch([rec.Record(0, 0, None, b"v")], base_offset=0))
    payload = zstandard.ZstdCompressor().compress(b"\x01" * (80 * 1024 * 1024))
    raw = head[: rec.V2_HEADER_SIZE] + payload
    struct.pack_into(">i", raw, 8, len(raw) - 12)
    struct.pack_into(">h", raw, 21, 4)  # zstd
    with _raw(cluster, timeout=20) as c:
        t0 = time.perf_counter()
        out = _produce(c, _with_crc(raw))
        took = time.perf_counter() - t0
    assert out["error_code"] == ErrorCode.CORRUPT_MESSAGE
    assert "limit" in (out.get("error_message") or "")
    print(f"80 MB zstd bomb rejected in {took * 1000:.0f} ms (validated off the loop)")
    assert cluster.topic("t").partition(0).high_watermark == 0


# -- admin requests with absurd counts --------------------------------------------------------


def test_create_topics_with_absurd_partition_count(cluster: mockkafka.Cluster) -> None:
    with _raw(cluster) as c:
        t0 = time.perf_counter()
        resp = c.request(
            "CreateTopics",
            7,
            {
                "topics": [
                    {"name": "huge", "num_partitions": 2**31 - 1, "replication_factor": 1},
                    {"name": "small", "num_partitions": 1, "replication_factor": 1},
                ],
                "timeout_ms": 1000,
            },
        )
        took = time.perf_counter() - t0
    codes = [t["error_code"] for t in resp["topics"]]
    assert codes == [ErrorCode.POLICY_VIOLATION, ErrorCode.POLICY_VIOLATION]
    assert took < 0.5
    assert "huge" not in cluster.topics()
    with pytest.raises(mockkafka.KafkaApiError) as info:
        cluster.create_topic("huge2", partitions=20_000)
    assert info.value.error == ErrorCode.POLICY_VIOLATION


def test_create_partitions_with_absurd_count(cluster: mockkafka.Cluster) -> None:
    with _raw(cluster) as c:
        resp = c.request(
            "CreatePartitions",
            3,
            {"topics": [{"name": "t", "count": 2**31 - 1, "assignments": None}], "timeout_ms": 1},
        )
    assert resp["results"][0]["error_code"] == ErrorCode.POLICY_VIOLATION
    assert len(cluster.topic("t").partitions) == 1


# -- Fetch caps -----------------------------------------------------------------------------


def test_fetch_max_bytes_caps_a_huge_max_bytes() -> None:
    with _cluster(**{"fetch.max.bytes": "100000"}) as cl:
        cl.create_topic("t", partitions=3)
        for p in range(3):
            for _ in range(4):
                cl.produce("t", b"x" * 60_000, partition=p)
        with _raw(cl) as c:
            resp = c.request(
                "Fetch",
                11,
                {
                    "replica_id": -1,
                    "max_wait_ms": 0,
                    "min_bytes": 1,
                    "max_bytes": 2**31 - 1,
                    "isolation_level": 0,
                    "topics": [
                        {
                            "topic": "t",
                            "partitions": [
                                {
                                    "partition": p,
                                    "fetch_offset": 0,
                                    "partition_max_bytes": 2**31 - 1,
                                }
                                for p in range(3)
                            ],
                        }
                    ],
                },
            )
    sizes = [
        sum(len(b) for b in (p["records"] if isinstance(p["records"], list) else [p["records"]]))
        for t in resp["responses"]
        for p in t["partitions"]
    ]
    # The first batch always goes out whole (KIP-74); nothing more past the cap.
    assert 60_000 < sum(sizes) < 130_000


def test_max_wait_ms_is_capped() -> None:
    with _cluster(**{"mockkafka.max.wait.ms": "200"}) as cl:
        cl.create_topic("t")
        with _raw(cl) as c:
            t0 = time.perf_counter()
            c.request(
                "Fetch",
                11,
                fetch_body(max_wait_ms=2**31 - 1),
            )
            assert time.perf_counter() - t0 < 2


def test_parked_fetch_of_a_gone_client_releases_its_socket(cluster: mockkafka.Cluster) -> None:
    c = _raw(cluster)
    frame_ = c.conn.send_request(
        "Fetch",
        11,
        fetch_body(max_wait_ms=30_000),
    )
    c.send(frame_)
    server = cluster._server
    deadline = time.monotonic() + 5
    while not cluster.traffic.requests("Fetch") and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(server.connections) == 1
    c.close()
    deadline = time.monotonic() + 2
    while server.connections and time.monotonic() < deadline:
        time.sleep(0.01)
    assert server.connections == {}
    assert cluster.broker_errors == []


def test_parked_fetch_keeps_a_pipelined_request_for_later(cluster: mockkafka.Cluster) -> None:
    with _raw(cluster) as c:
        fetch = c.conn.send_request(
            "Fetch",
            11,
            fetch_body(max_wait_ms=300),
        )
        c.send(
            fetch
            + c.conn.send_request(
                "ApiVersions", 3, {"client_software_name": "t", "client_software_version": "1"}
            )
        )
        assert "responses" in c.response().body
        assert c.response().body["error_code"] == 0


# -- connection limits ----------------------------------------------------------------------


def test_max_connections() -> None:
    with _cluster(**{"max.connections": "5"}) as cl:
        b = cl.brokers[0]
        held = [Raw(b.host, b.port) for _ in range(5)]
        try:
            for c in held:
                assert (
                    c.request(
                        "ApiVersions",
                        3,
                        {"client_software_name": "t", "client_software_version": "1"},
                    )["error_code"]
                    == 0
                )
            extra = Raw(b.host, b.port)
            assert extra.closed_by_broker()
            extra.close()
        finally:
            for c in held:
                c.close()
        deadline = time.monotonic() + 2
        while cl._server.connections and time.monotonic() < deadline:
            time.sleep(0.01)
        assert health(b.host, b.port) < 1000


def test_idle_connections_are_closed() -> None:
    with _cluster(**{"connections.max.idle.ms": "200"}) as cl, _raw(cl) as c:
        assert (
            c.request(
                "ApiVersions", 3, {"client_software_name": "t", "client_software_version": "1"}
            )["error_code"]
            == 0
        )
        t0 = time.monotonic()
        assert c.closed_by_broker(wait=3)
        assert 0.15 < time.monotonic() - t0 < 2.5


def test_queued_request_bytes_across_connections() -> None:
    with _cluster(**{"queued.max.request.bytes": "1000000"}) as cl:
        b = cl.brokers[0]
        first, second = Raw(b.host, b.port), Raw(b.host, b.port)
        try:
            # Two requests announced at 900 kB each, sent only in part.
            first.send(struct.pack(">i", 900_000) + b"\x00" * 600_000)
            time.sleep(0.1)
            second.send(struct.pack(">i", 900_000) + b"\x00" * 600_000)
            assert second.closed_by_broker()
            assert not first.closed_by_broker(wait=0.2)
        finally:
            first.close()
            second.close()
        assert health(b.host, b.port) < 1000
        assert cl._server.queued.total == 0 or cl._server.connections


def test_queued_bytes_accounting() -> None:
    q = QueuedBytes()
    assert q.update(1, 10) == 10
    assert q.update(2, 5) == 15
    assert q.update(1, 3) == 8
    q.forget(2)
    assert q.total == 3


# -- memory held by the broker ----------------------------------------------------------------


def test_traffic_off_records_nothing() -> None:
    with mockkafka.Cluster(record_traffic=False) as cl:
        with _raw(cl) as c:
            for _ in range(5):
                c.request(
                    "ApiVersions", 3, {"client_software_name": "t", "client_software_version": "1"}
                )
        assert len(cl.traffic) == 0


def test_traffic_log_keeps_no_huge_bodies(cluster: mockkafka.Cluster) -> None:
    names = [{"name": f"nope-{i:06d}"} for i in range(30_000)]
    with _raw(cluster, timeout=20) as c:
        c.request("Metadata", 12, {"topics": names, "allow_auto_topic_creation": False})
    ex = cluster.traffic.requests("Metadata")[-1]
    assert ex.request is not None and "omitted" in ex.request
    assert ex.response is not None and "omitted" in ex.response


def test_traffic_log_byte_cap() -> None:
    log = mockkafka.TrafficLog(max_bytes=10_000)
    for i in range(30):
        ex = log.start(
            time_ms=i,
            broker_id=1,
            connection_id=1,
            client_id=None,
            api="Metadata",
            api_key=3,
            version=12,
            correlation_id=i,
            request={},
            size=300,
        )
        log.completed(ex, 100)
    # each holds its 400 wire bytes plus bookkeeping: only the newest that fit are kept
    assert ex.size > 400
    assert len(log) == 10_000 // ex.size and log.held_bytes <= 10_000
    assert [e.seq for e in log] == list(range(31 - len(log), 31))


def test_broker_error_list_is_bounded_and_frees_frames() -> None:
    errors: list[BaseException] = []

    def fail(big: bytes) -> None:
        raise ValueError("boom")

    kept = 0
    for _ in range(MAX_ERRORS + 20):
        try:
            fail(b"x" * 1000)
        except ValueError as exc:
            kept += keep_error(errors, exc)
    assert len(errors) == kept == MAX_ERRORS
    tb = errors[0].__traceback__
    assert tb is not None
    while tb.tb_next is not None:
        tb = tb.tb_next
    assert tb.tb_frame.f_locals == {}  # the failing frame's locals (the buffer) are gone


def test_a_client_that_pipelines_and_never_reads_is_closed_when_idle() -> None:
    """A connection whose answers pile up unread moves no bytes: Kafka's idle expiry closes
    it after connections.max.idle.ms (its Selector sees no event for it); so does mockkafka.
    Before, it counted as busy while its answer waited to be written, and was never reaped."""
    import socket

    with _cluster(**{"connections.max.idle.ms": "300"}) as cl:
        b = cl.brokers[0]
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect((b.host, b.port))
        sock.setblocking(False)
        conn = ClientConnection(client_id="never-reads")
        body = {"client_software_name": "x", "client_software_version": "1"}
        frame = conn.send_request("ApiVersions", 3, body)
        pending = b""
        sent = 0
        closed = False
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # until the broker stops reading (buffers full)
            if not pending:
                pending = frame * 50
            try:
                n = sock.send(pending)
            except BlockingIOError:
                time.sleep(0.2)
                try:
                    n = sock.send(pending)
                except BlockingIOError:
                    break
                except (ConnectionResetError, BrokenPipeError):
                    closed = True  # on a busy machine the expiry can come this early
                    break
            pending = pending[n:]
            sent += n
        assert sent > 100_000, sent  # the broker answered a lot and then could not write
        blocked_at = time.monotonic()
        sock.setblocking(True)
        sock.settimeout(5)
        received = b""
        if not closed:
            time.sleep(1.5)  # idle: nothing moves for 5x connections.max.idle.ms
        try:
            while not closed and time.monotonic() - blocked_at < 10:
                data = sock.recv(1 << 20)
                if not data:
                    closed = True
                    break
                received += data
        except ConnectionResetError:
            closed = True
        except TimeoutError:
            pass
        sock.close()
    answers = 0
    pos = 0
    while pos + 4 <= len(received):
        pos += 4 + int.from_bytes(received[pos : pos + 4], "big")
        answers += pos <= len(received)
    asked = sent // len(frame)
    # closed while answers were still unread: not every request was answered (the old
    # broker answered them all once the client read, then closed it as idle)
    assert closed and answers < asked, (closed, answers, asked)

"""``open_cluster`` on the test's own trio loop, driven by a raw-protocol trio client."""

from __future__ import annotations

import struct
import time
from typing import Any

import pytest
import trio

import mockkafka
from mockkafka.errors import ErrorCode
from mockkafka.protocol import records as rec
from mockkafka.protocol.framing import NEED_DATA, ClientConnection, Response

pytestmark = [pytest.mark.interop, pytest.mark.timeout(30)]


class TrioClient:
    """A raw Kafka client on a trio socket (sans-IO ClientConnection underneath)."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.conn = ClientConnection(client_id="trio-raw")

    @classmethod
    async def connect(cls, cluster: mockkafka.AsyncCluster, broker: int = 1) -> TrioClient:
        b = next(b for b in cluster.brokers if b.node_id == broker)
        return cls(await trio.open_tcp_stream(b.host, b.port))

    async def send(self, api: str, version: int, body: dict[str, Any], **kw: Any) -> None:
        await self.stream.send_all(self.conn.send_request(api, version, body, **kw))

    async def response(self) -> Response:
        with trio.fail_after(10):
            while True:
                ev = self.conn.next_event()
                if ev is not NEED_DATA:
                    assert isinstance(ev, Response)
                    return ev
                data = await self.stream.receive_some(65536)
                if not data:
                    raise ConnectionError("closed by the broker")
                self.conn.receive_data(data)

    async def request(self, api: str, version: int, body: dict[str, Any]) -> Any:
        await self.send(api, version, body)
        return (await self.response()).body

    async def aclose(self) -> None:
        await self.stream.aclose()


def produce_body(topic: str, *values: bytes, acks: int = -1, partition: int = 0) -> Any:
    data = rec.encode_batch([(None, v) for v in values])
    return {
        "acks": acks,
        "timeout_ms": 1000,
        "topic_data": [{"name": topic, "partition_data": [{"index": partition, "records": data}]}],
    }


def fetch_body(topic: str, offset: int, *, max_wait_ms: int = 0, **kw: Any) -> Any:
    return {
        "replica_id": -1,
        "max_wait_ms": max_wait_ms,
        "min_bytes": 1,
        "max_bytes": 1 << 20,
        "topics": [
            {
                "topic": topic,
                "partitions": [
                    {"partition": 0, "fetch_offset": offset, "partition_max_bytes": 1 << 20}
                ],
            }
        ],
        **kw,
    }


def fetched_values(body: Any) -> list[bytes | None]:
    out: list[bytes | None] = []
    for t in body["responses"]:
        for p in t["partitions"]:
            out.extend(r.value for r in rec.decode_records(p["records"] or b""))
    return out


@pytest.mark.trio
async def test_open_cluster_serves_produce_and_fetch_on_the_callers_loop() -> None:
    async with mockkafka.open_cluster(brokers=3) as cluster:
        cluster.create_topic("orders", partitions=1, replication_factor=3)
        leader = cluster.topic("orders").partition(0).leader
        c = await TrioClient.connect(cluster, leader)
        try:
            meta = await c.request("Metadata", 12, {"topics": [{"name": "orders"}]})
            assert meta["topics"][0]["partitions"][0]["leader_id"] == leader
            resp = await c.request("Produce", 9, produce_body("orders", b"a", b"b"))
            assert resp["responses"][0]["partition_responses"][0]["base_offset"] == 0
            got = await c.request("Fetch", 11, fetch_body("orders", 0))
            assert fetched_values(got) == [b"a", b"b"]
        finally:
            await c.aclose()
        assert [r.value for r in cluster.topic("orders").partition(0).records()] == [b"a", b"b"]


@pytest.mark.trio
async def test_long_poll_fetch_wakes_as_soon_as_data_arrives() -> None:
    async with mockkafka.open_cluster() as cluster:
        cluster.create_topic("t")
        c = await TrioClient.connect(cluster)
        try:
            await c.send("Fetch", 11, fetch_body("t", 0, max_wait_ms=10_000))
            await cluster.traffic.wait_for_async("Fetch")  # the Fetch is parked now
            t0 = trio.current_time()
            cluster.produce("t", b"wake")
            resp = await c.response()
            assert trio.current_time() - t0 < 0.5
            assert fetched_values(resp.body) == [b"wake"]
            # With nothing to wake it, the broker answers empty at max_wait_ms.
            t0 = trio.current_time()
            empty = await c.request("Fetch", 11, fetch_body("t", 1, max_wait_ms=300))
            assert 0.25 <= trio.current_time() - t0 < 2
            assert fetched_values(empty) == []
        finally:
            await c.aclose()


@pytest.mark.trio
async def test_requests_are_answered_in_order_and_acks_zero_gets_no_response() -> None:
    async with mockkafka.open_cluster() as cluster:
        cluster.create_topic("t")
        c = await TrioClient.connect(cluster)
        try:
            # A parked long poll holds the requests behind it, as on a real broker.
            await c.send("Fetch", 11, fetch_body("t", 0, max_wait_ms=300))
            await c.send("Produce", 9, produce_body("t", b"x", acks=0), expect_response=False)
            await c.send("Metadata", 12, {"topics": None})
            first, second = await c.response(), await c.response()
            assert (first.api.name, second.api.name) == ("Fetch", "Metadata")
            assert first.correlation_id < second.correlation_id
        finally:
            await c.aclose()
        assert cluster.topic("t").partition(0).high_watermark == 1
        (ex,) = cluster.traffic.requests("Produce")
        assert ex.no_response


@pytest.mark.trio
async def test_fetch_session_over_the_wire() -> None:
    async with mockkafka.open_cluster() as cluster:
        cluster.create_topic("t")
        cluster.produce("t", b"one")
        c = await TrioClient.connect(cluster)
        try:
            full = await c.request("Fetch", 12, fetch_body("t", 0, session_id=0, session_epoch=0))
            sid = full["session_id"]
            assert sid > 0 and fetched_values(full) == [b"one"]
            # Incremental: only changed partitions; an unchanged one is left out.
            inc = fetch_body("t", 1, session_id=sid, session_epoch=1)
            assert (await c.request("Fetch", 12, inc))["responses"] == []
            cluster.produce("t", b"two")
            inc = fetch_body("t", 1, session_id=sid, session_epoch=2)
            inc["topics"] = []
            assert fetched_values(await c.request("Fetch", 12, inc)) == [b"two"]
            bad = fetch_body("t", 1, session_id=sid + 1000, session_epoch=1)
            body = await c.request("Fetch", 12, bad)
            assert body["error_code"] == ErrorCode.FETCH_SESSION_ID_NOT_FOUND
        finally:
            await c.aclose()


@pytest.mark.trio
async def test_two_trio_clusters_side_by_side() -> None:
    async with mockkafka.open_cluster() as a, mockkafka.open_cluster(brokers=2) as b:
        assert a.bootstrap_servers != b.bootstrap_servers
        a.create_topic("t")
        b.create_topic("t", replication_factor=2)
        ca, cb = await TrioClient.connect(a), await TrioClient.connect(b)
        try:
            ma = await ca.request("Metadata", 12, {"topics": None})
            mb = await cb.request("Metadata", 12, {"topics": None})
            assert len(ma["brokers"]) == 1 and len(mb["brokers"]) == 2
            assert ma["cluster_id"] != mb["cluster_id"]
        finally:
            await ca.aclose()
            await cb.aclose()


@pytest.mark.trio
async def test_garbage_closes_one_connection_and_the_loop_keeps_serving() -> None:
    async with mockkafka.open_cluster() as cluster:
        bad = await TrioClient.connect(cluster)
        good = await TrioClient.connect(cluster)
        try:
            await bad.stream.send_all(struct.pack(">i", 12) + b"\xff" * 12)
            with trio.fail_after(5):
                assert await bad.stream.receive_some(100) == b""
            assert (
                await good.request(
                    "ApiVersions", 3, {"client_software_name": "t", "client_software_version": "1"}
                )
            )["error_code"] == 0
        finally:
            await bad.aclose()
            await good.aclose()


def test_sync_cluster_starts_and_stops_quickly() -> None:
    t0 = time.monotonic()
    with mockkafka.Cluster(brokers=3) as cluster:
        started = time.monotonic() - t0
        assert len(cluster.bootstrap_servers.split(",")) == 3
        t1 = time.monotonic()
    stopped = time.monotonic() - t1
    assert started < 2.0 and stopped < 2.0, (started, stopped)


@pytest.mark.trio
async def test_metadata_auto_creates_topics_only_when_enabled_and_allowed() -> None:
    async with mockkafka.open_cluster(auto_create_topics=True, default_partitions=3) as on:
        c = await TrioClient.connect(on)
        try:
            no = {"topics": [{"name": "x"}], "allow_auto_topic_creation": False}
            body = await c.request("Metadata", 12, no)
            assert body["topics"][0]["error_code"] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            assert "x" not in on.topics()
            yes = {"topics": [{"name": "x"}], "allow_auto_topic_creation": True}
            body = await c.request("Metadata", 12, yes)
            assert body["topics"][0]["error_code"] == 0
            assert len(body["topics"][0]["partitions"]) == 3
            bad = {"topics": [{"name": "bad name!"}], "allow_auto_topic_creation": True}
            body = await c.request("Metadata", 12, bad)
            assert body["topics"][0]["error_code"] == ErrorCode.INVALID_TOPIC_EXCEPTION
        finally:
            await c.aclose()
    async with mockkafka.open_cluster(auto_create_topics=False) as off:
        c = await TrioClient.connect(off)
        try:
            yes = {"topics": [{"name": "x"}], "allow_auto_topic_creation": True}
            body = await c.request("Metadata", 12, yes)
            assert body["topics"][0]["error_code"] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            assert off.topics() == []
        finally:
            await c.aclose()

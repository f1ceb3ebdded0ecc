"""A rule counts as fired only when its effect reached the wire.

Decided (``server/faults.py``): a firing is reserved when the rule is picked and counted
(``rule.fired``, the exchange's ``faults``, the coverage report) when the answer carrying
it is handed to the connection, or when the fault's own effect is the connection (closed,
or left silent). It is given back when the request ends before that -- the client hung up
while the request was parked -- and a data edit or a partition claim that found nothing in
the answer never counts. Each client family below checks ``rule.fired`` against the
responses in the traffic log that carried the fault.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

import mockkafka
from tests.robustness._wire import Raw

NOT_LEADER = "NOT_LEADER_OR_FOLLOWER"


def _carrying(cluster: mockkafka.Cluster, api: str, error: str = NOT_LEADER) -> int:
    return len(cluster.traffic.requests(api, with_error=error))


def _fetch(partitions: list[int], *, max_wait_ms: int = 0, offset: int = 0) -> dict[str, Any]:
    return {
        "replica_id": -1,
        "max_wait_ms": max_wait_ms,
        "min_bytes": 1,
        "max_bytes": 1 << 20,
        "isolation_level": 0,
        "session_id": 0,
        "session_epoch": -1,
        "topics": [
            {
                "topic": "orders",
                "partitions": [
                    {"partition": p, "fetch_offset": offset, "partition_max_bytes": 1 << 20}
                    for p in partitions
                ],
            }
        ],
        "forgotten_topics_data": [],
    }


def test_a_rule_on_a_request_whose_client_hung_up_while_parked_does_not_count() -> None:
    with mockkafka.Cluster() as cluster:
        cluster.create_topic("orders", partitions=1)
        host, port = cluster.bootstrap_servers.rsplit(":", 1)
        rule = cluster.faults.on("Fetch").every_time().observe()
        raw = Raw(host, int(port))
        raw.send(raw.conn.send_request("Fetch", 11, _fetch([0], max_wait_ms=5000)))
        deadline = time.monotonic() + 5
        while rule.matched < 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        raw.close()  # the long poll is parked; its answer never goes out
        deadline = time.monotonic() + 5
        while cluster.traffic.requests("Fetch") == [] and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.2)
        assert rule.matched == 1
        assert rule.fired == 0
        cluster.faults.clear()


def test_a_data_edit_with_nothing_to_edit_does_not_count() -> None:
    with mockkafka.Cluster() as cluster:
        cluster.create_topic("orders", partitions=1)
        host, port = cluster.bootstrap_servers.rsplit(":", 1)
        rule = cluster.faults.on("Fetch").every_time().corrupt_batch()
        with Raw(host, int(port)) as raw:
            empty = raw.request("Fetch", 11, _fetch([0]))
            assert empty["responses"][0]["partitions"][0]["records"] in (b"", None)
            assert rule.fired == 0
            cluster.produce("orders", b"v", partition=0)
            raw.request("Fetch", 11, _fetch([0]))
        assert rule.fired == 1
        assert [ex.faults for ex in cluster.traffic.requests("Fetch")] == [[], [rule.name]]
        cluster.faults.clear()


def test_each_fired_fetch_partition_error_is_in_a_response_raw() -> None:
    with mockkafka.Cluster() as cluster:
        cluster.create_topic("orders", partitions=2)
        host, port = cluster.bootstrap_servers.rsplit(":", 1)
        rule = cluster.faults.on("Fetch", topic="orders", partition=1).times(3).error(NOT_LEADER)
        with Raw(host, int(port)) as raw:
            for _ in range(5):
                raw.request("Fetch", 11, _fetch([0, 1]))
        assert rule.fired == 3 == _carrying(cluster, "Fetch")


@pytest.mark.interop
def test_confluent_kafka_producer_fired_equals_responses_with_the_error() -> None:
    ck = pytest.importorskip("confluent_kafka")
    with mockkafka.Cluster() as cluster:
        cluster.create_topic("orders", partitions=1)
        rule = cluster.faults.on("Produce", topic="orders").times(3).error(NOT_LEADER)
        p = ck.Producer({"bootstrap.servers": cluster.bootstrap_servers, "retry.backoff.ms": 10})
        p.produce("orders", b"v")
        assert p.flush(20) == 0
        assert rule.fired == 3 == _carrying(cluster, "Produce")
        assert len(cluster.topic("orders").partition(0).records()) == 1


@pytest.mark.interop
def test_kafka_python_producer_fired_equals_responses_with_the_error() -> None:
    kafka = pytest.importorskip("kafka")
    with mockkafka.Cluster() as cluster:
        cluster.create_topic("orders", partitions=1)
        rule = cluster.faults.on("Produce", topic="orders").times(2).error(NOT_LEADER)
        p = kafka.KafkaProducer(
            bootstrap_servers=cluster.bootstrap_servers, retries=5, retry_backoff_ms=10
        )
        try:
            p.send("orders", b"v").get(timeout=20)
        finally:
            p.close(5)
        assert rule.fired == 2 == _carrying(cluster, "Produce")


@pytest.mark.interop
def test_aiokafka_producer_and_consumer_fired_equals_responses_with_the_error() -> None:
    aiokafka = pytest.importorskip("aiokafka")
    with mockkafka.Cluster() as cluster:
        cluster.create_topic("orders", partitions=1)
        produce_rule = cluster.faults.on("Produce", topic="orders").times(2).error(NOT_LEADER)

        async def run() -> list[bytes]:
            p = aiokafka.AIOKafkaProducer(
                bootstrap_servers=cluster.bootstrap_servers, retry_backoff_ms=10
            )
            await p.start()
            try:
                for i in range(3):
                    await asyncio.wait_for(p.send_and_wait("orders", b"v%d" % i), 20)
            finally:
                await p.stop()
            fetch_rule = (
                cluster.faults.on("Fetch", topic="orders", partition=0).times(2).error(NOT_LEADER)
            )
            c = aiokafka.AIOKafkaConsumer(
                "orders",
                bootstrap_servers=cluster.bootstrap_servers,
                auto_offset_reset="earliest",
                fetch_max_wait_ms=50,
                retry_backoff_ms=10,
                metadata_max_age_ms=200,
            )
            await c.start()
            got: list[bytes] = []
            try:
                deadline = time.monotonic() + 20
                while (len(got) < 3 or fetch_rule.fired < 2) and time.monotonic() < deadline:
                    batch = await c.getmany(timeout_ms=100)
                    got += [r.value for rs in batch.values() for r in rs]
            finally:
                await c.stop()
            assert fetch_rule.fired == 2 == _carrying(cluster, "Fetch")
            return got

        got = asyncio.run(run())
        assert sorted(got) == [b"v0", b"v1", b"v2"]
        assert produce_rule.fired == 2 == _carrying(cluster, "Produce")


def test_a_rule_with_a_data_edit_and_another_action_edits_the_records_it_fires_on() -> None:
    with mockkafka.Cluster() as cluster:
        cluster.create_topic("orders", partitions=1)
        cluster.produce("orders", b"v", partition=0)
        host, port = cluster.bootstrap_servers.rsplit(":", 1)
        with Raw(host, int(port)) as raw:
            clean = raw.request("Fetch", 11, _fetch([0]))
            rule = cluster.faults.on("Fetch").once().delay(ms=1).corrupt_batch()
            edited = raw.request("Fetch", 11, _fetch([0]))
        records = [r["responses"][0]["partitions"][0]["records"] for r in (clean, edited)]
        assert records[0] and len(records[0]) == len(records[1])
        assert records[0] != records[1]  # one byte flipped under the CRC
        assert rule.fired == 1

"""A partition-level error rule on Fetch reaches the client through an incremental fetch
session (KIP-227), as Kafka always includes a partition with an error in the response.

The fake once counted such a rule as fired while the handler had already left the unchanged
partition out of the incremental response: ``rule.fired`` said 6 where the client saw 3.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

import mockkafka
from mockkafka.errors import ErrorCode
from tests.robustness._wire import Raw, fetch_body

NOT_LEADER = int(ErrorCode.NOT_LEADER_OR_FOLLOWER)


def _fetch_body(session_id: int, epoch: int, partitions: list[int]) -> dict[str, Any]:
    return fetch_body(
        max_wait_ms=0,
        max_bytes=1 << 20,
        partition_max_bytes=1 << 20,
        topic="orders",
        partitions=tuple(partitions),
        session_id=session_id,
        session_epoch=epoch,
    )


def _errors(resp: dict[str, Any]) -> dict[int, int]:
    return {
        p["partition_index"]: p["error_code"] for t in resp["responses"] for p in t["partitions"]
    }


def test_partition_error_is_sent_in_an_incremental_response_that_would_leave_it_out() -> None:
    with mockkafka.Cluster() as cluster:
        cluster.create_topic("orders", partitions=2)
        host, port = cluster.bootstrap_servers.rsplit(":", 1)
        with Raw(host, int(port)) as raw:
            full = raw.request("Fetch", 11, _fetch_body(0, 0, [0, 1]))
            session = full["session_id"]
            assert session != 0 and _errors(full) == {0: 0, 1: 0}
            # Nothing changed: an incremental fetch leaves both partitions out.
            assert _errors(raw.request("Fetch", 11, _fetch_body(session, 1, [0, 1]))) == {}
            rule = (
                cluster.faults.on("Fetch", topic="orders", partition=0)
                .times(2)
                .error("NOT_LEADER_OR_FOLLOWER")
            )
            answers = [
                _errors(raw.request("Fetch", 11, _fetch_body(session, epoch, [0, 1])))
                for epoch in (2, 3, 4)
            ]
    assert answers[:2] == [{0: NOT_LEADER}, {0: NOT_LEADER}]
    assert NOT_LEADER not in answers[2].values()
    assert rule.fired == 2


def _carrying(cluster: mockkafka.Cluster) -> int:
    """How many Fetch responses carried NOT_LEADER_OR_FOLLOWER."""
    return len(cluster.traffic.requests("Fetch", with_error="NOT_LEADER_OR_FOLLOWER"))


@pytest.mark.interop
def test_kafka_python_sees_every_fired_fetch_error() -> None:
    kafka = pytest.importorskip("kafka")
    with mockkafka.Cluster() as cluster:
        cluster.create_topic("orders", partitions=2)
        producer = kafka.KafkaProducer(bootstrap_servers=cluster.bootstrap_servers)
        for i in range(4):
            producer.send("orders", value=b"v%d" % i, partition=i % 2)
        producer.flush(10)
        producer.close()
        consumer = kafka.KafkaConsumer(
            "orders",
            bootstrap_servers=cluster.bootstrap_servers,
            auto_offset_reset="earliest",
            enable_auto_commit=False,
            fetch_max_wait_ms=50,
            retry_backoff_ms=20,
        )
        try:
            got: list[bytes] = []
            deadline = time.monotonic() + 20
            while len(got) < 4 and time.monotonic() < deadline:
                for batch in consumer.poll(timeout_ms=200).values():
                    got += [r.value for r in batch]
            # The consumer is caught up and in an incremental session: partition 0 is
            # unchanged in every response from here on.
            rule = (
                cluster.faults.on("Fetch", topic="orders", partition=0)
                .times(2)
                .error("NOT_LEADER_OR_FOLLOWER")
            )
            deadline = time.monotonic() + 20
            while rule.fired < 2 and time.monotonic() < deadline:
                consumer.poll(timeout_ms=100)
            assert sorted(got) == [b"v0", b"v1", b"v2", b"v3"]
            assert rule.fired == 2
            assert _carrying(cluster) == rule.fired
        finally:
            consumer.close()


@pytest.mark.interop
def test_confluent_kafka_sees_every_fired_fetch_error() -> None:
    ck = pytest.importorskip("confluent_kafka")
    with mockkafka.Cluster() as cluster:
        cluster.create_topic("orders", partitions=2)
        producer = ck.Producer({"bootstrap.servers": cluster.bootstrap_servers})
        for i in range(4):
            producer.produce("orders", value=b"v%d" % i, partition=i % 2)
        assert producer.flush(10) == 0
        consumer = ck.Consumer(
            {
                "bootstrap.servers": cluster.bootstrap_servers,
                "group.id": "g",
                "auto.offset.reset": "earliest",
                "fetch.wait.max.ms": 50,
                "topic.metadata.refresh.interval.ms": 200,
            }
        )
        try:
            consumer.subscribe(["orders"])
            got: list[bytes] = []
            deadline = time.monotonic() + 20
            while len(got) < 4 and time.monotonic() < deadline:
                msg = consumer.poll(0.2)
                if msg is not None and msg.error() is None:
                    got.append(msg.value())
            rule = (
                cluster.faults.on("Fetch", topic="orders", partition=0)
                .times(2)
                .error("NOT_LEADER_OR_FOLLOWER")
            )
            deadline = time.monotonic() + 20
            while rule.fired < 2 and time.monotonic() < deadline:
                consumer.poll(0.1)
            assert sorted(got) == [b"v0", b"v1", b"v2", b"v3"]
            assert rule.fired == 2
            assert _carrying(cluster) == rule.fired
        finally:
            consumer.close()

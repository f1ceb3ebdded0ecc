"""Real client sessions, compared: the same program against mockkafka and Apache Kafka.

Each Python client (confluent-kafka, kafka-python, aiokafka) runs one session on each
broker -- create a topic, produce keyed messages idempotently, consume them in a group,
commit -- and the outcomes must be equal: which partition holds which values (the client
partitions; the brokers must store and serve it the same), the committed offsets and the end
offsets. A broker-side difference a client hides (a retry, a different error) is the
differential harness's job (``test_differential.py``); this pins what a user observes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import pytest

import mockkafka
from mockkafka.kafka_broker import KafkaBroker
from tests.interop.conftest import unique
from tests.oracle.harness import Client
from tests.oracle.sessions import settle_topic

pytestmark = [pytest.mark.kafka_oracle, pytest.mark.timeout(120)]

N = 30
PARTITIONS = 3

Outcome = dict[str, Any]


def _create(port: int, topic: str) -> None:
    c = Client(port, "setup", "x")
    try:
        body = {"name": topic, "num_partitions": PARTITIONS, "replication_factor": 1}
        c.request("CreateTopics", 7, {"topics": [body], "timeout_ms": 10000})
        settle_topic(c, topic, PARTITIONS)
    finally:
        c.close()


def _messages(tag: str) -> list[tuple[bytes, bytes]]:
    return [(f"k{i % 7}".encode(), f"{tag}-{i}".encode()) for i in range(N)]


def confluent_session(bootstrap: str, topic: str, group: str) -> Outcome:
    from confluent_kafka import Consumer, Producer, TopicPartition

    p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    for k, v in _messages("c"):
        p.produce(topic, key=k, value=v)
    assert p.flush(30) == 0
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    c.subscribe([topic])
    got: dict[int, list[str]] = {}
    deadline = time.monotonic() + 60
    while sum(map(len, got.values())) < N and time.monotonic() < deadline:
        m = c.poll(0.2)
        if m is not None and m.error() is None:
            got.setdefault(m.partition(), []).append(m.value().decode())
    c.commit(asynchronous=False)
    parts = [TopicPartition(topic, i) for i in range(PARTITIONS)]
    committed = {tp.partition: tp.offset for tp in c.committed(parts, timeout=10)}
    ends = {
        i: c.get_watermark_offsets(TopicPartition(topic, i), timeout=10)[1]
        for i in range(PARTITIONS)
    }
    c.close()
    return {"values": got, "committed": committed, "ends": ends}


def kafka_python_session(bootstrap: str, topic: str, group: str) -> Outcome:
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    p = KafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=True)
    for k, v in _messages("k"):
        p.send(topic, key=k, value=v)
    p.flush(30)
    p.close()
    c = KafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=group,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        fetch_max_wait_ms=100,
    )
    got: dict[int, list[str]] = {}
    deadline = time.monotonic() + 60
    while sum(map(len, got.values())) < N and time.monotonic() < deadline:
        # 1000 ms, not 200: a short poll meets kafka-python 3.0's lost-rebalance bug (README,
        # "Tested clients"), against Kafka as against mockkafka (seen here on Kafka 4.4)
        for tp, records in c.poll(timeout_ms=1000).items():
            got.setdefault(tp.partition, []).extend(r.value.decode() for r in records)
    c.commit()
    parts = [TopicPartition(topic, i) for i in range(PARTITIONS)]
    committed = {tp.partition: c.committed(tp) for tp in parts}
    ends = {tp.partition: off for tp, off in c.end_offsets(parts).items()}
    c.close()
    return {"values": got, "committed": committed, "ends": ends}


def aiokafka_session(bootstrap: str, topic: str, group: str) -> Outcome:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

    async def run() -> Outcome:
        p = AIOKafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=True)
        await p.start()
        try:
            for k, v in _messages("a"):
                await p.send_and_wait(topic, key=k, value=v)
        finally:
            await p.stop()
        c = AIOKafkaConsumer(
            topic,
            bootstrap_servers=bootstrap,
            group_id=group,
            auto_offset_reset="earliest",
            enable_auto_commit=False,
        )
        await c.start()
        got: dict[int, list[str]] = {}
        try:
            deadline = time.monotonic() + 60
            while sum(map(len, got.values())) < N and time.monotonic() < deadline:
                batches = await c.getmany(timeout_ms=200)
                for tp, records in batches.items():
                    got.setdefault(tp.partition, []).extend(r.value.decode() for r in records)
            await c.commit()
            parts = [TopicPartition(topic, i) for i in range(PARTITIONS)]
            committed = {tp.partition: await c.committed(tp) for tp in parts}
            ends = {tp.partition: off for tp, off in (await c.end_offsets(parts)).items()}
        finally:
            await c.stop()
        return {"values": got, "committed": committed, "ends": ends}

    return asyncio.run(asyncio.wait_for(run(), 90))


SESSIONS: dict[str, Callable[[str, str, str], Outcome]] = {
    "confluent-kafka": confluent_session,
    "kafka-python": kafka_python_session,
    "aiokafka": aiokafka_session,
}


@pytest.mark.parametrize("client", list(SESSIONS))
def test_a_client_session_has_the_same_outcome_on_both_brokers(
    client: str, kafka: KafkaBroker
) -> None:
    session = SESSIONS[client]
    outcomes = {}
    with mockkafka.Cluster() as fake:
        for name, bootstrap in (
            ("mockkafka", fake.bootstrap_servers),
            ("kafka", kafka.bootstrap_servers),
        ):
            topic, group = unique("cs"), unique("csg")
            _create(int(bootstrap.split(",")[0].rsplit(":", 1)[1]), topic)
            outcomes[name] = session(bootstrap, topic, group)
    fake_outcome, kafka_outcome = outcomes["mockkafka"], outcomes["kafka"]
    assert sum(map(len, kafka_outcome["values"].values())) == N, kafka_outcome
    assert fake_outcome == kafka_outcome


def test_the_java_client_sees_the_same_on_both_brokers(kafka: KafkaBroker) -> None:
    """kafka-clients 4.4 (the Java tier's program, ``tests/interop/java``): idempotent
    produce with retries, a read, and a second transactional producer fencing the first."""
    from tests.interop._build import KAFKA_CLIENTS_VERSIONS, build_java

    java = build_java(KAFKA_CLIENTS_VERSIONS[0])
    outcomes = {}
    with mockkafka.Cluster() as fake:
        for name, bootstrap in (
            ("mockkafka", fake.bootstrap_servers),
            ("kafka", kafka.bootstrap_servers),
        ):
            port = int(bootstrap.split(",")[0].rsplit(":", 1)[1])
            topic, fenced, txn = unique("jo"), unique("jf"), unique("jtx")
            _create(port, topic)
            _create(port, fenced)
            produced = java.run("produce", bootstrap, topic, "60", "true")
            seen = java.run("consume", bootstrap, topic, "60", "read_uncommitted")["seen"]
            fence = java.run("fence", bootstrap, fenced, txn)
            committed = java.run("consume", bootstrap, fenced, "1", "read_committed")["seen"]
            outcomes[name] = (produced, sorted(seen), fence, committed)
    assert outcomes["kafka"][1] == sorted(f"v{i}" for i in range(60)), outcomes["kafka"]
    assert outcomes["mockkafka"] == outcomes["kafka"]

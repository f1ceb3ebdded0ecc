# ruff: noqa: E402, F811  -- each example block carries its own imports, like the docs
"""The examples of README.md and docs/pytest.md, run as tests.

Each block between ``# --- example:`` lines is copied verbatim into the docs; keep them short,
self-contained (imports included) and passing.
"""

# --- example: produce and consume (confluent-kafka) ---------------------------------------
from confluent_kafka import Consumer, Producer


def test_produce_and_consume(kafka_cluster):
    kafka_cluster.create_topic("greetings", partitions=3)

    producer = Producer({"bootstrap.servers": kafka_cluster.bootstrap_servers})
    producer.produce("greetings", key=b"alice", value=b"hello")
    assert producer.flush(10) == 0

    consumer = Consumer(
        {
            "bootstrap.servers": kafka_cluster.bootstrap_servers,
            "group.id": "readers",
            "auto.offset.reset": "earliest",
        }
    )
    try:
        consumer.subscribe(["greetings"])
        msg = consumer.poll(10)
        assert msg is not None and msg.error() is None
        assert (msg.key(), msg.value()) == (b"alice", b"hello")
    finally:
        consumer.close()

    # The broker's side of the story:
    assert [r.value for r in kafka_cluster.topic("greetings").records()] == [b"hello"]
    assert kafka_cluster.traffic.requests("JoinGroup")


# --- example: configure the cluster with a marker ------------------------------------------
import pytest
from confluent_kafka import Producer


@pytest.mark.kafka_cluster(
    brokers=3,
    topics={"orders": {"partitions": 6, "replication_factor": 3}},
)
def test_same_key_same_partition(kafka_cluster):
    producer = Producer({"bootstrap.servers": kafka_cluster.bootstrap_servers})
    for i in range(10):
        producer.produce("orders", key=b"customer-42", value=f"order-{i}".encode())
    assert producer.flush(10) == 0

    counts = [len(p.records()) for p in kafka_cluster.topic("orders").partitions]
    assert sorted(counts) == [0, 0, 0, 0, 0, 10]


# --- example: script a fault ------------------------------------------------------------------
import pytest
from confluent_kafka import Producer


@pytest.mark.kafka_cluster(topics={"payments": 1})
def test_idempotent_producer_survives_leader_errors(kafka_cluster):
    kafka_cluster.faults.on("Produce").times(2).error("NOT_LEADER_OR_FOLLOWER")

    producer = Producer(
        {
            "bootstrap.servers": kafka_cluster.bootstrap_servers,
            "enable.idempotence": True,
            "retry.backoff.ms": 10,
        }
    )
    producer.produce("payments", b"100 EUR")
    assert producer.flush(15) == 0

    # Retried twice, written exactly once.
    assert len(kafka_cluster.traffic.requests("Produce", with_error="NOT_LEADER_OR_FOLLOWER")) == 2
    assert [r.value for r in kafka_cluster.topic("payments").records()] == [b"100 EUR"]


# --- example: asyncio (aiokafka) -------------------------------------------------------------
import asyncio

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer


@pytest.mark.kafka_cluster(topics={"events": 1})
def test_aiokafka_roundtrip(kafka_bootstrap):
    # The cluster runs in its own thread, so any event loop can talk to it.
    async def roundtrip():
        producer = AIOKafkaProducer(bootstrap_servers=kafka_bootstrap)
        await producer.start()
        try:
            await producer.send_and_wait("events", b"ping")
        finally:
            await producer.stop()

        consumer = AIOKafkaConsumer(
            "events", bootstrap_servers=kafka_bootstrap, auto_offset_reset="earliest"
        )
        await consumer.start()
        try:
            msg = await consumer.getone()
            return msg.value
        finally:
            await consumer.stop()

    assert asyncio.run(asyncio.wait_for(roundtrip(), 20)) == b"ping"


# --- example: trio ------------------------------------------------------------------------------
import pytest
import trio


@pytest.mark.trio
@pytest.mark.kafka_cluster(topics={"logs": 2})
async def test_trio_native_cluster(kafka_cluster_trio):
    # Served by this test's own trio loop: no thread, verbs are plain calls.
    port = kafka_cluster_trio.brokers[0].port
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    await stream.aclose()
    kafka_cluster_trio.produce("logs", b"line 1", partition=1)
    assert kafka_cluster_trio.topic("logs").partition(1).high_watermark == 1


# --- example: several clusters in one test -----------------------------------------------------
from confluent_kafka import Consumer, Producer


def test_mirror_between_clusters(kafka_cluster_factory):
    source = kafka_cluster_factory(topics={"clicks": 1})
    target = kafka_cluster_factory(brokers=3, auto_create_topics=True)
    source.produce("clicks", b"click-1")

    consumer = Consumer(
        {
            "bootstrap.servers": source.bootstrap_servers,
            "group.id": "mirror",
            "auto.offset.reset": "earliest",
        }
    )
    producer = Producer({"bootstrap.servers": target.bootstrap_servers})
    try:
        consumer.subscribe(["clicks"])
        msg = consumer.poll(10)
        assert msg is not None and msg.error() is None
        producer.produce("clicks", msg.value())
        assert producer.flush(10) == 0
    finally:
        consumer.close()

    assert [r.value for r in target.topic("clicks").records()] == [b"click-1"]


# --- example: one cluster for the session, reset between tests ---------------------------------
import pytest
from confluent_kafka import Producer


@pytest.fixture(scope="session")
def app_producer(kafka_bootstrap_shared):
    producer = Producer({"bootstrap.servers": kafka_bootstrap_shared})
    yield producer
    producer.flush(5)


@pytest.mark.kafka_cluster(topics={"orders": 2})
def test_order_is_written(kafka_cluster_shared, app_producer):
    app_producer.produce("orders", b"order-1", partition=1)
    assert app_producer.flush(10) == 0
    assert kafka_cluster_shared.topic("orders").partition(1).high_watermark == 1

"""The record-editing fault actions through ``mockkafka.Proxy`` in front of real Apache
Kafka: Kafka's own Fetch answers are edited on the way to the client, the batches stay
valid for librdkafka (CRC checked), and Kafka's log is untouched; and ``lost_ack`` and
``blackhole`` on the proxied connection."""

from __future__ import annotations

import json
import struct
import time
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import TIMESTAMP_CREATE_TIME, Consumer, Producer, TopicPartition

import mockkafka
from mockkafka.kafka_broker import KafkaBroker
from tests.interop.conftest import unique
from tests.oracle.test_proxy import create_topic

pytestmark = [pytest.mark.kafka_oracle, pytest.mark.interop, pytest.mark.timeout(120)]

TS = 1_700_000_000_000


@pytest.fixture
def proxy(kafka: KafkaBroker) -> Iterator[mockkafka.Proxy]:
    with mockkafka.Proxy(upstream=kafka.bootstrap_servers) as p:
        yield p


def _produce(kafka: KafkaBroker, topic: str, values: list[bytes]) -> None:
    """Straight to Kafka, partition 0, CreateTime TS + i."""
    p = Producer({"bootstrap.servers": kafka.bootstrap_servers, "linger.ms": 0})
    for i, v in enumerate(values):
        p.produce(topic, v, key=b"k", partition=0, timestamp=TS + i)
    assert p.flush(30) == 0


def _read(bootstrap: str, topic: str, n: int) -> list[Any]:
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": unique("g"),
            "enable.auto.commit": False,
            "check.crcs": True,
            "fetch.wait.max.ms": 50,
        }
    )
    got: list[Any] = []
    try:
        c.assign([TopicPartition(topic, 0, 0)])
        deadline = time.monotonic() + 30
        while len(got) < n and time.monotonic() < deadline:
            m = c.poll(0.2)
            if m is not None and not m.error():
                got.append(m)
    finally:
        c.close()
    return got


def test_corrupt_payload_through_the_proxy(kafka: KafkaBroker, proxy: mockkafka.Proxy) -> None:
    topic = unique("pcorrupt")
    create_topic(kafka.bootstrap_servers, topic, 1)
    values = [json.dumps({"n": i}).encode() for i in range(5)]
    _produce(kafka, topic, values)
    rule = proxy.faults.on("Fetch", topic=topic).once().corrupt_payload(seed=5)
    got = _read(proxy.bootstrap_servers, topic, 5)
    assert rule.fired == 1 and len(got) == 5
    for m, v in zip(got, values, strict=True):
        assert m.key() == b"k" and len(m.value()) == len(v) and m.value() != v
    assert [m.value() for m in _read(kafka.bootstrap_servers, topic, 5)] == values


def test_schema_id_through_the_proxy(kafka: KafkaBroker, proxy: mockkafka.Proxy) -> None:
    topic = unique("pschema")
    create_topic(kafka.bootstrap_servers, topic, 1)
    _produce(kafka, topic, [struct.pack(">bI", 0, 3) + b"payload-%d" % i for i in range(3)])
    rule = proxy.faults.on("Fetch", topic=topic).once().schema_id(id=77)
    got = _read(proxy.bootstrap_servers, topic, 3)
    assert rule.fired == 1
    assert [m.value() for m in got] == [
        struct.pack(">bI", 0, 77) + b"payload-%d" % i for i in range(3)
    ]


def test_skew_timestamps_through_the_proxy(kafka: KafkaBroker, proxy: mockkafka.Proxy) -> None:
    topic = unique("pskew")
    create_topic(kafka.bootstrap_servers, topic, 1)
    _produce(kafka, topic, [b"a", b"b"])
    rule = proxy.faults.on("Fetch", topic=topic).once().skew_timestamps(ms=60_000)
    got = _read(proxy.bootstrap_servers, topic, 2)
    assert rule.fired == 1
    assert [m.timestamp() for m in got] == [
        (TIMESTAMP_CREATE_TIME, TS + 60_000),
        (TIMESTAMP_CREATE_TIME, TS + 1 + 60_000),
    ]


def test_lost_ack_through_the_proxy_duplicates_without_idempotence(
    kafka: KafkaBroker, proxy: mockkafka.Proxy
) -> None:
    """Kafka stores the batch, the proxy closes the client's connection instead of relaying
    the answer: a producer without idempotence writes it to Kafka twice."""
    topic = unique("plost")
    create_topic(kafka.bootstrap_servers, topic, 1)
    rule = proxy.faults.on("Produce", topic=topic).once().lost_ack()
    p = Producer(
        {"bootstrap.servers": proxy.bootstrap_servers, "enable.idempotence": False, "linger.ms": 20}
    )
    for i in range(3):
        p.produce(topic, b"x%d" % i, partition=0)
    assert p.flush(30) == 0
    assert rule.fired == 1
    got = [m.value() for m in _read(kafka.bootstrap_servers, topic, 6)]
    assert got == [b"x0", b"x1", b"x2"] * 2


def test_blackhole_through_the_proxy_then_answered_again(
    kafka: KafkaBroker, proxy: mockkafka.Proxy
) -> None:
    topic = unique("pbh")
    create_topic(kafka.bootstrap_servers, topic, 1)
    _produce(kafka, topic, [b"v"])
    rule = proxy.faults.on("Fetch", client_id="cut-off").blackhole().for_ms(1500)
    c = Consumer(
        {
            "bootstrap.servers": proxy.bootstrap_servers,
            "group.id": unique("g"),
            "client.id": "cut-off",
            "socket.timeout.ms": 1000,
            "fetch.wait.max.ms": 50,
        }
    )
    try:
        c.assign([TopicPartition(topic, 0, 0)])
        started = time.monotonic()
        got = None
        while got is None and time.monotonic() - started < 20:
            m = c.poll(0.1)
            if m is not None and not m.error():
                got = m
    finally:
        c.close()
    assert got is not None and got.value() == b"v"
    assert time.monotonic() - started >= 1.0  # not before the rule ended
    swallowed = proxy.traffic.requests("Fetch", fault=rule)
    assert rule.fired >= 1 and swallowed and all(ex.no_response for ex in swallowed)

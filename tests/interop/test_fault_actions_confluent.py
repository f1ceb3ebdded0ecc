"""confluent-kafka (librdkafka) under the record-editing and connection-level fault actions:
``duplicate``, ``corrupt_payload``, ``schema_id``, ``skew_timestamps``, ``lost_ack`` and
``blackhole``, written as a user would, with the verbs and waits the docs show."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import TIMESTAMP_CREATE_TIME, Consumer, Producer, TopicPartition

import mockkafka
from mockkafka.protocol.records import decode_records
from tests.interop._fault_checks import check_schema_id, check_skew_timestamps
from tests.interop.conftest import unique

pytestmark = [pytest.mark.interop, pytest.mark.timeout(60)]


@pytest.fixture
def cluster() -> Iterator[mockkafka.Cluster]:
    with mockkafka.Cluster(brokers=1) as c:
        yield c


def _consumer(cluster: mockkafka.Cluster, **conf: Any) -> Consumer:
    base = {
        "bootstrap.servers": cluster.bootstrap_servers,
        "group.id": unique("g"),
        "enable.auto.commit": False,
        "fetch.wait.max.ms": 50,
        "check.crcs": True,  # the edited batches must pass librdkafka's CRC check
        "client.id": "actions-consumer",
    }
    return Consumer({**base, **conf})


def _consume(c: Consumer, n: int, *, timeout: float = 15.0) -> list[Any]:
    """Up to ``n`` messages (errors included), polling at most ``timeout`` seconds."""
    out: list[Any] = []
    deadline = time.monotonic() + timeout
    while len(out) < n and time.monotonic() < deadline:
        m = c.poll(0.1)
        if m is not None:
            out.append(m)
    return out


def _read_all(cluster: mockkafka.Cluster, topic: str, n: int) -> list[Any]:
    c = _consumer(cluster)
    try:
        c.assign([TopicPartition(topic, 0, 0)])
        return _consume(c, n)
    finally:
        c.close()


def test_duplicate_batch_is_dropped_below_the_fetch_position(cluster: mockkafka.Cluster) -> None:
    """librdkafka skips records below its fetch position, so a repeated batch is never
    delivered twice."""
    topic = unique("orders")
    cluster.create_topic(topic, partitions=1)
    for i in range(10):
        cluster.produce(topic, f"v-{i}".encode())  # one batch per record
    c = _consumer(cluster)
    try:
        c.assign([TopicPartition(topic, 0, 0)])
        first = _consume(c, 10)
        rule = cluster.faults.on("Fetch", topic=topic).times(3).duplicate()
        for i in range(10, 15):
            cluster.produce(topic, f"v-{i}".encode())
        rest = _consume(c, 5)
        rule.wait_fired(3)
        extra = _consume(c, 1, timeout=0.5)
    finally:
        c.close()
    got = [m.value() for m in first + rest + extra if not m.error()]
    assert got == [f"v-{i}".encode() for i in range(15)]
    for ex in cluster.traffic.requests("Fetch", fault=rule):
        req = ex.request or {}
        (fetch_offset,) = [p["fetch_offset"] for t in req["topics"] for p in t["partitions"]]
        (part,) = [p for t in (ex.response or {})["responses"] for p in t["partitions"]]
        offsets = [r.offset for r in decode_records(part["records"])]
        assert offsets[0] == fetch_offset - 1  # the batch read last, at its own offset


def test_corrupt_payload_passes_the_crc_and_fails_the_deserializer(
    cluster: mockkafka.Cluster,
) -> None:
    topic = unique("events")
    cluster.create_topic(topic, partitions=1)
    values = [json.dumps({"n": i}).encode() for i in range(5)]
    for v in values:
        cluster.produce(topic, v, key=b"k")
    rule = cluster.faults.on("Fetch", topic=topic).once().corrupt_payload(seed=7)
    got = _read_all(cluster, topic, 5)
    assert rule.fired == 1
    assert [m.error() for m in got] == [None] * 5  # the client library accepted every batch
    assert [m.key() for m in got] == [b"k"] * 5  # only values were touched
    for m, v in zip(got, values, strict=True):
        assert len(m.value()) == len(v) and m.value() != v
        with pytest.raises(ValueError):  # UnicodeDecodeError or JSONDecodeError
            json.loads(m.value())
    # The log itself is untouched: the next reader gets the real values.
    assert [m.value() for m in _read_all(cluster, topic, 5)] == values


def test_corrupt_payload_on_keys_and_headers(cluster: mockkafka.Cluster) -> None:
    topic = unique("events")
    cluster.create_topic(topic, partitions=1)
    cluster.produce(topic, b"value", key=b"key-1", headers=[("trace", b"abc")])
    cluster.faults.on("Fetch", topic=topic).once().corrupt_payload(part="headers", seed=1)
    (m,) = _read_all(cluster, topic, 1)
    assert (m.error(), m.key(), m.value()) == (None, b"key-1", b"value")
    ((name, hv),) = m.headers()
    assert name == "trace" and len(hv) == 3 and hv != b"abc"
    cluster.faults.on("Fetch", topic=topic).once().corrupt_payload(part="key", seed=1)
    (m,) = _read_all(cluster, topic, 1)
    assert m.value() == b"value" and m.key() != b"key-1" and len(m.key()) == 5


def test_schema_id_rewrites_the_registry_header(cluster: mockkafka.Cluster) -> None:
    check_schema_id(cluster, lambda topic, n: [m.value() for m in _read_all(cluster, topic, n)])


def test_skew_timestamps_moves_create_time(cluster: mockkafka.Cluster) -> None:
    def read(topic: str) -> dict[int, tuple[int, int]]:
        c = _consumer(cluster)
        try:
            c.assign([TopicPartition(topic, 0, 0), TopicPartition(topic, 1, 0)])
            return {m.partition(): m.timestamp() for m in _consume(c, 2)}
        finally:
            c.close()

    check_skew_timestamps(cluster, read, create_time=TIMESTAMP_CREATE_TIME)


@pytest.mark.parametrize(("idempotent", "copies"), [(False, 2), (True, 1)])
def test_lost_ack_makes_the_producer_retry(
    cluster: mockkafka.Cluster, idempotent: bool, copies: int
) -> None:
    """The batch is stored, the answer lost: librdkafka retries it, so without idempotence
    the log holds it twice; with idempotence the broker recognises the retry."""
    topic = unique("payments")
    cluster.create_topic(topic, partitions=1)
    rule = cluster.faults.on("Produce", topic=topic).once().lost_ack()
    p = Producer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "enable.idempotence": idempotent,
            "linger.ms": 50,
            "retry.backoff.ms": 50,
        }
    )
    errors: list[Any] = []
    for i in range(5):
        p.produce(
            topic, f"pay-{i}".encode(), partition=0, on_delivery=lambda e, m: errors.append(e)
        )
    assert p.flush(20) == 0
    assert errors == [None] * 5
    assert rule.fired == 1
    lost = cluster.traffic.requests("Produce", fault=rule)[0]
    assert lost.closed_connection and lost.response is not None  # applied, answer not sent
    stored = [r.value for r in cluster.topic(topic).partition(0).records()]
    assert stored == [f"pay-{i}".encode() for i in range(5)] * copies


def test_blackholed_member_is_evicted_and_its_partitions_move(cluster: mockkafka.Cluster) -> None:
    topic = unique("work")
    group = unique("g")
    cluster.create_topic(topic, partitions=2)
    conf = {
        "group.id": group,
        "session.timeout.ms": 1500,
        "heartbeat.interval.ms": 200,
        "socket.timeout.ms": 3000,
        "partition.assignment.strategy": "range",
    }
    a = _consumer(cluster, **conf, **{"client.id": "member-a"})
    b = _consumer(cluster, **conf, **{"client.id": "member-b"})
    try:
        for c in (a, b):
            c.subscribe([topic])
        deadline = time.monotonic() + 15
        view = None
        while time.monotonic() < deadline:
            a.poll(0.05)
            b.poll(0.05)
            view = cluster.group(group)
            members = view.members
            if view.state == "Stable" and len(members) == 2 and all(m.assignment for m in members):
                break
        assert view is not None and len(view.members) == 2
        rule = cluster.faults.on(client_id="member-a").blackhole()
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:  # only b polls: a is cut off anyway
            b.poll(0.05)
            view = cluster.group(group)
            if view.state == "Stable" and [m.client_id for m in view.members] == ["member-b"]:
                break
        assert [m.client_id for m in view.members] == ["member-b"]
        assert view.members[0].assignment == {topic: [0, 1]}
        swallowed = cluster.traffic.requests(client_id="member-a", fault=rule)
        assert swallowed and all(ex.no_response for ex in swallowed)
        assert not any(ex.closed_connection for ex in swallowed)
        rule.remove()
        since = cluster.traffic.requests()[-1].seq
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:  # a is answered again once the rule is gone
            a.poll(0.05)
            b.poll(0.05)
            if cluster.traffic.requests(client_id="member-a", since_seq=since, answered=True):
                break
        assert cluster.traffic.requests(client_id="member-a", since_seq=since, answered=True)
    finally:
        a.close()
        b.close()

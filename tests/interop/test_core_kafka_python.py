"""kafka-python 3 against mockkafka: produce, consume, offsets, admin (newest protocol)."""

from __future__ import annotations

import time
from collections import defaultdict
from typing import Any

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient, NewTopic
from kafka.errors import KafkaError, MessageSizeTooLargeError

import mockkafka
from tests.interop.conftest import (
    CODECS,
    assert_sent_with_codec,
    keyed_messages,
    requires_apis,
    unique,
)

pytestmark = [pytest.mark.interop, pytest.mark.timeout(60)]


def _producer(cluster: mockkafka.Cluster, **conf: Any) -> KafkaProducer:
    return KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, **conf)


def _consumer(cluster: mockkafka.Cluster, **conf: Any) -> KafkaConsumer:
    conf.setdefault("consumer_timeout_ms", 500)
    return KafkaConsumer(
        bootstrap_servers=cluster.bootstrap_servers,
        group_id=None,
        enable_auto_commit=False,
        fetch_max_wait_ms=100,
        **conf,
    )


def _consume_n(c: KafkaConsumer, n: int, timeout: float = 20.0) -> list[Any]:
    out: list[Any] = []
    deadline = time.monotonic() + timeout
    while len(out) < n and time.monotonic() < deadline:
        for records in c.poll(timeout_ms=200, max_records=2000).values():
            out.extend(records)
    return out


def _compression(codec: str) -> str | None:
    return None if codec == "none" else codec


@pytest.mark.parametrize("codec", CODECS)
def test_10k_keyed_messages_round_trip_exactly_with_each_codec(
    cluster: mockkafka.Cluster, codec: str
) -> None:
    topic = unique(f"kp-{codec}")
    cluster.create_topic(topic, partitions=3, replication_factor=3)
    msgs = keyed_messages(10_000, tag=codec)
    p = _producer(cluster, acks="all", compression_type=_compression(codec), linger_ms=5)
    try:
        futures = [p.send(topic, key=k, value=v) for k, v in msgs]
        p.flush(20)
        metas = [f.get(timeout=1) for f in futures]
    finally:
        p.close(timeout=5)
    assert len({(m.partition, m.offset) for m in metas}) == 10_000

    c = _consumer(cluster)
    try:
        tps = [TopicPartition(topic, i) for i in range(3)]
        c.assign(tps)
        c.seek_to_beginning(*tps)
        got = _consume_n(c, 10_000)
    finally:
        c.close()
    assert len(got) == 10_000
    by_partition: dict[int, list[Any]] = defaultdict(list)
    for m in got:
        by_partition[m.partition].append(m)
    for part, ms in by_partition.items():
        assert [m.offset for m in ms] == list(range(len(ms))), f"gap in partition {part}"
    assert sorted((m.key, m.value) for m in got) == sorted(msgs)
    # Acknowledged offsets are where the consumer found each message.
    sent_at = {(m.partition, m.offset) for m in metas}
    assert sent_at == {(m.partition, m.offset) for m in got}
    assert_sent_with_codec(cluster, topic, codec)


def test_idempotent_producer_writes_each_message_once(cluster: mockkafka.Cluster) -> None:
    topic = unique("kp-idem")
    cluster.create_topic(topic, partitions=2, replication_factor=3)
    msgs = keyed_messages(2_000)
    p = _producer(cluster, enable_idempotence=True, acks="all", linger_ms=2)
    try:
        futures = [p.send(topic, key=k, value=v) for k, v in msgs]
        p.flush(20)
        for f in futures:
            f.get(timeout=1)
    finally:
        p.close(timeout=5)
    assert cluster.traffic.requests("InitProducerId")
    held = cluster.topic(topic).records()
    assert sorted((r.key, r.value) for r in held) == sorted(msgs)


def test_seek_and_reset_to_earliest_or_latest(cluster: mockkafka.Cluster) -> None:
    topic = unique("kp-seek")
    cluster.create_topic(topic, partitions=1)
    for i in range(20):
        cluster.produce(topic, f"v{i}")
    tp = TopicPartition(topic, 0)
    c = _consumer(cluster, auto_offset_reset="earliest")
    late = _consumer(cluster, auto_offset_reset="latest")
    p = _producer(cluster)
    try:
        c.assign([tp])
        assert [m.offset for m in _consume_n(c, 20)] == list(range(20))
        c.seek(tp, 15)
        assert [m.value for m in _consume_n(c, 5)] == [f"v{i}".encode() for i in range(15, 20)]
        late.assign([tp])
        assert _consume_n(late, 1, timeout=0.5) == []
        assert late.position(tp) == 20
        p.send(topic, b"new").get(timeout=10)
        got = _consume_n(late, 1)
        assert [(m.offset, m.value) for m in got] == [(20, b"new")]
        c.seek_to_end(tp)
        assert c.position(tp) == 21
    finally:
        p.close(timeout=5)
        late.close()
        c.close()


def test_offsets_for_times_and_end_offsets(cluster: mockkafka.Cluster) -> None:
    topic = unique("kp-times")
    cluster.create_topic(topic, partitions=1)
    for i in range(10):
        cluster.produce(topic, f"v{i}", timestamp=1_000_000 + i * 1000)
    tp = TopicPartition(topic, 0)
    c = _consumer(cluster)
    try:
        found = c.offsets_for_times({tp: 1_004_500})
        assert found[tp] is not None
        assert (found[tp].offset, found[tp].timestamp) == (5, 1_005_000)
        assert c.offsets_for_times({tp: 9_999_999})[tp] is None
        assert c.beginning_offsets([tp]) == {tp: 0}
        assert c.end_offsets([tp]) == {tp: 10}
    finally:
        c.close()


def test_oversized_message_is_refused_by_the_broker(cluster: mockkafka.Cluster) -> None:
    topic = unique("kp-big")
    cluster.create_topic(topic, config={"max.message.bytes": "2000"})
    # The client's own limit is higher, so the broker is the one that says no.
    p = _producer(cluster, max_request_size=1_000_000, retries=0)
    try:
        with pytest.raises(MessageSizeTooLargeError):
            p.send(topic, b"x" * 5000).get(timeout=10)
        assert p.send(topic, b"small").get(timeout=10).offset == 0
    finally:
        p.close(timeout=5)
    assert cluster.traffic.requests("Produce", with_error="MESSAGE_TOO_LARGE")


def test_acks_zero_gets_no_response_but_records_land(cluster: mockkafka.Cluster) -> None:
    topic = unique("kp-acks0")
    cluster.create_topic(topic)
    p = _producer(cluster, acks=0)
    try:
        for i in range(100):
            p.send(topic, f"v{i}".encode())
        p.flush(10)
    finally:
        p.close(timeout=5)
    records = cluster.wait_for_records(topic, partition=0, count=100)
    assert [r.value for r in records] == [f"v{i}".encode() for i in range(100)]
    produce = cluster.traffic.requests("Produce")
    assert produce and all(ex.no_response for ex in produce)


@requires_apis("CreateTopics", "DeleteTopics", "DescribeConfigs")
def test_admin_create_describe_delete(cluster: mockkafka.Cluster) -> None:
    topic = unique("kp-admin")
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
    try:
        admin.create_topics(
            [NewTopic(topic, 2, 3, topic_configs={"retention.ms": "3600000"})], timeout_ms=10000
        )
        assert len(cluster.topic(topic).partitions) == 2
        res = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])
        assert res["topic"][topic]["retention.ms"]["value"] == "3600000"
        p = _producer(cluster, acks="all")
        try:
            p.send(topic, key=b"k", value=b"v").get(timeout=10)
        finally:
            p.close(timeout=5)
        admin.delete_topics([topic], timeout_ms=10000)
        assert topic not in cluster.topics()
        with pytest.raises(KafkaError):
            admin.create_topics([NewTopic("bad name!", 1, 1)], timeout_ms=10000)
    finally:
        admin.close()

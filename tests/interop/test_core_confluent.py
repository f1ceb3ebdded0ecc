"""confluent-kafka (librdkafka) against mockkafka: produce, consume, offsets, admin."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import (
    OFFSET_BEGINNING,
    OFFSET_END,
    Consumer,
    KafkaError,
    KafkaException,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic, OffsetSpec

import mockkafka
from tests.interop.conftest import (
    CODECS,
    assert_sent_with_codec,
    keyed_messages,
    requires_apis,
    unique,
)

pytestmark = [pytest.mark.interop, pytest.mark.timeout(60)]


def _producer(cluster: mockkafka.Cluster, **conf: Any) -> Producer:
    return Producer({"bootstrap.servers": cluster.bootstrap_servers, **conf})


def _consumer(cluster: mockkafka.Cluster, **conf: Any) -> Consumer:
    base = {
        "bootstrap.servers": cluster.bootstrap_servers,
        "group.id": unique("g"),
        "enable.auto.commit": False,
        "fetch.wait.max.ms": 100,
    }
    return Consumer({**base, **conf})


def _produce_all(p: Producer, topic: str, msgs: list[tuple[bytes, bytes]]) -> list[Any]:
    """Produce and flush; returns delivery reports (errors included) in delivery order."""
    reports: list[Any] = []

    def on_delivery(err: Any, msg: Any) -> None:
        reports.append(err if err is not None else msg)

    for i, (k, v) in enumerate(msgs):
        while True:
            try:
                p.produce(topic, key=k, value=v, on_delivery=on_delivery)
                break
            except BufferError:
                p.poll(0.05)
        if i % 1000 == 0:
            p.poll(0)
    assert p.flush(20) == 0, "messages still in flight after 20 s"
    return reports


def _consume_n(c: Consumer, n: int, timeout: float = 20.0) -> list[Any]:
    out: list[Any] = []
    deadline = time.monotonic() + timeout
    while len(out) < n and time.monotonic() < deadline:
        for m in c.consume(min(1000, n - len(out)), 0.5):
            err = m.error()
            if err is not None and err.code() != KafkaError._PARTITION_EOF:
                raise AssertionError(f"consumer error: {err}")
            if err is None:
                out.append(m)
    return out


@pytest.fixture
def admin(cluster: mockkafka.Cluster) -> Iterator[AdminClient]:
    yield AdminClient({"bootstrap.servers": cluster.bootstrap_servers})


@pytest.mark.parametrize("codec", CODECS)
def test_10k_keyed_messages_round_trip_exactly_with_each_codec(
    cluster: mockkafka.Cluster, codec: str
) -> None:
    topic = unique(f"cfk-{codec}")
    cluster.create_topic(topic, partitions=3, replication_factor=3)
    msgs = keyed_messages(10_000, tag=codec)
    p = _producer(cluster, acks="all", **{"compression.type": codec, "linger.ms": 5})
    try:
        reports = _produce_all(p, topic, msgs)
    finally:
        p.flush(5)
    errors = [r for r in reports if isinstance(r, KafkaError)]
    assert not errors, errors[:3]
    assert len(reports) == 10_000

    c = _consumer(cluster)
    try:
        c.assign([TopicPartition(topic, i, OFFSET_BEGINNING) for i in range(3)])
        got = _consume_n(c, 10_000)
    finally:
        c.close()
    assert len(got) == 10_000
    by_partition: dict[int, list[Any]] = defaultdict(list)
    key_partition: dict[bytes, int] = {}
    for m in got:
        by_partition[m.partition()].append(m)
        assert key_partition.setdefault(m.key(), m.partition()) == m.partition()
    for part, ms in by_partition.items():
        assert [m.offset() for m in ms] == list(range(len(ms))), f"gap in partition {part}"
        values = [m.value() for m in ms]
        assert values == sorted(values), f"partition {part} out of produce order"
    assert sorted((m.key(), m.value()) for m in got) == sorted(msgs)
    # The broker holds exactly what the consumer read, and the codec the producer chose.
    held = cluster.topic(topic).records()
    assert sorted((r.key, r.value) for r in held) == sorted(msgs)
    assert_sent_with_codec(cluster, topic, codec)


def test_idempotent_producer_writes_each_message_once(cluster: mockkafka.Cluster) -> None:
    topic = unique("cfk-idem")
    cluster.create_topic(topic, partitions=2, replication_factor=3)
    msgs = keyed_messages(2_000)
    p = _producer(cluster, **{"enable.idempotence": True, "linger.ms": 2})
    try:
        reports = _produce_all(p, topic, msgs)
    finally:
        p.flush(5)
    assert not [r for r in reports if isinstance(r, KafkaError)]
    assert cluster.traffic.requests("InitProducerId")
    held = cluster.topic(topic).records()
    assert sorted((r.key, r.value) for r in held) == sorted(msgs)
    produce = cluster.traffic.requests("Produce")
    assert produce and all(ex.request["acks"] == -1 for ex in produce)  # type: ignore[index]


def test_consumer_starts_from_earliest_or_latest(cluster: mockkafka.Cluster) -> None:
    # Explicit logical offsets, and auto.offset.reset after OFFSET_OUT_OF_RANGE: no group
    # (committed offsets) involved.
    topic = unique("cfk-reset")
    cluster.create_topic(topic, partitions=1)
    for i in range(5):
        cluster.produce(topic, f"old-{i}")
    old = [f"old-{i}".encode() for i in range(5)]
    early = _consumer(cluster)
    reset_early = _consumer(cluster, **{"auto.offset.reset": "earliest"})
    late = _consumer(cluster)
    reset_late = _consumer(cluster, **{"auto.offset.reset": "latest"})
    p = _producer(cluster)
    try:
        early.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        assert [m.value() for m in _consume_n(early, 5)] == old
        reset_early.assign([TopicPartition(topic, 0, 1000)])  # out of range -> earliest
        assert [m.value() for m in _consume_n(reset_early, 5)] == old
        late.assign([TopicPartition(topic, 0, OFFSET_END)])
        reset_late.assign([TopicPartition(topic, 0, 1000)])  # out of range -> latest
        for c in (late, reset_late):
            assert _consume_n(c, 1, timeout=1.0) == []
        p.produce(topic, value=b"new")
        assert p.flush(10) == 0
        for c in (late, reset_late):
            got = _consume_n(c, 1)
            assert [(m.offset(), m.value()) for m in got] == [(5, b"new")]
    finally:
        p.flush(1)
        for c in (early, reset_early, late, reset_late):
            c.close()


@requires_apis("FindCoordinator", "OffsetFetch")
def test_assign_without_offset_falls_back_to_auto_offset_reset(
    cluster: mockkafka.Cluster,
) -> None:
    # The everyday pattern: assign() with no offset asks the group for a committed offset
    # (none here), then applies auto.offset.reset.
    topic = unique("cfk-nocommit")
    cluster.create_topic(topic, partitions=1)
    for i in range(3):
        cluster.produce(topic, f"v{i}")
    c = _consumer(cluster, **{"auto.offset.reset": "earliest"})
    try:
        c.assign([TopicPartition(topic, 0)])
        assert [m.value() for m in _consume_n(c, 3)] == [b"v0", b"v1", b"v2"]
    finally:
        c.close()
    assert cluster.traffic.requests("OffsetFetch")


def test_seek_reads_from_the_given_offset(cluster: mockkafka.Cluster) -> None:
    topic = unique("cfk-seek")
    cluster.create_topic(topic, partitions=1)
    for i in range(50):
        cluster.produce(topic, f"v{i}")
    c = _consumer(cluster)
    try:
        c.assign([TopicPartition(topic, 0, 0)])
        assert len(_consume_n(c, 50)) == 50
        c.seek(TopicPartition(topic, 0, 42))
        got = _consume_n(c, 8)
        assert [m.offset() for m in got] == list(range(42, 50))
    finally:
        c.close()


def test_offsets_for_times_and_watermarks(cluster: mockkafka.Cluster) -> None:
    topic = unique("cfk-times")
    cluster.create_topic(topic, partitions=1)
    for i in range(10):
        cluster.produce(topic, f"v{i}", timestamp=1_000_000 + i * 1000)
    c = _consumer(cluster)
    try:
        lo, hi = c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
        assert (lo, hi) == (0, 10)
        found = c.offsets_for_times([TopicPartition(topic, 0, 1_004_500)], timeout=10)
        assert found[0].offset == 5
        after = c.offsets_for_times([TopicPartition(topic, 0, 2_000_000)], timeout=10)
        assert after[0].offset == -1  # no record that late: librdkafka reports the end (-1)
    finally:
        c.close()


def test_produce_to_unknown_topic_fails_without_auto_create() -> None:
    with mockkafka.Cluster(brokers=1, auto_create_topics=False) as cluster:
        p = _producer(cluster, **{"message.timeout.ms": 1500})
        reports: list[Any] = []
        try:
            p.produce(unique("cfk-missing"), b"x", on_delivery=lambda e, m: reports.append(e))
            p.flush(10)
        finally:
            p.flush(1)
        assert len(reports) == 1 and reports[0] is not None
        assert reports[0].code() in (KafkaError.UNKNOWN_TOPIC_OR_PART, KafkaError._MSG_TIMED_OUT)
        assert cluster.topics() == []


def test_auto_create_topics_is_on_by_default_as_in_kafka() -> None:
    with mockkafka.Cluster(brokers=1, default_partitions=2) as cluster:
        topic = unique("cfk-auto")
        p = _producer(cluster)
        try:
            p.produce(topic, b"hello")
            assert p.flush(10) == 0
        finally:
            p.flush(1)
        assert len(cluster.topic(topic).partitions) == 2
        assert [r.value for r in cluster.topic(topic).records()] == [b"hello"]


def test_message_larger_than_max_message_bytes_is_rejected(cluster: mockkafka.Cluster) -> None:
    topic = unique("cfk-big")
    cluster.create_topic(topic, config={"max.message.bytes": "2000"})
    p = _producer(cluster, **{"message.timeout.ms": 3000})
    reports: list[Any] = []
    try:
        # Separate flushes: a batch over the limit is refused whole, as Kafka does.
        p.produce(topic, b"x" * 5000, on_delivery=lambda e, m: reports.append(e))
        p.flush(10)
        p.produce(topic, b"small", on_delivery=lambda e, m: reports.append(e))
        p.flush(10)
    finally:
        p.flush(1)
    codes = sorted(str(e.code()) if e else "ok" for e in reports)
    assert KafkaError.MSG_SIZE_TOO_LARGE in [e.code() for e in reports if e], codes
    assert [r.value for r in cluster.topic(topic).records()] == [b"small"]


def test_log_append_time_topic_stamps_broker_time(cluster: mockkafka.Cluster) -> None:
    topic = unique("cfk-lat")
    cluster.create_topic(topic, config={"message.timestamp.type": "LogAppendTime"})
    p = _producer(cluster)
    c = _consumer(cluster)
    before = int(time.time() * 1000)
    try:
        p.produce(topic, b"x", timestamp=1234)
        p.flush(10)
        c.assign([TopicPartition(topic, 0, 0)])
        (m,) = _consume_n(c, 1)
    finally:
        c.close()
    ts_type, ts = m.timestamp()
    assert ts_type == 2  # TIMESTAMP_LOG_APPEND_TIME
    assert before - 5 <= ts <= int(time.time() * 1000) + 5


def test_consumer_follows_a_moved_leader(cluster: mockkafka.Cluster) -> None:
    topic = unique("cfk-move")
    cluster.create_topic(topic, partitions=1, replication_factor=3)
    old = cluster.topic(topic).partition(0).leader
    cluster.produce(topic, b"before")
    c = _consumer(cluster, **{"topic.metadata.refresh.interval.ms": 500})
    p = _producer(cluster)
    try:
        c.assign([TopicPartition(topic, 0, 0)])
        assert [m.value() for m in _consume_n(c, 1)] == [b"before"]
        cluster.move_leader(topic, 0, to=old % 3 + 1)
        p.produce(topic, b"after")
        assert p.flush(15) == 0
        assert [m.value() for m in _consume_n(c, 1)] == [b"after"]
    finally:
        p.flush(1)
        c.close()
    refused = cluster.traffic.requests(with_error="NOT_LEADER_OR_FOLLOWER")
    assert all(ex.broker_id == old for ex in refused)


def test_two_clusters_in_one_process_are_independent() -> None:
    with mockkafka.Cluster() as a, mockkafka.Cluster() as b:
        assert a.bootstrap_servers != b.bootstrap_servers
        topic = unique("cfk-two")
        a.create_topic(topic)
        b.create_topic(topic)
        pa, pb = _producer(a), _producer(b)
        try:
            pa.produce(topic, b"to-a")
            pb.produce(topic, b"to-b")
            assert pa.flush(10) == 0 and pb.flush(10) == 0
        finally:
            pa.flush(1)
            pb.flush(1)
        assert [r.value for r in a.topic(topic).records()] == [b"to-a"]
        assert [r.value for r in b.topic(topic).records()] == [b"to-b"]


# -- admin API ------------------------------------------------------------------------------


def test_admin_list_offsets_by_timestamp_earliest_latest(
    cluster: mockkafka.Cluster, admin: AdminClient
) -> None:
    topic = unique("cfk-listoff")
    cluster.create_topic(topic, partitions=1)
    for i in range(10):
        cluster.produce(topic, f"v{i}", timestamp=1_000_000 + i * 1000)
    cluster.delete_records(topic, 0, before_offset=2)
    tp = TopicPartition(topic, 0)
    specs = {
        "earliest": OffsetSpec.earliest(),
        "latest": OffsetSpec.latest(),
        "max": OffsetSpec.max_timestamp(),
        "at": OffsetSpec.for_timestamp(1_006_000),
    }
    got = {}
    for name, spec in specs.items():
        res = admin.list_offsets({tp: spec}, request_timeout=10)[tp].result(10)
        got[name] = (res.offset, res.timestamp)
    assert got["earliest"][0] == 2
    assert got["latest"][0] == 10
    assert got["max"] == (9, 1_009_000)
    assert got["at"] == (6, 1_006_000)


@requires_apis("CreateTopics", "DeleteTopics", "DescribeConfigs")
def test_admin_create_produce_describe_delete(
    cluster: mockkafka.Cluster, admin: AdminClient
) -> None:
    topic = unique("cfk-admin")
    fut = admin.create_topics(
        [NewTopic(topic, 3, 2, config={"retention.ms": "3600000"})], operation_timeout=10
    )
    fut[topic].result(10)
    assert len(cluster.topic(topic).partitions) == 3
    assert len(cluster.topic(topic).partition(0).replicas) == 2

    p = _producer(cluster, acks="all")
    try:
        _produce_all(p, topic, keyed_messages(100))
    finally:
        p.flush(1)
    assert len(cluster.topic(topic).records()) == 100

    res = ConfigResource("topic", topic)
    configs = admin.describe_configs([res])[res].result(10)
    assert configs["retention.ms"].value == "3600000"
    assert configs["cleanup.policy"].value == "delete"

    admin.delete_topics([topic], operation_timeout=10)[topic].result(10)
    assert topic not in cluster.topics()
    with pytest.raises(KafkaException):
        admin.create_topics([NewTopic("bad name!", 1, 1)])["bad name!"].result(10)

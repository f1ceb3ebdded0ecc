"""kafka-python pinned to old protocol versions: message format v0/v1 and down-conversion.

``api_version=(0, 10)`` makes kafka-python speak Produce v2 / Fetch v2
(message format v1) / ListOffsets v0 / Metadata v1; ``(0, 9)`` speaks Produce v1 / Fetch v1
(message format v0). The broker stores what it gets and down-converts its v2 batches for
those fetches.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from confluent_kafka import Producer
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.errors import UnsupportedCompressionTypeError, UnsupportedVersionError

import mockkafka
from tests.interop.conftest import keyed_messages, unique

pytestmark = [pytest.mark.interop, pytest.mark.timeout(60)]

OLD = (0, 10)
OLD_CODECS = ("none", "gzip", "snappy", "lz4")  # zstd needs message format v2


def _consumer(cluster: mockkafka.Cluster, api_version: tuple[int, ...] = OLD) -> KafkaConsumer:
    return KafkaConsumer(
        bootstrap_servers=cluster.bootstrap_servers,
        api_version=api_version,
        group_id=None,
        enable_auto_commit=False,
        fetch_max_wait_ms=100,
        consumer_timeout_ms=500,
    )


def _consume_all(c: KafkaConsumer, topic: str, partitions: int, n: int) -> list[Any]:
    tps = [TopicPartition(topic, i) for i in range(partitions)]
    c.assign(tps)
    c.seek_to_beginning(*tps)
    out: list[Any] = []
    deadline = time.monotonic() + 20
    while len(out) < n and time.monotonic() < deadline:
        for records in c.poll(timeout_ms=200, max_records=2000).values():
            out.extend(records)
    return out


@pytest.mark.parametrize("codec", OLD_CODECS)
@pytest.mark.parametrize("api_version", [(0, 10), (0, 9)], ids=["v0.10", "v0.9"])
def test_old_client_round_trips_keyed_messages(
    cluster: mockkafka.Cluster, codec: str, api_version: tuple[int, int]
) -> None:
    topic = unique(f"old-{codec}")
    cluster.create_topic(topic, partitions=2, replication_factor=3)
    msgs = keyed_messages(2_000, tag=codec)
    p = KafkaProducer(
        bootstrap_servers=cluster.bootstrap_servers,
        api_version=api_version,
        acks="all",
        compression_type=None if codec == "none" else codec,
        linger_ms=5,
    )
    try:
        futures = [p.send(topic, key=k, value=v) for k, v in msgs]
        p.flush(20)
        metas = [f.get(timeout=1) for f in futures]
    finally:
        p.close(timeout=5)
    c = _consumer(cluster, api_version)
    try:
        got = _consume_all(c, topic, 2, len(msgs))
    finally:
        c.close()
    assert sorted((m.key, m.value) for m in got) == sorted(msgs)
    assert {(m.partition, m.offset) for m in metas} == {(m.partition, m.offset) for m in got}
    produce = cluster.traffic.requests("Produce")
    fetch = cluster.traffic.requests("Fetch")
    want_produce, want_fetch = (2, 2) if api_version == (0, 10) else (1, 1)
    assert {ex.version for ex in produce} == {want_produce}
    assert {ex.version for ex in fetch} == {want_fetch}


@pytest.mark.parametrize("codec", ("none", "gzip", "snappy", "lz4"))
def test_v2_batches_are_down_converted_for_old_fetches(
    cluster: mockkafka.Cluster, codec: str
) -> None:
    topic = unique(f"down-{codec}")
    cluster.create_topic(topic, partitions=1)
    msgs = keyed_messages(3_000, tag=codec)
    p = Producer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "compression.type": codec,
            "linger.ms": 5,
        }
    )
    try:
        for k, v in msgs:
            p.produce(topic, key=k, value=v, headers=[("h", b"dropped in v1")], timestamp=1234)
        assert p.flush(20) == 0
    finally:
        p.flush(1)
    for version, magic in ((0, 10), 1), ((0, 9), 0):
        c = _consumer(cluster, version)
        try:
            got = _consume_all(c, topic, 1, len(msgs))
        finally:
            c.close()
        assert [(m.key, m.value) for m in got] == msgs
        assert [m.offset for m in got] == list(range(len(msgs)))
        if magic == 1:
            assert {m.timestamp for m in got} == {1234}
        else:
            assert {m.timestamp for m in got} == {None}  # message format v0 has none


def test_zstd_data_is_refused_to_old_fetch_versions(cluster: mockkafka.Cluster) -> None:
    topic = unique("down-zstd")
    cluster.create_topic(topic, partitions=1)
    cluster.produce(topic, b"plain")
    p = Producer({"bootstrap.servers": cluster.bootstrap_servers, "compression.type": "zstd"})
    try:
        p.produce(topic, b"z" * 10_000)  # compressible: librdkafka skips codecs that do not help
        assert p.flush(10) == 0
    finally:
        p.flush(1)
    c = _consumer(cluster)
    try:
        tp = TopicPartition(topic, 0)
        c.assign([tp])
        c.seek(tp, 1)
        got: list[Any] = []
        with pytest.raises(UnsupportedCompressionTypeError):
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                for records in c.poll(timeout_ms=100).values():
                    got.extend(records)
        assert got == []  # the client is told, never handed bytes it cannot read
    finally:
        c.close()
    assert cluster.traffic.requests("Fetch", with_error="UNSUPPORTED_COMPRESSION_TYPE")


def test_old_list_offsets_reports_beginning_and_end(cluster: mockkafka.Cluster) -> None:
    topic = unique("old-offsets")
    cluster.create_topic(topic, partitions=1)
    for i in range(7):
        cluster.produce(topic, f"v{i}")
    cluster.delete_records(topic, 0, before_offset=2)
    c = _consumer(cluster)
    tp = TopicPartition(topic, 0)
    try:
        assert c.beginning_offsets([tp]) == {tp: 2}
        assert c.end_offsets([tp]) == {tp: 7}
        with pytest.raises(UnsupportedVersionError):
            c.offsets_for_times({tp: 0})  # needs ListOffsets v1 (Kafka 0.10.1)
    finally:
        c.close()
    assert {ex.version for ex in cluster.traffic.requests("ListOffsets")} == {0}

"""Batch reads and writes with Spark's Kafka connector: offset and timestamp ranges."""

from __future__ import annotations

import json
from typing import Any

import pytest

import mockkafka

pytestmark = [pytest.mark.spark, pytest.mark.timeout(300)]


def rows(df: Any) -> list[tuple[int, int, str]]:
    """(partition, offset, value) of every row, sorted."""
    out = df.selectExpr("partition", "offset", "CAST(value AS STRING) AS v").collect()
    return sorted((r["partition"], r["offset"], r["v"]) for r in out)


def test_batch_write_then_read_an_offset_range(
    spark: Any, spark_kafka: Any, kafka_cluster: mockkafka.Cluster
) -> None:
    topic = spark_kafka.topic("ledger", partitions=2)
    data = [(f"k{i}", f"v{i}", i % 2) for i in range(20)]
    df = spark.createDataFrame(data, "key STRING, value STRING, partition INT")
    # One writer task, so each partition holds the rows in DataFrame order.
    df.coalesce(1).write.format("kafka").options(**spark_kafka.write_options(topic)).save()
    assert [len(p.records()) for p in kafka_cluster.topic(topic).partitions] == [10, 10]

    starting = json.dumps({topic: {"0": 2, "1": -2}})  # -2: earliest
    ending = json.dumps({topic: {"0": 5, "1": -1}})  # -1: latest; ending is exclusive
    got = spark.read.format("kafka").options(
        **spark_kafka.read_options(topic, startingOffsets=starting, endingOffsets=ending)
    )
    expected = [(0, o, f"v{2 * o}") for o in range(2, 5)]
    expected += [(1, o, f"v{2 * o + 1}") for o in range(10)]
    assert rows(got.load()) == expected


def test_batch_read_by_timestamp(
    spark: Any, spark_kafka: Any, kafka_cluster: mockkafka.Cluster
) -> None:
    topic = spark_kafka.topic("events", partitions=2)
    for i in range(10):  # timestamps 1000, 2000, ... 10000 ms, alternating partitions
        kafka_cluster.produce(topic, f"e{i}", partition=i % 2, timestamp=(i + 1) * 1000)
    by_partition = spark.read.format("kafka").options(
        **spark_kafka.read_options(
            topic,
            startingOffsetsByTimestamp=json.dumps({topic: {"0": 3000, "1": 6000}}),
            endingOffsetsByTimestamp=json.dumps({topic: {"0": 9000, "1": 10000}}),
        )
    )
    # Partition 0 holds e0 e2 e4 e6 e8 (ts 1000 3000 5000 7000 9000): from ts>=3000 to the
    # first ts>=9000 (exclusive). Partition 1 holds e1 e3 e5 e7 e9 (ts 2000 ... 10000).
    assert rows(by_partition.load()) == [
        (0, 1, "e2"),
        (0, 2, "e4"),
        (0, 3, "e6"),
        (1, 2, "e5"),
        (1, 3, "e7"),
    ]
    everywhere = spark.read.format("kafka").options(
        **spark_kafka.read_options(topic, startingTimestamp="8000")
    )
    assert [v for _, _, v in rows(everywhere.load())] == ["e8", "e7", "e9"]


def test_read_committed_skips_aborted_transactions(
    spark: Any, spark_kafka: Any, kafka_cluster: mockkafka.Cluster
) -> None:
    from confluent_kafka import Producer

    topic = spark_kafka.topic("payments", partitions=1)
    producer = Producer(
        {"bootstrap.servers": spark_kafka.bootstrap_servers, "transactional.id": "payments-tx"}
    )
    producer.init_transactions(20)
    for outcome in ("committed-a", "aborted", "committed-b"):
        producer.begin_transaction()
        for i in range(3):
            producer.produce(topic, value=f"{outcome}-{i}")
        if outcome == "aborted":
            assert producer.flush(20) == 0  # sent, so the aborted records reach the log
            producer.abort_transaction(20)
        else:
            producer.commit_transaction(20)
    committed = spark.read.format("kafka").options(
        **spark_kafka.read_options(topic, **{"kafka.isolation.level": "read_committed"})
    )
    values = [v for _, _, v in rows(committed.load())]
    assert values == [f"committed-a-{i}" for i in range(3)] + [f"committed-b-{i}" for i in range(3)]
    everything = spark.read.format("kafka").options(**spark_kafka.read_options(topic))
    assert len(rows(everything.load())) == 9  # read_uncommitted sees the aborted ones too

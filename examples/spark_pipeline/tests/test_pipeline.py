"""The customer-totals job against a 3-broker mockkafka cluster, with Spark's own connector.

The essential cases run by default (``-m spark``); the remaining fault scenarios carry the
``spark_extended`` marker and run with ``--run-spark-extended`` (a bounded CI step).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import mockkafka
from examples.spark_pipeline import pipeline
from examples.spark_pipeline.orders import batches, expected_totals, fake_orders
from examples.spark_pipeline.pipeline import PipelineConfig
from examples.spark_pipeline.tests.conftest import (
    produce_orders,
    start_and_feed,
    stop_cleanly,
    wait_for,
    wait_for_totals,
)

pytestmark = [pytest.mark.spark, pytest.mark.kafka_cluster(brokers=3), pytest.mark.timeout(300)]


def test_totals_per_customer_match_the_orders(
    spark: Any, kafka_cluster: mockkafka.Cluster, pipeline_config: PipelineConfig
) -> None:
    orders = fake_orders(120)
    query = pipeline.start(spark, pipeline_config)
    for chunk in batches(orders, 40):  # three micro-batches or more
        produce_orders(pipeline_config.bootstrap_servers, "orders", chunk)
    wait_for_totals(kafka_cluster, "customer-totals", expected_totals(orders), query)
    assert query.lastProgress is not None
    query.stop()


def test_restart_from_checkpoint_neither_loses_nor_double_counts(
    spark: Any, kafka_cluster: mockkafka.Cluster, pipeline_config: PipelineConfig
) -> None:
    orders = fake_orders(150, seed=11)
    first, second = orders[:90], orders[90:]
    query = start_and_feed(spark, kafka_cluster, pipeline_config, first)
    stop_cleanly(query, pipeline_config, kafka_cluster)  # the job goes down; orders keep arriving
    produce_orders(pipeline_config.bootstrap_servers, "orders", second)
    query = pipeline.start(spark, pipeline_config)  # same checkpoint: state and offsets
    wait_for_totals(kafka_cluster, "customer-totals", expected_totals(orders), query)
    last_batch = stop_cleanly(query, pipeline_config, kafka_cluster)
    # The restarted query resumed where the first stopped: no input offset was read twice.
    assert sum(p["numInputRows"] for p in query.recentProgress) == len(second)

    # A crash after the sink wrote a batch but before Spark committed it: the batch runs
    # again on restart and its snapshots are written twice. Readers take the latest value
    # per customer, so the totals stay exact: the idempotent pattern.
    commit = Path(pipeline_config.checkpoint_location, "commits", str(last_batch))
    commit.unlink()
    written = len(kafka_cluster.topic("customer-totals").records())
    query = pipeline.start(spark, pipeline_config)
    wait_for(
        lambda: len(kafka_cluster.topic("customer-totals").records()) > written,
        query,
        what=lambda: "the replayed batch to be written again",
    )
    wait_for_totals(kafka_cluster, "customer-totals", expected_totals(orders), query)
    query.stop()


def test_leader_failover_mid_stream(
    spark: Any, kafka_cluster: mockkafka.Cluster, pipeline_config: PipelineConfig
) -> None:
    orders = fake_orders(120, seed=3)
    query = start_and_feed(spark, kafka_cluster, pipeline_config, orders[:60])
    moved_at = kafka_cluster.traffic.requests()[-1].seq
    for p in range(3):  # every input partition and the output partition change leader
        leader = kafka_cluster.topic("orders").partition(p).leader
        kafka_cluster.move_leader("orders", p, to=leader % 3 + 1)
    out_leader = kafka_cluster.topic("customer-totals").partition(0).leader
    kafka_cluster.move_leader("customer-totals", 0, to=out_leader % 3 + 1)
    produce_orders(pipeline_config.bootstrap_servers, "orders", orders[60:])
    wait_for_totals(kafka_cluster, "customer-totals", expected_totals(orders), query)
    query.stop()
    # Spark's consumers and producer went to the new leaders.
    new_leaders = {kafka_cluster.topic("orders").partition(p).leader for p in range(3)}
    fetched_from = {
        e.broker_id for e in kafka_cluster.traffic.requests("Fetch", since_seq=moved_at)
    }
    assert new_leaders <= fetched_from


def test_offset_out_of_range_after_retention_fails_with_fail_on_data_loss(
    spark: Any,
    kafka_cluster: mockkafka.Cluster,
    pipeline_config: PipelineConfig,
    capfd: pytest.CaptureFixture[str],
) -> None:
    orders = fake_orders(60, seed=5)
    query = start_and_feed(spark, kafka_cluster, pipeline_config, orders[:30])
    stop_cleanly(query, pipeline_config, kafka_cluster)
    produce_orders(pipeline_config.bootstrap_servers, "orders", orders[30:])
    for p in range(3):  # retention removes everything, read or not, while the job is down
        hw = kafka_cluster.topic("orders").partition(p).high_watermark
        kafka_cluster.delete_records("orders", p, before_offset=hw)
    query = pipeline.start(spark, pipeline_config)
    wait_for(lambda: not query.isActive, None, timeout=60, what=lambda: "the query to fail")
    error = str(query.exception())
    assert "Some data may have been lost" in error, error
    assert "failOnDataLoss" in error, error
    # the expected failure reached the test; it did not print the JVM's stack traces
    assert "\tat org.apache.spark" not in capfd.readouterr().err
    # where Spark's consumers got to, by topic name though its client fetches by topic id
    assert max(e.version for e in kafka_cluster.traffic.requests("Fetch")) >= 13
    assert set(kafka_cluster.traffic.fetch_positions("orders")) == {("orders", p) for p in range(3)}


def test_offset_out_of_range_after_retention_continues_without_fail_on_data_loss(
    spark: Any, kafka_cluster: mockkafka.Cluster, pipeline_config: PipelineConfig
) -> None:
    config = replace(pipeline_config, fail_on_data_loss=False)
    orders = fake_orders(90, seed=6)
    query = start_and_feed(spark, kafka_cluster, config, orders[:30])
    stop_cleanly(query, config, kafka_cluster)
    produce_orders(config.bootstrap_servers, "orders", orders[30:60])
    for p in range(3):
        hw = kafka_cluster.topic("orders").partition(p).high_watermark
        kafka_cluster.delete_records("orders", p, before_offset=hw)
    query = pipeline.start(spark, config)
    produce_orders(config.bootstrap_servers, "orders", orders[60:])
    # orders[30:60] aged out unread; the job skips them and carries on with the rest.
    wanted = expected_totals(orders[:30] + orders[60:])
    wait_for_totals(kafka_cluster, "customer-totals", wanted, query, timeout=90)
    query.stop()

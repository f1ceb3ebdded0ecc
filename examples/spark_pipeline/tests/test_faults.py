"""More fault scenarios for the customer-totals job (``--run-spark-extended``; CI runs them
in a bounded step). Each one must end with the exact totals: nothing lost, nothing counted
twice."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import pytest

import mockkafka
from examples.spark_pipeline import pipeline
from examples.spark_pipeline.orders import expected_totals, fake_orders
from examples.spark_pipeline.pipeline import PipelineConfig
from examples.spark_pipeline.tests.conftest import (
    latest_totals,
    produce_orders,
    start_and_feed,
    wait_for,
    wait_for_totals,
)

pytestmark = [
    pytest.mark.spark,
    pytest.mark.spark_extended,
    pytest.mark.kafka_cluster(brokers=3),
    pytest.mark.timeout(300),  # the first Spark test also starts the JVM
]


def run_with(
    spark: Any,
    cluster: mockkafka.Cluster,
    config: PipelineConfig,
    during: Any,
    *,
    seed: int,
    chunk: int = 50,
) -> None:
    """Feed half the orders, call ``during()``, feed the rest (in produce calls of ``chunk``
    orders, each its own record batches), wait for the exact totals."""
    orders = fake_orders(100, seed=seed)
    query = pipeline.start(spark, config)
    produce_orders(config.bootstrap_servers, "orders", orders[:50])
    wait_for_totals(cluster, "customer-totals", expected_totals(orders[:50]), query)
    during()
    for start in range(50, 100, chunk):
        produce_orders(config.bootstrap_servers, "orders", orders[start : start + chunk])
    wait_for_totals(cluster, "customer-totals", expected_totals(orders), query, timeout=90)
    query.stop()


def test_broker_restart_mid_stream(
    spark: Any, kafka_cluster: mockkafka.Cluster, pipeline_config: PipelineConfig
) -> None:
    leader = kafka_cluster.topic("customer-totals").partition(0).leader
    run_with(
        spark, kafka_cluster, pipeline_config, lambda: kafka_cluster.restart_broker(leader), seed=21
    )


def test_partial_trailing_batches_are_read_again(
    spark: Any, kafka_cluster: mockkafka.Cluster, pipeline_config: PipelineConfig
) -> None:
    rules: list[Any] = []

    def cut_fetches() -> None:
        rules.append(kafka_cluster.faults.on("Fetch").times(4).partial_trailing_batch())
        # A caught-up consumer's fetch returns the one batch just written, with nothing
        # after it to cut: hold the next fetches of "orders" back a moment, so that
        # several of the small batches below are in the log when they are read.
        kafka_cluster.faults.on("Fetch", topic="orders").times(6).delay(
            ms=1500, before_processing=True
        )

    # Many small batches, so a fetch response holds several and its last can be cut.
    run_with(spark, kafka_cluster, pipeline_config, cut_fetches, seed=22, chunk=3)
    assert rules[0].fired >= 1


def test_throttled_fetch_and_produce(
    spark: Any, kafka_cluster: mockkafka.Cluster, pipeline_config: PipelineConfig
) -> None:
    rules: list[Any] = []

    def throttle() -> None:
        rules.append(kafka_cluster.faults.on("Fetch").times(3).throttle(ms=300))
        rules.append(kafka_cluster.faults.on("Produce").times(2).throttle(ms=300))

    run_with(spark, kafka_cluster, pipeline_config, throttle, seed=23)
    assert all(r.fired for r in rules)


def test_partitions_added_mid_stream_are_picked_up(
    spark: Any, kafka_cluster: mockkafka.Cluster, pipeline_config: PipelineConfig
) -> None:
    orders = fake_orders(80, seed=24)
    query = start_and_feed(spark, kafka_cluster, pipeline_config, orders[:40])
    kafka_cluster.add_partitions("orders", total=5)
    for i, order in enumerate(orders[40:]):  # only the new partitions
        kafka_cluster.produce("orders", order.value(), key=order.key(), partition=3 + i % 2)
    wait_for_totals(kafka_cluster, "customer-totals", expected_totals(orders), query, timeout=90)
    query.stop()


def test_topic_deleted_mid_stream_keeps_running_without_fail_on_data_loss(
    spark: Any, kafka_cluster: mockkafka.Cluster, pipeline_config: PipelineConfig
) -> None:
    """With subscribePattern the deleted topic drops out of the subscription. (With
    ``subscribe`` Spark's Admin-based offset reader fails on UNKNOWN_TOPIC_OR_PARTITION
    whatever failOnDataLoss says, on a real cluster as here.)"""
    config = replace(pipeline_config, fail_on_data_loss=False, input_pattern="orders")
    orders = fake_orders(30, seed=25)
    query = start_and_feed(spark, kafka_cluster, config, orders)
    kafka_cluster.delete_topic("orders")
    deleted_at = kafka_cluster.traffic.requests()[-1].seq
    # Many 300 ms triggers pass with the topic gone (wait_for fails at once if the query
    # stops); the query neither fails nor loses its totals.
    until = time.monotonic() + 8
    wait_for(lambda: time.monotonic() > until, query, timeout=15)
    assert query.isActive
    assert kafka_cluster.traffic.requests("Metadata", since_seq=deleted_at)
    assert latest_totals(kafka_cluster, "customer-totals") == expected_totals(orders)
    query.stop()


def test_topic_deleted_mid_stream_fails_with_fail_on_data_loss(
    spark: Any, kafka_cluster: mockkafka.Cluster, pipeline_config: PipelineConfig
) -> None:
    orders = fake_orders(30, seed=26)
    query = start_and_feed(spark, kafka_cluster, pipeline_config, orders)
    kafka_cluster.delete_topic("orders")
    wait_for(lambda: not query.isActive, None, timeout=60, what=lambda: "the query to fail")
    # Spark's Admin-based offset reader meets Kafka's UNKNOWN_TOPIC_OR_PARTITION.
    error = str(query.exception())
    assert "UnknownTopicOrPartitionException" in error, error

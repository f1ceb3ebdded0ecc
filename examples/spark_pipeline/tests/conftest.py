"""Helpers for the pipeline's tests: feed orders in, read the latest totals out.

Every wait here is bounded in time and fails fast with the query's own error when the
streaming query died.
"""

from __future__ import annotations

import ast
import json
import time
from collections.abc import Callable, Iterable
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer

import mockkafka
from examples.spark_pipeline import pipeline
from examples.spark_pipeline.orders import Order, expected_totals
from examples.spark_pipeline.pipeline import PipelineConfig

Totals = dict[str, tuple[Decimal, int]]


def produce_orders(bootstrap: str, topic: str, orders: Iterable[Order], **conf: Any) -> None:
    """Publish orders as the order service does (idempotent producer, keyed by customer)."""
    producer = Producer(
        {"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 5, **conf}
    )
    for order in orders:
        producer.produce(topic, key=order.key(), value=order.value())
    assert producer.flush(30) == 0, "orders were not all delivered"


def latest_totals(cluster: mockkafka.Cluster, topic: str) -> Totals:
    """The latest snapshot per customer in the output topic (how its readers see it)."""
    out: Totals = {}
    for record in cluster.topic(topic).records():
        assert record.value is not None
        snap = json.loads(record.value)
        out[snap["customer_id"]] = (Decimal(snap["total"]), int(snap["orders"]))
    return out


def wait_for_totals(
    cluster: mockkafka.Cluster,
    topic: str,
    expected: Totals,
    query: Any,
    *,
    timeout: float = 60.0,
) -> Totals:
    """Wait (bounded) until the output topic's latest totals equal ``expected``."""
    return wait_for(
        lambda: (t := latest_totals(cluster, topic)) == expected and t,
        query,
        timeout=timeout,
        what=lambda: f"totals {latest_totals(cluster, topic)} to become {expected}",
    )


def wait_for(
    condition: Callable[[], Any],
    query: Any,
    *,
    timeout: float = 60.0,
    what: Callable[[], str] = lambda: "condition",
) -> Any:
    """Poll ``condition`` every 0.2 s for at most ``timeout`` s; fail with the query's error
    if it stopped."""
    deadline = time.monotonic() + timeout
    for _ in range(int(timeout / 0.2) + 1):
        result = condition()
        if result:
            return result
        if query is not None and not query.isActive:
            raise AssertionError(f"the streaming query stopped: {query.exception()}")
        if time.monotonic() > deadline:
            break
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout} s waiting for {what()}")


def start_and_feed(
    spark: Any, cluster: mockkafka.Cluster, config: PipelineConfig, orders: list[Order]
) -> Any:
    """Start the job, publish ``orders`` and wait until their totals are out; the query."""
    query = pipeline.start(spark, config)
    produce_orders(config.bootstrap_servers, config.input_topic, orders)
    wait_for_totals(cluster, config.output_topic, expected_totals(orders), query)
    return query


def source_offsets(end: Any) -> dict[str, dict[str, int]]:
    """A progress report's ``endOffset``: a dict, or a string holding one, which Spark 4.1+
    writes as JSON and Spark 4.0 as a Python literal (``{'orders': {'0': 28}}``)."""
    if not isinstance(end, str):
        return dict(end)
    try:
        return dict(json.loads(end))
    except json.JSONDecodeError:
        return dict(ast.literal_eval(end))


def stop_cleanly(query: Any, config: PipelineConfig, cluster: mockkafka.Cluster) -> int:
    """Stop the job once a committed micro-batch has read the input to its end (not in the
    middle of a batch); returns that batch's id."""
    ends = {
        str(p.partition): p.high_watermark for p in cluster.topic(config.input_topic).partitions
    }

    def caught_up() -> int | None:
        for progress in reversed(query.recentProgress):
            end = progress["sources"][0]["endOffset"]
            end = source_offsets(end)
            if progress["numInputRows"] and end == {config.input_topic: ends}:
                return int(progress["batchId"]) + 1  # truthy for batch 0 too
        return None

    batch = wait_for(caught_up, query, what=lambda: f"a batch ending at {ends}") - 1
    commit = Path(config.checkpoint_location, "commits", str(batch))
    wait_for(commit.exists, query, timeout=30, what=lambda: f"{commit} to be written")
    query.stop()
    return int(batch)


@pytest.fixture
def pipeline_config(spark_kafka: Any, tmp_path: Path) -> PipelineConfig:
    """The job's configuration for this test's cluster, topics created (3 and 1 partitions)."""
    spark_kafka.topic("orders", partitions=3, replication_factor=3)
    spark_kafka.topic("customer-totals", partitions=1, replication_factor=3)
    return PipelineConfig(
        bootstrap_servers=spark_kafka.bootstrap_servers,
        checkpoint_location=str(tmp_path / "checkpoint"),
        trigger_interval="300 milliseconds",
        kafka_options=spark_kafka.client_options,
    )

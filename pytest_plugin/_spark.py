"""The ``spark`` and ``spark_kafka`` fixtures (PySpark with Spark's Kafka connector).

This module imports neither pyspark nor :mod:`mockkafka.spark` at import time, so the plugin
stays cheap to load for projects that never use Spark: both are imported when a test first
asks for ``spark``. Where pyspark, Java or the connector cannot be had, the test is skipped
with a reason naming what is missing.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mockkafka import Cluster
    from mockkafka.spark import SparkKafka

SKIP_KEY = pytest.StashKey[str]()


@pytest.fixture(scope="session")
def spark(request: pytest.FixtureRequest) -> Iterator[Any]:
    """A ``local[2]`` SparkSession with ``format("kafka")`` available, shared by the session.

    The first use resolves ``spark-sql-kafka-0-10`` at the installed pyspark's version through
    Maven (cached afterwards) and starts a JVM (about 10 s). Skips the test, saying what is
    missing, where pyspark, Java, Maven or the connector cannot be had.
    """
    from mockkafka.spark import SparkUnavailable, local_spark_session

    reason = request.config.stash.get(SKIP_KEY, "")
    if reason:
        pytest.skip(reason)
    try:
        session = local_spark_session(app_name="mockkafka-pytest")
    except SparkUnavailable as exc:
        request.config.stash[SKIP_KEY] = f"spark unavailable: {exc}"
        pytest.skip(request.config.stash[SKIP_KEY])
    try:
        yield session
    finally:
        session.stop()


@pytest.fixture
def spark_kafka(spark: Any, kafka_cluster: Cluster) -> Iterator[SparkKafka]:
    """Points Spark's Kafka source and sink at this test's ``kafka_cluster``::

        def test_job(spark, spark_kafka):
            spark_kafka.topic("orders", partitions=3)
            df = spark.readStream.format("kafka").options(**spark_kafka.read_options("orders"))

    Stops any streaming query the test left running.
    """
    from mockkafka.spark import SparkKafka

    try:
        yield SparkKafka(kafka_cluster)
    finally:
        for query in spark.streams.active:
            query.stop()

"""Per-customer order totals: a Structured Streaming job from one Kafka topic to another.

Production code, written as it would be deployed: it reads JSON orders from ``orders``,
keeps a running total and order count per customer in Spark's state store, and after every
micro-batch writes the updated totals to ``customer-totals`` keyed by customer id::

    {"customer_id": "c-007", "total": "1234.50", "orders": 17, "as_of_offset": 9}

Delivery: Spark's Kafka sink is at least once. A micro-batch replayed after a crash writes the
same totals again (the state for a batch id is versioned in the checkpoint), so each output
record is a full snapshot of one customer, not a delta. Readers take the latest value per key
(the topic is meant to be compacted), which makes duplicates harmless: restart from the
checkpoint loses nothing and double-counts nothing.

Run it::

    spark-submit --packages org.apache.spark:spark-sql-kafka-0-10_2.13:4.2.0 \\
        examples/spark_pipeline/pipeline.py BOOTSTRAP CHECKPOINT_DIR
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import StreamingQuery
from pyspark.sql.types import DecimalType, StringType, StructField, StructType

ORDER_SCHEMA = StructType(
    [
        StructField("order_id", StringType(), nullable=False),
        StructField("customer_id", StringType(), nullable=False),
        StructField("amount", StringType(), nullable=False),
        StructField("currency", StringType(), nullable=False),
        StructField("placed_at", StringType(), nullable=False),
    ]
)
MONEY = DecimalType(18, 2)


@dataclass(frozen=True)
class PipelineConfig:
    bootstrap_servers: str
    checkpoint_location: str
    input_topic: str = "orders"
    #: subscribe to every topic matching this regex instead of ``input_topic`` (a deleted
    #: input topic then drops out of the subscription rather than failing the query)
    input_pattern: str | None = None
    output_topic: str = "customer-totals"
    starting_offsets: str = "earliest"
    fail_on_data_loss: bool = True
    trigger_interval: str = "1 second"
    #: at most this many input records per micro-batch (None: no limit)
    max_offsets_per_trigger: int | None = None
    #: extra ``kafka.*`` client settings (security, timeouts) for source and sink alike
    kafka_options: Mapping[str, str] = field(default_factory=dict)
    #: consumer isolation level; read_committed skips aborted transactional input
    isolation_level: str = "read_committed"


def read_orders(spark: SparkSession, config: PipelineConfig) -> DataFrame:
    """The raw order stream (Kafka's key, value, topic, partition, offset, timestamp)."""
    reader = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", config.bootstrap_servers)
        .option(*_subscription(config))
        .option("startingOffsets", config.starting_offsets)
        .option("failOnDataLoss", str(config.fail_on_data_loss).lower())
        .option("kafka.isolation.level", config.isolation_level)
        .options(**config.kafka_options)
    )
    if config.max_offsets_per_trigger is not None:
        reader = reader.option("maxOffsetsPerTrigger", str(config.max_offsets_per_trigger))
    return reader.load()


def _subscription(config: PipelineConfig) -> tuple[str, str]:
    if config.input_pattern is not None:
        return ("subscribePattern", config.input_pattern)
    return ("subscribe", config.input_topic)


def parse_orders(raw: DataFrame) -> DataFrame:
    """Decode the JSON value; records that do not parse are dropped (a real job would route
    them to a dead-letter topic)."""
    order = F.from_json(F.col("value").cast("string"), ORDER_SCHEMA)
    return (
        raw.select(order.alias("o"), "offset")
        .where(F.col("o").isNotNull() & F.col("o.customer_id").isNotNull())
        .select(
            F.col("o.customer_id").alias("customer_id"),
            F.col("o.amount").cast(MONEY).alias("amount"),
            "offset",
        )
    )


def customer_totals(orders: DataFrame) -> DataFrame:
    """Running total and order count per customer (stateful streaming aggregation)."""
    return orders.groupBy("customer_id").agg(
        F.sum("amount").cast(MONEY).alias("total"),
        F.count(F.lit(1)).alias("orders"),
        F.max("offset").alias("as_of_offset"),
    )


def to_kafka_records(totals: DataFrame) -> DataFrame:
    """One snapshot record per updated customer, keyed by customer id."""
    value = F.to_json(
        F.struct(
            "customer_id",
            F.col("total").cast("string").alias("total"),
            "orders",
            "as_of_offset",
        )
    )
    return totals.select(F.col("customer_id").alias("key"), value.alias("value"))


def start(spark: SparkSession, config: PipelineConfig) -> StreamingQuery:
    """Start the job; returns the running query (``query.stop()`` ends it)."""
    records = to_kafka_records(customer_totals(parse_orders(read_orders(spark, config))))
    return (
        records.writeStream.format("kafka")
        .queryName(f"customer-totals-{config.output_topic}")
        .outputMode("update")
        .option("kafka.bootstrap.servers", config.bootstrap_servers)
        .option("topic", config.output_topic)
        .options(**config.kafka_options)
        .option("checkpointLocation", config.checkpoint_location)
        .trigger(processingTime=config.trigger_interval)
        .start()
    )


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(f"usage: {argv[0]} BOOTSTRAP_SERVERS CHECKPOINT_DIR", file=sys.stderr)
        return 2
    spark = SparkSession.builder.appName("customer-totals").getOrCreate()
    query = start(spark, PipelineConfig(bootstrap_servers=argv[1], checkpoint_location=argv[2]))
    query.awaitTermination()
    return 0


if __name__ == "__main__":  # pragma: no cover - spark-submit entry point
    sys.exit(main(sys.argv))

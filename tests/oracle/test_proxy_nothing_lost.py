"""Nothing acknowledged is lost through the proxy: a property against real Kafka.

An idempotent confluent-kafka producer writes through ``mockkafka.Proxy`` while a random
fault plan (the public ``fault_plans()`` strategy: errors Kafka could answer, delays,
throttles, dropped connections, on what an idempotent producer sends) fires on the relayed
traffic. A consumer then reads *directly* from Kafka, bypassing the proxy: every record the
producer was told was written is there exactly once, in the order produced per partition,
and nothing was written twice. Hypothesis is derandomized (the same plans each run) and
bounded (a handful of examples, each a few seconds).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace

import pytest
from confluent_kafka import KafkaError, Message, Producer
from hypothesis import HealthCheck, given, settings

import mockkafka
from mockkafka.faults.engine import Rule
from mockkafka.kafka_broker import KafkaBroker
from mockkafka.scenario.model import Fault
from mockkafka.strategies import FaultPlan, fault_plans
from tests.interop.conftest import unique
from tests.oracle._proxy_helpers import create_topic, read_partitions

pytestmark = [pytest.mark.kafka_oracle, pytest.mark.interop, pytest.mark.timeout(300)]

PARTITIONS = 2
RECORDS = 120
#: What an idempotent producer sends; "drop_connection" covers lost answers
#: (after_processing) as well as requests that never arrive.
PLANS = fault_plans(
    topics={"events": PARTITIONS},
    apis=["Produce", "Metadata", "InitProducerId", "ApiVersions"],
    verbs=["error", "delay", "throttle", "drop_connection"],
    min_steps=1,
    max_steps=4,
    max_ms=150,
    timed=False,
)


@pytest.fixture(scope="module")
def proxy(kafka: KafkaBroker) -> Iterator[mockkafka.Proxy]:
    with mockkafka.Proxy(upstream=kafka.bootstrap_servers) as p:
        yield p


def install(proxy: mockkafka.Proxy, plan: FaultPlan, topic: str) -> list[Rule]:
    """The plan's fault steps as proxy rules, its topic ``events`` renamed to ``topic``."""
    rules = []
    for step in plan.steps:
        fault = step.action
        assert isinstance(fault, Fault), f"a plan of faults only, not {fault!r}"
        match = fault.match if fault.match.topic is None else replace(fault.match, topic=topic)
        rules.append(proxy.faults.add(Rule(match, fault.trigger, fault.actions)))
    return rules


def produce(proxy: mockkafka.Proxy, topic: str) -> list[tuple[int, str]]:
    """``RECORDS`` values through the proxy; the (partition, value) pairs acknowledged."""
    acked: list[tuple[int, str]] = []

    def on_delivery(err: KafkaError | None, msg: Message) -> None:
        if err is None and msg.value() is not None and msg.partition() is not None:
            acked.append((msg.partition(), msg.value().decode()))

    producer = Producer(
        {
            "bootstrap.servers": proxy.bootstrap_servers,
            "enable.idempotence": True,
            "linger.ms": 2,
            "batch.num.messages": 7,
            "retry.backoff.ms": 10,
            "message.timeout.ms": 20000,
        }
    )
    for i in range(RECORDS):
        producer.produce(topic, f"v{i}".encode(), partition=i % PARTITIONS, on_delivery=on_delivery)
        if i % 30 == 29:
            producer.poll(0)
    deadline = time.monotonic() + 40
    while producer.flush(1) and time.monotonic() < deadline:
        pass
    assert producer.flush(5) == 0, "the producer could not finish within 45 s"
    return acked


@settings(
    max_examples=6,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(plan=PLANS)
def test_every_acknowledged_record_is_in_kafka_once_and_in_order(
    proxy: mockkafka.Proxy, kafka: KafkaBroker, plan: FaultPlan
) -> None:
    topic = unique("pxlost")
    create_topic(kafka.bootstrap_servers, topic, partitions=PARTITIONS)
    proxy.faults.clear()
    install(proxy, plan, topic)
    acked = produce(proxy, topic)
    proxy.faults.clear()
    stored = read_partitions(kafka.bootstrap_servers, topic, PARTITIONS, expect=len(acked))
    values = {p: [v.decode() for v in vals] for p, vals in stored.items()}
    every = [v for vals in values.values() for v in vals]
    duplicates = [v for v, n in Counter(every).items() if n > 1]
    assert not duplicates, f"written twice under {plan!r}: {duplicates}"
    for p in range(PARTITIONS):
        mine = {v for q, v in acked if q == p}
        missing = mine - set(values[p])
        assert not missing, f"acknowledged, not in Kafka, under {plan!r}: {sorted(missing)}"
        order = [int(v[1:]) for v in values[p]]
        assert order == sorted(order), f"partition {p} out of order under {plan!r}"


@pytest.mark.parametrize(
    "error", ["DUPLICATE_SEQUENCE_NUMBER", "NOT_ENOUGH_REPLICAS_AFTER_APPEND", "REQUEST_TIMED_OUT"]
)
def test_an_error_kafka_answers_after_appending_leaves_the_batch_written(
    proxy: mockkafka.Proxy, kafka: KafkaBroker, error: str
) -> None:
    """Kafka answers these after it appended the batch; through the proxy the batch reaches
    Kafka too, so a producer that takes DUPLICATE_SEQUENCE_NUMBER as success loses nothing
    and one that retries the others is deduplicated by Kafka."""
    topic = unique("pxapp")
    create_topic(kafka.bootstrap_servers, topic, partitions=PARTITIONS)
    proxy.faults.clear()
    rule = proxy.faults.on("Produce", topic=topic, partition=0).once().error(error)
    acked = produce(proxy, topic)
    assert rule.fired == 1
    stored = read_partitions(kafka.bootstrap_servers, topic, PARTITIONS, expect=len(acked))
    assert len(acked) == RECORDS
    assert sorted(v.decode() for vals in stored.values() for v in vals) == sorted(
        v for _p, v in acked
    )

"""``pytest --kafka-backend=kafka``: a user's own test runs on the fake and on real Kafka.

The inner sessions (pytester, in-process) reuse the oracle tier's session broker, so the
real-Kafka run costs no second broker start.
"""

from __future__ import annotations

import pytest

import pytest_plugin._backend as backend
from mockkafka.kafka_broker import KafkaBroker

pytestmark = pytest.mark.kafka_oracle

USER_TESTS = """
import pytest
from confluent_kafka import Consumer, Producer

import mockkafka


@pytest.mark.kafka_cluster(topics={"orders": 3})
def test_orders_round_trip(kafka_cluster):
    producer = Producer({"bootstrap.servers": kafka_cluster.bootstrap_servers})
    for i in range(10):
        producer.produce("orders", key=str(i).encode(), value=f"order-{i}".encode())
    assert producer.flush(15) == 0
    consumer = Consumer({
        "bootstrap.servers": kafka_cluster.bootstrap_servers,
        "group.id": "billing",
        "auto.offset.reset": "earliest",
    })
    consumer.subscribe(["orders"])
    seen = []
    for _ in range(300):
        if len(seen) == 10:
            break
        msg = consumer.poll(0.1)
        if msg is not None and msg.error() is None:
            seen.append(msg.value().decode())
    consumer.close()
    assert sorted(seen) == sorted(f"order-{i}" for i in range(10))


def test_the_idempotent_producer_retries_leader_errors(kafka_cluster):
    kafka_cluster.create_topic("payments", partitions=1)
    rule = kafka_cluster.faults.on("Produce", topic="payments").times(2).error(
        "NOT_LEADER_OR_FOLLOWER"
    )
    producer = Producer({
        "bootstrap.servers": kafka_cluster.bootstrap_servers,
        "enable.idempotence": True,
        "retry.backoff.ms": 10,
    })
    producer.produce("payments", b"100 EUR")
    assert producer.flush(15) == 0
    assert rule.fired == 2
    assert len(kafka_cluster.traffic.requests("Produce", with_error="NOT_LEADER_OR_FOLLOWER")) == 2

def test_a_shared_cluster_starts_each_test_clean(kafka_cluster_shared):
    from kafka import KafkaAdminClient

    kafka_cluster_shared.create_topic("shared-orders", partitions=2)
    admin = KafkaAdminClient(**kafka_cluster_shared.client_config("kafka-python"))
    try:
        assert "shared-orders" in admin.list_topics()
    finally:
        admin.close()


def test_moving_the_leader_to_the_broker_that_leads_is_refused(kafka_cluster):
    kafka_cluster.create_topic("moves", partitions=1)
    with pytest.raises(mockkafka.KafkaApiError, match="ELECTION_NOT_NEEDED"):
        kafka_cluster.move_leader("moves", 0, to=1)  # one broker: it leads already
    assert kafka_cluster.topic("moves").partition(0).leader == 1


def test_an_unclean_election_loses_records(kafka_cluster):
    kafka_cluster.create_topic("unclean", partitions=1)
    kafka_cluster.truncate_log("unclean", 0, to_offset=0)
"""


def test_the_same_user_test_passes_on_the_fake_and_on_real_kafka(
    pytester: pytest.Pytester, kafka: KafkaBroker, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_user=USER_TESTS)
    fake = pytester.runpytest("-p", "no:cacheprovider", "-rs")
    fake.assert_outcomes(passed=5)

    monkeypatch.setattr(backend, "_broker", kafka)
    real = pytester.runpytest("-p", "no:cacheprovider", "-rs", "--kafka-backend=kafka")
    # Fault rules, traffic and the proxy's cluster verbs work on real Kafka too: the proxy
    # sits in front of it; a verb only the fake has skips the test, saying what instead.
    real.assert_outcomes(passed=4, skipped=1)
    real.stdout.fnmatch_lines(["*--kafka-backend=kafka: truncate_log needs the in-process fake*"])


def test_the_ini_option_selects_the_backend_and_a_typo_is_a_usage_error(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini("[pytest]\nkafka_backend = kafak\n")
    pytester.makepyfile(test_user="def test_x(kafka_cluster): pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.stderr.fnmatch_lines(["*--kafka-backend must be mockkafka or kafka[[]:VERSION[]]*"])


def test_kafka_proxy_upstream_runs_the_fixtures_on_an_existing_cluster(
    pytester: pytest.Pytester, kafka: KafkaBroker
) -> None:
    # An existing cluster is never cleaned: names of this test's own.
    tests = USER_TESTS.replace('"orders"', '"orders-up"').replace('"payments"', '"payments-up"')
    pytester.makepyfile(test_user=tests)
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "-rs",
        f"--kafka-proxy-upstream={kafka.bootstrap_servers}",
        "-k",
        "idempotent or round_trip",
    )
    result.assert_outcomes(passed=2)


SCENARIO_TESTS = """
import pytest
from confluent_kafka import Consumer, Producer


@pytest.mark.kafka_scenario("throttled-cluster")
def test_throttled(kafka_cluster):
    producer = Producer({"bootstrap.servers": kafka_cluster.bootstrap_servers})
    for i in range(10):
        producer.produce("orders", value=f"order-{i}".encode(), partition=i % 2)
    assert producer.flush(15) == 0
    consumer = Consumer({
        "bootstrap.servers": kafka_cluster.bootstrap_servers,
        "group.id": "billing",
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
    })
    consumer.subscribe(["orders"])
    seen = 0
    for _ in range(300):
        if seen == 10:
            break
        msg = consumer.poll(0.1)
        if msg is not None and msg.error() is None:
            seen += 1
    consumer.commit(asynchronous=False)
    consumer.close()
    assert seen == 10


@pytest.mark.kafka_scenario("unclean-leader-election")
def test_unclean(kafka_cluster):
    pass
"""


def test_a_kafka_scenario_marker_plays_on_the_proxy_or_skips_naming_the_steps(
    pytester: pytest.Pytester, kafka: KafkaBroker, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_user=SCENARIO_TESTS)
    monkeypatch.setattr(backend, "_broker", kafka)
    real = pytester.runpytest("-p", "no:cacheprovider", "-rs", "--kafka-backend=kafka")
    real.assert_outcomes(passed=1, skipped=1)
    # every problem at once: the brokers the story wants and the steps only the fake runs
    real.stdout.fnmatch_lines(
        [
            "*unclean-leader-election.yaml: cluster: brokers: 3: the upstream has 1 broker(s)*",
            "*step 1 truncate_log: truncate_log needs the in-process fake*",
        ]
    )

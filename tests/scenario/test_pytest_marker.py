"""``@pytest.mark.kafka_scenario``: steps play alongside the test, expect: is checked when
the test body returns, mistakes are usage errors naming file:line:column."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.interop

PRODUCE = """
from confluent_kafka import Consumer, Producer

def consume_all(cluster, topic, count):
    c = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": "billing",
                  "auto.offset.reset": "earliest", "enable.auto.commit": False, "log_level": 0})
    c.subscribe([topic])
    got = 0
    for _ in range(200):
        msgs = c.consume(500, 0.1)
        got += len(msgs)
        if msgs:
            c.commit(asynchronous=False)
        if got >= count:
            break
    c.close()
    return got

def produce(cluster, n):
    p = Producer({"bootstrap.servers": cluster.bootstrap_servers, "log_level": 0})
    for i in range(n):
        p.produce("orders", key=b"k%d" % i, value=b"v%d" % i)
        p.flush(10)
"""


def test_a_library_scenario_plays_alongside_the_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        PRODUCE
        + """
import pytest

@pytest.mark.kafka_scenario("leader-failover")
def test_failover(kafka_cluster):
    assert len(kafka_cluster.brokers) == 3          # the scenario's cluster
    assert kafka_cluster.topic("orders").partitions[0].high_watermark > 0   # seeded
    epoch = kafka_cluster.topic("orders").partitions[0].leader_epoch
    produce(kafka_cluster, 30)                      # the first step waits for 20 records
    kafka_cluster.wait_for_broker(1)
    import time
    for _ in range(100):
        if kafka_cluster.topic("orders").partitions[0].leader_epoch >= epoch + 2:
            break
        time.sleep(0.05)
    assert kafka_cluster.topic("orders").partitions[0].leader_epoch >= epoch + 2
    assert consume_all(kafka_cluster, "orders", 130) >= 130
"""
    )
    result = pytester.runpytest("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_a_failed_expectation_fails_the_test_listing_every_failure(
    pytester: pytest.Pytester,
) -> None:
    pytester.makefile(
        ".yaml",
        story="""
name: story
description: a fault that never fires and a check that cannot hold
topics: {orders: {partitions: 1}}
steps:
  - fault: {name: never, on: DeleteTopics, once: true, error: UNKNOWN_SERVER_ERROR}
  - after: {requests: {api: CreatePartitions, count: 1}}
    timeout: 10s
    trigger_rebalance: {group: g}
expect:
  records: {topic: orders, count: 99}
  rules_fired: all
""",
    )
    pytester.makepyfile(
        PRODUCE
        + """
import pytest

@pytest.mark.kafka_scenario("story.yaml")
def test_story(kafka_cluster):
    produce(kafka_cluster, 3)
"""
    )
    result = pytester.runpytest("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*scenario 'story': 3 expectation(s) failed:",
            "*step 2 trigger_rebalance never ran: the scenario was stopped before*",
            "*Records: orders holds 3 records, expected exactly 99",
            "*RulesFired: fault 'never' never fired*",
        ]
    )


def test_a_mistake_in_the_scenario_is_a_usage_error_naming_the_line(
    pytester: pytest.Pytester,
) -> None:
    pytester.makefile(".yaml", bad="name: bad\nsteps:\n  - move_leadr: {topic: t}\n")
    pytester.makepyfile(
        """
import pytest

@pytest.mark.kafka_scenario("bad.yaml")
def test_bad(kafka_cluster):
    pass
"""
    )
    result = pytester.runpytest("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    assert (
        "bad.yaml:3:5: steps[0].move_leadr: unknown key 'move_leadr' (did you mean move_leader?)"
        in result.stdout.str()
    )


def test_the_marker_needs_the_kafka_cluster_fixture(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
import pytest

@pytest.mark.kafka_scenario("leader-failover")
def test_no_fixture():
    pass
"""
    )
    result = pytester.runpytest("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*kafka_scenario plays on the kafka_cluster fixture*"])

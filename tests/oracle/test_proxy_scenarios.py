"""Library scenarios, unchanged, played by ``mockkafka.Proxy`` in front of real Kafka 4.4.

The same workloads as ``tests/scenario/test_library.py`` (confluent-kafka through the
proxy); the scenario's steps act through the proxy's verbs and fault rules, and its
``expect:`` is checked against what Kafka itself holds. Topic and group are bound to fresh
names (the broker is shared by the session): the scenario files are not edited.
"""

from __future__ import annotations

import pytest

import mockkafka
from mockkafka.kafka_broker import KafkaBroker
from mockkafka.scenario.model import ScenarioError
from tests.interop.conftest import unique
from tests.scenario.workloads import consume_all, pipeline

pytestmark = [pytest.mark.kafka_oracle, pytest.mark.interop, pytest.mark.timeout(180)]

#: Library scenarios a proxy in front of one real broker runs, and their workload.
ON_PROXY = {
    "flapping-connections": "pipeline",
    "throttled-cluster": "pipeline",
    "older-kafka-version": "pipeline",
    "coordinator-loading": "pipeline",
    "offset-out-of-range": "consume",
    "rebalance-storm": "pipeline",
}


def _settle(run: object, consumer: object) -> None:
    for _ in range(300):
        if run.wait(0.05):  # type: ignore[attr-defined]
            break
        consumer.poll(0.05)  # type: ignore[attr-defined]
    for _ in range(40):
        consumer.poll(0.05)  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", sorted(ON_PROXY))
def test_library_scenario_runs_unchanged_against_the_proxy(name: str, kafka: KafkaBroker) -> None:
    topic, group = unique("psc"), unique("pscg")
    sc = mockkafka.Scenario.load(name, topic=topic, group=group)
    with mockkafka.Proxy(upstream=kafka.bootstrap_servers) as proxy:
        run = sc.start(proxy)
        try:
            seeded = sum(s.count for s in sc.seed)
            if ON_PROXY[name] == "consume":
                consumer, got = consume_all(proxy, topic, until=40, group=group)  # type: ignore[arg-type]
                assert got >= 40
            else:
                consumer, acked, got = pipeline(proxy, topic, n=200, seeded=seeded, group=group)  # type: ignore[arg-type]
                assert acked == 200
                assert got >= 200 + seeded
            try:
                _settle(run, consumer)
                run.check()
            finally:
                consumer.close()
        finally:
            run.stop()
            proxy.faults.clear()


def test_a_scenario_needing_the_fake_is_refused_naming_each_step(kafka: KafkaBroker) -> None:
    with mockkafka.Proxy(upstream=kafka.bootstrap_servers) as proxy:
        sc = mockkafka.Scenario.load("unclean-leader-election", topic=unique("psr"))
        with pytest.raises(ScenarioError) as err:
            sc.start(proxy)
        text = str(err.value)
        assert "unclean-leader-election.yaml:" in text
        assert "brokers: 3: the upstream has 1 broker(s)" in text
        assert "step 1 truncate_log: truncate_log needs the in-process fake" in text
        assert proxy.topics().count(sc.topics[0].topic) == 0  # nothing started

"""Three library scenarios played against the payments service's own names.

The library stories are written for ``orders`` / ``billing``; binding their parameters
(``topic="payments", group="ledger"``) makes them stories about this service, with no YAML
copied. ``mockkafka scenarios --show NAME`` lists what each one takes.
"""

from __future__ import annotations

import pytest
from ledger import GROUP, TOPIC, book, publish

import mockkafka

pytest.importorskip(
    "faker", reason="library scenarios seed records with faker: pip install -e '.[scenarios]'"
)


# the marker binds a library story to this service's names; its steps play alongside the
# test body and its expect: is checked when the body returns
@pytest.mark.kafka_scenario("coordinator-loading", topic=TOPIC, group=GROUP, loading_ms=800)
def test_the_ledger_waits_out_a_loading_coordinator(kafka_cluster: mockkafka.Cluster) -> None:
    # the scenario seeds 50 payments; the ledger books them once its coordinator has loaded
    assert book(kafka_cluster.bootstrap_servers, until=50) == 50


def test_the_ledger_follows_its_coordinator() -> None:
    # after the ledger's first commit its coordinator moves; the next commit on the old one
    # answers NOT_COORDINATOR; expect: checks every offset is committed anyway
    scenario = mockkafka.Scenario.load(
        "coordinator-moves-mid-commit", topic=TOPIC, group=GROUP, seed_records=100
    )
    with mockkafka.Cluster(brokers=scenario.cluster.brokers) as cluster:
        run = scenario.start(cluster)
        try:
            assert book(cluster.bootstrap_servers, until=100) == 100
            assert run.wait(30), run.failures()
            run.check()
        finally:
            run.stop()


def test_payments_survive_leader_failover() -> None:
    scenario = mockkafka.Scenario.load(
        "leader-failover", topic=TOPIC, group=GROUP, seed_records=20, produced_before=30
    )
    with mockkafka.Cluster(brokers=scenario.cluster.brokers) as cluster:
        run = scenario.start(cluster)
        try:
            # the leaders move once the publisher has written 30 payments, however it
            # batched them, and again 300 ms later
            assert publish(cluster.bootstrap_servers, 100) == 100
            assert run.wait(30), run.failures()
            assert book(cluster.bootstrap_servers, until=120) == 120
            run.check()  # no payment lost or duplicated; the ledger committed to the end
        finally:
            run.stop()

"""Every library scenario, played against real clients (confluent-kafka): its expect: holds."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from confluent_kafka import Consumer

import mockkafka
from mockkafka.scenario.loader import library

from .workloads import pipeline, produce, transactions

pytestmark = pytest.mark.interop


def _pipeline(c: mockkafka.Cluster, sc: mockkafka.Scenario) -> None:
    seeded = sum(s.count for s in sc.seed)
    consumer, acked, got = pipeline(c, "orders", n=200, seeded=seeded)
    try:
        assert acked == 200
        assert got >= 200 + seeded
        sc_run_check(c, consumer)
    finally:
        consumer.close()


def _consume_only(c: mockkafka.Cluster, sc: mockkafka.Scenario) -> None:
    from .workloads import consume_all

    consumer, got = consume_all(c, "orders", until=40)
    try:
        assert got >= 40
        sc_run_check(c, consumer)
    finally:
        consumer.close()


def _produce_only(c: mockkafka.Cluster, sc: mockkafka.Scenario) -> None:
    # not idempotent: an idempotent producer stops with a fatal OUT_OF_ORDER_SEQUENCE_NUMBER
    # once the log it wrote to is truncated (as against a real cluster)
    assert produce(c, "orders", 100, pause_every=10, **{"enable.idempotence": False}) == 100
    sc_run_check(c)


def _transactions(c: mockkafka.Cluster, sc: mockkafka.Scenario) -> None:
    assert transactions(c, "orders", count=5) == 5
    sc_run_check(c)


WORKLOADS: dict[str, Callable[[mockkafka.Cluster, mockkafka.Scenario], None]] = {
    "offset-out-of-range": _consume_only,
    "unclean-leader-election": _produce_only,
    "transaction-coordinator-failure": _transactions,
}

_RUNS: dict[int, object] = {}


def sc_run_check(c: mockkafka.Cluster, consumer: Consumer | None = None) -> None:
    """Wait for the scenario's steps (polling the consumer meanwhile, so it rejoins its
    group), then check its expect: (AssertionError lists every failure)."""
    run = _RUNS[id(c)]
    for _ in range(300):
        if run.wait(0.05 if consumer else 30):  # type: ignore[attr-defined]
            break
        if consumer is not None:
            consumer.poll(0.05)
    if consumer is not None:  # settle: let a last rebalance finish
        for _ in range(40):
            consumer.poll(0.05)
    run.check()  # type: ignore[attr-defined]


def test_the_library_has_at_least_twelve_stories() -> None:
    assert len(library()) >= 12


@pytest.mark.parametrize("name", sorted(library()))
def test_library_scenario_holds_with_a_real_client(name: str) -> None:
    sc = mockkafka.Scenario.load(name)
    assert sc.description, f"{name} needs a one-line description"
    with mockkafka.Cluster(brokers=sc.cluster.brokers, **dict(sc.cluster.options)) as c:
        run = sc.start(c)
        _RUNS[id(c)] = run
        try:
            WORKLOADS.get(name, _pipeline)(c, sc)
        finally:
            run.stop()
            _RUNS.pop(id(c), None)
            c.faults.clear()

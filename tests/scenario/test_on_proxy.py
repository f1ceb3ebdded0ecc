"""Which scenario steps a ``mockkafka.Proxy`` can run: named before anything starts.

A proxy in front of the in-process fake stands in for one in front of real Kafka here (the
check reads only the scenario and the proxy's verb table); tests/oracle/test_proxy_scenarios.py
plays library scenarios against real Kafka.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import mockkafka
from mockkafka._api.proxy_verbs import PROXY_VERBS, refusal
from mockkafka.scenario.loader import library
from mockkafka.scenario.model import VERBS, ScenarioError


@pytest.fixture
def proxy() -> Iterator[mockkafka.Proxy]:
    with mockkafka.Cluster() as c, mockkafka.Proxy(upstream=c.bootstrap_servers) as p:
        yield p


def test_every_step_kind_says_whether_a_proxy_runs_it() -> None:
    assert set(VERBS) <= set(PROXY_VERBS), set(VERBS) - set(PROXY_VERBS)
    assert refusal("create_topic") is None and refusal("stop_broker") is None
    assert "needs the in-process fake" in (refusal("set_isr") or "")


def test_loading_against_a_proxy_names_each_step_with_file_and_line(
    proxy: mockkafka.Proxy,
) -> None:
    sc = mockkafka.Scenario.from_yaml(
        """\
name: mixed
topics:
  orders: {partitions: 1}
steps:
  - fault: {name: slow, on: Fetch, delay: {ms: 10}}
  - set_isr: {topic: orders, partition: 0, to: [1]}
  - fault: {name: again, on: Fetch, duplicate: true}
  - after: {event: {event: leader_moved}}
    stop_broker: {broker: 1}
  - truncate_log: {topic: orders, partition: 0, to_offset: 0}
""",
        file="mixed.yaml",
    )
    with pytest.raises(ScenarioError) as err:
        sc.start(proxy)
    lines = str(err.value).splitlines()
    assert "(4 problem(s))" in lines[0]
    assert lines[1].startswith("  mixed.yaml:6: step 2 set_isr: set_isr needs the in-process")
    assert lines[2].startswith(
        "  mixed.yaml:7: step 3 fault: fault 'again': duplicate reads the partition log"
    )
    assert lines[3].startswith("  mixed.yaml:8: step 4 stop_broker: after: {'event':")
    assert lines[4].startswith("  mixed.yaml:10: step 5 truncate_log: truncate_log needs")
    assert "orders" not in proxy.topics()  # refused before setup


def test_library_scenarios_the_proxy_cannot_run_are_refused_up_front(
    proxy: mockkafka.Proxy,
) -> None:
    runs = {n for n in library() if _runs(n, proxy)}
    assert {
        "flapping-connections",
        "throttled-cluster",
        "older-kafka-version",
        "coordinator-loading",
        "offset-out-of-range",
        "rebalance-storm",
    } <= runs
    assert "unclean-leader-election" not in runs


def _runs(name: str, proxy: mockkafka.Proxy) -> bool:
    try:
        mockkafka.Scenario.load(name).check_runs_on(proxy)
    except ScenarioError:
        return False
    return True


@pytest.mark.interop
def test_a_library_scenario_plays_through_a_proxy(proxy: mockkafka.Proxy) -> None:
    from .workloads import consume_all

    sc = mockkafka.Scenario.load("offset-out-of-range")
    run = sc.start(proxy)  # seeds 100 records upstream, commits 10, deletes before 60
    try:
        consumer, got = consume_all(proxy, "orders", until=40)  # type: ignore[arg-type]
        try:
            assert got == 40
            assert run.wait(10)
            run.check()  # OFFSET_OUT_OF_RANGE seen in the proxy's traffic, 40 records upstream
        finally:
            consumer.close()
    finally:
        run.stop()
    assert proxy.traffic.requests("Fetch", with_error="OFFSET_OUT_OF_RANGE")


@pytest.mark.interop
def test_partial_trailing_batches_plays_through_a_proxy(proxy: mockkafka.Proxy) -> None:
    """A record edit works on the proxy: it cuts the last batch of the upstream's own Fetch
    answer (only ``duplicate``, which copies a batch out of the log, needs the fake)."""
    from .workloads import consume_all

    sc = mockkafka.Scenario.load("partial-trailing-batches", seed_records=200, cut_fetches=2)
    sc.check_runs_on(proxy)
    run = sc.start(proxy)
    try:
        consumer, got = consume_all(proxy, "orders", until=200)  # type: ignore[arg-type]
        try:
            assert got == 200
            run.check()  # every seed record read and committed, the rule fired
        finally:
            consumer.close()
    finally:
        run.stop()
    assert run.run.rules["cut"].fired >= 1

"""Scenario parameters: a library story played on your own names (issue 26).

A story declares the names it is written for (``parameters:`` with defaults); the caller
binds them (``Scenario.load(NAME, topic="payments")``, the marker's keywords, ``--set``, the
control endpoint); an unknown one gets a did-you-mean; checks can be left out per use and a
failed one names the parameter it depends on; progress triggers count what the app did.
"""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, Producer

import mockkafka
from mockkafka import Scenario, ScenarioError
from mockkafka.scenario.loader import library
from mockkafka.scenario.model import AfterProduced, Committed, NoDataLoss, TopicSpec

STORY = """\
name: story
parameters:
  topic: {default: orders, description: the app's topic}
  group: {default: billing}
  records: {default: 5}
topics:
  $topic: {partitions: 2}
steps:
  - after: {produced: {topic: $topic, count: $records}}
    move_leader: {topic: $topic, partition: 0, to: next}
expect:
  no_data_loss: [$topic]
  committed: {group: $group, topic: "${topic}", offset: end}
"""


def test_every_library_story_declares_the_apps_names_as_parameters() -> None:
    for name in library():
        sc = Scenario.load(name)
        names = {p.name for p in sc.parameters}
        assert "topic" in names, name
        mine = {"topic": "payments", "group": "ledger", "transactional_id": "payments-tx"}
        bound = Scenario.load(name, **{k: v for k, v in mine.items() if k in names})
        assert [t.topic for t in bound.topics] == ["payments"], name
        text = bound.to_yaml()
        assert "orders" not in text and "billing" not in text, name


def test_binding_replaces_names_keys_and_typed_values() -> None:
    sc = Scenario.from_yaml(STORY, topic="payments", group="ledger", records="7")
    assert sc.topics == (TopicSpec("payments", 2),)
    assert sc.steps[0].start == AfterProduced("payments", 7)  # "7" from a CLI became 7
    assert sc.expect == (NoDataLoss(("payments",)), Committed("ledger", "payments"))
    assert sc.check_parameters == (("topic",), ("group", "topic"))
    defaults = Scenario.from_yaml(STORY)
    assert defaults.topics[0].topic == "orders" and defaults.steps[0].start == AfterProduced(
        "orders", 5
    )


def test_the_library_story_binds_from_the_issue_example() -> None:
    sc = Scenario.load("leader-failover", topic="payments", group="ledger")
    assert sc.topics[0].topic == "payments"
    assert sc.seed[0].topic == "payments"
    assert all(s.action.kwargs["topic"] == "payments" for s in sc.steps)  # type: ignore[union-attr]
    assert Committed("ledger", "payments") in sc.expect


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"tpoic": "payments"},
            "scenario 'leader-failover' has no parameter 'tpoic' (did you mean topic?); "
            "its parameters: topic (default 'orders'), group (default 'billing')",
        ),
        ({"partitions": "six"}, "parameter 'partitions' takes an integer (default 6), got 'six'"),
        ({"skip_expect": ["comitted"]}, "has no check 'comitted' (did you mean committed?)"),
    ],
)
def test_a_wrong_binding_is_refused_with_a_did_you_mean(
    kwargs: dict[str, object], message: str
) -> None:
    with pytest.raises(ScenarioError) as exc:
        Scenario.load("leader-failover", **kwargs)
    assert message in str(exc.value)
    assert "leader-failover.yaml:" in str(exc.value)  # names the file and line


def test_a_reference_to_an_undeclared_parameter_names_file_line_and_field() -> None:
    with pytest.raises(ScenarioError) as exc:
        Scenario.from_yaml(STORY.replace("[$topic]", "[$tpoic]"), file="s.yaml")
    assert str(exc.value).startswith("s.yaml:12:18: ")
    assert "expect.no_data_loss[0]: '$tpoic' refers to no parameter (did you mean topic?)" in str(
        exc.value
    )


def test_a_file_without_parameters_keeps_its_dollars_and_refuses_bindings() -> None:
    plain = "name: plain\ntopics:\n  orders: {config: {x.y: $literal}}\n"
    assert dict(Scenario.from_yaml(plain).topics[0].config) == {"x.y": "$literal"}
    with pytest.raises(ScenarioError, match="it declares none"):
        Scenario.from_yaml(plain, topic="payments")


def test_skip_expect_leaves_a_check_out() -> None:
    sc = Scenario.load("leader-failover", topic="payments", skip_expect=["committed"])
    assert not any(isinstance(c, Committed) for c in sc.expect)
    assert len(sc.check_parameters) == len(sc.expect)


def test_a_failed_check_names_the_parameter_it_depends_on() -> None:
    sc = Scenario.from_yaml(STORY, topic="payments", group="ledger", records="1")
    with mockkafka.Cluster(brokers=2) as cluster:  # a second broker for the leader to move to
        run = sc.start(cluster)
        cluster.produce("payments", "p1", partition=0)
        assert run.wait(10)
        failures = run.failures()
    # payments-0 holds a record the group (which never ran) did not commit; payments-1 holds
    # nothing to read, so no commit is owed there
    assert len(failures) == 1
    assert "group 'ledger' committed None on payments-0" in failures[0]
    assert "depends on parameter group='ledger', topic='payments'" in failures[0]
    assert "skip_expect=['committed']" in failures[0]


PRODUCED = """\
name: progress
topics: {orders: {partitions: 1}}
steps:
  - name: after-records
    after: {produced: {topic: orders, count: 50}}
    produce: {topic: orders, value: marker}
"""


@pytest.mark.interop
def test_a_produced_trigger_counts_records_however_the_client_batched_them() -> None:
    # 50 records in a handful of Produce requests: a request-count trigger of 50 never
    # starts (the symptom of issue 26); a records-produced trigger does
    sc = Scenario.from_yaml(PRODUCED)
    with mockkafka.Cluster() as cluster:
        run = sc.start(cluster)
        p = Producer(
            {"bootstrap.servers": cluster.bootstrap_servers, "linger.ms": 200, "log_level": 0}
        )
        for i in range(50):
            p.produce("orders", value=b"v%d" % i)
        assert p.flush(10) == 0
        assert run.wait(10), run.failures()
        assert cluster.traffic.count("Produce") < 50
        assert cluster.topic("orders").partitions[0].high_watermark == 51
        run.check()


CONSUMED = """\
name: progress
parameters:
  group: {default: billing}
topics: {orders: {partitions: 2}}
seed:
  orders: {count: 40}
steps:
  - after: {consumed: {topic: orders, count: 40}}
    produce: {topic: orders, value: consumed}
  - after: {commits: {group: $group, count: 1}}
    produce: {topic: orders, value: committed}
"""


@pytest.mark.interop
def test_consumed_and_commits_triggers_count_what_the_consumer_did() -> None:
    sc = Scenario.from_yaml(CONSUMED, group="ledger")
    with mockkafka.Cluster() as cluster:
        run = sc.start(cluster)
        c = Consumer(
            {
                "bootstrap.servers": cluster.bootstrap_servers,
                "group.id": "ledger",
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
                "log_level": 0,
            }
        )
        c.subscribe(["orders"])
        got = 0
        deadline = time.monotonic() + 20
        try:
            while not run.wait(0.01) and time.monotonic() < deadline:
                msgs = c.consume(100, 0.1)
                got += len(msgs)
                if msgs:
                    c.commit(asynchronous=False)
        finally:
            c.close()
        assert run.wait(1), run.failures()
        assert got > 0  # (librdkafka fetches ahead of what consume() has handed out)
        # the consumer fetched by topic id (Fetch v13+): positions are still by name
        positions = cluster.traffic.fetch_positions("orders")
        assert sum(positions.values()) >= 40 and {t for t, _ in positions} == {"orders"}
        assert max(e.version for e in cluster.traffic.requests("Fetch")) >= 13  # by topic id
        assert cluster.traffic.count("Fetch", topic="orders") > 0  # and filtered by name
        run.check()


def test_the_marker_binds_parameters_and_names_an_unknown_one(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
import pytest

@pytest.mark.kafka_scenario("leader-failover", topic="payments", group="ledger",
                            skip_expect=["committed", "no_duplicates", "no_data_loss"],
                            produced_before=1)
def test_bound(kafka_cluster):
    assert kafka_cluster.topics() == ["payments"]
    start = kafka_cluster.topic("payments").partitions[0].leader_epoch
    kafka_cluster.produce("payments", "p", partition=0)
    import time
    for _ in range(200):  # the two moves: after 1 record produced, then 300 ms later
        if kafka_cluster.topic("payments").partitions[0].leader_epoch >= start + 2:
            break
        time.sleep(0.02)
    assert kafka_cluster.topic("payments").partitions[0].leader_epoch >= start + 2

@pytest.mark.kafka_scenario("leader-failover", tpoic="payments")
def test_misspelt(kafka_cluster):
    pass
"""
    )
    result = pytester.runpytest("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        ["*scenario 'leader-failover' has no parameter 'tpoic' (did you mean topic?)*"]
    )

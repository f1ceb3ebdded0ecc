"""The fault actions duplicate, corrupt_payload, schema_id, skew_timestamps, lost_ack and
blackhole on every surface: the Rule builder, YAML ``fault:`` steps (and so the control
endpoint), ``fault_plans()`` and the coverage report; and refused where they cannot fire."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings

import mockkafka
from mockkafka.errors import ConfigError
from mockkafka.faults import (
    Blackhole,
    CorruptPayload,
    Duplicate,
    LostAck,
    SchemaId,
    SkewTimestamps,
)
from mockkafka.faults.coverage import BEYOND_KAFKA, FaultCoverage, collect, realism, stop, universe
from mockkafka.scenario.model import Fault, ScenarioError, fault_from_dict, fault_to_dict
from mockkafka.strategies import VERBS, FaultPlan, fault_plans

NEW = ("duplicate", "corrupt_payload", "schema_id", "skew_timestamps", "lost_ack", "blackhole")

YAML_CASES: list[tuple[dict[str, Any], Any]] = [
    ({"on": "Fetch", "duplicate": True}, Duplicate()),
    ({"on": "Fetch", "corrupt_payload": True}, CorruptPayload()),
    ({"on": "Fetch", "corrupt_payload": {"part": "key", "seed": 7}}, CorruptPayload("key", 7)),
    ({"on": "Fetch", "schema_id": {"id": 999}}, SchemaId(id=999)),
    ({"on": "Fetch", "schema_id": {"magic": 1}}, SchemaId(magic=1)),
    ({"on": "Fetch", "skew_timestamps": {"ms": -3_600_000}}, SkewTimestamps(-3_600_000)),
    ({"on": "Produce", "lost_ack": True}, LostAck()),
    ({"on": "*", "client_id": "svc-a", "blackhole": True}, Blackhole()),
]


@pytest.mark.parametrize(("doc", "action"), YAML_CASES, ids=lambda x: repr(x)[:40])
def test_yaml_fault_builds_the_action_and_round_trips(doc: dict[str, Any], action: Any) -> None:
    fault = fault_from_dict(doc)
    assert fault.actions == (action,)
    assert fault_from_dict(fault_to_dict(fault)) == fault
    # the repr is valid Python
    import mockkafka.faults.model as model

    assert eval(repr(action), vars(model)) == action


def test_a_blackhole_swallows_every_match_unless_a_count_is_given() -> None:
    assert fault_from_dict({"on": "*", "blackhole": True}).trigger.times is None
    assert fault_from_dict({"on": "*", "times": 2, "blackhole": True}).trigger.times == 2
    with mockkafka.Cluster() as cluster:
        rule = cluster.faults.on(client_id="svc-a").blackhole().for_ms(500)
        assert (rule.trigger.times, rule.trigger.end_ms) == (None, 500)
        assert cluster.faults.on(client_id="b").times(2).blackhole().trigger.times == 2
        cluster.faults.clear()  # made to be looked at, not to fire


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"on": "Fetch", "schema_id": {}}, "give id="),
        ({"on": "Fetch", "schema_id": {"id": 2**31}}, "32-bit"),
        ({"on": "Fetch", "schema_id": True}, "give id="),
        ({"on": "Fetch", "skew_timestamps": {"ms": 0}}, "non-zero"),
        ({"on": "Fetch", "corrupt_payload": {"part": "body"}}, "part must be"),
        ({"on": "Fetch", "corrupt_payload": {"size": 3}}, "unknown"),
        ({"on": "Fetch", "lost_ack": True}, "acts only on Produce"),
        ({"on": "Produce", "duplicate": True}, "only Fetch responses"),
    ],
)
def test_bad_arguments_name_the_field(doc: dict[str, Any], message: str) -> None:
    with pytest.raises((ScenarioError, ConfigError), match=message):
        f = fault_from_dict(doc)
        with mockkafka.Cluster() as cluster:  # a rule the builder refuses
            cluster.faults.add(mockkafka.faults.Rule(f.match, f.trigger, f.actions))
            cluster.faults.clear()


def test_the_builder_refuses_a_rule_that_could_never_fire() -> None:
    with mockkafka.Cluster() as cluster:
        with pytest.raises(ConfigError, match="acts only on Produce"):
            cluster.faults.on("Fetch").lost_ack()
        with pytest.raises(ConfigError, match="only Fetch responses"):
            cluster.faults.on("Metadata").duplicate()
        with pytest.raises(ConfigError, match="edits record data"):
            cluster.faults.on("Produce").skew_timestamps(ms=5)
        with pytest.raises(ConfigError, match="give id="):
            cluster.faults.on("Fetch").schema_id()


def test_a_wildcard_rule_is_consulted_only_for_the_api_its_action_acts_on() -> None:
    with mockkafka.Cluster() as cluster:
        cluster.create_topic("orders")
        rule = cluster.faults.on("*").lost_ack()
        cluster.produce("orders", b"v")  # verbs send no requests: nothing to count
        assert rule.matched == 0
        assert cluster.topic("orders").partition(0).records()[0].value == b"v"
        cluster.faults.clear()


def test_coverage_counts_and_labels_the_new_kinds() -> None:
    keys, _verbs = universe()
    kinds = {(api, kind) for api, kind, _e in keys}
    for kind in ("duplicate", "corrupt_payload", "schema_id", "skew_timestamps"):
        assert ("Fetch", kind) in kinds
    assert ("Produce", "lost_ack") in kinds and ("Heartbeat", "blackhole") in kinds
    assert realism("Fetch", "corrupt_payload") == BEYOND_KAFKA
    assert realism("Fetch", "duplicate") != BEYOND_KAFKA
    cov = FaultCoverage()
    collect(cov)
    try:
        with mockkafka.Cluster() as cluster:
            cluster.create_topic("orders")
            rule = cluster.faults.on("Produce").lost_ack()
            from confluent_kafka import Producer

            p = Producer({"bootstrap.servers": cluster.bootstrap_servers, "linger.ms": 0})
            p.produce("orders", b"v")
            assert p.flush(15) == 0
            assert rule.fired == 1
    finally:
        stop(cov)
    assert cov.faults[("Produce", "lost_ack", "")] == 1


def test_fault_plans_draw_the_new_actions_only_when_named() -> None:
    assert set(NEW) <= set(VERBS)
    assert not set(NEW) & set(mockkafka.strategies.DEFAULT_VERBS)


@given(plan=fault_plans(topics=["orders"], verbs=list(NEW), max_steps=3, timed=False))
@settings(max_examples=40, deadline=None)
def test_drawn_plans_of_the_new_actions_load_and_print(plan: FaultPlan) -> None:
    assert FaultPlan.from_yaml(plan.to_yaml()) == plan
    for step in plan.steps:
        assert isinstance(step.action, Fault)
        assert set(plan.verbs) <= set(NEW)

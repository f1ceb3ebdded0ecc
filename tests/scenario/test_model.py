"""The scenario model: valid-Python reprs, YAML round trips, the shipped schema is current."""

from __future__ import annotations

import json
from importlib import resources

import pytest

import mockkafka
from mockkafka.faults.model import Delay, Error, Match, Trigger
from mockkafka.scenario import model as m
from mockkafka.scenario.loader import library
from mockkafka.scenario.model import load_text
from mockkafka.scenario.schema import build_schema

NAMESPACE: dict[str, object] = {}
exec("from mockkafka.faults.model import *", NAMESPACE)
exec("from mockkafka.scenario.model import *", NAMESPACE)


@pytest.mark.parametrize("name", sorted(library()))
def test_a_library_scenario_round_trips_through_repr_yaml_and_python(name: str) -> None:
    sc = mockkafka.Scenario.load(name)
    assert eval(repr(sc), dict(NAMESPACE)) == sc
    assert load_text(sc.to_yaml()) == sc
    ns: dict[str, object] = {}
    exec(sc.to_python(), ns)
    assert ns["SCENARIO"] == sc


def test_a_scenario_built_in_python_is_the_one_the_yaml_describes() -> None:
    built = m.Scenario(
        name="s",
        cluster=m.ClusterSpec(brokers=3),
        topics=(m.TopicSpec("orders", partitions=2, replication_factor=3),),
        steps=(
            m.Step(m.Verb("move_leader", topic="orders", partition="all", to="next"),
                   start=m.AfterRequests("Produce", 50)),
            m.Step(m.Fault(Match(api=("Fetch",), broker=(2,)), Trigger(times=3),
                           (Error("NOT_LEADER_OR_FOLLOWER"),)), start=m.At(2000)),
            m.Step(m.Fault(Match(api=("Produce",)), Trigger(times=None), (Delay(ms=5),), "slow")),
        ),
        expect=(m.NoDataLoss(("orders",)), m.RulesFired(("slow",))),
    )  # fmt: skip
    text = """
name: s
cluster: {brokers: 3}
topics: {orders: {partitions: 2, replication_factor: 3}}
steps:
  - after: {requests: {api: Produce, count: 50}}
    move_leader: {topic: orders, partition: all, to: next}
  - at: 2s
    fault: {on: Fetch, broker: 2, times: 3, error: NOT_LEADER_OR_FOLLOWER}
  - fault: {name: slow, on: Produce, every_time: true, delay: {ms: 5}}
expect:
  no_data_loss: [orders]
  rules_fired: [slow]
"""
    assert load_text(text) == built
    assert "Verb('move_leader', topic='orders', partition='all', to='next')" in repr(built)


def test_a_verb_checks_its_arguments_at_once() -> None:
    with pytest.raises(
        mockkafka.ScenarioError, match=r"move_leader has no argument 'too' \(did you mean to\?\)"
    ):
        m.Verb("move_leader", topic="t", partition=0, too=2)
    with pytest.raises(mockkafka.ScenarioError, match="unknown verb 'move_leadr'"):
        m.Verb("move_leadr")


def test_every_verb_takes_exactly_the_keyword_names_of_the_python_method() -> None:
    import inspect

    for name, params in m.VERBS.items():
        method = getattr(mockkafka.Cluster, name)
        python = [p for p in inspect.signature(method).parameters if p != "self"]
        assert [p.name for p in params] == python, name


def test_the_shipped_json_schema_is_generated_from_the_model() -> None:
    shipped = json.loads(resources.files("mockkafka.scenario").joinpath("schema.json").read_text())
    assert shipped == build_schema(), (
        "regenerate: python -m mockkafka.scenario.schema > mockkafka/scenario/schema.json"
    )


def test_durations() -> None:
    assert m.parse_duration_ms("2s", ()) == 2000
    assert m.parse_duration_ms("500ms", ()) == 500
    assert m.parse_duration_ms("1m", ()) == 60_000
    assert m.parse_duration_ms(1.5, ()) == 1500

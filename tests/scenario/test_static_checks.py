"""``mockkafka scenario check`` makes every check the runner would make: a step on a topic,
partition or broker that will not exist when it runs is refused in the file, every mistake
at once with file:line, before anything starts. And the seed data of a story fits the app:
none at all (``seed_records=0``), or values of the app's shape (``seed_value``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import mockkafka
from mockkafka.cli import main
from mockkafka.errors import KafkaApiError
from mockkafka.scenario.model import load_text

BAD = """\
name: bad
cluster: {brokers: 1}
topics:
  orders: {partitions: 3}
steps:
  - move_leader: {topic: ordrs, partition: 0, to: 1}
  - stop_broker: {broker: 2}
  - truncate_log: {topic: orders, partition: 3, to_offset: 0}
  - move_leader: {topic: orders, partition: 0, to: nxt}
  - create_topic: {topic: audit, partitions: 2}
  - produce: {topic: audit, value: x, partition: 1}
  - commit_offsets: {group: g, offsets: [{topic: audit, partition: 2, offset: 1}]}
  - add_partitions: {topic: orders, total: 3}
  - create_topic: {topic: orders}
  - delete_topic: {topic: audit}
  - set_topic_config: {topic: audit, configs: {retention.ms: 10}}
"""


def test_scenario_check_reports_every_mistake_of_a_file_with_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text(BAD)
    assert main(["scenario", "check", str(f)]) == 1
    err = capsys.readouterr().err
    where = f"{f}:"
    assert err.startswith(
        f"mockkafka scenario check: {where}6:26: steps[0].move_leader.topic: topic 'ordrs' "
        "does not exist when this step runs (did you mean orders?); topics then: orders"
    )
    assert "7 more mistake(s):" in err
    for expected in [
        f"{where}7:27: steps[1].stop_broker.broker: no broker 2: cluster.brokers is 1 "
        "(node id 1); raise cluster.brokers to 2 or name another broker",
        f"{where}8:46: steps[2].truncate_log.partition: topic 'orders' has 3 partition(s) "
        "when this step runs (0 to 2), no 3",
        f"{where}9:52: steps[3].move_leader.to: 'nxt' is not valid",
        f"{where}12:68: steps[6].commit_offsets.offsets[0].partition: topic 'audit' has 2 "
        "partition(s)",
        f"{where}13:44: steps[7].add_partitions.total: topic 'orders' has 3 partition(s) "
        "when this step runs; add_partitions total=3 must be more",
        f"{where}14:27: steps[8].create_topic.topic: topic 'orders' already exists when this "
        "step runs (declared under topics); Kafka answers TOPIC_ALREADY_EXISTS",
        f"{where}16:31: steps[10].set_topic_config.topic: topic 'audit' does not exist when "
        "this step runs; topics then: orders",
    ]:
        assert f"\n  {expected}" in err, expected
    # the step producing to the topic an earlier step created is fine
    assert "steps[5]" not in err


def test_acls_and_fault_rules_may_name_a_topic_that_does_not_exist() -> None:
    sc = load_text(
        "name: ok\nsteps:\n"
        "  - allow: {principal: 'User:a', operations: write, topic: later}\n"
        "  - fault: {on: Produce, topic: later, error: NOT_LEADER_OR_FOLLOWER}\n"
    )
    assert len(sc.steps) == 2


def test_a_step_with_a_mistake_does_not_make_later_steps_on_its_topic_mistakes() -> None:
    with pytest.raises(mockkafka.ScenarioError) as info:
        load_text(
            "name: x\nsteps:\n"
            "  - create_topic: {topic: audit, partitions: two}\n"
            "  - produce: {topic: audit, value: v}\n",
            file="s.yaml",
        )
    msg = str(info.value)
    assert msg.startswith("s.yaml:3:46: steps[0].create_topic.partitions:")
    assert "more mistake" not in msg


def test_a_tab_in_yaml_gets_the_hint_to_use_spaces() -> None:
    with pytest.raises(mockkafka.ScenarioError) as info:
        load_text("name: x\ncluster:\n\tbrokers: 1\n", file="s.yaml")
    assert str(info.value).startswith("s.yaml:3:1: not valid YAML: found character '\\t'")
    assert str(info.value).endswith(
        "; line 3 has a tab at column 1: YAML wants spaces there (it never indents with tabs)"
    )


def test_a_library_story_takes_no_seed_records() -> None:
    sc = mockkafka.Scenario.load("rebalance-storm", seed_records=0)
    assert sc.seed[0].count == 0
    with mockkafka.Cluster() as c:
        sc.start(c).stop()
        assert [p.high_watermark for p in c.topic("orders").partitions] == [0, 0, 0, 0]


def test_a_library_story_seeds_values_of_the_apps_shape() -> None:
    # faker.json writes quotes: in a JSON template they are escaped, so every record parses
    template = '{"id": {{ index }}, "doc": "{{ faker.json }}"}'
    sc = mockkafka.Scenario.load("rebalance-storm", seed_records=5, seed_value=template)
    with mockkafka.Cluster() as c:
        sc.start(c).stop()
        values = [json.loads(r.value) for p in c.topic("orders").partitions for r in p.records()]
    assert sorted(v["id"] for v in values) == [0, 1, 2, 3, 4]
    assert all(isinstance(json.loads(v["doc"]), list | dict) for v in values)


def test_a_seed_template_that_looks_like_json_but_is_not_is_refused() -> None:
    with pytest.raises(mockkafka.ScenarioError) as info:
        mockkafka.Scenario.load("rebalance-storm", seed_value='{"note": {{ faker.word }}}')
    msg = str(info.value)
    assert "rebalance-storm.yaml:" in msg and ": seed.orders.value: " in msg
    assert "starts like JSON but its records are not JSON" in msg


def test_scenario_check_binds_parameters_as_serve_does(
    capsys: pytest.CaptureFixture[str],
) -> None:
    story = ["scenario", "check", "rebalance-storm", "--set", "seed_records=0"]
    assert main([*story, "--set", 'seed_value={"id": {{ index }}}']) == 0
    assert ": ok (rebalance-storm: " in capsys.readouterr().out
    assert main([*story, "--set", 'seed_value={"id": {{ index }}']) == 1
    err = capsys.readouterr().err
    assert "rebalance-storm.yaml:17:" in err and "starts like JSON but its records are not" in err
    assert main([*story, "--skip-expect", "comitted"]) == 1
    assert "has no check 'comitted' (did you mean committed?)" in capsys.readouterr().err


def test_a_declared_topic_that_exists_with_other_partitions_is_refused() -> None:
    sc = load_text("name: six\ntopics: {orders: {partitions: 6}}\n")
    with mockkafka.Cluster() as c:
        c.create_topic("orders", partitions=3)
        with pytest.raises(KafkaApiError) as info:
            sc.start(c)
        assert str(info.value).startswith(
            "TOPIC_ALREADY_EXISTS: scenario 'six' declares topic 'orders' with 6 partition(s); "
            "the cluster already holds it with 3."
        )
        c.create_topic("kept", partitions=2)
        c.produce("kept", "v")
        load_text("name: two\ntopics: {kept: {partitions: 2}}\n").start(c).check()
        assert (
            c.topic("kept").partitions[0].high_watermark
            + c.topic("kept").partitions[1].high_watermark
            == 1
        )

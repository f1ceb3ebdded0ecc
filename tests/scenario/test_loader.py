"""Every kind of mistake in a scenario file gets its precise error: file, line, column, the
field, what is allowed and a did-you-mean -- before any broker starts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import mockkafka
from mockkafka.scenario.model import load_text

STEP = "name: x\nsteps:\n  - "

# (what is wrong, YAML, the exact start of the message: file:line:column: field: ...)
MISTAKES = [
    ("unknown top-level key", "name: x\nstesp: []\n",
     "s.yaml:2:1: stesp: unknown key 'stesp' (did you mean steps?); allowed: name, description"),
    ("missing name", "description: y\n", "s.yaml:1:1: missing 'name' (required)"),
    ("unknown verb", STEP + "move_leadr: {topic: t, partition: 0, to: 2}\n",
     "s.yaml:3:5: steps[0].move_leadr: unknown key 'move_leadr' (did you mean move_leader?)"),
    ("unknown verb argument", STEP + "move_leader: {topic: t, partition: 0, to: 2, broker: 1}\n",
     "s.yaml:3:50: steps[0].move_leader.broker: unknown key 'broker'; allowed: topic, partition, to"),
    ("missing verb argument", STEP + "move_leader: {topic: t, partition: 0}\n",
     "s.yaml:3:18: steps[0].move_leader: missing 'to' (required)"),
    ("bad broker target", STEP + "move_leader: {topic: t, partition: 0, to: nxt}\n",
     "s.yaml:3:47: steps[0].move_leader.to: 'nxt' is not valid; expected a broker node id or 'next'"),
    ("bad partition", STEP + "truncate_log: {topic: t, partition: every, to_offset: 3}\n",
     "s.yaml:3:41: steps[0].truncate_log.partition: 'every' is not valid; expected a partition index or 'all'"),
    ("unknown API", STEP + "fault: {on: Fetc, error: NOT_LEADER_OR_FOLLOWER}\n",
     "s.yaml:3:17: steps[0].fault.on: on='Fetc' is not a Kafka API (did you mean Fetch?)"),
    ("unknown error name", STEP + "fault: {on: Fetch, error: NOT_LEADER}\n",
     "s.yaml:3:31: steps[0].fault.error: code='NOT_LEADER': unknown Kafka error name 'NOT_LEADER' (did you mean NOT_LEADER_OR_FOLLOWER"),
    ("unknown fault key", STEP + "fault: {on: Fetch, tims: 3, error: NONE}\n",
     "s.yaml:3:24: steps[0].fault.tims: unknown key 'tims' (did you mean times?)"),
    ("fault without action", STEP + "fault: {on: Fetch, times: 3}\n",
     "s.yaml:3:12: steps[0].fault: a fault needs an action: one of error, delay, throttle"),
    ("two fault triggers", STEP + "fault: {on: Fetch, times: 3, once: true, error: NONE}\n",
     "s.yaml:3:31: steps[0].fault.times: a fault takes one of once, times, nth, every_time, probability"),
    ("bad action argument", STEP + "fault: {on: Fetch, drop_connection: {after: true}}\n",
     "s.yaml:3:42: steps[0].fault.drop_connection.after: unknown key 'after'; allowed: after_processing"),
    ("probability out of range", STEP + "fault: {on: Fetch, probability: 1.5, error: NONE}\n",
     "s.yaml:3:37: steps[0].fault.probability: 1.5 is greater than the maximum of 1"),
    ("bad duration", STEP + "at: 2 seconds\n    trigger_rebalance: {group: g}\n",
     "s.yaml:3:9: steps[0].at: '2 seconds' is not valid; expected a duration like 2s, 500ms"),
    ("two start conditions", STEP + "at: 2s\n    when: {group: g}\n    trigger_rebalance: {group: g}\n",
     "s.yaml:4:11: steps[0].when: a step starts on one condition; it has at and when"),
    ("step without action", STEP + "at: 2s\n",
     "s.yaml:3:5: steps[0]: a step has exactly one action (a verb or fault); it has none"),
    ("step with two actions", STEP + "trigger_rebalance: {group: g}\n    stop_broker: {broker: 1}\n",
     "s.yaml:3:5: steps[0]: a step has exactly one action (a verb or fault); it has trigger_rebalance, stop_broker"),
    ("unknown group state", STEP + "when: {group: g, state: Stabel}\n    trigger_rebalance: {group: g}\n",
     "s.yaml:3:29: steps[0].when.state: 'Stabel' is not allowed (did you mean Stable?)"),
    ("unknown cluster event", STEP + "after: {event: {event: leader_move}}\n    trigger_rebalance: {group: g}\n",
     "s.yaml:3:28: steps[0].after.event.event: 'leader_move' is not allowed (did you mean leader_moved?)"),
    ("unknown after kind", STEP + "after: {request: {api: Fetch}}\n    trigger_rebalance: {group: g}\n",
     "s.yaml:3:13: steps[0].after.request: unknown key 'request' (did you mean requests?); allowed: time, requests, event, records, produced, consumed, commits, committed"),
    ("replication factor above brokers", "name: x\ncluster: {brokers: 1}\ntopics:\n  t: {replication_factor: 3}\n",
     "s.yaml:4:27: topics.t.replication_factor: replication_factor 3 needs at least 3 brokers; cluster.brokers is 1"),
    ("seed of an unknown topic", "name: x\ntopics: {orders: {}}\nseed:\n  order: {count: 3}\n",
     "s.yaml:4:10: seed.order: seed topic 'order' is not under topics (did you mean orders?)"),
    ("unknown faker provider", "name: x\ntopics: {orders: {}}\nseed:\n  orders: {count: 3, key: '{{ faker.uuid5x }}'}\n",
     "s.yaml:4:27: seed.orders.key: 'uuid5x' is not a faker provider (did you mean"),
    ("unknown check", "name: x\nexpect:\n  no_dataloss: [t]\n",
     "s.yaml:3:3: expect.no_dataloss: unknown key 'no_dataloss' (did you mean no_data_loss or data_loss?)"),
    ("rules_fired names no fault", "name: x\nsteps:\n  - fault: {name: a, on: Fetch, error: NONE}\nexpect:\n  rules_fired: [b]\n",
     "s.yaml:5:16: expect.rules_fired: no fault is named 'b'; named faults: a"),
    ("unknown cluster option", "name: x\ncluster: {brokers: 1, auto_create_topic: true}\n",
     "s.yaml:2:23: cluster.auto_create_topic: unknown key 'auto_create_topic' (did you mean auto_create_topics?)"),
    ("wrong type", "name: x\ncluster: {brokers: three}\n",
     "s.yaml:2:20: cluster.brokers: expected an integer >= 1, got 'three'"),
    ("unknown API in caps", STEP + "cap_api_versions: {caps: {Fech: 3}}\n",
     "s.yaml:3:37: steps[0].cap_api_versions.caps.Fech: caps='Fech' is not a Kafka API (did you mean Fetch?)"),
    ("unknown ACL operation", STEP + "allow: {principal: 'User:a', operations: [read, wirte], topic: t}\n",
     "s.yaml:3:46: steps[0].allow.operations: unknown operation 'wirte' (did you mean 'write'?)"),
    ("ACL operation of another resource", STEP + "deny: {principal: 'User:a', operations: write, group: g}\n",
     "s.yaml:3:45: steps[0].deny.operations: write is not an operation on a group: group= takes read"),
    ("ACL principal without a type", STEP + "allow: {principal: alice, operations: read, topic: t}\n",
     "s.yaml:3:24: steps[0].allow.principal: principal='alice' has no type: write 'User:alice'"),
    ("ACL without a resource", STEP + "allow: {principal: 'User:a', operations: read}\n",
     "s.yaml:3:12: steps[0].allow: give the resource: one of topic=, group=, transactional_id="),
    ("ACL with two resources", STEP + "allow: {principal: 'User:a', operations: read, topic: t, group: g}\n",
     "s.yaml:3:69: steps[0].allow.group: give one resource, not topic= and group="),
    ("ACL cluster not a boolean", STEP + "deny: {principal: 'User:a', operations: alter, cluster: yes}\n",
     "s.yaml:3:61: steps[0].deny.cluster: expected boolean, got 'yes'"),
    ("ACL filter permission", STEP + "remove_acls: {permission: maybe}\n",
     "s.yaml:3:31: steps[0].remove_acls.permission: permission must be 'ALLOW', 'DENY' or None"),
    ("ACL verb argument", STEP + "allow: {principal: 'User:a', operation: read, topic: t}\n",
     "s.yaml:3:34: steps[0].allow.operation: unknown key 'operation' (did you mean operations?)"),
    ("YAML syntax", "name: x\nsteps: [\n",
     "s.yaml:3:1: not valid YAML: expected the node content, but found '<stream end>'"),
]  # fmt: skip


@pytest.mark.parametrize(("what", "text", "message"), MISTAKES, ids=[m[0] for m in MISTAKES])
def test_a_mistake_gets_its_precise_error(what: str, text: str, message: str) -> None:
    with pytest.raises(mockkafka.ScenarioError) as info:
        load_text(text, file="s.yaml")
    assert str(info.value).startswith(message), str(info.value)
    assert info.value.file == "s.yaml" and info.value.line is not None


def test_every_mistake_of_a_file_is_listed_not_only_the_first() -> None:
    text = STEP + "move_leader: {topic: t, partition: 0, too: 2}\n"
    with pytest.raises(mockkafka.ScenarioError) as info:
        load_text(text, file="s.yaml")
    msg = str(info.value)
    assert "unknown key 'too' (did you mean to?)" in msg
    assert "1 more mistake(s):\n  s.yaml:3:18: steps[0].move_leader: missing 'to'" in msg


def test_on_is_a_key_not_a_yaml_11_boolean() -> None:
    sc = load_text(STEP + "fault: {on: Fetch, error: NONE}\n")
    assert sc.faults[0].match.api == ("Fetch",)


def test_a_scenario_error_is_a_config_error() -> None:
    assert issubclass(mockkafka.ScenarioError, mockkafka.ConfigError)


def test_an_unknown_library_name_gets_a_did_you_mean() -> None:
    with pytest.raises(mockkafka.ScenarioError, match=re.escape("(did you mean leader-failover?)")):
        mockkafka.Scenario.load("leader-failovr")


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    with pytest.raises(mockkafka.ScenarioError, match="no such scenario file"):
        mockkafka.Scenario.load(missing)


def test_a_file_loads_by_path(tmp_path: Path) -> None:
    f = tmp_path / "mine.yaml"
    f.write_text("name: mine\ndescription: d\n")
    assert mockkafka.Scenario.load(f).name == "mine"
    assert mockkafka.Scenario.load(str(f)).source == str(f)

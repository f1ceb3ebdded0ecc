"""The runner: steps in order on start conditions, seed data reproducible from a seed,
expectations reported like test failures; sync, trio and asyncio forms."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import trio

import mockkafka
from mockkafka import Scenario
from tests.robustness._wire import fetch_partition

VERBS_ONLY = """
name: verbs-only
cluster: {brokers: 2}
topics: {orders: {partitions: 2, replication_factor: 2}}
seed:
  orders: {count: 10, partition: 0, value: "v{{ index }}"}
steps:
  - produce: {topic: orders, value: late, partition: 1}
  - after: {records: {topic: orders, count: 11}}
    stop_broker: {broker: 2}
  - after: {event: {event: broker_stopped, broker: 2}}
    start_broker: {broker: 2}
  - commit_offsets: {group: g, offsets: [{topic: orders, partition: 0, offset: 10}]}
  - after: {committed: {group: g, topic: orders, partition: 0, offset: 10}}
    move_leader: {topic: orders, partition: all, to: next}
  - after: {time: 50ms}
    fault: {name: later, on: Fetch, once: true, error: NOT_LEADER_OR_FOLLOWER}
expect:
  records: {topic: orders, count: 11}
  committed: {group: g, topic: orders, partition: 0}
  no_data_loss: [orders]
"""


def test_steps_run_in_order_on_their_conditions_and_expect_holds() -> None:
    sc = Scenario.from_yaml(VERBS_ONLY)
    with mockkafka.Cluster(brokers=2) as c:
        sc.run(c, timeout=20)
        # stop_broker moved partition 1 away from broker 2; move_leader moved both to "next"
        parts = c.topic("orders").partitions
        assert [(p.leader, p.leader_epoch) for p in parts] == [(2, 1), (2, 2)]
        assert [r.name for r in c.faults.rules()] == ["later"]
        c.faults.clear()


def test_the_trio_form_plays_on_an_async_cluster() -> None:
    sc = Scenario.from_yaml(VERBS_ONLY)

    async def main() -> None:
        async with mockkafka.open_cluster(brokers=2) as c:
            await sc.run_async(c)
            assert c.committed_offsets("g") == {("orders", 0): 10}
            c.faults.clear()

    trio.run(main)


def test_the_asyncio_form_plays_on_a_threaded_cluster() -> None:
    sc = Scenario.from_yaml(VERBS_ONLY)
    with mockkafka.Cluster(brokers=2) as c:
        asyncio.run(sc.run_async(c))
        assert len(c.topic("orders").records()) == 11
        c.faults.clear()


def test_every_failed_expectation_and_step_not_run_is_listed() -> None:
    sc = Scenario.from_yaml(
        """
name: failing
topics: {t: {}}
steps:
  - fault: {name: idle, on: DeleteTopics, once: true, error: UNKNOWN_SERVER_ERROR}
  - when: {group: nobody}
    timeout: 100ms
    trigger_rebalance: {group: nobody}
  - stop_broker: {broker: 1}
expect:
  records: {topic: t, at_least: 1}
  committed: {group: g, topic: t, offset: 1}
  group_state: {group: nobody}
  transaction_state: {transactional_id: tx, state: CompleteCommit}
  traffic: {api: Produce, at_least: 1}
  rules_fired: all
"""
    )
    with mockkafka.Cluster() as c:
        with pytest.raises(AssertionError) as info:
            sc.run(c, timeout=10)
        c.faults.clear()
    lines = str(info.value).splitlines()
    assert lines[0] == "scenario 'failing': 8 expectation(s) failed:"
    assert lines[1].startswith(
        "  - step 2 trigger_rebalance never ran: {'when': {'group': 'nobody', 'state': 'Stable'}}: "
        "not reached within 0.1 s; last seen: the group does not exist"
    )
    assert lines[2:8] == [
        "  - step 3 stop_broker never ran (an earlier step did not)",
        "  - Records: t holds 0 records, expected >= 1",
        "  - Committed: group 'g' committed None on t-0, expected >= 1",
        "  - GroupState: group 'nobody' does not exist",
        "  - TransactionState: transactional id 'tx' is unknown",
        "  - TrafficCount: 0 Produce exchanges, expected >= 1",
    ]
    assert lines[8].startswith("  - RulesFired: fault 'idle' never fired (matched 0x)")
    assert lines[9] == "timeline:"


def test_the_report_says_why_a_fault_did_not_act() -> None:
    """A record edit on a topic whose only batch cannot be cut: the failed rules_fired
    expectation says why, and so does the section after the timeline."""
    sc = Scenario.from_yaml(
        """
name: cannot-cut
topics: {t: {}}
seed:
  t: {count: 1, value: "v"}
steps:
  - fault: {name: cut, on: Fetch, topic: t, partial_trailing_batch: true}
  - fault: {name: idle, on: DeleteTopics, error: UNKNOWN_SERVER_ERROR}
expect:
  rules_fired: all
"""
    )
    with mockkafka.Cluster() as c:
        thread = sc.start(c)
        fetch_partition(c.bootstrap_servers, "t")
        with pytest.raises(AssertionError) as info:
            thread.check()
        thread.stop()
        c.faults.clear()
    text = str(info.value)
    assert (
        "RulesFired: fault 'cut' never fired (matched 1x): Rule(match=Match(api=('Fetch',), "
        "topic='t')" in text
    )
    assert "declined 1x because: 1x partial_trailing_batch: the answer held a single batch" in text
    tail = text.split("faults that did not act:\n")[1].splitlines()
    assert tail[0].startswith("  cut fired 0x, matched 1x -- matched 1x, declined 1x because:")
    assert tail[1] == (
        "  idle fired 0x, matched 0x -- no DeleteTopics request reached the cluster while it "
        "was active (the clients sent Fetch)"
    )


def test_a_verb_the_cluster_refuses_stops_the_timeline_with_its_error() -> None:
    sc = Scenario.from_yaml(
        # no consumer ever made group g: only the cluster knows, when the step runs
        "name: refused\nsteps:\n  - trigger_rebalance: {group: g}\n"
        "  - restart_broker: {broker: 1}\n"
    )
    with mockkafka.Cluster() as c, pytest.raises(AssertionError) as info:
        sc.run(c, timeout=10)
    msg = str(info.value)
    assert "step 1 trigger_rebalance failed: " in msg and "GROUP_ID_NOT_FOUND" in msg
    assert "step 2 restart_broker never ran (an earlier step did not)" in msg


def test_a_step_argument_kafka_refuses_names_the_file_and_line_of_the_step(
    tmp_path: Path,
) -> None:
    story = tmp_path / "unclean.yaml"
    story.write_text(
        "name: unclean\n"
        "topics: {orders: {partitions: 1}}\n"
        "seed: {orders: {count: 5, partition: 0}}\n"
        "steps:\n"
        "  - truncate_log: {topic: orders, partition: 0, to_offset: 100}\n"
    )
    with mockkafka.Cluster() as c, pytest.raises(AssertionError) as info:
        Scenario.load(story).run(c, timeout=10)
    assert (
        f"{story}:5: step 1 truncate_log failed: OFFSET_OUT_OF_RANGE: truncate_log: to_offset "
        "100 is outside orders-0's log: give 0 (log start offset) to 5 (high watermark)"
    ) in str(info.value)


def test_seed_data_is_reproducible_from_the_random_seed() -> None:
    text = """
name: seeded
random_seed: {seed}
topics: {{t: {{partitions: 3}}}}
seed:
  t: {{count: 20, key: "{{{{ faker.uuid4 }}}}", value: {{faker: json, fields: {{name: name, email: email}}}}}}
"""

    def records(seed: int) -> list[tuple[int, bytes | None, bytes | None]]:
        sc = Scenario.from_yaml(text.format(seed=seed))
        with mockkafka.Cluster() as c:
            sc.run(c, timeout=10)
            return [
                (p.partition, r.key, r.value) for p in c.topic("t").partitions for r in p.records()
            ]

    first, again, other = records(1), records(1), records(2)
    assert first == again and first != other and len(first) == 20
    assert all(b'"email":' in v for _p, _k, v in first if v is not None)


def test_a_scenario_needing_more_brokers_than_the_cluster_has_is_refused() -> None:
    sc = Scenario.load("leader-failover")
    with (
        mockkafka.Cluster(brokers=1) as c,
        pytest.raises(mockkafka.MockKafkaError, match=r"needs 3 brokers; the cluster has 1"),
    ):
        sc.start(c)


def test_stop_cancels_waiting_steps_and_check_reports_them() -> None:
    sc = Scenario.from_yaml(
        "name: waits\nsteps:\n  - after: {requests: {api: Produce, count: 1}}\n"
        "    trigger_rebalance: {group: g}\n"
    )
    with mockkafka.Cluster() as c:
        run = sc.start(c)
        assert not run.wait(0.1)
        run.stop()
        assert run.failures() == [
            "step 1 trigger_rebalance never ran: the scenario was stopped before its start "
            "condition ({'after': {'requests': {'api': 'Produce', 'count': 1}}}) held"
        ]


ACL_STEPS = """
name: acl-steps
cluster:
  authorizer: true
  super_users: ["User:admin"]
  security_protocol: SASL_PLAINTEXT
  users: {admin: admin-secret, alice: alice-secret}
  auto_create_topics: false
topics: {orders: {}}
steps:
  - allow: {principal: "User:alice", operations: [write, describe], topic: orders}
  - allow: {principal: "User:alice", operations: read, group: billing-, prefixed: true}
  - after: {records: {topic: orders, count: 1}}
    deny: {principal: "User:*", operations: write, topic: "*"}
  - remove_acls: {principal: "User:alice", group: billing-}
expect:
  records: {topic: orders, count: 1}
"""


def test_acl_steps_let_a_real_producer_in_and_shut_it_out_again() -> None:
    from confluent_kafka import KafkaError, Producer

    sc = Scenario.from_yaml(ACL_STEPS)
    with mockkafka.Cluster(brokers=sc.cluster.brokers, **dict(sc.cluster.options)) as c:

        def produce(value: bytes) -> KafkaError | None:
            errors: list[KafkaError | None] = []
            p = Producer({**c.client_config(user="alice"), "message.timeout.ms": 5000})
            p.produce("orders", value, on_delivery=lambda err, _msg: errors.append(err))
            p.flush(10)
            assert len(errors) == 1
            return errors[0]

        run = sc.start(c)  # returns once the steps without a start condition ran
        assert len(c.acls()) == 3
        assert produce(b"allowed") is None
        assert run.wait(10)
        run.check()
        assert [(v.permission, v.principal, v.operation, v.resource_name) for v in c.acls()] == [
            ("ALLOW", "User:alice", "WRITE", "orders"),
            ("ALLOW", "User:alice", "DESCRIBE", "orders"),
            ("DENY", "User:*", "WRITE", "*"),
        ]
        err = produce(b"denied")
        assert err is not None and err.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
        assert [r.value for r in c.topic("orders").records()] == [b"allowed"]


SETTLING = """
name: settling
cluster: {brokers: 1}
topics: {orders: {partitions: 1}}
steps:
  - produce: {topic: orders, value: one}
expect:
  committed: {group: g, topic: orders, partition: 0, offset: 1}
"""


def test_check_gives_the_app_time_to_reach_the_expected_end_state() -> None:
    # issue 33: run.check() right after run.wait() judged rebalance-storm's group while its
    # last rebalance was still under way; expect: is the state the app reaches after the
    # last step, so a failed expectation is looked at again for a while
    import threading

    sc = Scenario.from_yaml(SETTLING)
    with mockkafka.Cluster() as c:
        run = sc.start(c)
        assert run.wait(10)
        with pytest.raises(AssertionError, match="committed"):
            run.check(settle=0)  # judged at once: the app has not committed yet
        app = threading.Timer(0.3, lambda: c.commit_offsets("g", {("orders", 0): 1}))
        app.start()
        try:
            run.check()  # the commit lands 0.3 s later, within the settle time
        finally:
            app.join(5)
        with pytest.raises(mockkafka.ConfigError, match="seconds >= 0"):
            run.check(settle=-1)


def test_committed_to_the_end_owes_no_commit_on_a_partition_with_nothing_to_read() -> None:
    # issue 33's first-use tier: a keyless producer's sticky partitioner left one of three
    # partitions empty, and committed: {offset: end} failed there though the app had read
    # (and committed) everything there was
    sc = Scenario.from_yaml(
        "name: ends\ntopics: {orders: {partitions: 2}}\n"
        "expect:\n  committed: {group: g, topic: orders, offset: end}\n"
    )
    with mockkafka.Cluster() as c:
        run = sc.start(c)
        assert run.wait(10)
        c.produce("orders", b"x", partition=0)
        assert run.failures() == [
            "Committed: group 'g' committed None on orders-0, expected >= 1 (the high watermark)"
        ]
        c.commit_offsets("g", {("orders", 0): 1})
        assert run.failures() == []  # orders-1 is empty: nothing owed

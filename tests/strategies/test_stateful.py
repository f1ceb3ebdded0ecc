"""ClusterStateMachine with a real producer; ready-made invariants catch what they promise."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Mapping
from typing import Any, ClassVar

import pytest
from confluent_kafka import Producer
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import invariant, rule, run_state_machine_as_test

from mockkafka.stateful import (
    ClusterStateMachine,
    ClusterWatch,
    Ledger,
    check_no_shared_partitions,
    close_consumers,
)

pytestmark = pytest.mark.interop


class IdempotentProducerMachine(ClusterStateMachine):
    """Acknowledged messages are in the log exactly once, whatever the plan does."""

    brokers = 2
    topics: ClassVar[Mapping[str, int]] = {"orders": 2}
    fault_apis = ("Produce", "Metadata")
    # what an idempotent producer retries (fatal codes fail the producer, as they should)
    fault_errors = (
        "NOT_LEADER_OR_FOLLOWER",
        "LEADER_NOT_AVAILABLE",
        "NOT_ENOUGH_REPLICAS",
        "NOT_ENOUGH_REPLICAS_AFTER_APPEND",
        "REQUEST_TIMED_OUT",
        "KAFKA_STORAGE_ERROR",
    )

    def __init__(self) -> None:
        super().__init__()
        self.producer = Producer(
            {
                "bootstrap.servers": self.cluster.bootstrap_servers,
                "enable.idempotence": True,
                "retry.backoff.ms": 10,
                "message.timeout.ms": 10000,
                "log_level": 0,
            }
        )
        self.sent = 0

    @rule()
    def produce(self) -> None:
        value = f"m{self.sent}".encode()
        self.sent += 1

        def delivered(err: Any, msg: Any) -> None:
            if err is None:
                self.ledger.acknowledged("orders", msg.value())

        self.producer.produce("orders", value, on_delivery=delivered)
        self.producer.flush(12)

    @invariant()
    def acknowledged_exactly_once_in_the_log(self) -> None:
        log = Ledger()
        log.acked = self.ledger.acked
        for p in self.cluster.topic("orders").partitions:
            for r in p.records():
                log.consumed("orders", r.value or b"")
        log.check_exactly_once()

    def teardown(self) -> None:
        self.producer.flush(1)
        super().teardown()


TestIdempotentProducer = IdempotentProducerMachine.TestCase
TestIdempotentProducer.settings = settings(max_examples=15, stateful_step_count=5, deadline=None)


class TruncatingMachine(ClusterStateMachine):
    """A plan that may truncate the log: ClusterWatch must notice the high watermark go back."""

    fault_verbs = ("truncate_log",)

    @rule()
    def write(self) -> None:
        self.cluster.produce("orders", b"x")


def test_cluster_watch_catches_a_high_watermark_going_back() -> None:
    with pytest.raises(AssertionError, match=r"high_watermark of .* went back"):
        run_state_machine_as_test(
            TruncatingMachine,
            settings=settings(max_examples=100, stateful_step_count=10, database=None),
        )


def test_ledger_tells_lost_from_duplicated() -> None:
    ledger = Ledger()
    ledger.acknowledged("t", b"a")
    ledger.acknowledged("t", b"b")
    ledger.consumed("t", b"a")
    with pytest.raises(AssertionError, match=r"1 acknowledged message\(s\) never consumed"):
        ledger.check_at_least_once()
    ledger.consumed("t", b"b")
    ledger.consumed("t", b"b")
    ledger.check_at_least_once()
    with pytest.raises(AssertionError, match="consumed more than once"):
        ledger.check_exactly_once()


def test_no_partition_owned_twice() -> None:
    check_no_shared_partitions("g", {"m1": {"t": [0]}, "m2": {"t": [1]}, "m3": None})
    with pytest.raises(AssertionError, match="t-1 is owned by 'm1' and 'm2'"):
        check_no_shared_partitions("g", {"m1": {"t": [0, 1]}, "m2": {"t": [1]}})


def test_cluster_watch_checks_committed_offsets_are_in_range() -> None:
    import mockkafka

    with mockkafka.Cluster() as cluster:
        cluster.create_topic("orders")
        cluster.produce("orders", b"a")
        watch = ClusterWatch(cluster)
        cluster.commit_offsets("g", {("orders", 0): 1})
        watch.check()
        cluster.commit_offsets("g", {("orders", 0): 5})
        with pytest.raises(AssertionError, match="outside"):
            watch.check()


def _recording_consumer(cluster: Any, group: str, calls: list[tuple[str, str]]) -> Any:
    from confluent_kafka import Consumer

    def record(what: str) -> Any:
        return lambda consumer, partitions: calls.append((what, threading.current_thread().name))

    consumer = Consumer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "group.id": group,
            "heartbeat.interval.ms": 100,
            "log_level": 0,
        }
    )
    consumer.subscribe(["orders"], on_assign=record("assign"), on_revoke=record("revoke"))
    return consumer


def test_close_consumers_serves_every_rebalance_before_close() -> None:
    """Regression (a run that never ended): a bare close() ran the consumer's revocation
    inside close(), where confluent-kafka calls rd_kafka_assign holding the GIL and a group
    that terminates meanwhile never answers; the stateful suite froze for 25 minutes.
    close_consumers serves every rebalance callback on the caller's thread first."""
    import mockkafka

    calls: list[tuple[str, str]] = []
    with mockkafka.Cluster(topics={"orders": 2}) as cluster:
        owner = _recording_consumer(cluster, "polled", calls)
        for _ in range(100):  # owns its partitions: its revocation is pending at close
            owner.poll(0.1)
            if owner.assignment():
                break
        assert owner.assignment(), "the consumer never got its partitions"
        # never polled: its assignment waits in its queue, undelivered, at close
        idle = _recording_consumer(cluster, "never-polled", calls)
        cluster.wait_for_group("never-polled", members=1)
        close_consumers(owner, idle)
        closer = "mockkafka-close-consumers"
        assert ("revoke", threading.current_thread().name) in calls, calls
        assert all(thread != closer for _, thread in calls), calls


class ConsumerGroupMachine(ClusterStateMachine):
    """Two real consumers in one group under drawn rebalances, coordinator moves and group
    errors: the cluster invariants hold (no partition owned twice in a stable group,
    generations and epochs never go back, committed offsets within the log)."""

    brokers = 2
    topics: ClassVar[Mapping[str, int]] = {"orders": 3}
    groups = ("billing",)
    fault_apis = ("JoinGroup", "SyncGroup", "Heartbeat", "OffsetCommit", "FindCoordinator")
    fault_verbs = ("error", "delay", "trigger_rebalance", "move_coordinator", "coordinator_loading")
    fault_max_ms = 100

    def __init__(self) -> None:
        super().__init__()
        for i in range(6):
            self.cluster.produce("orders", f"o{i}", partition=i % 3)
        self.consumers = [self._consumer() for _ in range(2)]

    def _consumer(self) -> Any:
        from confluent_kafka import Consumer

        c = Consumer(
            {
                "bootstrap.servers": self.cluster.bootstrap_servers,
                "group.id": "billing",
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
                "session.timeout.ms": 6000,
                "heartbeat.interval.ms": 100,
                "retry.backoff.ms": 10,
                "fetch.wait.max.ms": 10,
                "log_level": 0,
            }
        )
        c.subscribe(["orders"])
        return c

    @rule(which=st.sampled_from([0, 1]))
    def poll_and_commit(self, which: int) -> None:
        from confluent_kafka import KafkaException

        consumer = self.consumers[which]
        batch = consumer.consume(10, timeout=0.1)
        if any(m.error() is None for m in batch):
            with contextlib.suppress(KafkaException):
                consumer.commit(asynchronous=False)

    def teardown(self) -> None:
        # With no fault in the way (a consumer leaving answers its own LeaveGroup); never a
        # bare close(), which may run a rebalance callback that freezes the interpreter
        # (see close_consumers).
        self.cluster.faults.clear()
        try:
            close_consumers(*self.consumers)
        finally:
            super().teardown()


TestConsumerGroup = ConsumerGroupMachine.TestCase
TestConsumerGroup.settings = settings(max_examples=10, stateful_step_count=8, deadline=None)

"""Stateful fuzzing of Kafka clients: a hypothesis state machine that owns a cluster.

Theory of operation
-------------------
:class:`ClusterStateMachine` is a :class:`hypothesis.stateful.RuleBasedStateMachine`. Each
example (each run of the machine) gets a fresh cluster made from the class attributes
(``brokers``, ``topics``, ``cluster_options``) and torn down at the end, so examples never
see each other's state. The machine brings one rule of its own, ``apply_fault``, that draws
one step of a fault plan (a fault rule or a cluster verb, from
:func:`mockkafka.strategies.fault_plans` restricted by ``fault_verbs``, ``fault_apis``,
``fault_errors``, ``groups``, ``transactional_ids``) and applies it. The subclass adds rules
that run the client under test and invariants that must hold after every step; hypothesis
interleaves them, and shrinks a failure to the fewest steps that still break an invariant.

Consumers of a group are closed with :func:`close_consumers` (see there why not with a bare
``close()``).

Ready-made checks: :class:`Ledger` (acknowledged vs consumed messages: exactly once, at least
once) and :class:`ClusterWatch` (offsets and high watermarks monotonic, high watermark <=
log end, committed offsets within the log, leader epochs and group generations never go
back, no partition owned by two members of a stable group). Each raises AssertionError
naming what broke.

The steps applied so far are ``self.plan`` (a :class:`~mockkafka.strategies.FaultPlan`):
on a failure its ``to_yaml()`` is printed, ready to save under ``scenarios/``.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

import hypothesis.strategies as st
from hypothesis import note
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from mockkafka._api.cluster import Cluster
from mockkafka.scenario.model import Step
from mockkafka.strategies._plans import FaultPlan, apply_step, fault_plans, missing_resource
from mockkafka.views import group_view

__all__ = [
    "ClusterStateMachine",
    "ClusterWatch",
    "Ledger",
    "check_no_shared_partitions",
    "close_consumers",
    "fault_steps",
    "register_profiles",
]

#: (examples per property test, steps per state machine run) of each profile.
PROFILES: dict[str, tuple[int, int]] = {"ci": (100, 10), "long": (2000, 50)}


def register_profiles(*, load: str | None = "ci") -> None:
    """Register the hypothesis profiles ``ci`` (bounded: 100 examples, 10 steps per state
    machine run) and ``long`` (nightly: 2000 examples, 50 steps), both without deadlines
    (a client's first request takes as long as it takes), and load ``load``.

    Call it from a ``conftest.py``; ``pytest --hypothesis-profile=long`` then switches::

        from mockkafka.stateful import register_profiles

        register_profiles()
    """
    from hypothesis import HealthCheck, settings

    for name, (examples, steps) in PROFILES.items():
        settings.register_profile(
            name,
            max_examples=examples,
            stateful_step_count=steps,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
        )
    if load is not None:
        settings.load_profile(load)


def fault_steps(**restrictions: Any) -> st.SearchStrategy[Step]:
    """One step of a fault plan (same arguments as :func:`fault_plans`, without the step
    counts and times): what ``apply_fault`` draws."""
    return fault_plans(min_steps=1, max_steps=1, timed=False, **restrictions).map(
        lambda plan: plan.steps[0]
    )


class Ledger:
    """What producers had acknowledged and what consumers saw, to check delivery guarantees.

    Call :meth:`acknowledged` when a produce is acknowledged (delivery report without error,
    ``send().get()`` returned), :meth:`consumed` for each record the code under test
    processed. Messages are identified by ``(topic, value)`` -- make values unique.
    """

    def __init__(self) -> None:
        self.acked: Counter[tuple[str, bytes]] = Counter()
        self.seen: Counter[tuple[str, bytes]] = Counter()

    def acknowledged(self, topic: str, value: bytes) -> None:
        self.acked[(topic, value)] += 1

    def consumed(self, topic: str, value: bytes) -> None:
        self.seen[(topic, value)] += 1

    def missing(self) -> list[tuple[str, bytes]]:
        """Acknowledged messages never consumed."""
        return sorted(k for k in self.acked if k not in self.seen)

    def check_at_least_once(self) -> None:
        """Every acknowledged message was consumed (duplicates allowed)."""
        missing = self.missing()
        assert not missing, f"{len(missing)} acknowledged message(s) never consumed: {missing[:5]}"

    def check_exactly_once(self) -> None:
        """Every acknowledged message was consumed once, and nothing else was consumed."""
        self.check_at_least_once()
        dupes = sorted(k for k, n in self.seen.items() if n > 1)
        assert not dupes, f"{len(dupes)} message(s) consumed more than once: {dupes[:5]}"
        extra = sorted(k for k in self.seen if k not in self.acked)
        assert not extra, f"{len(extra)} message(s) consumed but never acknowledged: {extra[:5]}"


class ClusterWatch:
    """Cluster invariants that hold whatever faults a plan applies (no truncation verbs).

    Call :meth:`check` after every step (an ``@invariant``); it reads the cluster's state on
    its loop and compares it with the previous call. ``allow_truncation=True`` accepts high
    watermarks going back (plans with ``truncate_log``).
    """

    def __init__(self, cluster: Any, *, allow_truncation: bool = False) -> None:
        self.cluster = cluster
        self.allow_truncation = allow_truncation
        self._last: dict[str, dict[Any, int]] = {}

    def snapshot(self) -> dict[str, dict[Any, int]]:
        """{"high_watermark"|"log_start_offset"|"log_end_offset"|"leader_epoch"|
        "generation"|"committed": {key: value}} read now; also checks the per-snapshot
        invariants (log start <= high watermark <= log end, committed offsets in range,
        no partition owned twice in a stable group)."""

        def read(state: Any) -> dict[str, dict[Any, int]]:
            snap: dict[str, dict[Any, int]] = {
                k: {}
                for k in (
                    "high_watermark",
                    "log_start_offset",
                    "log_end_offset",
                    "leader_epoch",
                    "generation",
                    "committed",
                )
            }
            for p in state.iter_partitions():
                tp = (p.topic, p.index)
                snap["high_watermark"][tp] = p.log.high_watermark
                snap["log_start_offset"][tp] = p.log.log_start_offset
                snap["log_end_offset"][tp] = p.log.log_end_offset
                snap["leader_epoch"][tp] = p.leader_epoch
            for gid in state.groups.group_ids():
                view = group_view(state, gid)
                snap["generation"][gid] = view.generation_id
                for tp, off in view.committed_offsets().items():
                    snap["committed"][(gid, *tp)] = off
                if view.state == "Stable" and view.type != "share":  # share groups share
                    check_no_shared_partitions(gid, view.assignments)
            return snap

        snap: dict[str, dict[Any, int]] = self.cluster.call(read)
        for tp, hw in snap["high_watermark"].items():
            start, end = snap["log_start_offset"][tp], snap["log_end_offset"][tp]
            assert start <= hw <= end, (
                f"{tp}: expected log_start_offset {start} <= high_watermark {hw} <= log end {end}"
            )
        for (gid, topic, partition), off in snap["committed"].items():
            hw_now = snap["high_watermark"].get((topic, partition))
            if hw_now is not None and not self.allow_truncation:
                assert 0 <= off <= hw_now, (
                    f"group {gid!r} committed offset {off} for {topic}-{partition}, "
                    f"outside [0, high_watermark {hw_now}]"
                )
        return snap

    def check(self) -> None:
        """Check the snapshot invariants, then that nothing went back since the last call."""
        snap = self.snapshot()
        monotonic = ["leader_epoch", "generation", "log_start_offset"]
        if not self.allow_truncation:
            monotonic += ["high_watermark", "log_end_offset"]
        for kind in monotonic:
            before = self._last.get(kind, {})
            for key, now in snap[kind].items():
                was = before.get(key)
                assert was is None or now >= was, f"{kind} of {key} went back: {was} -> {now}"
        self._last = snap


def check_no_shared_partitions(
    group: str, assignments: Mapping[str, Mapping[str, Iterable[int]] | None]
) -> None:
    """No partition is assigned to two members (``{member_id: {topic: [partitions]}}``, as
    :attr:`mockkafka.GroupView.assignments` gives it, or as consumers report it)."""
    owner: dict[tuple[str, int], str] = {}
    for member, assignment in assignments.items():
        for topic, parts in (assignment or {}).items():
            for p in parts:
                other = owner.setdefault((topic, p), member)
                assert other == member, (
                    f"group {group!r}: {topic}-{p} is owned by {other!r} and {member!r}"
                )


#: How long close_consumers() lets a consumer's close() take (a LeaveGroup queued behind a
#: parked JoinGroup on the coordinator connection takes librdkafka's 5 s request timeout).
CLOSE_TIMEOUT_S = 20.0
#: How long close_consumers() waits for a revocation the group defers (see _drain_rebalances).
SETTLE_S = 1.0


def close_consumers(*consumers: Any, timeout: float = CLOSE_TIMEOUT_S) -> None:
    """Close confluent-kafka consumers of a group, from the thread that polled them, so
    that no rebalance callback runs inside ``close()``.

    Why: confluent-kafka serves a closing consumer's rebalance callback inside ``close()``,
    and the callback (yours, or its fallback when yours does not assign) calls librdkafka's
    ``rd_kafka_assign()`` *holding the GIL*, waiting for the consumer's group to answer.
    A group that finishes terminating in the meantime drops that request unanswered
    (librdkafka 2.10 and later destroy every op that reaches a terminated group), so the
    call waits forever -- with the GIL held: every Python thread stops, the in-process
    cluster, pytest-timeout's timer thread and any ``join(timeout)`` with it. A suite that
    closes consumers whose rebalance was still queued (never polled since) hangs, rarely
    and for good.

    So each consumer is first unsubscribed and polled on the calling thread until every
    rebalance callback is served and it owns no partition -- its group is alive then, and
    answers at once -- and only then closed, with nothing left for ``close()`` to deliver.
    Records polled meanwhile are dropped uncommitted (the group hands them out again), as
    ``close()`` would drop them. The closes run on a helper thread joined for ``timeout``
    seconds in all; AssertionError names the consumers whose ``close()`` did not return.
    """
    deadline = time.monotonic() + timeout
    for consumer in consumers:
        _drain_rebalances(consumer, deadline)
    stuck: list[str] = []

    def close_all() -> None:
        for i, consumer in enumerate(consumers):
            stuck.append(f"consumer {i} ({consumer!r})")
            consumer.close()
            stuck.pop()

    closer = threading.Thread(target=close_all, name="mockkafka-close-consumers", daemon=True)
    closer.start()
    closer.join(max(deadline - time.monotonic(), 1.0))
    assert not closer.is_alive(), (
        f"{stuck[-1] if stuck else 'a consumer'}: close() did not return in {timeout:g} s"
    )


def _drain_rebalances(consumer: Any, deadline: float) -> None:
    """Unsubscribe ``consumer`` and poll it until its queue holds no rebalance: two polls
    in a row find the queue empty and it owns no partition (an assignment served late is
    followed by its revocation, queued a moment later). A group that defers the revocation
    (its coordinator moving) gets ``SETTLE_S`` of quiet; close() then revokes internally."""
    from confluent_kafka import KafkaException

    try:
        consumer.unsubscribe()
    except (KafkaException, RuntimeError):  # closed already, or a fatal error: nothing to do
        return
    quiet_since: float | None = None
    owned_before: Any = None
    while time.monotonic() < deadline:
        try:
            msg = consumer.poll(0.05)
            owned = consumer.assignment()
        except (KafkaException, RuntimeError):
            return
        now = time.monotonic()
        if msg is not None or owned != owned_before:
            quiet_since, owned_before = None, owned
        elif quiet_since is None:
            quiet_since = now
        elif not owned or now - quiet_since >= SETTLE_S:
            return


class ClusterStateMachine(RuleBasedStateMachine):
    """Base class for fuzzing a client against a cluster under a drawn fault plan.

    Subclass it, set the class attributes, add ``@rule`` methods that drive the client and
    ``@invariant`` methods that check it; then ``TestMine = MyMachine.TestCase``::

        class Worker(ClusterStateMachine):
            topics = {"orders": 1}
            groups = ("billing",)

            @rule()
            def process(self):
                ...  # run one step of the client against self.cluster

            @invariant()
            def nothing_lost(self):
                self.ledger.check_at_least_once()

    Class attributes: ``brokers``, ``topics`` ({name: partitions}), ``replication_factor``
    (default: every broker), ``groups``, ``transactional_ids``, ``cluster_options``
    (ClusterConfig fields), ``fault_verbs``, ``fault_apis``, ``fault_errors``,
    ``fault_max_ms`` (the restrictions of :func:`~mockkafka.strategies.fault_plans`),
    ``watch_cluster`` (run :class:`ClusterWatch` after every step; default True).
    Per example: ``self.cluster`` (started, topics created), ``self.ledger``
    (:class:`Ledger`), ``self.watch`` and ``self.plan`` (the steps applied so far).
    Override :meth:`teardown` to close clients, calling ``super().teardown()`` last;
    close consumers of a group with :func:`close_consumers`.
    """

    brokers: ClassVar[int] = 1
    topics: ClassVar[Mapping[str, int]] = {"orders": 1}
    replication_factor: ClassVar[int | None] = None
    groups: ClassVar[tuple[str, ...]] = ()
    transactional_ids: ClassVar[tuple[str, ...]] = ()
    cluster_options: ClassVar[Mapping[str, Any]] = {}
    fault_verbs: ClassVar[tuple[str, ...] | None] = None
    fault_apis: ClassVar[tuple[str, ...] | None] = None
    fault_errors: ClassVar[tuple[str, ...] | None] = None
    fault_max_ms: ClassVar[int] = 200
    watch_cluster: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        steps = fault_steps(
            topics=dict(cls.topics),
            groups=cls.groups,
            transactional_ids=cls.transactional_ids,
            brokers=cls.brokers,
            apis=cls.fault_apis,
            errors=cls.fault_errors,
            verbs=cls.fault_verbs,
            max_ms=cls.fault_max_ms,
        )

        def apply_fault(self: ClusterStateMachine, step: Step) -> None:
            self.apply_step(step)

        apply_fault.__qualname__ = f"{cls.__name__}.apply_fault"
        cls.apply_fault = rule(step=steps)(apply_fault)

    def __init__(self) -> None:
        super().__init__()
        self.cluster = Cluster(self.brokers, **dict(self.cluster_options)).start()
        rf = self.replication_factor or self.brokers
        for name, partitions in self.topics.items():
            self.cluster.create_topic(name, partitions=partitions, replication_factor=rf)
        self.ledger = Ledger()
        self.watch = ClusterWatch(self.cluster)
        self._steps: list[Step] = []

    @property
    def plan(self) -> FaultPlan:
        """The fault plan applied so far in this example."""
        return FaultPlan(tuple(self._steps), self.brokers, tuple(self.topics.items()))

    def apply_step(self, step: Step) -> None:
        """Apply one plan step (a fault or a verb) and remember it in :attr:`plan`.

        A verb Kafka would refuse now -- on a group or transaction the cluster does not
        know yet (the client has not joined or begun), or an offset beyond the records
        written so far -- is skipped: it could not mean anything, and hypothesis shrinks it
        away."""
        why = missing_resource(self.cluster, step)
        if why is not None:
            note(f"skipped {step!r}: {why}")
            return
        self._steps.append(step)
        apply_step(self.cluster, step)

    @invariant()
    def cluster_invariants(self) -> None:
        if self.watch_cluster:
            self.watch.check()

    def teardown(self) -> None:
        self.cluster.stop()
        self.cluster.raise_broker_errors()

"""fault_plans(): plans are scenario steps, honour their restrictions, print as Python and as
scenario files, shrink to the fewest steps, and apply to a running cluster."""

from __future__ import annotations

import time

from hypothesis import find, given, settings

import mockkafka
import mockkafka.faults.model as faults_model
import mockkafka.scenario.model as scenario_model
from mockkafka.faults.coverage import UNTRACKED_VERBS, action_kind, universe
from mockkafka.faults.model import Error
from mockkafka.scenario.model import AfterRequests, At, Fault, Step, Verb
from mockkafka.strategies import FaultPlan, fault_plans

NAMESPACE = {**vars(scenario_model), **vars(faults_model), "FaultPlan": FaultPlan}
EVERYTHING = fault_plans(
    topics={"orders": 2, "invoices": 1},
    groups=["billing"],
    transactional_ids=["tx-1"],
    brokers=3,
    verbs=list(mockkafka.strategies.VERBS),
    max_steps=4,
)


@given(plan=EVERYTHING)
def test_a_plan_prints_as_python_and_as_a_scenario_file(plan: FaultPlan) -> None:
    assert eval(repr(plan), NAMESPACE) == plan
    assert FaultPlan.from_yaml(plan.to_yaml()) == plan
    assert all(isinstance(s, Step) for s in plan.steps)


@given(
    plan=fault_plans(
        topics=["orders"],
        apis=["Fetch", "Produce"],
        errors=["NOT_LEADER_OR_FOLLOWER", "KAFKA_STORAGE_ERROR"],
        verbs=["error", "throttle"],
    )
)
def test_a_plan_stays_inside_its_restrictions(plan: FaultPlan) -> None:
    for step in plan.steps:
        action = step.action
        assert isinstance(action, Fault)
        assert set(action.match.api) <= {"Fetch", "Produce"}
        assert action.match.topic in (None, "orders")
        for a in action.actions:
            if isinstance(a, Error):
                assert a.code in ("NOT_LEADER_OR_FOLLOWER", "KAFKA_STORAGE_ERROR")
        if isinstance(step.start, AfterRequests):
            assert step.start.api in ("Fetch", "Produce")


@given(plan=EVERYTHING)
def test_every_drawn_fault_is_in_the_coverage_universe(plan: FaultPlan) -> None:
    keys, verbs = universe()
    known = set(keys)
    for step in plan.steps:
        if isinstance(step.action, Fault):
            (api,) = step.action.match.api
            for a in step.action.actions:
                code = a.code if isinstance(a, Error) else ""
                assert (api, action_kind(a), code) in known
        else:
            assert step.action.name in (*verbs, *UNTRACKED_VERBS)


def test_a_failing_plan_shrinks_to_the_one_step_that_matters() -> None:
    plan = find(
        EVERYTHING,
        lambda p: "move_leader" in p.verbs,
        settings=settings(database=None, max_examples=500, derandomize=True),
    )
    assert len(plan.steps) == 1, plan
    (step,) = plan.steps
    assert step.start is None
    # "next": a drawn move never names the broker that already leads (ELECTION_NOT_NEEDED)
    assert step.action == Verb("move_leader", topic="orders", partition=0, to="next")


def test_a_plan_applies_verbs_and_faults_to_a_running_cluster() -> None:
    plan = FaultPlan(
        steps=(
            Step(Verb("move_leader", topic="orders", partition=1, to=2)),
            Step(
                Fault(
                    faults_model.Match(api=("Metadata",)), actions=(Error("UNKNOWN_SERVER_ERROR"),)
                ),
                start=At(ms=50),
            ),
        ),
        brokers=2,
        topics=(("orders", 2),),
    )
    with mockkafka.Cluster(brokers=2) as cluster:
        cluster.create_topic("orders", assignments=[[1, 2], [1, 2]])  # broker 1 leads both
        begin = time.monotonic()
        plan.apply(cluster)
        assert time.monotonic() - begin >= 0.05
        assert cluster.topic("orders").partition(1).leader == 2
        (rule,) = cluster.faults.rules()
        assert rule.match.api == ("Metadata",) and rule.actions == (Error("UNKNOWN_SERVER_ERROR"),)
        cluster.faults.clear()


def test_a_started_plan_waits_for_the_requests_it_names() -> None:
    from confluent_kafka import Producer

    plan = FaultPlan(
        steps=(
            Step(
                Verb("move_leader", topic="orders", partition=0, to=2),
                start=AfterRequests(api="Produce", count=1),
            ),
        ),
        brokers=2,
        topics=(("orders", 1),),
    )
    with mockkafka.Cluster(brokers=2) as cluster:
        cluster.create_topic("orders", assignments=[[1, 2]])  # broker 1 leads
        running = plan.start(cluster)
        assert cluster.topic("orders").partition(0).leader == 1  # not yet: no Produce
        producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "log_level": 0})
        producer.produce("orders", b"x")
        assert producer.flush(10) == 0
        assert running.wait(10)
        running.check()
        assert cluster.topic("orders").partition(0).leader == 2


@given(plan=EVERYTHING)
def test_timed_verbs_on_groups_and_transactions_wait_for_them_to_exist(plan: FaultPlan) -> None:
    for step in plan.steps:
        if isinstance(step.action, Verb) and step.action.name == "trigger_rebalance":
            assert step.start == scenario_model.WhenGroup("billing", "Stable")
        if isinstance(step.action, Verb) and step.action.name in (
            "abort_transaction",
            "fence_producer",
        ):
            assert step.start == scenario_model.WhenTransaction("tx-1", "Ongoing")

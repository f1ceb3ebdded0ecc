"""Fault plans a real broker could produce (issues 26 and 33).

By default ``fault_plans()`` draws only (API, error) pairs a real broker could answer a
correct client's request there, with the state made consistent: an error Kafka answers
after appending is answered only once the batch is stored. The rest ("beyond Kafka") is
drawn only when named in ``errors=``.

"As Kafka" is per request: FETCH_SESSION_ID_NOT_FOUND answered to librdkafka's sessionless
Fetch (session id 0, epoch -1) is something Kafka never does, librdkafka takes it as fatal,
and hypothesis shrank a correct app to a "bug" (issue 33). A drawn error step matches only
the versions that carry the code and the request context Kafka needs (``context=``).
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from confluent_kafka import Producer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mockkafka
from mockkafka.errors import ConfigError, ErrorCode
from mockkafka.faults.error_facts import (
    APPLIED_FIRST,
    CLIENT_APIS,
    ERROR_CONTEXTS,
    ERRORS_BY_API,
    as_kafka_errors,
    beyond_kafka,
    error_versions,
    kafka_match,
    possible_errors,
)
from mockkafka.faults.inspect import request_info
from mockkafka.faults.model import Error, Match
from mockkafka.scenario.model import Fault, step_from_dict
from mockkafka.strategies import FaultPlan, fault_plans
from tests.robustness._wire import Raw, fetch_body

EVERY_API = fault_plans(
    topics={"orders": 2},
    groups=["billing"],
    transactional_ids=["tx-1"],
    brokers=3,
    verbs=["error"],
    max_steps=4,
)


def _errors(plan: FaultPlan) -> list[tuple[str, str]]:
    out = []
    for step in plan.steps:
        if isinstance(step.action, Fault):
            (api,) = step.action.match.api
            out += [(api, a.code) for a in step.action.actions if isinstance(a, Error)]
    return out


@given(plan=EVERY_API)
def test_default_plans_draw_only_errors_a_real_broker_could_send(plan: FaultPlan) -> None:
    for api, code in _errors(plan):
        assert beyond_kafka(api, code) is None, (api, code, beyond_kafka(api, code))


def test_every_pair_of_the_table_is_audited_one_way_or_the_other() -> None:
    beyond = {
        (api, e) for api in CLIENT_APIS for e in possible_errors(api, None) if beyond_kafka(api, e)
    }
    as_kafka = {(api, e) for api in CLIENT_APIS for e in as_kafka_errors(api)}
    assert beyond and as_kafka and not beyond & as_kafka
    assert len(beyond) + len(as_kafka) == sum(
        len(possible_errors(a, None)) for a in CLIENT_APIS if a in ERRORS_BY_API
    )
    # the symptom of the issue, and lies a correct client may rightly not survive
    for pair in [
        ("Produce", "OUT_OF_ORDER_SEQUENCE_NUMBER"),
        ("Produce", "TOPIC_AUTHORIZATION_FAILED"),
        ("Fetch", "OFFSET_OUT_OF_RANGE"),
        ("Heartbeat", "UNKNOWN_MEMBER_ID"),
    ]:
        assert pair in beyond, pair
    # Kafka 4 answers a duplicate batch NONE: named, it is still answered once stored
    assert ("Produce", "DUPLICATE_SEQUENCE_NUMBER") in beyond
    assert ("Produce", "DUPLICATE_SEQUENCE_NUMBER") in APPLIED_FIRST


#: Pairs Kafka 4 answers to no request of a correct client (issue 33, checked in Kafka's
#: source: see error_facts.BEYOND_KAFKA_ON).
NEVER_AS_KAFKA = {
    ("Fetch", "INVALID_FETCH_SESSION_EPOCH"),
    ("Fetch", "FETCH_SESSION_TOPIC_ID_ERROR"),
    ("Fetch", "REPLICA_NOT_AVAILABLE"),
    ("Heartbeat", "COORDINATOR_LOAD_IN_PROGRESS"),
    ("FindCoordinator", "NOT_COORDINATOR"),
    ("Produce", "DUPLICATE_SEQUENCE_NUMBER"),
}
#: Pairs Kafka answers only to a request in this context.
ONLY_IN_CONTEXT = {
    ("Fetch", "FETCH_SESSION_ID_NOT_FOUND"): "fetch_session",
    ("Fetch", "FENCED_LEADER_EPOCH"): "leader_epoch",
    ("ListOffsets", "UNKNOWN_LEADER_EPOCH"): "leader_epoch",
    ("Produce", "NOT_ENOUGH_REPLICAS"): "acks_all",
    ("Produce", "REQUEST_TIMED_OUT"): "acks_all",
    ("InitProducerId", "NOT_COORDINATOR"): "transactional",
}


#: Default plans on the APIs whose errors need a context, so 300 draws reach each of them.
CONTEXT_APIS = fault_plans(
    topics={"orders": 2},
    transactional_ids=["tx-1"],
    apis=sorted({api for api, _ in ONLY_IN_CONTEXT}),
    verbs=["error"],
    max_steps=4,
)


def _error_steps(plan: FaultPlan) -> list[tuple[str, str, Match]]:
    out = []
    for step in plan.steps:
        if isinstance(step.action, Fault):
            (api,) = step.action.match.api
            out += [
                (api, a.code, step.action.match)
                for a in step.action.actions
                if isinstance(a, Error)
            ]
    return out


def test_default_plans_draw_each_error_only_where_kafka_could_answer_it() -> None:
    drawn: set[tuple[str, str]] = set()

    @settings(
        max_examples=300,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(plan=st.one_of(EVERY_API, CONTEXT_APIS))
    def check(plan: FaultPlan) -> None:
        for api, code, match in _error_steps(plan):
            drawn.add((api, code))
            assert (api, code) not in NEVER_AS_KAFKA, plan
            context = ERROR_CONTEXTS.get((api, code))
            assert match.context == (None if context is None else (context,)), plan
            since, until = error_versions(api, code)
            lo, hi = match.versions or (0, 1 << 15)
            assert lo >= since and (until is None or hi <= until), plan
            if code.startswith("FETCH_SESSION") or code == "INVALID_FETCH_SESSION_EPOCH":
                assert match.topic is None, plan  # a top-level error, never per partition

    check()
    # the draws reached the pairs that need a context (the checks above were not vacuous)
    assert set(ONLY_IN_CONTEXT) <= drawn, set(ONLY_IN_CONTEXT) - drawn
    assert ONLY_IN_CONTEXT.items() <= ERROR_CONTEXTS.items()


def test_what_kafka_never_answers_is_beyond_kafka_with_its_reason() -> None:
    for api, code in NEVER_AS_KAFKA:
        assert beyond_kafka(api, code), (api, code)
        assert code not in as_kafka_errors(api)
    # ...and the coordinator errors Kafka does answer there stay drawn (checked in
    # GroupCoordinatorService / CoordinatorRuntime: a write while the group loads)
    assert "COORDINATOR_LOAD_IN_PROGRESS" in as_kafka_errors("SyncGroup")
    assert "COORDINATOR_NOT_AVAILABLE" in as_kafka_errors("FindCoordinator")
    assert "COORDINATOR_NOT_AVAILABLE" in as_kafka_errors("Heartbeat")


def test_version_bound_errors_are_possible_only_at_their_versions() -> None:
    assert "REPLICA_NOT_AVAILABLE" in possible_errors("Metadata", 0)
    assert "REPLICA_NOT_AVAILABLE" not in possible_errors("Metadata", 12)
    assert "LEADER_NOT_AVAILABLE" in possible_errors("ListOffsets", 4)
    assert "LEADER_NOT_AVAILABLE" not in possible_errors("ListOffsets", 5)
    assert "OFFSET_NOT_AVAILABLE" in possible_errors("ListOffsets", 5)
    assert "COORDINATOR_LOAD_IN_PROGRESS" not in possible_errors("TxnOffsetCommit", 1)


@settings(max_examples=50, derandomize=True, database=None)
@given(plan=fault_plans(apis=["Fetch"], verbs=["error"], errors=["INVALID_FETCH_SESSION_EPOCH"]))
def test_a_beyond_kafka_fetch_session_error_is_drawn_when_named(plan: FaultPlan) -> None:
    assert {(a, c) for a, c, _m in _error_steps(plan)} <= {("Fetch", "INVALID_FETCH_SESSION_EPOCH")}


# -- request contexts, one test each (what the rule's context= matches) -------------------


def _matches(context: str, api: str, version: int, body: dict[str, Any]) -> bool:
    return Match(api=(api,), context=context).matches(request_info(api, version, body))


def _fetch(session_id: int, epoch: int, leader_epoch: int = -1) -> dict[str, Any]:
    return fetch_body(
        max_wait_ms=0,
        topic="orders",
        session_id=session_id,
        session_epoch=epoch,
        current_leader_epoch=leader_epoch,
    )


def test_the_fetch_session_context_is_an_incremental_fetch_of_a_session() -> None:
    assert not _matches("fetch_session", "Fetch", 12, _fetch(0, -1))  # librdkafka: no session
    assert not _matches("fetch_session", "Fetch", 12, _fetch(0, 0))  # opens one
    assert not _matches("fetch_session", "Fetch", 12, _fetch(77, 0))  # full: closes, reopens
    assert not _matches("fetch_session", "Fetch", 12, _fetch(77, -1))  # closes it
    assert not _matches("fetch_session", "Fetch", 6, _fetch(77, 3))  # before KIP-227
    assert _matches("fetch_session", "Fetch", 12, _fetch(77, 3))


def test_the_leader_epoch_context_is_a_partition_carrying_the_current_leader_epoch() -> None:
    assert not _matches("leader_epoch", "Fetch", 12, _fetch(0, -1, leader_epoch=-1))
    assert _matches("leader_epoch", "Fetch", 12, _fetch(0, -1, leader_epoch=3))
    listing = {
        "replica_id": -1,
        "isolation_level": 0,
        "topics": [{"name": "orders", "partitions": [{"partition_index": 0, "timestamp": -1}]}],
    }
    assert not _matches("leader_epoch", "ListOffsets", 7, listing)
    listing["topics"][0]["partitions"][0]["current_leader_epoch"] = 0
    assert _matches("leader_epoch", "ListOffsets", 7, listing)
    validate = {
        "topics": [
            {
                "topic": "orders",
                "partitions": [{"partition": 0, "current_leader_epoch": 2, "leader_epoch": 1}],
            }
        ]
    }
    assert _matches("leader_epoch", "OffsetForLeaderEpoch", 4, validate)


def test_the_acks_all_context_is_a_produce_waiting_for_every_in_sync_replica() -> None:
    produce = {"acks": 1, "timeout_ms": 1000, "topic_data": []}
    assert not _matches("acks_all", "Produce", 9, produce)
    assert _matches("acks_all", "Produce", 9, {**produce, "acks": -1})


def test_the_transactional_context_is_a_request_carrying_a_transactional_id() -> None:
    init = {"transactional_id": None, "transaction_timeout_ms": -1}
    assert not _matches("transactional", "InitProducerId", 4, init)  # idempotent producer
    assert _matches("transactional", "InitProducerId", 4, {**init, "transactional_id": "tx-1"})


def test_an_unknown_request_context_is_refused_with_a_did_you_mean() -> None:
    with pytest.raises(ConfigError, match=r"context='fetch_sesion'.*did you mean fetch_session"):
        Match(api=("Fetch",), context="fetch_sesion")


def test_a_fault_step_with_a_context_round_trips_through_yaml_and_repr() -> None:
    plan = FaultPlan.from_yaml(
        "name: session-lost\n"
        "steps:\n"
        "  - fault: {on: Fetch, versions: [7, 18], context: fetch_session,"
        " error: FETCH_SESSION_ID_NOT_FOUND}\n"
    )
    (step,) = plan.steps
    assert isinstance(step.action, Fault)
    assert step.action.match.context == ("fetch_session",)
    assert FaultPlan.from_yaml(plan.to_yaml()) == plan
    assert "context=('fetch_session',)" in repr(plan)


def _fetch_errors(resp: dict[str, Any]) -> list[int]:
    return [p["error_code"] for t in resp["responses"] for p in t["partitions"]]


def test_a_fetch_session_error_reaches_only_a_fetch_that_carries_a_session() -> None:
    with mockkafka.Cluster() as cluster:
        cluster.create_topic("orders", partitions=1)
        rule = cluster.faults.on("Fetch", context="fetch_session").error(
            "FETCH_SESSION_ID_NOT_FOUND"
        )
        host, port = cluster.bootstrap_servers.rsplit(":", 1)
        with Raw(host, int(port)) as raw:
            sessionless = raw.request("Fetch", 12, _fetch(0, -1))  # as librdkafka fetches
            opened = raw.request("Fetch", 12, _fetch(0, 0))
            incremental = raw.request("Fetch", 12, _fetch(opened["session_id"], 1))
    assert sessionless["error_code"] == 0 and _fetch_errors(sessionless) == [0]
    assert opened["error_code"] == 0 and opened["session_id"] != 0
    assert incremental["error_code"] == ErrorCode.FETCH_SESSION_ID_NOT_FOUND
    assert rule.fired == 1


@settings(max_examples=30)
@given(plan=fault_plans(apis=["Produce"], verbs=["error"], errors=["OUT_OF_ORDER_SEQUENCE_NUMBER"]))
def test_a_beyond_kafka_error_is_drawn_when_asked_for_by_name(plan: FaultPlan) -> None:
    assert set(_errors(plan)) <= {("Produce", "OUT_OF_ORDER_SEQUENCE_NUMBER")}


def _idempotent(cluster: mockkafka.Cluster, count: int) -> tuple[list[bytes], list[str]]:
    """Write ``count`` records with librdkafka's idempotent producer; the values
    acknowledged, and the delivery errors."""
    p = Producer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "enable.idempotence": True,
            "linger.ms": 2,
            "retry.backoff.ms": 20,
            "message.timeout.ms": 10000,
            "log_level": 0,
        }
    )
    acked: list[bytes] = []
    errors: list[str] = []

    def done(err: object, msg: Any) -> None:
        if err is None:
            acked.append(msg.value())
        else:
            errors.append(str(err))

    for i in range(count):
        p.produce("orders", key=b"k%d" % i, value=b"v%d" % i, on_delivery=done)
        if i % 5 == 4:
            p.flush(15)
    p.flush(15)
    return acked, errors


def _held(cluster: mockkafka.Cluster) -> list[bytes]:
    return [r.value for p in cluster.topic("orders").partitions for r in p.records() if r.value]


@pytest.mark.interop
@pytest.mark.parametrize("code", sorted(c for a, c in APPLIED_FIRST if a == "Produce"))
def test_an_error_kafka_sends_after_appending_is_answered_after_appending(code: str) -> None:
    with mockkafka.Cluster() as cluster:
        cluster.create_topic("orders", partitions=1)
        rule = cluster.faults.on("Produce").times(2).error(code)
        acked, errors = _idempotent(cluster, 10)
        held = _held(cluster)
        assert rule.fired >= 1
        # the batch the error answered is stored: nothing acknowledged is missing, and the
        # idempotent producer's retry of it was recognised as a duplicate
        assert len(acked) == 10 and not errors, errors
        assert sorted(held) == sorted(b"v%d" % i for i in range(10))


@pytest.mark.interop
@pytest.mark.filterwarnings("ignore::mockkafka.UnfiredRuleWarning")
@settings(
    max_examples=6,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    plan=fault_plans(
        topics={"orders": 2},
        brokers=3,
        apis=["Produce", "Metadata", "InitProducerId"],
        max_steps=3,
        max_ms=100,
        timed=False,
    ),
    errors_first=st.booleans(),
)
def test_librdkafkas_idempotent_producer_loses_nothing_under_the_default_plans(
    plan: FaultPlan, errors_first: bool
) -> None:
    with mockkafka.Cluster(brokers=3) as cluster:
        cluster.create_topic("orders", partitions=2, replication_factor=3)
        if errors_first:
            plan.apply(cluster)
            acked, _errors = _idempotent(cluster, 20)
        else:
            run = plan.start(cluster)
            acked, _errors = _idempotent(cluster, 20)
            run.wait(10)
            run.stop()
        held = _held(cluster)
    # every acknowledged record is held exactly once (a failed delivery is reported, not lost)
    assert len(held) == len(set(held)), plan
    assert not set(acked) - set(held), plan


@pytest.mark.interop
def test_librdkafka_consumes_everything_under_a_drawn_fetch_session_error_step() -> None:
    """The symptom of issue 33: a default plan's FETCH_SESSION_ID_NOT_FOUND reached
    librdkafka's sessionless Fetch, which takes it as fatal. As drawn now (with its context)
    the step never meets a librdkafka fetch, and the consumer reads everything."""
    from confluent_kafka import Consumer

    code = "FETCH_SESSION_ID_NOT_FOUND"
    fault = {"on": "Fetch", "times": 3, **kafka_match("Fetch", code), "error": code}
    plan = FaultPlan(steps=(step_from_dict({"fault": fault}, ("steps", 0)),))
    with mockkafka.Cluster() as cluster:
        cluster.create_topic("orders", partitions=1)
        for i in range(4):
            cluster.produce("orders", b"v%d" % i)
        plan.apply(cluster)
        consumer = Consumer(
            {
                "bootstrap.servers": cluster.bootstrap_servers,
                "group.id": "g",
                "auto.offset.reset": "earliest",
                "fetch.wait.max.ms": 50,
                "log_level": 0,
            }
        )
        got: list[bytes] = []
        errors: list[str] = []
        try:
            consumer.subscribe(["orders"])
            deadline = time.monotonic() + 20
            while len(got) < 4 and time.monotonic() < deadline:
                msg = consumer.poll(0.2)
                if msg is None:
                    continue
                if msg.error():
                    errors.append(str(msg.error()))
                else:
                    got.append(msg.value())
            fetches = cluster.traffic.requests("Fetch")
        finally:
            consumer.close()
        (rule,) = cluster.faults.rules()
        fired = rule.fired
        cluster.faults.clear()
    assert got == [b"v0", b"v1", b"v2", b"v3"] and not errors, errors
    assert fetches and fired == 0

"""Fault plans a real broker could produce (issue 26).

By default ``fault_plans()`` draws only (API, error) pairs a real broker could answer a
correct client's request there, with the state made consistent: DUPLICATE_SEQUENCE_NUMBER
is answered only once the batch is stored (a librdkafka idempotent producer takes it as
success, so a batch never stored vanished and the fuzzer blamed a correct app). The rest
("beyond Kafka") is drawn only when named in ``errors=``.
"""

from __future__ import annotations

from typing import Any

import pytest
from confluent_kafka import Producer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mockkafka
from mockkafka.faults.error_facts import (
    APPLIED_FIRST,
    CLIENT_APIS,
    ERRORS_BY_API,
    as_kafka_errors,
    beyond_kafka,
    possible_errors,
)
from mockkafka.faults.model import Error
from mockkafka.scenario.model import Fault
from mockkafka.strategies import FaultPlan, fault_plans

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
    assert ("Produce", "DUPLICATE_SEQUENCE_NUMBER") in as_kafka  # stored first
    assert ("Produce", "DUPLICATE_SEQUENCE_NUMBER") in APPLIED_FIRST


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

"""No silent no-ops: a rule that matched without acting, or never matched, says why.

``rule.declined`` counts each reason a rule matched and did not act; ``cluster.why_unfired``
shows those reasons, what the trigger still waits for, and the nearest requests when the
rule never matched. Each record-editing action explains the answers it leaves alone."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import mockkafka
from mockkafka.cluster.state import ClusterConfig, ClusterState
from mockkafka.faults.engine import FaultEngine, Faults
from mockkafka.faults.match import Match, RequestInfo
from mockkafka.faults.near_miss import near_miss
from mockkafka.protocol.records import decode_records
from tests.robustness._wire import fetch_partition

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def cluster() -> Iterator[mockkafka.Cluster]:
    with mockkafka.Cluster(topics={"t": 1}) as c:
        yield c
        c.faults.clear()  # each test reads its rules; the teardown report is not the point


def _fetch(cluster: mockkafka.Cluster, offset: int = 0) -> Any:
    """One Fetch v12 of t-0 from ``offset`` (answered at once); the partition's answer."""
    return fetch_partition(cluster.bootstrap_servers, "t", offset=offset)


def test_partial_trailing_batch_on_an_answer_of_one_batch_says_why_and_acts_on_two(
    cluster: mockkafka.Cluster,
) -> None:
    cluster.produce("t", b"only")  # one batch, none after it
    rule = cluster.faults.on("Fetch", topic="t").partial_trailing_batch()
    assert len(decode_records(_fetch(cluster)["records"])) == 1  # left whole, as Kafka would
    assert (rule.fired, rule.matched) == (0, 1)
    ((reason, n),) = rule.declined.items()
    assert n == 1
    assert reason.startswith("partial_trailing_batch: the answer held a single batch and the log")
    assert "KIP-74" in reason
    why = cluster.why_unfired(rule)
    assert why.startswith(" -- matched 1x, declined 1x because: 1x partial_trailing_batch:")
    assert "two batches or more" in why
    # The advice works: with a second batch, the answer ends with a cut one.
    cluster.produce("t", b"second")
    answer = _fetch(cluster)
    assert rule.fired == 1
    assert [r.value for r in decode_records(answer["records"])] == [b"only"]


def test_schema_id_on_values_not_in_the_registry_wire_format_says_so(
    cluster: mockkafka.Cluster,
) -> None:
    cluster.produce("t", b"plain json")
    rule = cluster.faults.on("Fetch", topic="t").schema_id(id=7)
    _fetch(cluster)
    assert rule.fired == 0
    assert "schema_id: no value is in the schema-registry wire format" in cluster.why_unfired(rule)


def test_corrupt_payload_on_null_keys_says_there_is_nothing_to_garble(
    cluster: mockkafka.Cluster,
) -> None:
    cluster.produce("t", b"v")  # no key
    rule = cluster.faults.on("Fetch", topic="t").corrupt_payload(part="key")
    _fetch(cluster)
    assert rule.declined == {
        "corrupt_payload: every record's keys are null or empty: nothing to garble": 1
    }


def test_skew_timestamps_on_log_append_time_says_the_broker_set_them() -> None:
    with mockkafka.Cluster() as cluster:
        cluster.create_topic("t", config={"message.timestamp.type": "LogAppendTime"})
        cluster.produce("t", b"v")
        rule = cluster.faults.on("Fetch", topic="t").skew_timestamps(ms=1000)
        _fetch(cluster)
        assert "every batch has LogAppendTime timestamps" in cluster.why_unfired(rule)
        cluster.faults.clear()


def test_duplicate_at_the_log_start_says_there_is_nothing_before_it(
    cluster: mockkafka.Cluster,
) -> None:
    cluster.produce("t", b"v")
    rule = cluster.faults.on("Fetch", topic="t").duplicate()
    _fetch(cluster, offset=0)
    assert "duplicate: no batch before the fetch offset to repeat" in cluster.why_unfired(rule)
    _fetch(cluster, offset=1)  # the consumer read offset 0: that batch is repeated
    assert rule.fired == 1


def test_an_empty_answer_is_a_match_declined_for_carrying_no_records(
    cluster: mockkafka.Cluster,
) -> None:
    rule = cluster.faults.on("Fetch", topic="t").corrupt_batch()
    _fetch(cluster)
    _fetch(cluster)
    assert (rule.fired, rule.matched) == (0, 2)
    assert rule.declined == {"the answer carried no records of topic 't'": 2}
    assert str(rule).startswith("rule-1 (fired 0x, matched 2x, declined 2x): Rule(")


def test_a_record_edit_whose_answer_another_rule_lost_says_so(
    cluster: mockkafka.Cluster,
) -> None:
    cluster.produce("t", b"v")
    edit = cluster.faults.on("Fetch", topic="t").corrupt_batch()
    drop = cluster.faults.on("Fetch").drop_connection()
    with pytest.raises(ConnectionError):
        _fetch(cluster)
    assert (drop.fired, edit.fired, edit.matched) == (1, 0, 1)
    assert edit.declined == {"the connection closed before the answer was sent": 1}


def test_a_rule_that_never_matched_names_the_nearest_requests(
    cluster: mockkafka.Cluster,
) -> None:
    cluster.produce("t", b"v")
    rule = cluster.faults.on("Fetch", topic="t", client_id="billing").corrupt_batch()
    produce = cluster.faults.on("Produce").error("NOT_LEADER_OR_FOLLOWER")
    _fetch(cluster)
    _fetch(cluster)
    assert rule.matched == 0
    assert cluster.why_unfired(rule) == (
        " -- 2 Fetch requests matched all but client_id='billing': they had client ids "
        "'hostile' (2x)"
    )
    assert cluster.why_unfired(produce) == (
        " -- no Produce request reached the cluster while it was active (the clients sent "
        "Fetch (2x))"
    )


def test_the_teardown_warning_carries_the_reason() -> None:
    with (
        pytest.warns(mockkafka.UnfiredRuleWarning) as caught,
        mockkafka.Cluster(topics={"t": 1}) as cluster,
    ):
        cluster.produce("t", b"only")
        cluster.faults.on("Fetch", topic="t").partial_trailing_batch()
        _fetch(cluster)
    (w,) = [w for w in caught if issubclass(w.category, mockkafka.UnfiredRuleWarning)]
    assert "declined 1x because: 1x partial_trailing_batch: the answer held a single batch" in str(
        w.message
    )


# -- what the trigger waits for (sans-IO) ---------------------------------------------------

FETCH_T = RequestInfo(
    api="Fetch", version=12, topics=frozenset({"t"}), partitions=frozenset({("t", 0)})
)


def _faults() -> tuple[Faults, FaultEngine]:
    engine = FaultEngine(lambda: 0)
    return Faults(engine, lambda f: f(), state=ClusterState(ClusterConfig())), engine


def test_explain_names_what_the_trigger_waits_for() -> None:
    faults, engine = _faults()
    first = faults.on("Produce").named("first").error("NOT_LEADER_OR_FOLLOWER")
    after = faults.on("Produce").after(first).delay(ms=1)
    event = faults.on("Produce").after_event("broker_stopped", broker=1).delay(ms=1)
    nth = faults.on("Produce").nth(3).delay(ms=1)
    assert engine.explain(after) == ["it waits for rule 'first' to fire, which fired 0x"]
    assert engine.explain(event) == [
        "it waits for the event broker_stopped, broker=1, which has not happened"
    ]
    engine.decide(nth)
    assert engine.explain(nth) == ["nth(3) fires on match 3; it had 1"]


def test_a_probability_draw_that_said_no_is_a_declined_match() -> None:
    faults, engine = _faults()
    rule = faults.on("Produce").with_probability(0.0, seed=1).delay(ms=1)
    assert not engine.decide(rule)
    assert rule.declined == {"not drawn (with_probability(0.0, seed=1))": 1}


def test_near_miss_picks_the_argument_that_lets_in_most_requests() -> None:
    other = RequestInfo(api="Fetch", version=12, topics=frozenset({"u"}), broker_id=2)
    assert near_miss(Match(api="Fetch", topic="t", broker=2), [FETCH_T, other, other]) == (
        "2 Fetch requests matched all but topic='t': they had topics u (2x)"
    )
    assert near_miss(Match(api="Fetch", topic="t"), [FETCH_T]) is None  # it did match
    assert near_miss(Match(api="Fetch"), []) == "no request reached the cluster while it was active"
    assert near_miss(Match(api="Produce"), [FETCH_T]) == (
        "no Produce request reached the cluster while it was active (the clients sent Fetch)"
    )
    # a topic only named by an id the cluster no longer knows
    by_id = RequestInfo(api="Fetch", version=13)
    assert near_miss(Match(api="Fetch", topic="t"), [by_id]) == (
        "1 Fetch request matched all but topic='t': it had no topic this cluster knows by "
        "name or id"
    )


# -- builder calls ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda r: r.delay(2000), r"give ms= by keyword, as in \.delay\(ms=2000\)"),
        (
            lambda r: r.delay(2000, before_processing=True),
            r"as in \.delay\(ms=2000, before_processing=True\)",
        ),
        (lambda r: r.delay(), r"rule.delay\(\) takes ms=, before_processing=; it needs ms="),
        (lambda r: r.delay(m=5), r"no argument 'm' \(did you mean ms=\?\)"),
        (lambda r: r.error(), r"rule.error\(\) takes code, level=; it needs code"),
    ],
)
def test_a_wrong_builder_call_says_how_to_call_it(call: Any, message: str) -> None:
    faults, _ = _faults()
    with pytest.raises(TypeError, match=message):
        call(faults.on("Produce"))


def test_without_traffic_recording_a_rule_that_never_matched_says_what_is_not_known() -> None:
    with mockkafka.Cluster(topics={"t": 1}, record_traffic=False) as cluster:
        rule = cluster.faults.on("Fetch", topic="t", client_id="billing").corrupt_batch()
        _fetch(cluster)
        assert cluster.why_unfired(rule) == (
            " -- it matched no request; with traffic recording off (record_traffic=False) the "
            "requests it did not match are not known"
        )
        cluster.faults.clear()

"""The fault engine without sockets: matching, triggers, seeded probability, reprs, input
checks, and the message edits actions make."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from mockkafka.cluster.coordinators import GROUP
from mockkafka.cluster.state import ClusterConfig, ClusterState, ManualClock
from mockkafka.errors import ConfigError
from mockkafka.faults import (
    CorruptBatch,
    CustomHandler,
    Delay,
    DropConnection,
    Error,
    FaultEngine,
    Faults,
    Match,
    NeverRespond,
    Observe,
    PartialTrailingBatch,
    RequestInfo,
    Rule,
    Throttle,
    Trigger,
    engine_of,
)
from mockkafka.faults.inspect import (
    corrupt_first_batch,
    cut_trailing_batch,
    partition_entries,
    request_info,
    split_request,
)
from mockkafka.protocol import records as rec


def _faults() -> tuple[Faults, FaultEngine, ManualClock]:
    clock = ManualClock()
    engine = FaultEngine(clock.now_ms)
    state = ClusterState(ClusterConfig(brokers=3), clock=clock)
    return Faults(engine, lambda f: f(), state=state), engine, clock


def _fire(engine: FaultEngine, info: RequestInfo) -> list[str]:
    return [r.name for r in engine.candidates(info) if engine.decide(r)]


PRODUCE_ORDERS_0 = RequestInfo(
    api="Produce",
    version=9,
    broker_id=1,
    client_id="svc-a",
    topics=frozenset({"orders"}),
    partitions=frozenset({("orders", 0)}),
)


# -- triggers ----------------------------------------------------------------------------


def test_rules_are_one_shot_by_default_and_stay_listed_with_their_count() -> None:
    faults, engine, _ = _faults()
    rule = faults.on("Produce").error("NOT_LEADER_OR_FOLLOWER")
    assert _fire(engine, PRODUCE_ORDERS_0) == [rule.name]
    assert _fire(engine, PRODUCE_ORDERS_0) == []
    assert rule.fired == 1 and rule.exhausted
    assert faults.rules() == [rule]


def test_times_fires_on_the_first_n_matches_only() -> None:
    faults, engine, _ = _faults()
    rule = faults.on("Produce").times(3).error("NOT_LEADER_OR_FOLLOWER")
    fired = [bool(_fire(engine, PRODUCE_ORDERS_0)) for _ in range(5)]
    assert fired == [True, True, True, False, False]
    assert rule.fired == 3


def test_nth_fires_only_on_that_match() -> None:
    faults, engine, _ = _faults()
    rule = faults.on("Metadata").nth(3).delay(ms=10)
    info = RequestInfo(api="Metadata", all_topics=True)
    assert [bool(_fire(engine, info)) for _ in range(5)] == [False, False, True, False, False]
    assert (rule.fired, rule.matched) == (1, 3)


def test_every_time_and_keep_fire_until_removed() -> None:
    faults, engine, _ = _faults()
    rule = faults.on("Fetch").every_time().throttle(ms=5)
    info = RequestInfo(api="Fetch")
    assert all(_fire(engine, info) for _ in range(20))
    rule.remove()
    assert _fire(engine, info) == []
    assert rule.fired == 20
    kept = faults.on("Fetch").every_time().observe()
    assert all(_fire(engine, info) for _ in range(3)) and kept.fired == 3


def test_probability_is_reproducible_for_a_seed() -> None:
    def run(seed: int) -> list[bool]:
        faults, engine, _ = _faults()
        faults.on("JoinGroup", group="g").with_probability(0.2, seed=seed).error(
            "REBALANCE_IN_PROGRESS"
        )
        info = RequestInfo(api="JoinGroup", groups=frozenset({"g"}))
        return [bool(_fire(engine, info)) for _ in range(200)]

    a, b, other = run(7), run(7), run(8)
    assert a == b
    assert a != other
    assert 20 <= sum(a) <= 60  # ~0.2 of 200


def test_probability_edges() -> None:
    faults, engine, _ = _faults()
    never = faults.on("Fetch").with_probability(0.0, seed=1).observe()
    always = faults.on("Fetch").with_probability(1.0, seed=1).observe()
    for _ in range(10):
        _fire(engine, RequestInfo(api="Fetch"))
    assert (never.fired, always.fired) == (0, 10)


def test_time_window_is_relative_to_rule_creation() -> None:
    faults, engine, clock = _faults()
    rule = faults.on("Fetch").between(100, 200).observe()
    info = RequestInfo(api="Fetch")
    assert not _fire(engine, info)
    clock.advance(150)
    assert _fire(engine, info) and _fire(engine, info)  # every match in the window
    clock.advance(100)
    assert not _fire(engine, info)
    assert rule.fired == 2
    brief = faults.on("Fetch").for_ms(50).once().observe()
    assert _fire(engine, info) == [brief.name]
    assert not _fire(engine, info)


def test_after_rule_waits_for_the_other_rule_to_fire() -> None:
    faults, engine, _ = _faults()
    first = faults.on("Metadata").nth(2).observe()
    second = faults.on("Produce").after(first).every_time().error("NOT_LEADER_OR_FOLLOWER")
    assert not _fire(engine, PRODUCE_ORDERS_0)
    _fire(engine, RequestInfo(api="Metadata"))
    assert not _fire(engine, PRODUCE_ORDERS_0)
    _fire(engine, RequestInfo(api="Metadata"))
    assert _fire(engine, PRODUCE_ORDERS_0) == [second.name]


def test_after_event_waits_for_a_matching_cluster_event() -> None:
    faults, engine, _ = _faults()
    rule = faults.on("Produce").after_event("broker_stopped", broker=2).observe()
    engine.record_event("broker_stopped", broker=1)
    assert not _fire(engine, PRODUCE_ORDERS_0)
    engine.record_event("broker_stopped", broker=2)
    assert _fire(engine, PRODUCE_ORDERS_0) == [rule.name]


def test_cluster_verbs_record_events() -> None:
    state = ClusterState(clock=ManualClock())
    engine = engine_of(state)
    state.create_topic("t", 1, 1)
    state.set_leader("t", 0, 1)
    state.truncate_log("t", 0, 0)
    names = [e.name for e in engine.events]
    assert names == ["topic_created", "leader_moved", "leader_moved", "log_truncated"]


def test_group_verbs_record_events_rules_can_wait_for() -> None:
    state = ClusterState(ClusterConfig(brokers=2), clock=ManualClock())
    engine = engine_of(state)
    faults = Faults(engine, lambda f: f())
    rule = faults.on("FindCoordinator").after_event("coordinator_moved", group="g").observe()
    assert not _fire(engine, RequestInfo(api="FindCoordinator"))
    other = 3 - state.coordinators.coordinator(GROUP, "g")  # the broker not coordinating
    state.groups.move_coordinator("g", other)
    assert [e.name for e in engine.events] == ["coordinator_moved"]
    assert _fire(engine, RequestInfo(api="FindCoordinator")) == [rule.name]


# -- matching ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"api": "*"}, True),
        ({"api": ["Fetch", "Produce"]}, True),
        ({"api": "Fetch"}, False),
        ({"api": "Produce", "versions": (3, 9)}, True),
        ({"api": "Produce", "versions": 10}, False),
        ({"api": "Produce", "broker": [2, 3]}, False),
        ({"api": "Produce", "topic": "ord*"}, True),
        ({"api": "Produce", "topic": "payments"}, False),
        ({"api": "Produce", "topic": "orders", "partition": 1}, False),
        ({"api": "Produce", "partition": [0, 1]}, True),
        ({"api": "*", "client_id": "svc-*"}, True),
        ({"api": "*", "client_id": "web-*"}, False),
        ({"api": "*", "connection": 4}, False),
        ({"api": "*", "group": "g"}, False),
    ],
)
def test_match_fields(kwargs: dict[str, Any], expected: bool) -> None:
    assert Match(**kwargs).matches(PRODUCE_ORDERS_0) is expected


def test_request_info_reads_topics_partitions_groups_from_real_request_shapes() -> None:
    tid = uuid.uuid4()
    fetch = {"topics": [{"topic_id": tid, "partitions": [{"partition": 2}, {"partition": 5}]}]}
    info = request_info("Fetch", 13, fetch, resolve=lambda t: "orders" if t == tid else None)
    assert info.partitions == {("orders", 2), ("orders", 5)}
    commit = {"group_id": "g1", "topics": [{"name": "a", "partitions": [{"partition_index": 0}]}]}
    info = request_info("OffsetCommit", 8, commit)
    assert info.groups == {"g1"} and info.partitions == {("a", 0)}
    fc = request_info("FindCoordinator", 4, {"key_type": 0, "coordinator_keys": ["g2"]})
    assert fc.groups == {"g2"}
    md = request_info("Metadata", 12, {"topics": None})
    assert md.all_topics and Match(api="Metadata", topic="x").matches(md)
    offsets = request_info("OffsetFetch", 9, {"groups": [{"group_id": "g3", "topics": None}]})
    assert offsets.groups == {"g3"}


# -- message edits -------------------------------------------------------------------------


def test_split_request_removes_claimed_partitions() -> None:
    req = {
        "acks": -1,
        "topic_data": [
            {"name": "a", "partition_data": [{"index": 0}, {"index": 1}]},
            {"name": "b", "partition_data": [{"index": 0}]},
        ],
    }
    reduced, remaining = split_request(req, lambda t, i: (t == "a" and i == 0) or t == "b")
    assert remaining == 1
    assert reduced["topic_data"] == [{"name": "a", "partition_data": [{"index": 1}]}]
    assert len(req["topic_data"]) == 2  # the original is untouched
    assert [(t, i) for t, i, *_ in partition_entries(req)] == [("a", 0), ("a", 1), ("b", 0)]


def _batches(n: int) -> bytes:
    return b"".join(
        rec.encode_batch([(None, f"value-{i}".encode() * 5)], base_offset=i) for i in range(n)
    )


def test_partial_trailing_batch_cuts_the_last_batch_and_keeps_the_others() -> None:
    data = _batches(3)
    cut = cut_trailing_batch(data)
    assert cut is not None and len(cut) < len(data)
    got = rec.decode_records(cut)  # lenient: a truncated trailing batch is ignored
    assert [r.offset for r in got] == [0, 1]
    with pytest.raises(rec.ProtocolError):
        rec.split_batches(cut, allow_partial=False)


def test_partial_trailing_batch_appends_a_cut_next_batch_to_a_single_batch() -> None:
    one = _batches(1)
    assert cut_trailing_batch(one) is None
    nxt = rec.encode_batch([(None, b"next" * 10)], base_offset=1)
    cut = cut_trailing_batch([one], nxt)
    assert cut is not None and cut.startswith(one) and len(cut) < len(one) + len(nxt)
    assert [r.offset for r in rec.decode_records(cut)] == [0]


def test_corrupt_batch_breaks_the_crc_only() -> None:
    data = _batches(2)
    bad = corrupt_first_batch(data)
    assert bad is not None and len(bad) == len(data)
    (h1, raw1), (h2, raw2) = rec.split_batches(bad)
    assert not rec.verify_crc(h1, raw1)
    assert rec.verify_crc(h2, raw2)
    assert corrupt_first_batch(b"") is None


# -- reprs and bad input -------------------------------------------------------------------


def _handler(request: dict[str, Any], ctx: Any) -> None:
    return None


def test_reprs_are_valid_python_that_round_trip() -> None:
    faults, _, _ = _faults()
    rule = (
        faults.on("Produce", topic="orders", partition=0, client_id="svc-*", versions=(3, 9))
        .times(2)
        .with_probability(0.5, seed=3)
        .error("NOT_LEADER_OR_FOLLOWER", level="partition")
        .delay(ms=20)
        .throttle(ms=100)
        .drop_connection(after_processing=True)
        .named("flaky-produce")
    )
    ns = {
        n: v
        for n, v in globals().items()
        if n[0].isupper() or n in ("CustomHandler", "CorruptBatch")
    }
    assert eval(repr(rule), ns).spec == rule.spec
    for action in (NeverRespond(), PartialTrailingBatch(), CorruptBatch(), Observe()):
        assert eval(repr(action), ns) == action
    assert repr(CustomHandler(_handler)) == "CustomHandler(tests.faults.test_rules._handler)"
    assert repr(Trigger()) == "Trigger()"
    assert eval(repr(Trigger(times=None, start_ms=5)), ns) == Trigger(times=None, start_ms=5)
    assert isinstance(eval(repr(Error("REQUEST_TIMED_OUT")), ns), Error)
    assert repr(Delay(5, True)) == "Delay(ms=5, before_processing=True)"
    assert repr(DropConnection()) == "DropConnection()"
    assert repr(Throttle(7)) == "Throttle(ms=7)"


def test_a_rule_pasted_from_its_repr_can_be_added() -> None:
    faults, engine, _ = _faults()
    rule = faults.add(
        Rule(
            match=Match(api=("Produce",)),
            trigger=Trigger(times=1),
            actions=(Error("NOT_LEADER_OR_FOLLOWER"),),
        )
    )
    assert _fire(engine, PRODUCE_ORDERS_0) == [rule.name]


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda f: f.on("Produc"), ["api='Produc'", "Produce", "valid"]),
        (lambda f: f.on("Produce").error("NOT_A_CODE"), ["code='NOT_A_CODE'", "ErrorCode"]),
        (lambda f: f.on("Produce").times(0), ["n must be an integer >= 1"]),
        (lambda f: f.on("Produce").times(-2), ["n must be"]),
        (lambda f: f.on("Produce").nth(0), ["n must be"]),
        (lambda f: f.on("Produce").with_probability(1.5), ["probability", "[0, 1]"]),
        (lambda f: f.on("Produce").with_probability(-0.1), ["probability"]),
        (lambda f: f.on("Produce").delay(ms=-1), ["ms must be"]),
        (lambda f: f.on("Produce").after_event("broker_exploded"), ["broker_stopped"]),
        (lambda f: f.on("Produce", partition="0"), ["partition must be"]),
        (lambda f: f.on("Produce").between(50, 10), ["end_ms"]),
        (lambda f: f.on("Produce").handler(42), ["callable"]),  # type: ignore[arg-type]
        (lambda f: f.on("Produce").error(6, level="topic"), ["level"]),  # type: ignore[arg-type]
        # Rules that could never fire are refused when made.
        (lambda f: f.on("Produce").partial_trailing_batch(), ["only Fetch", "on Produce"]),
        (lambda f: f.on("Metadata").corrupt_batch(), ["only Fetch", "never fire"]),
        (lambda f: f.on("Fetch", broker=7), ["broker=7", "brokers [1, 2, 3]", "never fire"]),
        (lambda f: f.on("Fetch", broker=[1, 4]), ["broker=4"]),
        (lambda f: f.on("Fetch", versions=(40, 50)), ["versions=(40, 50)", "Fetch has versions"]),
    ],
)
def test_bad_input_raises_config_error_naming_the_argument(make: Any, words: list[str]) -> None:
    faults, _engine, _ = _faults()
    with pytest.raises(ConfigError) as info:
        make(faults)
    for w in words:
        assert w in str(info.value)
    assert isinstance(info.value, ValueError)


def test_error_accepts_names_and_numbers() -> None:
    assert Error(6) == Error("NOT_LEADER_OR_FOLLOWER")  # type: ignore[arg-type]
    assert Error("not_leader_or_follower").code == "NOT_LEADER_OR_FOLLOWER"


def test_only_one_response_replacing_rule_fires_per_request() -> None:
    faults, engine, _ = _faults()
    a = faults.on("Produce").every_time().error("NOT_LEADER_OR_FOLLOWER")
    b = faults.on("Produce").every_time().error("REQUEST_TIMED_OUT")
    c = faults.on("Produce").every_time().delay(ms=1)
    fired, deferred = engine.select(PRODUCE_ORDERS_0)
    assert fired == [a, c] and deferred == []
    # b saw the request and says why it did not act; its trigger did not count it
    assert b.matched == 1
    assert b.declined == {
        "rule 'rule-1' answered the request first (one rule replaces a response; the first "
        "added wins)": 1
    }
    assert engine.explain(b) == [
        "matched 1x, declined 1x because: 1x rule 'rule-1' answered the request first (one "
        "rule replaces a response; the first added wins)"
    ]
    data_rule = faults.on("*").partial_trailing_batch()
    assert engine.select(PRODUCE_ORDERS_0)[1] == []  # its action acts on Fetch only
    assert engine.select(RequestInfo(api="Fetch"))[1] == [data_rule]
    assert data_rule.matched == 0  # decided only once a response with records exists


def test_request_info_shares_the_sets_of_requests_that_name_the_same_things() -> None:
    """The traffic log keeps every exchange's RequestInfo: equal topic, partition and group
    sets are one object (and empty ones the empty set), not three new ones per request."""
    body = {
        "acks": -1,
        "timeout_ms": 1000,
        "topic_data": [{"name": "orders", "partition_data": [{"index": 0, "records": b""}]}],
    }
    a = request_info("Produce", 9, body)
    b = request_info("Produce", 9, dict(body))
    assert a.topics == frozenset({"orders"}) and a.partitions == frozenset({("orders", 0)})
    assert a.topics is b.topics and a.partitions is b.partitions
    assert a.groups is b.groups and not a.groups
    x = [{"name": "x", "partition_data": [{"index": 1, "records": b""}]}]
    other = request_info("Produce", 9, {**body, "topic_data": x})
    assert other.topics == frozenset({"x"}) and other.topics is not a.topics


def test_request_info_does_not_keep_big_sets_alive() -> None:
    from mockkafka.faults import inspect

    names = [{"name": f"t{i}"} for i in range(1000)]
    info = request_info("Metadata", 12, {"topics": names})
    assert len(info.topics) == 1000
    assert info.topics not in inspect._SHARED  # a 60,000-name Metadata must not stay in memory

"""Fetch, sans-IO: sessions (KIP-227), long-poll parking, byte limits, versions."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from mockkafka.cluster.fetch_sessions import FetchSessionCache
from mockkafka.cluster.produce import append_records
from mockkafka.cluster.state import ClusterConfig, ClusterState, ManualClock
from mockkafka.errors import ErrorCode
from mockkafka.handlers.base import Park, call_handler
from mockkafka.protocol import records as rec


def fetch(state: ClusterState, version: int, body: dict[str, Any], broker: int = 1) -> Any:
    return call_handler(
        state, "Fetch", body, version=version, broker_id=broker, codec_roundtrip=False
    )


def part(p: int, offset: int, pmax: int = 1 << 20) -> dict[str, Any]:
    return {"partition": p, "fetch_offset": offset, "partition_max_bytes": pmax}


def body(
    topics: list[tuple[str, list[dict[str, Any]]]],
    *,
    session_id: int = 0,
    session_epoch: int = -1,
    max_wait_ms: int = 0,
    min_bytes: int = 1,
    max_bytes: int = 50 << 20,
    forgotten: list[dict[str, Any]] | None = None,
    state: ClusterState | None = None,
) -> dict[str, Any]:
    ts = []
    for name, parts in topics:
        t: dict[str, Any] = {"topic": name, "partitions": parts}
        if state is not None:  # v13+: topics named by id
            t = {"topic_id": state.topic(name).topic_id, "partitions": parts}
        ts.append(t)
    return {
        "replica_id": -1,
        "max_wait_ms": max_wait_ms,
        "min_bytes": min_bytes,
        "max_bytes": max_bytes,
        "isolation_level": 0,
        "session_id": session_id,
        "session_epoch": session_epoch,
        "topics": ts,
        "forgotten_topics_data": forgotten or [],
    }


def put(state: ClusterState, topic: str, p: int, *values: str) -> None:
    t = state.topic(topic)
    data = rec.encode_batch([(None, v.encode()) for v in values])
    assert append_records(state, t, t.partition(p), data).error == ErrorCode.NONE


def parts_of(resp: dict[str, Any]) -> dict[tuple[str, int], dict[str, Any]]:
    return {
        (t.get("topic") or str(t.get("topic_id")), p["partition_index"]): p
        for t in resp["responses"]
        for p in t["partitions"]
    }


def values(p: dict[str, Any]) -> list[bytes | None]:
    data = (
        b"".join(bytes(c) for c in p["records"]) if isinstance(p["records"], list) else p["records"]
    )
    return [r.value for r in rec.decode_records(data or b"")]


@pytest.fixture
def state() -> ClusterState:
    s = ClusterState(ClusterConfig(brokers=1), clock=ManualClock())
    s.create_topic("a", 2, 1)
    s.create_topic("b", 1, 1)
    return s


# -- FetchSessionCache ------------------------------------------------------------------------


def test_session_opens_with_epoch_zero_and_then_expects_the_next_epoch() -> None:
    cache = FetchSessionCache()
    topics = [{"topic": "a", "partitions": [part(0, 0), part(1, 0)]}]
    first = cache.update(0, 0, topics, [], use_ids=False)
    assert first.session is not None and not first.incremental
    sid = first.session.id
    nxt = cache.update(sid, 1, [], [], use_ids=False)
    assert nxt.incremental and set(nxt.partitions) == {("a", 0), ("a", 1)}
    assert cache.update(sid, 1, [], [], use_ids=False).error == (
        ErrorCode.INVALID_FETCH_SESSION_EPOCH
    )
    assert cache.update(sid + 99, 1, [], [], use_ids=False).error == (
        ErrorCode.FETCH_SESSION_ID_NOT_FOUND
    )


def test_initial_epoch_with_a_session_id_replaces_the_session() -> None:
    """After INVALID_FETCH_SESSION_EPOCH clients send their session id with epoch 0: Kafka
    closes that session and opens a new one (a client that got the error again would loop
    forever -- the soak test found kafka-python doing exactly that)."""
    cache = FetchSessionCache()
    topics = [{"topic": "a", "partitions": [part(0, 0)]}]
    sid = cache.update(0, 0, topics, [], use_ids=False).session.id  # type: ignore[union-attr]
    again = cache.update(sid, 0, topics, [], use_ids=False)
    assert again.error == ErrorCode.NONE and again.session is not None
    assert again.session.id != sid and not again.incremental
    assert sid not in cache.sessions
    # Unknown ids too: a full fetch never fails on the session.
    assert cache.update(sid + 99, 0, topics, [], use_ids=False).error == ErrorCode.NONE


def test_incremental_request_updates_adds_and_forgets_partitions() -> None:
    cache = FetchSessionCache()
    s = cache.update(
        0, 0, [{"topic": "a", "partitions": [part(0, 0), part(1, 0)]}], [], use_ids=False
    ).session
    assert s is not None
    upd = cache.update(
        s.id,
        1,
        [{"topic": "a", "partitions": [part(0, 42)]}, {"topic": "b", "partitions": [part(0, 0)]}],
        [{"topic": "a", "partitions": [1]}],
        use_ids=False,
    )
    assert set(upd.partitions) == {("a", 0), ("b", 0)}
    assert upd.partitions[("a", 0)].request["fetch_offset"] == 42


def test_final_epoch_closes_the_session_and_sessionless_fetch_is_full() -> None:
    cache = FetchSessionCache()
    s = cache.update(0, 0, [{"topic": "a", "partitions": [part(0, 0)]}], [], use_ids=False).session
    assert s is not None
    closed = cache.update(s.id, -1, [{"topic": "a", "partitions": [part(0, 0)]}], [], use_ids=False)
    assert closed.session is None and not closed.incremental
    assert s.id not in cache.sessions
    plain = cache.update(0, -1, [{"topic": "b", "partitions": [part(0, 0)]}], [], use_ids=False)
    assert plain.session is None and set(plain.partitions) == {("b", 0)}


# -- the Fetch handler ------------------------------------------------------------------------


def test_full_fetch_returns_records_and_offsets(state: ClusterState) -> None:
    put(state, "a", 0, "x", "y")
    resp = fetch(state, 11, body([("a", [part(0, 0), part(1, 0)])]))
    ps = parts_of(resp)
    assert values(ps[("a", 0)]) == [b"x", b"y"]
    assert ps[("a", 0)]["high_watermark"] == 2
    assert ps[("a", 0)]["log_start_offset"] == 0
    assert ps[("a", 1)]["records"] in (b"", [])  # empty, never null


def test_incremental_session_response_carries_only_changed_partitions(
    state: ClusterState,
) -> None:
    put(state, "a", 0, "x")
    first = fetch(
        state, 11, body([("a", [part(0, 0), part(1, 0)]), ("b", [part(0, 0)])], session_epoch=0)
    )
    sid = first["session_id"]
    assert sid > 0 and len(parts_of(first)) == 3
    quiet = fetch(state, 11, body([("a", [part(0, 1)])], session_id=sid, session_epoch=1))
    assert parts_of(quiet) == {}  # nothing new anywhere
    put(state, "b", 0, "new")
    news = fetch(state, 11, body([], session_id=sid, session_epoch=2))
    assert list(parts_of(news)) == [("b", 0)]
    assert values(parts_of(news)[("b", 0)]) == [b"new"]
    stale = fetch(state, 11, body([], session_id=sid, session_epoch=2))
    assert stale["error_code"] == ErrorCode.INVALID_FETCH_SESSION_EPOCH


def test_topic_ids_from_v13(state: ClusterState) -> None:
    put(state, "b", 0, "x")
    resp = fetch(state, 13, body([("b", [part(0, 0)])], state=state))
    (t,) = resp["responses"]
    assert t["topic_id"] == state.topic("b").topic_id
    assert values(t["partitions"][0]) == [b"x"]
    unknown = body([("b", [part(0, 0)])], state=state)
    unknown["topics"][0]["topic_id"] = uuid.uuid4()
    (t,) = fetch(state, 13, unknown)["responses"]
    assert t["partitions"][0]["error_code"] == ErrorCode.UNKNOWN_TOPIC_ID


def test_empty_fetch_parks_until_data_arrives_or_deadline(state: ClusterState) -> None:
    result = fetch(state, 11, body([("a", [part(0, 0)])], max_wait_ms=5000))
    assert isinstance(result, Park)
    assert ("partition", "a", 0) in result.keys
    assert result.deadline_ms == state.now_ms() + 5000
    # Woken without data: parks again; with data: answers.
    assert isinstance(result.resume(False), Park)
    put(state, "a", 0, "x")
    resp = result.resume(False)
    assert isinstance(resp, dict)
    assert values(parts_of(resp)[("a", 0)]) == [b"x"]
    # Deadline: answers empty.
    late = fetch(state, 11, body([("a", [part(1, 0)])], max_wait_ms=5000))
    assert isinstance(late, Park)
    answered = late.resume(True)
    assert isinstance(answered, dict)
    assert parts_of(answered)[("a", 1)]["records"] in (b"", [])


def test_min_bytes_keeps_waiting_for_more(state: ClusterState) -> None:
    put(state, "a", 0, "x")
    result = fetch(state, 11, body([("a", [part(0, 0)])], max_wait_ms=1000, min_bytes=10_000))
    assert isinstance(result, Park)


def test_max_bytes_and_partition_max_bytes_but_at_least_one_batch(state: ClusterState) -> None:
    for i in range(4):
        put(state, "a", 0, "v" * 300 + str(i))
        put(state, "a", 1, "w" * 300 + str(i))
    one = state.partition("a", 0).log.batches[0].size
    tiny = fetch(state, 11, body([("a", [part(0, 0, pmax=1), part(1, 0, pmax=1)])]))
    assert len(values(parts_of(tiny)[("a", 0)])) == 1  # at least one batch
    capped = fetch(state, 11, body([("a", [part(0, 0), part(1, 0)])], max_bytes=one * 2))
    ps = parts_of(capped)
    got = len(values(ps[("a", 0)])) + len(values(ps[("a", 1)]))
    assert got == 2
    whole = fetch(state, 11, body([("a", [part(0, 0, pmax=one * 3)])]))
    assert len(values(parts_of(whole)[("a", 0)])) == 3


def test_out_of_range_and_not_leader(state: ClusterState) -> None:
    put(state, "a", 0, "x")
    r = parts_of(fetch(state, 11, body([("a", [part(0, 5)])])))[("a", 0)]
    assert r["error_code"] == ErrorCode.OFFSET_OUT_OF_RANGE
    # Kafka's error read result carries no offsets (the oracle tier compares it with Kafka).
    assert (r["high_watermark"], r["last_stable_offset"], r["log_start_offset"]) == (-1, -1, -1)
    s3 = ClusterState(ClusterConfig(brokers=3), clock=ManualClock())
    s3.create_topic("t", 1, 3)
    p = s3.partition("t", 0)
    other = next(b for b in s3.brokers if b != p.leader)
    resp = fetch(s3, 12, body([("t", [part(0, 0)])]), broker=other)
    r = parts_of(resp)[("t", 0)]
    assert r["error_code"] == ErrorCode.NOT_LEADER_OR_FOLLOWER
    assert r["current_leader"]["leader_id"] == p.leader


def test_old_versions_get_down_converted_message_sets(state: ClusterState) -> None:
    put(state, "b", 0, "x", "y")
    for version, magic in ((0, 0), (1, 0), (2, 1), (3, 1)):
        r = parts_of(fetch(state, version, body([("b", [part(0, 0)])])))[("b", 0)]
        data = b"".join(bytes(c) for c in r["records"])
        assert {h.magic for h, _ in rec.split_batches(data, allow_partial=False)} == {magic}
        assert [x.value for x in rec.decode_records(data)] == [b"x", b"y"]


def test_log_start_offset_reported_after_delete_records(state: ClusterState) -> None:
    put(state, "b", 0, "x")
    put(state, "b", 0, "y")
    state.partition("b", 0).log.delete_before(1)
    r = parts_of(fetch(state, 11, body([("b", [part(0, 1)])])))[("b", 0)]
    assert r["log_start_offset"] == 1
    assert values(r) == [b"y"]
    gone = parts_of(fetch(state, 11, body([("b", [part(0, 0)])])))[("b", 0)]
    assert gone["error_code"] == ErrorCode.OFFSET_OUT_OF_RANGE

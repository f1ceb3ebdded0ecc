"""The record-editing fault actions on ShareFetch (share groups, KIP-932), over a real socket.

A ShareFetch answer carries, per partition, whole record batches plus the
``acquired_records`` ranges the member may hand out. The data-phase actions
(``corrupt_payload``, ``schema_id``, ``skew_timestamps``, ``corrupt_batch``,
``partial_trailing_batch``) edit those batches as they edit a Fetch answer's: the acquired
ranges stay as the broker decided, the log and the share group's state are untouched, so the
edited records are acknowledged (and archived) or released (and delivered again) as any
others. ``rule.fired`` counts the answers that carried an edit; an answer with nothing to
edit (no records, or none the action applies to) does not count. confluent-kafka's share
consumer under the same actions: tests/interop/test_share_record_edits_confluent.py.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import mockkafka
from mockkafka.faults import Rule
from mockkafka.protocol import records as rec
from mockkafka.protocol.compression import CompressionType
from tests.robustness._wire import Raw

ACCEPT, RELEASE = 1, 2
TS = 1_700_000_000_000
SCHEMA_ID = 7
N = 4  # records: one gzip batch of three, then a batch of one


def _registry_value(i: int) -> bytes:
    """A value as a schema-registry serializer writes it: magic 0, schema id, payload."""
    return struct.pack(">bi", 0, SCHEMA_ID) + f"payload-{i}".encode()


def _original() -> list[rec.Record]:
    return [
        rec.Record(i, TS + i, f"key-{i}".encode(), _registry_value(i), (("h", f"hv{i}".encode()),))
        for i in range(N)
    ]


class Member:
    """One share-group member ``m1`` of group ``sg`` on topic ``t`` partition 0, over a raw
    connection, keeping its share session epoch."""

    def __init__(self, raw: Raw, topic_id: uuid.UUID) -> None:
        self.raw = raw
        self.topic_id = topic_id
        self.epoch = 0
        joined = raw.request(
            "ShareGroupHeartbeat",
            1,
            {
                "group_id": "sg",
                "member_id": "m1",
                "member_epoch": 0,
                "subscribed_topic_names": ["t"],
            },
        )
        assert joined["error_code"] == 0

    def fetch(
        self, acks: list[dict[str, Any]] | None = None, *, named: bool = True, **extra: Any
    ) -> dict[str, Any]:
        """One ShareFetch v2 (no wait), acknowledging ``acks``; the partition's answer.
        ``named=False``: the request names no partition (a session's later fetch)."""
        partition = {"partition_index": 0, "acknowledgement_batches": acks or []}
        body = {
            "group_id": "sg",
            "member_id": "m1",
            "share_session_epoch": self.epoch,
            "max_wait_ms": 0,
            "min_bytes": 1,
            "max_bytes": 1 << 20,
            "max_records": 500,
            "batch_size": 500,
            "topics": [{"topic_id": self.topic_id, "partitions": [partition]}] if named else [],
            **extra,
        }
        resp = self.raw.request("ShareFetch", 2, body)
        assert resp["error_code"] == 0, resp
        self.epoch += 1
        (t,) = resp["responses"] or [{"partitions": [{}]}]
        (p,) = t["partitions"]
        out: dict[str, Any] = p
        return out


def acquired(p: dict[str, Any]) -> list[tuple[int, int, int]]:
    return [
        (a["first_offset"], a["last_offset"], a["delivery_count"]) for a in p["acquired_records"]
    ]


def records(p: dict[str, Any]) -> list[rec.Record]:
    """The records of the answer's complete batches, every CRC checked."""
    data = p["records"] or b""
    return [
        r
        for _, raw in rec.split_batches(bytes(data), check_crc=True, allow_partial=True)
        for r in rec.decode_records(bytes(raw))
    ]


def accept_all() -> list[dict[str, Any]]:
    return [{"first_offset": 0, "last_offset": N - 1, "acknowledge_types": [ACCEPT]}]


@pytest.fixture
def cluster() -> Iterator[mockkafka.Cluster]:
    with mockkafka.Cluster(brokers=1) as c:
        c.create_topic("t")
        c.set_group_config("sg", {"share.auto.offset.reset": "earliest"})
        yield c


def _produce(cluster: mockkafka.Cluster) -> None:
    """The original records: offsets 0-2 in one gzip batch, offset 3 in its own."""
    recs = _original()
    batch = rec.encode_batch(recs[:3], compression=CompressionType.GZIP, base_timestamp=TS)
    b = cluster.brokers[0]
    with Raw(b.host, b.port) as r:
        body = {
            "transactional_id": None,
            "acks": -1,
            "timeout_ms": 5000,
            "topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": batch}]}],
        }
        resp = r.request("Produce", 9, body)
        assert resp["responses"][0]["partition_responses"][0]["error_code"] == 0
    last = recs[3]
    cluster.produce(
        "t", last.value, key=last.key, headers=list(last.headers), timestamp=last.timestamp
    )


@pytest.fixture
def member(cluster: mockkafka.Cluster) -> Iterator[Member]:
    _produce(cluster)
    b = cluster.brokers[0]
    with Raw(b.host, b.port) as r:
        yield Member(r, cluster.topic("t").topic_id)


def _garbled(a: bytes, b: bytes) -> bool:
    return len(a) == len(b) and all(x != y for x, y in zip(a, b, strict=True))


Expect = Callable[[rec.Record, rec.Record], bool]

EDITS: list[tuple[str, dict[str, Any], Expect]] = [
    (
        "corrupt_payload",
        {"seed": 3},
        lambda o, g: _garbled(o.value, g.value) and (g.key, g.headers) == (o.key, o.headers),
    ),
    (
        "corrupt_payload",
        {"part": "key", "seed": 3},
        lambda o, g: _garbled(o.key, g.key) and (g.value, g.headers) == (o.value, o.headers),
    ),
    (
        "corrupt_payload",
        {"part": "headers"},
        lambda o, g: _garbled(o.headers[0][1], g.headers[0][1]) and g.value == o.value,
    ),
    (
        "schema_id",
        {"id": 4242},
        lambda o, g: g.value == struct.pack(">bi", 0, 4242) + o.value[5:] and g.key == o.key,
    ),
    ("schema_id", {"magic": 1}, lambda o, g: g.value == b"\x01" + o.value[1:]),
    (
        "skew_timestamps",
        {"ms": -3_600_000},
        lambda o, g: g.timestamp == o.timestamp - 3_600_000 and g.value == o.value,
    ),
    ("skew_timestamps", {"ms": 86_400_000}, lambda o, g: g.timestamp == o.timestamp + 86_400_000),
]


@pytest.mark.parametrize(
    ("action", "kwargs", "expect"),
    EDITS,
    ids=[f"{a}({','.join(f'{k}={v}' for k, v in kw.items())})" for a, kw, _ in EDITS],
)
def test_an_edited_share_fetch_answer_is_acquired_and_acknowledged_as_any(
    cluster: mockkafka.Cluster,
    member: Member,
    action: str,
    kwargs: dict[str, Any],
    expect: Expect,
) -> None:
    on = cluster.faults.on("ShareFetch", topic="t").every_time()
    rule: Rule = getattr(on, action)(**kwargs)
    first = member.fetch()
    got = records(first)  # every batch re-checksummed: the CRC check passes
    original = _original()
    assert [r.offset for r in got] == list(range(N))
    assert all(expect(o, g) for o, g in zip(original, got, strict=True)), got
    assert acquired(first) == [(0, N - 1, 1)]  # what the broker acquired, as it said
    assert rule.fired == 1
    # acknowledged by offset: the edit changes nothing the share group tracks
    after = member.fetch(acks=accept_all())
    assert after["acknowledge_error_code"] == 0
    assert acquired(after) == [] and not after["records"]
    # the empty answer is a match the rule declined, and says so
    assert (rule.fired, rule.matched) == (1, 2)
    assert rule.declined == {"the answer carried no records of topic 't'": 1}
    view = cluster.share_group("sg").partition("t", 0)
    assert view.start_offset == N and view.records == {}
    # the log still holds what the producer wrote
    stored = cluster.topic("t").partition(0).records()
    assert [(r.key, r.value, r.timestamp) for r in stored] == [
        (o.key, o.value, o.timestamp) for o in original
    ]
    fired_on = [e.faults for e in cluster.traffic.requests("ShareFetch")]
    assert fired_on == [[rule.name], []]


def test_released_edited_records_are_delivered_again_from_the_log(
    cluster: mockkafka.Cluster, member: Member
) -> None:
    rule = cluster.faults.on("ShareFetch").once().corrupt_payload(seed=1)
    first = member.fetch()
    assert all(_garbled(o.value, g.value) for o, g in zip(_original(), records(first), strict=True))
    release = [{"first_offset": 0, "last_offset": N - 1, "acknowledge_types": [RELEASE]}]
    again = member.fetch(acks=release)
    # released, acquired again with delivery count 2; the rule is used up: the log's bytes
    assert acquired(again) == [(0, N - 1, 2)]
    assert [r.value for r in records(again)] == [o.value for o in _original()]
    assert rule.fired == 1
    done = member.fetch(acks=accept_all())
    assert done["acknowledge_error_code"] == 0
    assert cluster.share_group("sg").partition("t", 0).start_offset == N


def test_every_answer_with_records_fires_once_and_empty_answers_are_declined_matches(
    cluster: mockkafka.Cluster, member: Member
) -> None:
    rule = cluster.faults.on("ShareFetch").every_time().skew_timestamps(ms=1000)
    # record-limit mode, two records an answer: two answers carry edits
    for n in range(2):
        acks = [{"first_offset": 0, "last_offset": 1, "acknowledge_types": [ACCEPT]}] if n else []
        p = member.fetch(acks=acks, max_records=2, share_acquire_mode=1)
        assert acquired(p) == [(2 * n, 2 * n + 1, 1)]
        # the whole gzip batch travels; the client hands out the acquired offsets only
        assert all(r.timestamp == TS + r.offset + 1000 for r in records(p))
    assert rule.fired == 2
    acks = [{"first_offset": 2, "last_offset": 3, "acknowledge_types": [ACCEPT]}]
    empty = member.fetch(acks=acks)
    assert acquired(empty) == [] and empty["acknowledge_error_code"] == 0
    assert not member.fetch().get("records")  # nothing left: the partition is not in the answer
    # the empty answers matched, and the rule says why it did not act on them
    assert (rule.fired, rule.matched) == (2, 4)
    assert rule.declined == {"the answer carried no records of any partition": 2}
    assert cluster.share_group("sg").partition("t", 0).start_offset == N


@pytest.mark.filterwarnings("ignore::mockkafka.UnfiredRuleWarning")  # the point of the test
def test_an_edit_with_nothing_to_change_does_not_fire(cluster: mockkafka.Cluster) -> None:
    cluster.produce("t", b"plain json, no registry header")
    cluster.produce("t", None)
    rule = cluster.faults.on("ShareFetch").every_time().schema_id(id=1)
    nulls = cluster.faults.on("ShareFetch").every_time().corrupt_payload(part="key")
    b = cluster.brokers[0]
    with Raw(b.host, b.port) as r:
        member = Member(r, cluster.topic("t").topic_id)
        p = member.fetch()
        assert [r.value for r in records(p)] == [b"plain json, no registry header", None]
        assert acquired(p) == [(0, 1, 1)]
    assert (rule.fired, nulls.fired) == (0, 0)
    assert cluster.traffic.requests("ShareFetch")[0].faults == []


def test_corrupt_batch_breaks_the_first_batch_crc_of_a_share_fetch_answer(
    cluster: mockkafka.Cluster, member: Member
) -> None:
    rule = cluster.faults.on("ShareFetch").once().corrupt_batch()
    p = member.fetch()
    assert acquired(p) == [(0, N - 1, 1)]
    data = bytes(p["records"])
    with pytest.raises(rec.ProtocolError):
        rec.split_batches(data, check_crc=True)
    (first, second) = rec.split_batches(data)
    with pytest.raises(rec.ProtocolError):
        rec.decode_batch(bytes(first[1]))
    assert [r.offset for r in rec.decode_batch(bytes(second[1]))[1]] == [3]
    assert rule.fired == 1
    # the consumer that cannot read them releases them; they come back intact
    release = [{"first_offset": 0, "last_offset": N - 1, "acknowledge_types": [RELEASE]}]
    again = member.fetch(acks=release)
    assert acquired(again) == [(0, N - 1, 2)] and len(records(again)) == N


def test_partial_trailing_batch_never_cuts_an_acquired_batch(
    cluster: mockkafka.Cluster, member: Member
) -> None:
    rule = cluster.faults.on("ShareFetch").every_time().partial_trailing_batch()
    # batch-optimized mode with max_records 1: the gzip batch (offsets 0-2) is acquired
    p = member.fetch(max_records=1)
    assert acquired(p) == [(0, 2, 1)]
    data = bytes(p["records"])
    complete = rec.split_batches(data, allow_partial=True)
    assert [r.offset for r in records(p)] == [0, 1, 2]  # every acquired record whole
    cut = data[sum(len(raw) for _, raw in complete) :]
    assert cut and cut[16] == 2  # the next log batch (offset 3) cut, as v2, not down-converted
    with pytest.raises(rec.ProtocolError):
        rec.split_batches(data, allow_partial=False)
    assert rule.fired == 1
    # offset 3 is the last record: nothing follows it in the log to cut, so no edit
    acks = [{"first_offset": 0, "last_offset": 2, "acknowledge_types": [ACCEPT]}]
    last = member.fetch(acks=acks)
    assert acquired(last) == [(3, 3, 1)] and [r.offset for r in records(last)] == [3]
    assert rule.fired == 1
    assert cluster.share_group("sg").partition("t", 0).offsets("Acquired") == [3]


def test_a_rule_on_a_topic_edits_the_later_fetches_of_a_share_session(
    cluster: mockkafka.Cluster, member: Member
) -> None:
    # After the session opens, a ShareFetch names only the partitions it adds or
    # acknowledges; it still fetches from all of the session's (the Java client's requests)
    rule = cluster.faults.on("ShareFetch", topic="t", partition=0).every_time()
    rule = rule.skew_timestamps(ms=1000)
    for n in range(2):
        p = member.fetch(named=n == 0, max_records=2, share_acquire_mode=1)
        assert acquired(p) == [(2 * n, 2 * n + 1, 1)]
        assert all(r.timestamp == TS + r.offset + 1000 for r in records(p))
    assert rule.fired == 2
    assert [e.faults for e in cluster.traffic.requests("ShareFetch", topic="t")] == [
        [rule.name],
        [rule.name],
    ]


def test_traffic_on_a_topic_lists_every_fetch_of_a_share_session_holding_it(
    cluster: mockkafka.Cluster, member: Member
) -> None:
    # no rule is there: the traffic log's own filter sees the session's partitions too
    member.fetch(max_records=2, share_acquire_mode=1)
    member.fetch(named=False, max_records=2, share_acquire_mode=1)
    assert len(cluster.traffic.requests("ShareFetch", topic="t", partition=0)) == 2
    assert cluster.traffic.requests("ShareFetch", topic="other") == []

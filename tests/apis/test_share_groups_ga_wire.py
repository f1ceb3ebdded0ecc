"""Share groups as Kafka 4.1+ serves them (KIP-932 GA, KIP-1206, KIP-1222) over a real socket:
ShareGroupHeartbeat/Describe v1, ShareFetch and ShareAcknowledge v1-v2 (``max_records``, the
acquire modes, ``batch_size``, RENEW acknowledgements, ``acquisition_lock_timeout_ms``) and
share sessions that close with their connection. (confluent-kafka's ShareConsumer drives the
same versions: tests/interop/test_share_confluent.py.)"""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

import mockkafka
from tests.robustness._wire import Raw

ACCEPT, RELEASE, RENEW = 1, 2, 4
BATCH_OPTIMIZED, RECORD_LIMIT = 0, 1


def _raw(cluster: mockkafka.Cluster) -> Raw:
    b = cluster.brokers[0]
    return Raw(b.host, b.port)


def _join(r: Raw, group: str, topic: str, member_id: str) -> dict[str, Any]:
    body = {"group_id": group, "member_id": member_id, "member_epoch": 0}
    out: dict[str, Any] = r.request(
        "ShareGroupHeartbeat", 1, {**body, "subscribed_topic_names": [topic]}
    )
    return out


def _fetch(
    r: Raw,
    member_id: str,
    topic_id: uuid.UUID,
    epoch: int,
    *,
    version: int = 2,
    acks: list[dict[str, Any]] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    body = {
        "group_id": "sg",
        "member_id": member_id,
        "share_session_epoch": epoch,
        "max_wait_ms": 0,
        "min_bytes": 1,
        "max_bytes": 1 << 20,
        "max_records": 500,
        "batch_size": 500,
        "topics": [
            {
                "topic_id": topic_id,
                "partitions": [{"partition_index": 0, "acknowledgement_batches": acks or []}],
            }
        ],
        **extra,
    }
    out: dict[str, Any] = r.request("ShareFetch", version, body)
    return out


def _acquired(resp: dict[str, Any]) -> list[tuple[int, int, int]]:
    return [
        (a["first_offset"], a["last_offset"], a["delivery_count"])
        for t in resp["responses"]
        for p in t["partitions"]
        for a in p["acquired_records"]
    ]


def _batch_of(cluster: mockkafka.Cluster, topic: str, n: int) -> None:
    """``n`` records in one record batch (a real producer, flushed once)."""
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": cluster.bootstrap_servers, "linger.ms": 5000})
    for i in range(n):
        p.produce(topic, f"r{i}".encode(), partition=0)
    assert p.flush(10) == 0


def _wait_released(cluster: mockkafka.Cluster) -> None:
    """Until nothing of ``sg``/t-0 is acquired (the server sees a closed socket a moment
    after the client closed it); fails after 5 s."""
    deadline = time.monotonic() + 5
    while cluster.share_group("sg").partition("t", 0).offsets("Acquired"):
        assert time.monotonic() < deadline, "the closed connection's records stayed acquired"
        time.sleep(0.02)


@pytest.fixture
def cluster() -> Any:
    with mockkafka.Cluster(brokers=1) as c:
        c.create_topic("t")
        c.set_group_config("sg", {"share.auto.offset.reset": "earliest"})
        yield c


def test_the_ga_share_versions_are_advertised(cluster: mockkafka.Cluster) -> None:
    with _raw(cluster) as r:
        body = r.request(
            "ApiVersions", 3, {"client_software_name": "t", "client_software_version": "1"}
        )
    got = {k["api_key"]: (k["min_version"], k["max_version"]) for k in body["api_keys"]}
    assert {k: got[k] for k in (76, 77, 78, 79)} == {76: (0, 1), 77: (0, 1), 78: (0, 2), 79: (0, 2)}


def test_a_v1_heartbeat_needs_the_client_member_id(cluster: mockkafka.Cluster) -> None:
    with _raw(cluster) as r:
        assert _join(r, "sg", "t", "")["error_code"] == mockkafka.ErrorCode.INVALID_REQUEST
        joined = _join(r, "sg", "t", "my-own-id")
        assert (joined["error_code"], joined["member_id"]) == (0, "my-own-id")
        described = r.request("ShareGroupDescribe", 1, {"group_ids": ["sg"]})
    (g,) = described["groups"]
    assert [m["member_id"] for m in g["members"]] == ["my-own-id"]


def test_max_records_rounds_to_batches_or_cuts_exactly(cluster: mockkafka.Cluster) -> None:
    _batch_of(cluster, "t", 10)
    tid = cluster.topic("t").topic_id
    with _raw(cluster) as r:
        _join(r, "sg", "t", "m1")
        # batch-optimized (the default): the whole batch, past max_records
        first = _fetch(r, "m1", tid, 0, max_records=3)
        assert _acquired(first) == [(0, 9, 1)]
        assert first["acquisition_lock_timeout_ms"] == 30000
        release = [{"first_offset": 0, "last_offset": 9, "acknowledge_types": [RELEASE]}]
        # released, then acquired again: record-limit gives exactly max_records
        again = _fetch(
            r, "m1", tid, 1, acks=release, max_records=1, share_acquire_mode=RECORD_LIMIT
        )
        assert _acquired(again) == [(0, 0, 2)]
        cut = _fetch(r, "m1", tid, 2, max_records=4, share_acquire_mode=RECORD_LIMIT)
        assert _acquired(cut) == [(1, 4, 2)]
        # batch_size splits what is acquired into runs of at most that many records
        split = _fetch(r, "m1", tid, 3, max_records=100, batch_size=2)
        assert _acquired(split) == [(5, 6, 2), (7, 8, 2), (9, 9, 2)]
    _wait_released(cluster)  # the connection closed: everything released
    assert cluster.share_group("sg").partition("t", 0).offsets("Available") == list(range(10))


def test_record_limit_cuts_new_batches_and_the_next_fetch_continues(
    cluster: mockkafka.Cluster,
) -> None:
    _batch_of(cluster, "t", 5)
    tid = cluster.topic("t").topic_id
    with _raw(cluster) as r:
        _join(r, "sg", "t", "m1")
        a = _fetch(r, "m1", tid, 0, max_records=2, share_acquire_mode=RECORD_LIMIT)
        b = _fetch(r, "m1", tid, 1, max_records=2, share_acquire_mode=RECORD_LIMIT)
        c = _fetch(r, "m1", tid, 2, max_records=2, share_acquire_mode=RECORD_LIMIT)
        assert [_acquired(x) for x in (a, b, c)] == [[(0, 1, 1)], [(2, 3, 1)], [(4, 4, 1)]]
        # every answer carries the whole batch; the client hands out the acquired offsets only
        (p,) = b["responses"][0]["partitions"]
        assert p["records"]
        bad = _fetch(r, "m1", tid, 3, share_acquire_mode=7)
        assert bad["error_code"] == mockkafka.ErrorCode.INVALID_REQUEST


def test_renew_keeps_records_acquired_and_restarts_the_lock(cluster: mockkafka.Cluster) -> None:
    cluster.set_group_config("sg", {"share.record.lock.duration.ms": "1500"})
    cluster.produce("t", "x")
    tid = cluster.topic("t").topic_id
    renew = [{"first_offset": 0, "last_offset": 0, "acknowledge_types": [RENEW]}]
    with _raw(cluster) as r:
        _join(r, "sg", "t", "m1")
        got = _fetch(r, "m1", tid, 0)
        assert _acquired(got) == [(0, 0, 1)] and got["acquisition_lock_timeout_ms"] == 1500
        # RENEW without is_renew_ack is refused and changes nothing
        refused = _fetch(r, "m1", tid, 1, acks=renew)
        (p,) = refused["responses"][0]["partitions"]
        assert p["acknowledge_error_code"] == mockkafka.ErrorCode.INVALID_REQUEST
        deadline = time.monotonic() + 1.0
        renewed_at = 0
        for epoch in (2, 3, 4):  # renew every 0.6 s: the 1.5 s lock never runs out
            time.sleep(0.6)
            ack = r.request(
                "ShareAcknowledge",
                2,
                {
                    "group_id": "sg",
                    "member_id": "m1",
                    "share_session_epoch": epoch,
                    "is_renew_ack": True,
                    "topics": [
                        {
                            "topic_id": tid,
                            "partitions": [
                                {"partition_index": 0, "acknowledgement_batches": renew}
                            ],
                        }
                    ],
                },
            )
            assert ack["error_code"] == 0 and ack["acquisition_lock_timeout_ms"] == 1500
            assert ack["responses"][0]["partitions"][0]["error_code"] == 0
            renewed_at = epoch
        assert time.monotonic() > deadline  # past the first lock's end
        assert cluster.share_group("sg").partition("t", 0).offsets("Acquired") == [0]
        # a renewing ShareFetch acknowledges and fetches nothing
        cluster.produce("t", "y")
        resp = _fetch(r, "m1", tid, renewed_at + 1, acks=renew, is_renew_ack=True)
        (p,) = resp["responses"][0]["partitions"]
        assert p["acknowledge_error_code"] == 0 and p["acquired_records"] == []
        done = [{"first_offset": 0, "last_offset": 0, "acknowledge_types": [ACCEPT]}]
        _fetch(r, "m1", tid, renewed_at + 2, acks=done)
    assert cluster.share_group("sg").partition("t", 0).start_offset >= 1


def test_closing_the_connection_releases_a_v1_session_but_not_a_v0_one(
    cluster: mockkafka.Cluster,
) -> None:
    cluster.produce("t", "a")
    tid = cluster.topic("t").topic_id
    with _raw(cluster) as r:
        _join(r, "sg", "t", "m1")
        assert _acquired(_fetch(r, "m1", tid, 0, version=1)) == [(0, 0, 1)]
        assert cluster.share_group("sg").partition("t", 0).offsets("Acquired") == [0]
    _wait_released(cluster)
    assert cluster.share_group("sg").partition("t", 0).offsets("Available") == [0]

    # Kafka 4.0's v0 session outlives its connection: the record waits for its lock
    with _raw(cluster) as r:
        body = {
            "group_id": "sg",
            "member_id": "m1",
            "share_session_epoch": 0,
            "max_wait_ms": 0,
            "min_bytes": 1,
            "max_bytes": 1 << 20,
            "topics": [
                {
                    "topic_id": tid,
                    "partitions": [{"partition_index": 0, "partition_max_bytes": 1 << 20}],
                }
            ],
        }
        assert _acquired(r.request("ShareFetch", 0, body)) == [(0, 0, 2)]
    time.sleep(0.2)
    assert cluster.share_group("sg").partition("t", 0).offsets("Acquired") == [0]


def _describe_offsets(r: Raw, topics: list[dict[str, Any]] | None) -> dict[str, Any]:
    body = {"groups": [{"group_id": "sg", "topics": topics}]}
    (g,) = r.request("DescribeShareGroupOffsets", 1, body)["groups"]
    out: dict[str, Any] = g
    return out


def test_share_group_offsets_are_described_altered_and_deleted(
    cluster: mockkafka.Cluster,
) -> None:
    for i in range(4):
        cluster.produce("t", f"v{i}")
    tid = cluster.topic("t").topic_id
    accept = [{"first_offset": 0, "last_offset": 1, "acknowledge_types": [ACCEPT]}]
    with _raw(cluster) as r:
        _join(r, "sg", "t", "m1")
        _fetch(r, "m1", tid, 0, max_records=2, share_acquire_mode=RECORD_LIMIT)
        _fetch(r, "m1", tid, 1, acks=accept, max_records=1, share_acquire_mode=RECORD_LIMIT)
        g = _describe_offsets(r, None)
        (t,) = g["topics"]
        assert (t["topic_name"], t["topic_id"]) == ("t", tid)
        # SPSO 2 (0 and 1 accepted), offset 2 acquired, 3 never delivered: lag 2
        assert [(p["partition_index"], p["start_offset"], p["lag"]) for p in t["partitions"]] == [
            (0, 2, 2)
        ]
        asked = _describe_offsets(
            r,
            [{"topic_name": "t", "partitions": [0, 5]}, {"topic_name": "nope", "partitions": [0]}],
        )
        assert [
            (t["topic_name"], p["partition_index"], p["error_code"], p["start_offset"])
            for t in asked["topics"]
            for p in t["partitions"]
        ] == [("t", 0, 0, 2), ("t", 5, 3, -1), ("nope", 0, 3, -1)]
        alter = {
            "group_id": "sg",
            "topics": [
                {"topic_name": "t", "partitions": [{"partition_index": 0, "start_offset": 0}]}
            ],
        }
        busy = r.request("AlterShareGroupOffsets", 0, alter)
        assert busy["error_code"] == mockkafka.ErrorCode.NON_EMPTY_GROUP
        deleting = r.request(
            "DeleteShareGroupOffsets", 0, {"group_id": "sg", "topics": [{"topic_name": "t"}]}
        )
        assert deleting["error_code"] == mockkafka.ErrorCode.NON_EMPTY_GROUP
        r.request(
            "ShareGroupHeartbeat", 1, {"group_id": "sg", "member_id": "m1", "member_epoch": -1}
        )
        altered = r.request("AlterShareGroupOffsets", 0, alter)
        assert altered["error_code"] == 0
        assert altered["responses"][0]["partitions"][0]["error_code"] == 0
        (p,) = _describe_offsets(r, None)["topics"][0]["partitions"]
        assert (p["start_offset"], p["lag"]) == (0, 4)
        negative = r.request(
            "AlterShareGroupOffsets",
            0,
            {
                "group_id": "sg",
                "topics": [
                    {"topic_name": "t", "partitions": [{"partition_index": 0, "start_offset": -3}]}
                ],
            },
        )
        assert negative["responses"][0]["partitions"][0]["error_code"] == (
            mockkafka.ErrorCode.INVALID_REQUEST
        )
        deleted = r.request(
            "DeleteShareGroupOffsets",
            0,
            {"group_id": "sg", "topics": [{"topic_name": "t"}, {"topic_name": "nope"}]},
        )
        assert [(t["topic_name"], t["error_code"]) for t in deleted["responses"]] == [
            ("t", 0),
            ("nope", mockkafka.ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
        ]
        assert _describe_offsets(r, None)["topics"] == []
        cg = r.request("DescribeShareGroupOffsets", 1, {"groups": [{"group_id": "nope"}]})
        assert cg["groups"][0]["error_code"] == mockkafka.ErrorCode.GROUP_ID_NOT_FOUND
        gone = r.request("DeleteGroups", 3, {"groups_names": ["sg"]})
        assert gone["results"][0]["error_code"] == 0
    assert cluster.share_groups() == []

"""KIP-932 share groups through ShareGroupHeartbeat / ShareFetch / ShareAcknowledge /
ShareGroupDescribe, sans-IO on a manual clock."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from mockkafka.cluster.configs import ResourceType, resource_configs
from mockkafka.cluster.produce import append_records
from mockkafka.cluster.share_groups import AcknowledgeType, simple_assign
from mockkafka.errors import ErrorCode
from mockkafka.protocol import records as rec
from mockkafka.views import share_group_view
from tests.groups.conftest import Harness, Parked

G = "sg"
ACCEPT, RELEASE, REJECT = AcknowledgeType.ACCEPT, AcknowledgeType.RELEASE, AcknowledgeType.REJECT


@pytest.fixture
def h() -> Harness:
    h = Harness(brokers=1)
    h.create_topic("t", 2)
    resource_configs(h.state, ResourceType.GROUP, G)["share.auto.offset.reset"] = "earliest"
    return h


def produce(h: Harness, partition: int, *values: str) -> None:
    topic = h.state.topics["t"]
    data = rec.encode_batch([(None, v.encode(), None, 1000) for v in values])
    assert append_records(h.state, topic, topic.partition(partition), data).error == 0


def tid(h: Harness) -> uuid.UUID:
    return h.state.topics["t"].topic_id


class ShareMember:
    """A minimal share consumer: heartbeats, one share session, fetches and acknowledges."""

    def __init__(self, h: Harness) -> None:
        self.h = h
        self.member_id = ""
        self.epoch = 0
        self.session_epoch = 0
        self.assigned: set[int] = set()

    def heartbeat(self, **body: Any) -> dict[str, Any]:
        r = self.h.sync_call(
            "ShareGroupHeartbeat",
            0,
            {
                "group_id": G,
                "member_id": self.member_id,
                "member_epoch": self.epoch,
                "subscribed_topic_names": ["t"] if self.epoch == 0 else None,
                **body,
            },
        )
        if r["error_code"] == 0:
            self.member_id, self.epoch = r["member_id"] or self.member_id, r["member_epoch"]
            if r["assignment"] is not None:
                self.assigned = {
                    p for tp in r["assignment"]["topic_partitions"] for p in tp["partitions"]
                }
        return r

    def fetch(
        self,
        acks: dict[int, list[tuple[int, int, int]]] | None = None,
        *,
        partitions: list[int] | None = None,
        max_wait_ms: int = 0,
        epoch: int | None = None,
    ) -> dict[str, Any] | Parked:
        parts = sorted(
            set(partitions if partitions is not None else self.assigned) | set(acks or {})
        )
        body = {
            "group_id": G,
            "member_id": self.member_id,
            "share_session_epoch": self.session_epoch if epoch is None else epoch,
            "max_wait_ms": max_wait_ms,
            "topics": [
                {
                    "topic_id": tid(self.h),
                    "partitions": [
                        {
                            "partition_index": p,
                            "partition_max_bytes": 1 << 20,
                            "acknowledgement_batches": [
                                {"first_offset": a, "last_offset": b, "acknowledge_types": [k]}
                                for a, b, k in (acks or {}).get(p, [])
                            ],
                        }
                        for p in parts
                    ],
                }
            ],
        }
        r = self.h.call("ShareFetch", 0, body)
        if epoch is None:
            self.session_epoch += 1
        return r

    def acknowledge(
        self, acks: dict[int, list[tuple[int, int, int]]], *, epoch: int | None = None
    ) -> dict[str, Any]:
        body = {
            "group_id": G,
            "member_id": self.member_id,
            "share_session_epoch": self.session_epoch if epoch is None else epoch,
            "topics": [
                {
                    "topic_id": tid(self.h),
                    "partitions": [
                        {
                            "partition_index": p,
                            "acknowledgement_batches": [
                                {"first_offset": a, "last_offset": b, "acknowledge_types": [k]}
                                for a, b, k in batches
                            ],
                        }
                        for p, batches in acks.items()
                    ],
                }
            ],
        }
        r = self.h.sync_call("ShareAcknowledge", 0, body)
        if epoch is None:
            self.session_epoch += 1
        return r


def acquired(resp: dict[str, Any] | Parked, partition: int = 0) -> list[tuple[int, int, int]]:
    assert isinstance(resp, dict), "parked"
    assert resp["error_code"] == 0, resp
    out = []
    for t in resp["responses"]:
        for p in t["partitions"]:
            if p["partition_index"] == partition:
                out += [
                    (a["first_offset"], a["last_offset"], a["delivery_count"])
                    for a in p["acquired_records"]
                ]
    return out


def part(resp: dict[str, Any] | Parked, partition: int) -> dict[str, Any]:
    assert isinstance(resp, dict)
    return next(
        p for t in resp["responses"] for p in t["partitions"] if p["partition_index"] == partition
    )


def states(h: Harness, partition: int = 0) -> dict[int, tuple[str, int]]:
    v = share_group_view(h.state, G).partition("t", partition)
    return {off: (st, n) for off, (st, n, _) in v.records.items()}


def joined(h: Harness, n: int = 1) -> list[ShareMember]:
    members = [ShareMember(h) for _ in range(n)]
    for m in members:
        assert m.heartbeat()["error_code"] == 0
    for m in members:  # everyone picks up the final assignment
        m.heartbeat()
    return members


def test_join_assigns_every_partition_and_describe_shows_the_member(h: Harness) -> None:
    (m,) = joined(h)
    assert m.assigned == {0, 1} and m.epoch >= 1
    d = h.sync_call("ShareGroupDescribe", 0, {"group_ids": [G, "nope"]})
    g, missing = d["groups"]
    assert g["error_code"] == 0 and g["group_state"] == "Stable" and g["assignor_name"] == "simple"
    assert [x["member_id"] for x in g["members"]] == [m.member_id]
    assert g["members"][0]["assignment"]["topic_partitions"][0]["topic_name"] == "t"
    assert missing["error_code"] == ErrorCode.GROUP_ID_NOT_FOUND


def test_more_members_than_partitions_share_partitions(h: Harness) -> None:
    members = joined(h, 3)
    owned = [m.assigned for m in members]
    assert all(owned) and set().union(*owned) == {0, 1}
    assert simple_assign({"a": ["t"], "b": ["t"], "c": ["t"]}, {"t": 2}) == {
        "a": {"t": {0}},
        "b": {"t": {1}},
        "c": {"t": {0}},
    }


def test_acquire_accept_and_the_start_offset_advances(h: Harness) -> None:
    produce(h, 0, "a", "b", "c")
    (m,) = joined(h)
    assert m.fetch() is not None  # epoch 0 opens the session and already acquires
    assert states(h) == {0: ("Acquired", 1), 1: ("Acquired", 1), 2: ("Acquired", 1)}
    r = m.fetch({0: [(0, 1, ACCEPT)]})
    assert part(r, 0)["acknowledge_error_code"] == 0
    v = share_group_view(h.state, G).partition("t", 0)
    assert v.start_offset == 2 and v.end_offset == 3 and v.offsets("Acquired") == [2]


def test_release_redelivers_with_a_higher_delivery_count_and_reject_never(h: Harness) -> None:
    produce(h, 0, "a", "b")
    (m,) = joined(h)
    assert acquired(m.fetch()) == [(0, 1, 1)]
    assert (
        m.acknowledge({0: [(0, 0, RELEASE), (1, 1, REJECT)]})["responses"][0]["partitions"][0][
            "error_code"
        ]
        == 0
    )
    assert acquired(m.fetch()) == [(0, 0, 2)]
    assert states(h) == {0: ("Acquired", 2), 1: ("Archived", 1)}


def test_two_members_on_one_partition_each_record_goes_to_one(h: Harness) -> None:
    produce(h, 0, "a")
    produce(h, 0, "b")
    a, b = joined(h, 2)
    first = acquired(a.fetch(partitions=[0]))
    second = acquired(b.fetch(partitions=[0]))
    assert first and not second  # ShareFetch acquires whole batches; nothing is left for b
    produce(h, 0, "c")
    assert acquired(b.fetch(partitions=[0])) == [(2, 2, 1)]
    # b may not acknowledge what a holds
    r = b.acknowledge({0: [(0, 0, ACCEPT)]})
    assert r["responses"][0]["partitions"][0]["error_code"] == ErrorCode.INVALID_RECORD_STATE


def test_the_acquisition_lock_expires_and_the_delivery_limit_archives(h: Harness) -> None:
    h.state.broker_configs["group.share.delivery.count.limit"] = "2"
    produce(h, 0, "a")
    (m,) = joined(h)
    assert acquired(m.fetch()) == [(0, 0, 1)]
    h.advance(29_999)
    assert states(h) == {0: ("Acquired", 1)}
    h.advance(1)  # group.share.record.lock.duration.ms = 30000
    assert states(h) == {0: ("Available", 1)}
    m.heartbeat()  # (the session timeout is 45 s)
    assert acquired(m.fetch()) == [(0, 0, 2)]
    h.advance(30_000)  # second delivery was the last one allowed
    v = share_group_view(h.state, G).partition("t", 0)
    assert v.start_offset == 1 and v.records == {}
    assert acquired(m.fetch()) == []


def test_group_config_overrides_the_lock_duration(h: Harness) -> None:
    resource_configs(h.state, ResourceType.GROUP, G)["share.record.lock.duration.ms"] = "1000"
    produce(h, 0, "a")
    (m,) = joined(h)
    acquired(m.fetch())
    h.advance(1000)
    assert states(h) == {0: ("Available", 1)}


def test_latest_is_the_default_start(h: Harness) -> None:
    resource_configs(h.state, ResourceType.GROUP, G).clear()
    produce(h, 0, "old")
    (m,) = joined(h)
    assert acquired(m.fetch()) == []
    produce(h, 0, "new")
    assert acquired(m.fetch()) == [(1, 1, 1)]


def test_a_fetch_parks_until_records_arrive(h: Harness) -> None:
    (m,) = joined(h)
    m.fetch()
    parked = m.fetch(max_wait_ms=5000)
    assert isinstance(parked, Parked) and not parked.done
    produce(h, 1, "x")
    h.state.notify(("partition", "t", 1))
    assert parked.done and acquired(parked.response, 1) == [(0, 0, 1)]  # type: ignore[arg-type]


def test_session_epochs_are_checked_and_closing_releases(h: Harness) -> None:
    produce(h, 0, "a")
    (m,) = joined(h)
    r = m.fetch(epoch=3)
    assert isinstance(r, dict) and r["error_code"] == ErrorCode.SHARE_SESSION_NOT_FOUND
    acquired(m.fetch())
    r = m.fetch(epoch=7)
    assert isinstance(r, dict) and r["error_code"] == ErrorCode.INVALID_SHARE_SESSION_EPOCH
    r = m.acknowledge({}, epoch=0)
    assert r["error_code"] == ErrorCode.INVALID_SHARE_SESSION_EPOCH
    assert m.acknowledge({}, epoch=-1)["error_code"] == 0
    assert states(h) == {0: ("Available", 1)}


def test_leaving_releases_the_members_records_and_rebalances(h: Harness) -> None:
    produce(h, 0, "a")
    a, b = joined(h, 2)
    holder = a if 0 in a.assigned else b
    other = b if holder is a else a
    acquired(holder.fetch())
    assert holder.heartbeat(member_epoch=-1)["error_code"] == 0
    assert states(h) == {0: ("Available", 1)}
    other.heartbeat()
    assert other.assigned == {0, 1}


def test_session_timeout_expires_a_silent_member(h: Harness) -> None:
    a, b = joined(h, 2)
    for _ in range(10):
        h.advance(5000)
        b.heartbeat()
    assert [m.member_id for m in share_group_view(h.state, G).members] == [b.member_id]
    assert a.heartbeat()["error_code"] == ErrorCode.UNKNOWN_MEMBER_ID


def test_heartbeat_errors(h: Harness) -> None:
    (m,) = joined(h)
    assert m.heartbeat(member_epoch=99)["error_code"] == ErrorCode.FENCED_MEMBER_EPOCH
    r = h.sync_call("ShareGroupHeartbeat", 0, {"group_id": G, "member_epoch": 0})
    assert r["error_code"] == ErrorCode.INVALID_REQUEST
    h.state.groups.consumer_group("cg", create=True)
    r = h.sync_call(
        "ShareGroupHeartbeat",
        0,
        {"group_id": "cg", "member_epoch": 0, "subscribed_topic_names": ["t"]},
    )
    assert r["error_code"] == ErrorCode.GROUP_ID_NOT_FOUND


def test_transaction_markers_and_aborted_records_under_read_committed(h: Harness) -> None:
    resource_configs(h.state, ResourceType.GROUP, G)["share.isolation.level"] = "read_committed"
    log = h.state.topics["t"].partition(0).log
    produce(h, 0, "plain")
    log.append_control(
        commit=False, producer_id=7, producer_epoch=0, coordinator_epoch=0, leader_epoch=0, now_ms=0
    )
    produce(h, 0, "after")
    (m,) = joined(h)
    assert acquired(m.fetch()) == [(0, 0, 1), (2, 2, 1)]  # the marker (offset 1) never
    assert states(h) == {0: ("Acquired", 1), 2: ("Acquired", 1)}


def test_group_share_max_size_refuses_one_member_too_many(h: Harness) -> None:
    h.state.broker_configs["group.share.max.size"] = "2"
    joined(h, 2)
    assert ShareMember(h).heartbeat()["error_code"] == ErrorCode.GROUP_MAX_SIZE_REACHED


def test_retention_and_truncation_move_the_window(h: Harness) -> None:
    produce(h, 0, "a")
    produce(h, 0, "b")
    (m,) = joined(h)
    assert acquired(m.fetch()) == [(0, 1, 1)]
    h.state.delete_records_before("t", 0, 1)  # retention: offset 0 is gone
    produce(h, 0, "c")
    assert acquired(m.fetch()) == [(2, 2, 1)]
    v = share_group_view(h.state, G).partition("t", 0)
    assert v.start_offset == 1 and v.offsets("Acquired") == [1, 2]
    h.state.truncate_log("t", 0, 2)  # unclean election: offset 2 is gone
    produce(h, 0, "d")  # takes offset 2 again: a new record, delivered afresh
    assert acquired(m.fetch()) == [(2, 2, 1)]
    assert states(h) == {1: ("Acquired", 1), 2: ("Acquired", 1)}

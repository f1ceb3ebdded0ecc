"""KIP-848 consumer groups through ConsumerGroupHeartbeat / ConsumerGroupDescribe."""

from __future__ import annotations

from typing import Any

import pytest

from mockkafka.cluster.groups import ConsumerGroup
from mockkafka.errors import ErrorCode
from mockkafka.views import group_view
from tests.groups.conftest import Harness

G = "cg"


class Member:
    """A minimal KIP-848 client: heartbeats, adopts assignments, acknowledges revocations."""

    def __init__(self, h: Harness, member_id: str, topics: list[str], **extra: Any) -> None:
        self.h = h
        self.member_id = member_id
        self.topics = topics
        self.extra = extra
        self.epoch = 0
        self.owned: dict[str, set[int]] = {}
        self.last: dict[str, Any] = {}

    def heartbeat(self, *, epoch: int | None = None) -> dict[str, Any]:
        ids = {t.topic_id: t.name for t in self.h.state.topics.values()}
        by_name = {v: k for k, v in ids.items()}
        body = {
            "group_id": G,
            "member_id": self.member_id,
            "member_epoch": self.epoch if epoch is None else epoch,
            "rebalance_timeout_ms": 5000,
            "subscribed_topic_names": self.topics,
            "topic_partitions": [
                {"topic_id": by_name[t], "partitions": sorted(ps)}
                for t, ps in self.owned.items()
                if ps
            ],
            **self.extra,
        }
        r = self.h.sync_call("ConsumerGroupHeartbeat", 1, body)
        self.last = r
        if r["error_code"] == 0:
            self.epoch = r["member_epoch"]
            if r["assignment"] is not None:
                self.owned = {
                    ids[tp["topic_id"]]: set(tp["partitions"])
                    for tp in r["assignment"]["topic_partitions"]
                }
        return r

    def parts(self) -> set[tuple[str, int]]:
        return {(t, p) for t, ps in self.owned.items() for p in ps}


def group(h: Harness) -> ConsumerGroup:
    g = h.state.groups.get(G)
    assert isinstance(g, ConsumerGroup)
    return g


def converge(h: Harness, members: list[Member], rounds: int = 10) -> None:
    """Heartbeat round-robin, checking no partition ever has two owners."""
    for _ in range(rounds):
        for m in members:
            m.heartbeat()
            seen: set[tuple[str, int]] = set()
            for x in members:
                assert not (seen & x.parts()), "a partition has two owners"
                seen |= x.parts()


def test_single_member_gets_every_partition(h: Harness) -> None:
    h.create_topic("t", 4)
    m = Member(h, "m1", ["t"])
    r = m.heartbeat()
    assert r["error_code"] == 0 and r["member_epoch"] == 1
    assert r["heartbeat_interval_ms"] == 500  # test-friendly default (Kafka: 5000)
    assert m.parts() == {("t", i) for i in range(4)}
    assert group(h).state_name == "Stable"


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({}, 500),
        ({"group_consumer_heartbeat_interval_ms": 5000}, 5000),  # Kafka's default
        ({"broker_configs": (("group.consumer.heartbeat.interval.ms", "250"),)}, 250),
    ],
)
def test_heartbeat_interval_is_small_by_default_and_kafkas_one_option_away(
    options: dict[str, Any], expected: int
) -> None:
    h = Harness(brokers=1, **options)
    h.create_topic("t", 1)
    assert Member(h, "m1", ["t"]).heartbeat()["heartbeat_interval_ms"] == expected


def test_second_member_gets_partitions_only_after_revocation() -> None:
    h = Harness(brokers=1)
    h.create_topic("t", 4)
    a, b = Member(h, "a", ["t"]), Member(h, "b", ["t"])
    a.heartbeat()
    b.heartbeat()
    assert b.parts() == set(), "a still owns everything"
    assert group(h).state_name == "Reconciling"
    a.heartbeat()  # told to keep 2 partitions; its next heartbeat acknowledges
    assert len(a.parts()) == 2
    a.heartbeat()
    b.heartbeat()
    assert len(b.parts()) == 2 and not (a.parts() & b.parts())
    assert a.epoch == b.epoch == group(h).assignment_epoch
    converge(h, [a, b])
    assert group(h).state_name == "Stable"
    view = group_view(h.state, G)
    assert view.type == "consumer" and len(view.members) == 2


def test_three_members_share_without_overlap_and_leaver_partitions_move(h: Harness) -> None:
    h.create_topic("t", 6)
    ms = [Member(h, f"m{i}", ["t"]) for i in range(3)]
    converge(h, ms)
    assert sorted(len(m.parts()) for m in ms) == [2, 2, 2]
    r = ms[0].heartbeat(epoch=-1)
    assert r["member_epoch"] == -1
    ms[0].owned = {}
    converge(h, ms[1:])
    assert sorted(len(m.parts()) for m in ms[1:]) == [3, 3]


def test_member_expires_after_session_timeout() -> None:
    h = Harness(brokers=1, broker_configs=(("group.consumer.session.timeout.ms", "3000"),))
    h.create_topic("t", 2)
    a, b = Member(h, "a", ["t"]), Member(h, "b", ["t"])
    converge(h, [a, b])
    for _ in range(3):
        h.advance(1000)
        a.heartbeat()
    assert "b" not in group(h).members
    converge(h, [a])
    assert len(a.parts()) == 2
    assert b.heartbeat()["error_code"] == ErrorCode.UNKNOWN_MEMBER_ID


def test_member_not_revoking_in_time_is_fenced(h: Harness) -> None:
    h.create_topic("t", 2)
    a, b = Member(h, "a", ["t"]), Member(h, "b", ["t"])
    a.heartbeat()
    b.heartbeat()
    a.heartbeat()  # a is asked to revoke, never acknowledges
    h.advance(6000)
    assert "a" not in group(h).members
    b.heartbeat()
    assert len(b.parts()) == 2


def test_epoch_errors(h: Harness) -> None:
    h.create_topic("t", 1)
    a = Member(h, "a", ["t"])
    a.heartbeat()
    assert a.heartbeat(epoch=7)["error_code"] == ErrorCode.FENCED_MEMBER_EPOCH
    assert Member(h, "zz", ["t"]).heartbeat(epoch=3)["error_code"] == ErrorCode.UNKNOWN_MEMBER_ID
    bad = Member(h, "q", ["t"], server_assignor="nope")
    assert bad.heartbeat()["error_code"] == ErrorCode.UNSUPPORTED_ASSIGNOR


def test_range_assignor(h: Harness) -> None:
    h.create_topic("t", 3)
    h.create_topic("u", 3)
    a = Member(h, "a", ["t", "u"], server_assignor="range")
    b = Member(h, "b", ["t", "u"], server_assignor="range")
    converge(h, [a, b])
    assert a.parts() == {("t", 0), ("t", 1), ("u", 0), ("u", 1)}
    assert b.parts() == {("t", 2), ("u", 2)}


def test_new_topic_partitions_are_assigned(h: Harness) -> None:
    h.create_topic("t", 1)
    a = Member(h, "a", ["t"])
    a.heartbeat()
    h.state.create_partitions("t", 3)
    a.heartbeat()
    assert len(a.parts()) == 3


def test_static_member_leaves_with_minus_two_and_rejoins_with_its_assignment(h: Harness) -> None:
    h.create_topic("t", 2)
    a = Member(h, "a", ["t"], instance_id="i-a")
    b = Member(h, "b", ["t"], instance_id="i-b")
    converge(h, [a, b])
    epoch_before = group(h).group_epoch
    owned = a.parts()
    assert a.heartbeat(epoch=-2)["member_epoch"] == -2
    a2 = Member(h, "a2", ["t"], instance_id="i-a")
    r = a2.heartbeat()
    assert r["error_code"] == 0 and a2.parts() == owned
    assert group(h).group_epoch == epoch_before, "no rebalance"
    dup = Member(h, "a3", ["t"], instance_id="i-a")
    assert dup.heartbeat()["error_code"] == ErrorCode.UNRELEASED_INSTANCE_ID


def test_offset_commit_member_epoch_checks(h: Harness) -> None:
    h.create_topic("t", 1)
    a = Member(h, "a", ["t"])
    a.heartbeat()

    def commit(member: str, epoch: int, version: int = 9) -> int:
        r = h.sync_call(
            "OffsetCommit",
            version,
            {
                "group_id": G,
                "member_id": member,
                "generation_id_or_member_epoch": epoch,
                "topics": [
                    {"name": "t", "partitions": [{"partition_index": 0, "committed_offset": 5}]}
                ],
            },
        )
        return int(r["topics"][0]["partitions"][0]["error_code"])

    assert commit("a", a.epoch) == 0
    assert commit("a", a.epoch - 1) == ErrorCode.STALE_MEMBER_EPOCH
    # Kafka answers any epoch mismatch with STALE_MEMBER_EPOCH (retriable for the Java
    # client), never FENCED_MEMBER_EPOCH, which would make it leave the group.
    assert commit("a", a.epoch + 1) == ErrorCode.STALE_MEMBER_EPOCH
    assert commit("x", a.epoch) == ErrorCode.UNKNOWN_MEMBER_ID
    assert commit("", -1) == ErrorCode.UNKNOWN_MEMBER_ID
    assert commit("a", a.epoch, version=8) == ErrorCode.UNSUPPORTED_VERSION
    f = h.sync_call(
        "OffsetFetch",
        9,
        {"groups": [{"group_id": G, "member_id": "a", "member_epoch": a.epoch, "topics": None}]},
        broker=h.coordinator(G),
    )
    assert f["groups"][0]["error_code"] == 0
    assert f["groups"][0]["topics"][0]["partitions"][0]["committed_offset"] == 5


def test_consumer_group_describe_and_list(h: Harness) -> None:
    h.create_topic("t", 2)
    a = Member(h, "a", ["t"])
    a.heartbeat()
    d = h.sync_call("ConsumerGroupDescribe", 0, {"group_ids": [G, "nope"]}, broker=h.coordinator(G))
    dg = d["groups"][0]
    assert (
        dg["error_code"] == 0 and dg["group_state"] == "Stable" and dg["assignor_name"] == "uniform"
    )
    (mem,) = dg["members"]
    assert mem["member_id"] == "a" and mem["member_epoch"] == 1
    assert mem["assignment"]["topic_partitions"][0]["topic_name"] == "t"
    assert sorted(mem["assignment"]["topic_partitions"][0]["partitions"]) == [0, 1]
    assert d["groups"][1]["error_code"] == ErrorCode.GROUP_ID_NOT_FOUND
    r = h.sync_call("ListGroups", 5, {"types_filter": ["consumer"]}, broker=h.coordinator(G))
    assert [(g["group_id"], g["group_type"], g["protocol_type"]) for g in r["groups"]] == [
        (G, "consumer", "consumer")
    ]
    classic = h.sync_call("DescribeGroups", 5, {"groups": [G]}, broker=h.coordinator(G))
    assert classic["groups"][0]["group_state"] == "Dead"
    v1 = h.sync_call("ConsumerGroupDescribe", 1, {"group_ids": [G]}, broker=h.coordinator(G))
    assert [m["member_type"] for m in v1["groups"][0]["members"]] == [1]  # KIP-1099: consumer

"""Share groups (KIP-932) over a real socket: what ApiVersions advertises, fault rules that
target the share APIs by group/topic/partition, and the cluster verbs, views and waits.
(The Java tier drives real KafkaShareConsumers: tests/interop/test_java_share_groups.py.)"""

from __future__ import annotations

import threading
from typing import Any

import pytest

import mockkafka
from tests.robustness._wire import Raw

SHARE_KEYS = {76, 77, 78, 79}


def raw(cluster: mockkafka.Cluster) -> Raw:
    b = cluster.brokers[0]
    return Raw(b.host, b.port)


def advertised(cluster: mockkafka.Cluster) -> dict[int, tuple[int, int]]:
    with raw(cluster) as r:
        body = r.request(
            "ApiVersions", 3, {"client_software_name": "t", "client_software_version": "1"}
        )
    return {k["api_key"]: (k["min_version"], k["max_version"]) for k in body["api_keys"]}


def join(r: Raw, group: str, topic: str) -> dict[str, Any]:
    body = {
        "group_id": group,
        "member_id": "",
        "member_epoch": 0,
        "subscribed_topic_names": [topic],
    }
    out: dict[str, Any] = r.request("ShareGroupHeartbeat", 0, body)
    return out


def share_fetch(r: Raw, group: str, member_id: str, topic_id: Any, epoch: int, **extra: Any) -> Any:
    return r.request(
        "ShareFetch",
        0,
        {
            "group_id": group,
            "member_id": member_id,
            "share_session_epoch": epoch,
            "max_wait_ms": 0,
            "min_bytes": 1,
            "max_bytes": 1 << 20,
            "topics": [
                {
                    "topic_id": topic_id,
                    "partitions": [{"partition_index": 0, "partition_max_bytes": 1 << 20, **extra}],
                }
            ],
        },
    )


V0 = dict.fromkeys(SHARE_KEYS, (0, 0))


@pytest.mark.parametrize(
    ("options", "served"),
    [
        ({}, {76: (0, 1), 77: (0, 1), 78: (0, 2), 79: (0, 2)}),  # 4.0 early access and 4.1+ GA
        ({"kafka_version": "4.0"}, V0),
        ({"kafka_version": "3.9"}, {}),
        ({"kafka_version": "4.1"}, dict.fromkeys(SHARE_KEYS, (1, 1))),  # what 4.1 advertised
        ({"kafka_version": "4.2"}, {76: (1, 1), 77: (1, 1), 78: (1, 2), 79: (1, 2)}),
        ({"config": {"group.share.enable": "false"}}, {}),
    ],
)
def test_share_apis_are_advertised_while_share_groups_are_enabled(
    options: dict[str, Any], served: dict[int, tuple[int, int]]
) -> None:
    with mockkafka.Cluster(**options) as cluster:
        keys = advertised(cluster)
    assert {k: keys[k] for k in SHARE_KEYS if k in keys} == served


def test_fault_rules_target_share_apis_by_group_topic_and_partition() -> None:
    with mockkafka.Cluster() as cluster:
        cluster.create_topic("t")
        cluster.create_topic("other")
        hb = (
            cluster.faults.on("ShareGroupHeartbeat", group="sg")
            .once()
            .error("COORDINATOR_NOT_AVAILABLE")
        )
        miss = cluster.faults.on("ShareFetch", topic="other").once().error("NOT_LEADER_OR_FOLLOWER")
        hit = (
            cluster.faults.on("ShareFetch", group="sg", topic="t", partition=0)
            .nth(2)
            .error("NOT_LEADER_OR_FOLLOWER")
        )
        tid = cluster.topic("t").topic_id
        with raw(cluster) as r:
            assert join(r, "sg", "t")["error_code"] == 15  # COORDINATOR_NOT_AVAILABLE
            me = join(r, "sg", "t")
            assert me["error_code"] == 0
            assert me["assignment"]["topic_partitions"][0]["partitions"] == [0]
            assert share_fetch(r, "sg", me["member_id"], tid, 0)["error_code"] == 0
            cluster.produce("t", "x")
            resp = share_fetch(r, "sg", me["member_id"], tid, 1)
            (p,) = resp["responses"][0]["partitions"]
            assert p["error_code"] == 6 and p["acquired_records"] == []  # injected
            # The broker answered an error: nothing was acquired, the session moved on.
            assert cluster.share_group("sg").partition("t", 0).offsets("Acquired") == []
            resp = share_fetch(r, "sg", me["member_id"], tid, 2)
            (p,) = resp["responses"][0]["partitions"]
            assert p["error_code"] == 0
            assert [(a["first_offset"], a["delivery_count"]) for a in p["acquired_records"]] == [
                (0, 1)
            ]
        assert (hb.fired, hit.fired, miss.fired) == (1, 1, 0)
        cluster.faults.remove(miss)
        assert cluster.traffic.requests("ShareFetch", group="sg", topic="t", partition=0)


def test_verbs_views_and_waits_follow_the_share_group() -> None:
    with mockkafka.Cluster() as cluster:
        cluster.create_topic("t")
        for i in range(3):
            cluster.produce("t", f"v{i}")
        tid = cluster.topic("t").topic_id
        got: list[mockkafka.ShareGroupView] = []
        waiter = threading.Thread(
            target=lambda: got.append(cluster.wait_for_share_group("sg", members=1, timeout=10))
        )
        waiter.start()
        with raw(cluster) as r:
            me = join(r, "sg", "t")
            waiter.join(10)
            assert (
                got and got[0].state == "Stable" and got[0].members[0].member_id == me["member_id"]
            )
            assert cluster.share_groups() == ["sg"] and "sg" in cluster.groups()
            assert cluster.group("sg").type == "share"
            # share.auto.offset.reset=latest (Kafka's default): nothing produced before counts
            resp = share_fetch(r, "sg", me["member_id"], tid, 0)
            assert resp["responses"][0]["partitions"][0]["acquired_records"] == []
            cluster.produce("t", "after")
            resp = share_fetch(r, "sg", me["member_id"], tid, 1)
            (p,) = resp["responses"][0]["partitions"]
            assert [
                (a["first_offset"], a["last_offset"], a["delivery_count"])
                for a in p["acquired_records"]
            ] == [(3, 3, 1)]
            sp = cluster.share_group("sg").partition("t", 0)
            assert (sp.start_offset, sp.end_offset, sp.offsets("Acquired")) == (3, 4, [3])
            assert cluster.expire_acquisition_locks("sg", topic="t") == 1
            assert cluster.share_group("sg").partition("t", 0).offsets("Available") == [3]
            resp = share_fetch(r, "sg", me["member_id"], tid, 2)
            (p,) = resp["responses"][0]["partitions"]
            assert p["acquired_records"][0]["delivery_count"] == 2
            cluster.expire_member("sg", me["member_id"])
            view = cluster.share_group("sg")
            assert view.state == "Empty" and view.partition("t", 0).offsets("Available") == [3]
            listed = r.request("ListGroups", 5, {"states_filter": [], "types_filter": ["share"]})
            assert [(g["group_id"], g["group_type"]) for g in listed["groups"]] == [("sg", "share")]
        with pytest.raises(mockkafka.KafkaApiError, match="no share group 'nope'"):
            cluster.share_group("nope")
        with pytest.raises(mockkafka.WaitTimeout, match="share group"):
            cluster.wait_for_share_group("sg", members=3, timeout=0.2)
        with pytest.raises(mockkafka.ConfigError):
            cluster.wait_for_share_group("sg", state="Reconciling", timeout=0.2)
        with pytest.raises(mockkafka.ConfigError):
            cluster.expire_acquisition_locks("sg", partition=0)


def test_set_group_config_makes_a_share_group_read_from_the_start() -> None:
    with mockkafka.Cluster() as cluster:
        cluster.create_topic("t")
        cluster.produce("t", "before")
        cluster.set_group_config("sg", {"share.auto.offset.reset": "earliest"})
        tid = cluster.topic("t").topic_id
        with raw(cluster) as r:
            me = join(r, "sg", "t")
            (p,) = share_fetch(r, "sg", me["member_id"], tid, 0)["responses"][0]["partitions"]
            assert [(a["first_offset"], a["last_offset"]) for a in p["acquired_records"]] == [
                (0, 0)
            ]
            described = r.request(
                "DescribeConfigs",
                4,
                {
                    "resources": [
                        {
                            "resource_type": 32,
                            "resource_name": "sg",
                            "configuration_keys": ["share.auto.offset.reset"],
                        }
                    ],
                    "include_synonyms": False,
                    "include_documentation": False,
                },
            )
            (entry,) = described["results"][0]["configs"]
            assert entry["value"] == "earliest"
        cluster.set_group_config("sg", {"share.auto.offset.reset": None})
        with pytest.raises(mockkafka.ConfigError, match=r"did you mean share\.auto\.offset\.reset"):
            cluster.set_group_config("sg", {"share.auto.ofset.reset": "earliest"})
        with pytest.raises(mockkafka.ConfigError, match=r"share\.record\.lock\.duration\.ms"):
            cluster.set_group_config("sg", {"share.record.lock.duration.ms": "soon"})

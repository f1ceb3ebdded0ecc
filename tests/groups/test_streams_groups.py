"""KIP-1071 streams groups through StreamsGroupHeartbeat / StreamsGroupDescribe, sans-IO.

The topology is a word count's, as a Kafka Streams 4.4 client sends it (captured from one
talking to Apache Kafka 4.4): subtopology 0 reads ``lines`` and writes the repartition topic,
subtopology 1 reads it and keeps a changelog. The real application runs against the fake in
``tests/interop/test_java_streams.py``.
"""

from __future__ import annotations

from typing import Any

from mockkafka.cluster.groups_streams import MISSING_SOURCE_TOPICS, StreamsGroup
from mockkafka.errors import ErrorCode
from tests.groups.conftest import Harness

G = "wc"


def topology(epoch: int = 0) -> dict[str, Any]:
    return {
        "epoch": epoch,
        "subtopologies": [
            {
                "subtopology_id": "0",
                "source_topics": ["lines"],
                "source_topic_regex": [],
                "state_changelog_topics": [],
                "repartition_sink_topics": ["wc-counts-repartition"],
                "repartition_source_topics": [],
                "copartition_groups": [],
            },
            {
                "subtopology_id": "1",
                "source_topics": [],
                "source_topic_regex": [],
                "state_changelog_topics": [
                    {
                        "name": "wc-counts-changelog",
                        "partitions": 0,
                        "replication_factor": -1,
                        "topic_configs": [{"key": "cleanup.policy", "value": "compact"}],
                    }
                ],
                "repartition_sink_topics": [],
                "repartition_source_topics": [
                    {
                        "name": "wc-counts-repartition",
                        "partitions": 0,
                        "replication_factor": -1,
                        "topic_configs": [{"key": "retention.ms", "value": "-1"}],
                    }
                ],
                "copartition_groups": [],
            },
        ],
    }


class Member:
    """A minimal Kafka Streams member: joins with the topology, adopts and reports tasks."""

    def __init__(self, h: Harness, member_id: str) -> None:
        self.h = h
        self.member_id = member_id
        self.epoch = 0
        self.tasks: dict[str, set[int]] = {}
        self.last: dict[str, Any] = {}

    def heartbeat(self, *, version: int = 1, epoch: int | None = None) -> dict[str, Any]:
        joining = self.epoch == 0
        body: dict[str, Any] = {
            "group_id": G,
            "member_id": self.member_id,
            "member_epoch": self.epoch if epoch is None else epoch,
            "endpoint_information_epoch": -1,
            "rebalance_timeout_ms": 5000 if joining else -1,
            "topology": topology() if joining else None,
            "active_tasks": [
                {"subtopology_id": s, "partitions": sorted(ps)}
                for s, ps in sorted(self.tasks.items())
                if ps
            ],
            "standby_tasks": [],
            "warmup_tasks": [],
            "process_id": f"process-{self.member_id}" if joining else None,
        }
        r = self.h.sync_call("StreamsGroupHeartbeat", version, body)
        self.last = r
        if r["error_code"] == 0:
            self.epoch = r["member_epoch"]
            if r["active_tasks"] is not None:
                self.tasks = {t["subtopology_id"]: set(t["partitions"]) for t in r["active_tasks"]}
        return r

    def task_set(self) -> set[tuple[str, int]]:
        return {(s, p) for s, ps in self.tasks.items() for p in ps}


ALL = {("0", 0), ("0", 1), ("1", 0), ("1", 1)}


def test_join_derives_the_tasks_and_creates_the_internal_topics(h: Harness) -> None:
    h.create_topic("lines", 2)
    a = Member(h, "a")
    r = a.heartbeat()
    assert (r["error_code"], r["status"], r["member_epoch"]) == (0, [], 1)
    assert a.task_set() == ALL
    assert (r["standby_tasks"], r["warmup_tasks"]) == ([], [])
    changelog = h.state.topics["wc-counts-changelog"]
    repartition = h.state.topics["wc-counts-repartition"]
    assert (len(changelog.partitions), len(repartition.partitions)) == (2, 2)
    assert changelog.configs["cleanup.policy"] == "compact"
    assert repartition.configs["retention.ms"] == "-1"
    # Nothing changed: the next heartbeat sends no tasks (null), as Kafka does.
    assert a.heartbeat()["active_tasks"] is None


def test_missing_source_topic_is_a_status_and_no_tasks_until_it_exists(h: Harness) -> None:
    a = Member(h, "a")
    r = a.heartbeat()
    assert r["error_code"] == 0 and r["active_tasks"] == []
    assert [s["status_code"] for s in r["status"]] == [MISSING_SOURCE_TOPICS]
    assert "lines" in r["status"][0]["status_detail"]
    assert "wc-counts-changelog" not in h.state.topics
    h.create_topic("lines", 2)
    r = a.heartbeat()
    assert r["status"] == [] and a.task_set() == ALL


def test_a_task_moves_only_after_its_owner_gave_it_up(h: Harness) -> None:
    h.create_topic("lines", 2)
    a, b = Member(h, "a"), Member(h, "b")
    a.heartbeat()
    b.heartbeat()
    assert b.task_set() == set()  # a still owns everything
    a.heartbeat()  # told to keep only half
    assert len(a.task_set()) == 2
    b.heartbeat()
    assert b.task_set() == set()  # a has not reported the revocation yet
    a.heartbeat()  # reports the two it kept
    b.heartbeat()
    assert a.task_set() | b.task_set() == ALL and not a.task_set() & b.task_set()
    g = h.state.groups.get(G)
    assert isinstance(g, StreamsGroup) and g.state_name == "Stable"


def test_leaving_hands_the_tasks_to_the_others(h: Harness) -> None:
    h.create_topic("lines", 2)
    a, b = Member(h, "a"), Member(h, "b")
    a.heartbeat()
    b.heartbeat()
    for m in (a, a, b):
        m.heartbeat()
    r = a.heartbeat(epoch=-1)
    assert (r["error_code"], r["member_epoch"]) == (0, -1)
    b.heartbeat()
    assert b.task_set() == ALL


def test_unknown_member_and_stale_epoch_are_refused(h: Harness) -> None:
    h.create_topic("lines", 2)
    a = Member(h, "a")
    a.heartbeat()
    ghost = Member(h, "ghost")
    ghost.epoch = 3
    assert ghost.heartbeat()["error_code"] == ErrorCode.UNKNOWN_MEMBER_ID
    assert a.heartbeat(epoch=7)["error_code"] == ErrorCode.FENCED_MEMBER_EPOCH


def test_a_join_needs_a_topology_and_a_member_id(h: Harness) -> None:
    body = {"group_id": G, "member_id": "a", "member_epoch": 0, "topology": None}
    r = h.sync_call("StreamsGroupHeartbeat", 1, body)
    assert r["error_code"] == ErrorCode.INVALID_REQUEST
    r = h.sync_call("StreamsGroupHeartbeat", 1, {**body, "member_id": "", "topology": topology()})
    assert (r["error_code"], r["error_message"]) == (
        ErrorCode.INVALID_REQUEST,
        "MemberId can't be empty.",
    )


def test_version_0_answers_the_legacy_recovery_lag(h: Harness) -> None:
    h.create_topic("lines", 2)
    r = Member(h, "a").heartbeat(version=0)
    assert r["error_code"] == 0 and r["acceptable_recovery_lag_legacy"] == 10_000


def test_streams_version_0_turns_the_protocol_off(h: Harness) -> None:
    r = h.sync_call(
        "UpdateFeatures",
        1,
        {
            "timeout_ms": 1000,
            "feature_updates": [
                {"feature": "streams.version", "max_version_level": 0, "upgrade_type": 2}
            ],
            "validate_only": False,
        },
    )
    assert r["error_code"] == 0, r
    assert Member(h, "a").heartbeat()["error_code"] == ErrorCode.UNSUPPORTED_VERSION


def test_the_group_is_not_a_consumer_group_for_the_other_protocols(h: Harness) -> None:
    h.create_topic("lines", 2)
    Member(h, "a").heartbeat()
    at = h.coordinator(G)
    r = h.sync_call("ConsumerGroupDescribe", 0, {"group_ids": [G]}, broker=at)
    assert r["groups"][0]["error_code"] == ErrorCode.GROUP_ID_NOT_FOUND
    r = h.sync_call(
        "ConsumerGroupHeartbeat",
        1,
        {"group_id": G, "member_id": "c", "member_epoch": 0, "subscribed_topic_names": ["lines"]},
    )
    assert r["error_code"] == ErrorCode.GROUP_ID_NOT_FOUND
    r = h.sync_call("ListGroups", 5, {"states_filter": [], "types_filter": ["streams"]}, broker=at)
    assert [(g["group_id"], g["group_type"]) for g in r["groups"]] == [(G, "streams")]


def test_describe_shows_topology_members_and_tasks(h: Harness) -> None:
    h.create_topic("lines", 2)
    Member(h, "a").heartbeat()
    r = h.sync_call("StreamsGroupDescribe", 1, {"group_ids": [G]}, broker=h.coordinator(G))
    [g] = r["groups"]
    assert (g["error_code"], g["group_state"], g["group_epoch"]) == (0, "Stable", 1)
    assert [s["subtopology_id"] for s in g["topology"]["subtopologies"]] == ["0", "1"]
    [m] = g["members"]
    assert (m["member_id"], m["process_id"], m["member_epoch"]) == ("a", "process-a", 1)
    assert m["assignment"]["active_tasks"] == [
        {"subtopology_id": "0", "partitions": [0, 1]},
        {"subtopology_id": "1", "partitions": [0, 1]},
    ]


def test_topology_description_update_is_kept_for_describe(h: Harness) -> None:
    h.create_topic("lines", 2)
    Member(h, "a").heartbeat()
    description = {
        "subtopologies": [
            {
                "subtopology_id": "0",
                "nodes": [
                    {
                        "name": "KSTREAM-SOURCE-0000000000",
                        "node_type": 0,
                        "source_topics": ["lines"],
                        "sink_topic": None,
                        "stores": [],
                        "successors": [],
                    }
                ],
            }
        ],
        "global_stores": [],
    }
    body = {
        "group_id": G,
        "member_id": "a",
        "topology_epoch": 0,
        "topology_description": description,
    }
    assert h.sync_call("StreamsGroupTopologyDescriptionUpdate", 0, body)["error_code"] == 0
    stale = {**body, "topology_epoch": 5}
    assert (
        h.sync_call("StreamsGroupTopologyDescriptionUpdate", 0, stale)["error_code"]
        == ErrorCode.STREAMS_INVALID_TOPOLOGY_EPOCH
    )
    r = h.sync_call(
        "StreamsGroupDescribe",
        1,
        {"group_ids": [G], "include_topology_description": True},
        broker=h.coordinator(G),
    )
    assert r["groups"][0]["topology_description"] == description


def test_offset_commit_checks_the_member_epoch(h: Harness) -> None:
    h.create_topic("lines", 2)
    a = Member(h, "a")
    a.heartbeat()

    def commit(epoch: int) -> int:
        r = h.sync_call(
            "OffsetCommit",
            9,
            {
                "group_id": G,
                "generation_id_or_member_epoch": epoch,
                "member_id": "a",
                "group_instance_id": None,
                "topics": [
                    {
                        "name": "lines",
                        "partitions": [
                            {"partition_index": 0, "committed_offset": 5, "committed_metadata": ""}
                        ],
                    }
                ],
            },
        )
        return int(r["topics"][0]["partitions"][0]["error_code"])

    assert commit(a.epoch) == 0
    assert commit(a.epoch + 1) == ErrorCode.STALE_MEMBER_EPOCH
    assert h.state.groups.committed(G)[("lines", 0)].offset == 5


def test_verbs_expire_a_member_and_trigger_a_rebalance(h: Harness) -> None:
    h.create_topic("lines", 2)
    a, b = Member(h, "a"), Member(h, "b")
    a.heartbeat()
    b.heartbeat()
    for m in (a, a, b):
        m.heartbeat()
    epoch = h.state.groups.view(G).generation_id
    h.state.groups.trigger_rebalance(G)
    assert h.state.groups.view(G).generation_id == epoch + 1
    h.state.groups.expire_member(G, "a")
    b.heartbeat()
    view = h.state.groups.view(G)
    assert (view.type, [m.member_id for m in view.members]) == ("streams", ["b"])
    assert b.task_set() == ALL
    assert view.member("b").assignment == {"0": [0, 1], "1": [0, 1]}

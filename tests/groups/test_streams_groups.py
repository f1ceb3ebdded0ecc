"""KIP-1071 streams groups through StreamsGroupHeartbeat / StreamsGroupDescribe, sans-IO on a
manual clock: topology, internal topics, task assignment, reconciliation, statuses, offsets.
(A real Kafka Streams application: tests/interop/test_java_streams.py.)"""

from __future__ import annotations

from typing import Any

import pytest

from mockkafka.errors import ErrorCode
from tests.groups.conftest import Harness

G = "app"
REPARTITION = "app-count-repartition"
CHANGELOG = "app-count-changelog"


def topology(epoch: int = 0) -> dict[str, Any]:
    """A word count's: subtopology 0 reads ``text`` and writes the repartition topic,
    subtopology 1 reads it back and keeps a store with a changelog."""
    info = {"partitions": 0, "replication_factor": 0, "topic_configs": []}
    return {
        "epoch": epoch,
        "subtopologies": [
            {
                "subtopology_id": "0",
                "source_topics": ["text"],
                "source_topic_regex": [],
                "state_changelog_topics": [],
                "repartition_sink_topics": [REPARTITION],
                "repartition_source_topics": [],
                "copartition_groups": [],
            },
            {
                "subtopology_id": "1",
                "source_topics": [],
                "source_topic_regex": [],
                "state_changelog_topics": [
                    {
                        **info,
                        "name": CHANGELOG,
                        "topic_configs": [{"key": "cleanup.policy", "value": "compact"}],
                    }
                ],
                "repartition_sink_topics": [],
                "repartition_source_topics": [{**info, "name": REPARTITION}],
                "copartition_groups": [],
            },
        ],
    }


class Member:
    def __init__(self, h: Harness, member_id: str) -> None:
        self.h, self.member_id, self.epoch = h, member_id, 0
        self.tasks: dict[str, list[int]] = {}

    def heartbeat(self, **body: Any) -> dict[str, Any]:
        joining = self.epoch == 0
        r = self.h.sync_call(
            "StreamsGroupHeartbeat",
            1,
            {
                "group_id": G,
                "member_id": self.member_id,
                "member_epoch": self.epoch,
                "endpoint_information_epoch": 0,
                "rebalance_timeout_ms": 1000 if joining else -1,
                "topology": topology() if joining else None,
                "process_id": f"process-{self.member_id}" if joining else None,
                "active_tasks": [
                    {"subtopology_id": s, "partitions": ps} for s, ps in self.tasks.items()
                ],
                **body,
            },
            broker=self.h.coordinator(G),
        )
        if r["error_code"] == 0:
            self.epoch = r["member_epoch"]
            if r.get("active_tasks") is not None:
                self.tasks = {t["subtopology_id"]: t["partitions"] for t in r["active_tasks"]}
        return r

    def count(self) -> int:
        return sum(len(ps) for ps in self.tasks.values())


@pytest.fixture
def h() -> Harness:
    h = Harness(brokers=1)
    h.create_topic("text", 4)
    return h


def test_joining_creates_the_internal_topics_and_assigns_every_task(h: Harness) -> None:
    a = Member(h, "a")
    r = a.heartbeat()
    assert r["error_code"] == 0 and r["status"] == [] and r["heartbeat_interval_ms"] == 500
    assert a.tasks == {"0": [0, 1, 2, 3], "1": [0, 1, 2, 3]}
    topics = h.state.topics
    assert len(topics[REPARTITION].partitions) == 4 and len(topics[CHANGELOG].partitions) == 4
    assert topics[CHANGELOG].config("cleanup.policy") == "compact"
    d = h.sync_call("StreamsGroupDescribe", 1, {"group_ids": [G]}, broker=h.coordinator(G))
    (g,) = d["groups"]
    assert (g["error_code"], g["group_state"], g["topology"]["epoch"]) == (0, "Stable", 0)
    assert [s["subtopology_id"] for s in g["topology"]["subtopologies"]] == ["0", "1"]
    (m,) = g["members"]
    assert m["process_id"] == "process-a" and len(m["assignment"]["active_tasks"]) == 2


def test_a_second_member_gets_tasks_only_after_the_first_released_them(h: Harness) -> None:
    a, b = Member(h, "a"), Member(h, "b")
    a.heartbeat()
    b.heartbeat()
    assert b.count() == 0  # a still owns every task
    a.heartbeat()  # told to give up half (it still reports all as owned)
    assert a.count() == 4
    a.heartbeat()  # reports the four it kept: the others are free now
    b.heartbeat()
    assert b.count() == 4 and a.epoch == b.epoch
    owned_a = {(s, p) for s, ps in a.tasks.items() for p in ps}
    owned_b = {(s, p) for s, ps in b.tasks.items() for p in ps}
    assert not owned_a & owned_b and len(owned_a | owned_b) == 8
    assert (
        h.sync_call(
            "StreamsGroupHeartbeat",
            1,
            {"group_id": G, "member_id": "a", "member_epoch": -1, "endpoint_information_epoch": 0},
            broker=h.coordinator(G),
        )["error_code"]
        == 0
    )
    b.heartbeat()
    assert b.count() == 8


def test_a_missing_source_topic_is_reported_and_nothing_is_assigned() -> None:
    h = Harness(brokers=1)
    a = Member(h, "a")
    r = a.heartbeat()
    assert [s["status_code"] for s in r["status"]] == [1]  # MISSING_SOURCE_TOPICS
    assert "text" in r["status"][0]["status_detail"] and a.tasks == {}
    h.create_topic("text", 2)
    r = a.heartbeat()
    assert r["status"] == [] and a.tasks == {"0": [0, 1], "1": [0, 1]}


def test_wrong_topology_epoch_unknown_member_and_other_group_types_are_refused(
    h: Harness,
) -> None:
    Member(h, "a").heartbeat()
    r = Member(h, "b").heartbeat(topology=topology(epoch=7))
    assert r["error_code"] == ErrorCode.STREAMS_INVALID_TOPOLOGY_EPOCH
    stranger = Member(h, "x")
    stranger.epoch = 3
    assert stranger.heartbeat()["error_code"] == ErrorCode.UNKNOWN_MEMBER_ID
    no_topology = h.sync_call(
        "StreamsGroupHeartbeat",
        1,
        {"group_id": "other", "member_id": "m", "member_epoch": 0, "endpoint_information_epoch": 0},
        broker=h.coordinator("other"),
    )
    assert no_topology["error_code"] == ErrorCode.INVALID_REQUEST


def test_offsets_are_committed_under_the_member_epoch(h: Harness) -> None:
    a = Member(h, "a")
    a.heartbeat()

    def commit(epoch: int) -> int:
        body = {
            "group_id": G,
            "generation_id_or_member_epoch": epoch,
            "member_id": "a",
            "topics": [
                {
                    "name": "text",
                    "partitions": [{"partition_index": 0, "committed_offset": 3}],
                }
            ],
        }
        r = h.sync_call("OffsetCommit", 9, body, broker=h.coordinator(G))
        code: int = r["topics"][0]["partitions"][0]["error_code"]
        return code

    assert commit(a.epoch + 1) == ErrorCode.STALE_MEMBER_EPOCH
    assert commit(a.epoch) == 0
    assert h.state.groups.get(G).offsets[("text", 0)].offset == 3  # type: ignore[union-attr]


def test_a_silent_member_is_removed_after_the_session_timeout(h: Harness) -> None:
    a, b = Member(h, "a"), Member(h, "b")
    a.heartbeat()
    b.heartbeat()
    h.advance(45_000)
    g = h.state.groups.get(G)
    assert g is not None and g.is_empty()

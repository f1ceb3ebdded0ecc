"""OffsetCommit / OffsetFetch / OffsetDelete / DescribeGroups / ListGroups / DeleteGroups."""

from __future__ import annotations

from typing import Any

from mockkafka.errors import ErrorCode
from mockkafka.views import group_view
from tests.groups.conftest import Harness
from tests.groups.test_classic import G, group, join, stable_group_of_one


def commit(
    h: Harness,
    offsets: dict[tuple[str, int], int],
    *,
    version: int = 8,
    member_id: str = "",
    generation: int = -1,
    group_id: str = G,
) -> dict[tuple[str, int], int]:
    topics: dict[str, list[dict[str, Any]]] = {}
    for (t, p), o in offsets.items():
        topics.setdefault(t, []).append(
            {"partition_index": p, "committed_offset": o, "committed_metadata": "m"}
        )
    r = h.sync_call(
        "OffsetCommit",
        version,
        {
            "group_id": group_id,
            "member_id": member_id,
            "generation_id_or_member_epoch": generation,
            "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()],
        },
    )
    return {
        (t["name"], p["partition_index"]): p["error_code"]
        for t in r["topics"]
        for p in t["partitions"]
    }


def fetch_v7(h: Harness, topics: dict[str, list[int]] | None, group_id: str = G) -> dict[str, Any]:
    return h.sync_call(
        "OffsetFetch",
        7,
        {
            "group_id": group_id,
            "topics": None
            if topics is None
            else [{"name": t, "partition_indexes": ps} for t, ps in topics.items()],
        },
    )


def test_simple_commit_creates_an_empty_group_and_fetch_returns_it(h: Harness) -> None:
    h.create_topic("t", 3)
    assert commit(h, {("t", 0): 5, ("t", 2): 7}) == {("t", 0): 0, ("t", 2): 0}
    g = group(h)
    assert g.state_name == "Empty" and g.protocol_type_name == ""
    r = fetch_v7(h, {"t": [0, 1, 2]})
    assert r["error_code"] == 0
    got = {
        p["partition_index"]: (p["committed_offset"], p["metadata"])
        for p in r["topics"][0]["partitions"]
    }
    assert got == {0: (5, "m"), 1: (-1, ""), 2: (7, "m")}
    everything = fetch_v7(h, None)
    assert [
        (t["name"], [p["partition_index"] for p in t["partitions"]]) for t in everything["topics"]
    ] == [("t", [0, 2])]
    assert group_view(h.state, G).committed_offsets() == {("t", 0): 5, ("t", 2): 7}


def test_commit_to_unknown_partition_and_too_large_metadata(h: Harness) -> None:
    h.create_topic("t", 1)
    assert commit(h, {("t", 3): 1, ("nope", 0): 1}) == {
        ("t", 3): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ("nope", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    }
    r = h.sync_call(
        "OffsetCommit",
        8,
        {
            "group_id": G,
            "topics": [
                {
                    "name": "t",
                    "partitions": [
                        {
                            "partition_index": 0,
                            "committed_offset": 1,
                            "committed_metadata": "x" * 5000,
                        }
                    ],
                }
            ],
        },
    )
    assert r["topics"][0]["partitions"][0]["error_code"] == ErrorCode.OFFSET_METADATA_TOO_LARGE


def test_member_commit_checks_in_a_classic_group(h: Harness) -> None:
    h.create_topic("t", 2)
    a = stable_group_of_one(h)
    assert commit(h, {("t", 0): 1}, member_id=a, generation=1) == {("t", 0): 0}
    assert commit(h, {("t", 0): 1}, member_id=a, generation=0) == {
        ("t", 0): ErrorCode.ILLEGAL_GENERATION
    }
    assert commit(h, {("t", 0): 1}, member_id="x", generation=1) == {
        ("t", 0): ErrorCode.UNKNOWN_MEMBER_ID
    }
    assert commit(h, {("t", 0): 1}) == {("t", 0): ErrorCode.UNKNOWN_MEMBER_ID}, (
        "simple commit to an active group"
    )
    h.state.groups.trigger_rebalance(G)
    assert commit(h, {("t", 0): 2}, member_id=a, generation=1) == {("t", 0): 0}, (
        "allowed while preparing"
    )
    r = join(h, a)
    assert isinstance(r, dict) and r["generation_id"] == 2
    assert commit(h, {("t", 0): 3}, member_id=a, generation=2) == {
        ("t", 0): ErrorCode.REBALANCE_IN_PROGRESS
    }


def test_commit_with_generation_to_missing_group(h: Harness) -> None:
    h.create_topic("t", 1)
    assert commit(h, {("t", 0): 1}, member_id="m", generation=3, version=9, group_id="gone") == {
        ("t", 0): ErrorCode.GROUP_ID_NOT_FOUND
    }
    assert commit(h, {("t", 0): 1}, member_id="m", generation=3, version=8, group_id="gone") == {
        ("t", 0): ErrorCode.ILLEGAL_GENERATION
    }


def test_offsets_of_deleted_topics_are_dropped(h: Harness) -> None:
    h.create_topic("t", 1)
    commit(h, {("t", 0): 4})
    h.state.delete_topic("t")
    h.create_topic("t", 1)
    r = fetch_v7(h, {"t": [0]})
    assert r["topics"][0]["partitions"][0]["committed_offset"] == -1
    assert h.state.groups.committed(G) == {}


def test_offset_fetch_v8_multi_group_and_v1(h: Harness) -> None:
    h.create_topic("t", 1)
    commit(h, {("t", 0): 4}, group_id="ga")
    commit(h, {("t", 0): 9}, group_id="gb")
    for gid in ("ga", "gb", "gc"):
        # each group may have a different coordinator: ask each its own
        r = h.sync_call(
            "OffsetFetch",
            8,
            {"groups": [{"group_id": gid, "topics": None}]},
            broker=h.coordinator(gid),
        )
        (grp,) = r["groups"]
        offs = [p["committed_offset"] for t in grp["topics"] for p in t["partitions"]]
        assert offs == {"ga": [4], "gb": [9], "gc": []}[gid]
    r1 = h.sync_call(
        "OffsetFetch", 1, {"group_id": "ga", "topics": [{"name": "t", "partition_indexes": [0]}]}
    )
    assert r1["topics"][0]["partitions"][0]["committed_offset"] == 4


def test_offset_fetch_wrong_broker_gets_not_coordinator(h: Harness) -> None:
    other = next(b for b in (1, 2, 3) if b != h.coordinator(G))
    r = h.sync_call("OffsetFetch", 7, {"group_id": G, "topics": None}, broker=other)
    assert r["error_code"] == ErrorCode.NOT_COORDINATOR


def test_require_stable_asks_the_transaction_coordinator(h: Harness) -> None:
    h.create_topic("t", 2)
    commit(h, {("t", 0): 1, ("t", 1): 1})
    txn = h.state.transactions
    original = getattr(txn, "has_pending_offsets", None)
    txn.has_pending_offsets = lambda g, t, p: p == 1  # type: ignore[attr-defined]
    try:
        r = h.sync_call(
            "OffsetFetch",
            7,
            {
                "group_id": G,
                "topics": [{"name": "t", "partition_indexes": [0, 1]}],
                "require_stable": True,
            },
        )
    finally:
        if original is None:
            del txn.has_pending_offsets  # type: ignore[attr-defined]
        else:
            txn.has_pending_offsets = original  # type: ignore[attr-defined]
    errs = [p["error_code"] for p in r["topics"][0]["partitions"]]
    assert errs == [0, ErrorCode.UNSTABLE_OFFSET_COMMIT]


def test_offset_delete(h: Harness) -> None:
    h.create_topic("t", 1)
    h.create_topic("u", 1)
    r = h.sync_call(
        "OffsetDelete",
        0,
        {"group_id": G, "topics": [{"name": "t", "partitions": [{"partition_index": 0}]}]},
    )
    assert r["error_code"] == ErrorCode.GROUP_ID_NOT_FOUND
    commit(h, {("u", 0): 3})
    a = stable_group_of_one(h)  # subscribes to "t"
    commit(h, {("t", 0): 1}, member_id=a, generation=1)
    r = h.sync_call(
        "OffsetDelete",
        0,
        {
            "group_id": G,
            "topics": [
                {"name": "t", "partitions": [{"partition_index": 0}]},
                {"name": "u", "partitions": [{"partition_index": 0}]},
            ],
        },
    )
    errs = {t["name"]: t["partitions"][0]["error_code"] for t in r["topics"]}
    assert errs == {"t": ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC, "u": 0}
    assert group_view(h.state, G).committed_offsets() == {("t", 0): 1}


def test_describe_list_delete_groups(h: Harness) -> None:
    h.create_topic("t", 1)
    a = stable_group_of_one(h)
    commit(h, {("t", 0): 1}, group_id="simple")
    d = h.sync_call("DescribeGroups", 5, {"groups": [G], "include_authorized_operations": True})
    (dg,) = d["groups"]
    assert dg["error_code"] == 0 and dg["group_state"] == "Stable"
    assert dg["protocol_type"] == "consumer" and dg["protocol_data"] == "range"
    assert dg["members"][0]["member_id"] == a and dg["members"][0]["client_id"] == "c"
    assert dg["members"][0]["member_assignment"]
    assert dg["authorized_operations"] > 0
    missing = h.sync_call("DescribeGroups", 6, {"groups": ["nope"]}, broker=h.coordinator("nope"))
    assert missing["groups"][0]["error_code"] == ErrorCode.GROUP_ID_NOT_FOUND

    def listed(**req: Any) -> dict[str, tuple[str, str, str]]:
        out = {}
        for b in (1, 2, 3):
            r = h.sync_call("ListGroups", 5, req, broker=b)
            for x in r["groups"]:
                out[x["group_id"]] = (x["protocol_type"], x["group_state"], x["group_type"])
        return out

    assert listed() == {G: ("consumer", "Stable", "classic"), "simple": ("", "Empty", "classic")}
    assert set(listed(states_filter=["empty"])) == {"simple"}
    assert listed(types_filter=["consumer"]) == {}

    def delete(gid: str) -> int:
        r = h.sync_call("DeleteGroups", 2, {"groups_names": [gid]}, broker=h.coordinator(gid))
        return int(r["results"][0]["error_code"])

    assert delete(G) == ErrorCode.NON_EMPTY_GROUP
    assert delete("simple") == 0
    assert delete("simple") == ErrorCode.GROUP_ID_NOT_FOUND
    assert h.state.groups.committed("simple") == {}


def test_transactional_hooks(h: Harness) -> None:
    h.create_topic("t", 1)
    gc = h.state.groups
    assert gc.validate_txn_offset_commit("tg", -1, "", None) == 0
    assert gc.validate_txn_offset_commit("tg", 2, "m", None) == ErrorCode.ILLEGAL_GENERATION
    gc.store_committed_offset("tg", "t", 0, 42, 3, "meta")
    assert gc.committed("tg")[("t", 0)].offset == 42
    a = stable_group_of_one(h)
    assert gc.validate_txn_offset_commit(G, 1, a, None) == 0
    assert gc.validate_txn_offset_commit(G, 2, a, None) == ErrorCode.ILLEGAL_GENERATION
    assert gc.validate_txn_offset_commit(G, 1, "x", None) == ErrorCode.UNKNOWN_MEMBER_ID


def test_empty_classic_group_converts_when_a_consumer_protocol_member_joins(h: Harness) -> None:
    h.create_topic("t", 1)
    commit(h, {("t", 0): 8})
    r = h.sync_call(
        "ConsumerGroupHeartbeat",
        1,
        {
            "group_id": G,
            "member_id": "m1",
            "member_epoch": 0,
            "subscribed_topic_names": ["t"],
            "rebalance_timeout_ms": 1000,
        },
    )
    assert r["error_code"] == 0
    assert group_view(h.state, G).type == "consumer"
    assert group_view(h.state, G).committed_offsets() == {("t", 0): 8}
    bad = join(h)
    assert isinstance(bad, dict) and bad["error_code"] == ErrorCode.INCONSISTENT_GROUP_PROTOCOL

"""Classic group state machine, driven through the handlers on a manual clock."""

from __future__ import annotations

from typing import Any

from mockkafka.cluster.groups import ClassicGroup
from mockkafka.errors import ErrorCode
from mockkafka.views import group_view
from tests.groups.conftest import Harness, Parked, assignment, subscription

G = "g1"


def join(
    h: Harness,
    member_id: str = "",
    *,
    version: int = 9,
    protocols: list[tuple[str, bytes]] | None = None,
    instance_id: str | None = None,
    session_ms: int = 10_000,
    rebalance_ms: int = 30_000,
    group: str = G,
    client_id: str = "c",
) -> dict[str, Any] | Parked:
    return h.call(
        "JoinGroup",
        version,
        {
            "group_id": group,
            "member_id": member_id,
            "group_instance_id": instance_id,
            "session_timeout_ms": session_ms,
            "rebalance_timeout_ms": rebalance_ms,
            "protocol_type": "consumer",
            "protocols": [
                {"name": n, "metadata": m} for n, m in (protocols or [("range", subscription("t"))])
            ],
        },
        client_id=client_id,
    )


def join_new(h: Harness, **kw: Any) -> tuple[str, dict[str, Any] | Parked]:
    """JoinGroup v4+ twice: MEMBER_ID_REQUIRED, then with the id handed out."""
    first = join(h, **kw)
    assert isinstance(first, dict)
    assert first["error_code"] == ErrorCode.MEMBER_ID_REQUIRED
    mid = first["member_id"]
    assert mid
    return mid, join(h, mid, **kw)


def sync(
    h: Harness, mid: str, gen: int, assignments: dict[str, bytes] | None = None, **kw: Any
) -> dict[str, Any] | Parked:
    return h.call(
        "SyncGroup",
        5,
        {
            "group_id": kw.get("group", G),
            "generation_id": gen,
            "member_id": mid,
            "group_instance_id": kw.get("instance_id"),
            "protocol_type": "consumer",
            "protocol_name": kw.get("protocol", "range"),
            "assignments": [
                {"member_id": k, "assignment": v} for k, v in (assignments or {}).items()
            ],
        },
    )


def heartbeat(h: Harness, mid: str, gen: int, instance_id: str | None = None) -> int:
    r = h.sync_call(
        "Heartbeat",
        4,
        {"group_id": G, "generation_id": gen, "member_id": mid, "group_instance_id": instance_id},
    )
    return int(r["error_code"])


def group(h: Harness) -> ClassicGroup:
    g = h.state.groups.get(G)
    assert isinstance(g, ClassicGroup)
    return g


def stable_group_of_one(h: Harness) -> str:
    mid, r = join_new(h)
    assert isinstance(r, dict) and r["error_code"] == 0
    s = sync(h, mid, r["generation_id"], {mid: assignment({"t": (0, 1)})})
    assert isinstance(s, dict) and s["error_code"] == 0
    return mid


def test_single_member_joins_and_syncs_at_once_with_no_initial_delay(h: Harness) -> None:
    mid, r = join_new(h)
    assert isinstance(r, dict), "a lone member's join completes at once"
    assert r["error_code"] == 0
    assert r["generation_id"] == 1
    assert r["leader"] == mid
    assert r["protocol_name"] == "range"
    assert [m["member_id"] for m in r["members"]] == [mid]
    assert group(h).state_name == "CompletingRebalance"
    s = sync(h, mid, 1, {mid: assignment({"t": (0, 1)})})
    assert isinstance(s, dict) and s["error_code"] == 0
    assert s["assignment"] == assignment({"t": (0, 1)})
    assert group(h).state_name == "Stable"
    view = group_view(h.state, G)
    assert view.member(mid).assignment == {"t": [0, 1]}


def test_member_id_required_only_from_v4(h: Harness) -> None:
    r = join(h, version=3)
    assert isinstance(r, dict)
    assert r["error_code"] == 0 and r["member_id"].startswith("c-")


def test_second_member_triggers_rebalance_and_followers_wait_for_leader_sync(h: Harness) -> None:
    a = stable_group_of_one(h)
    b, jb = join_new(h, client_id="b")
    assert isinstance(jb, Parked) and not jb.done
    assert group(h).state_name == "PreparingRebalance"
    assert heartbeat(h, a, 1) == ErrorCode.REBALANCE_IN_PROGRESS
    ja = join(h, a)
    assert isinstance(ja, dict), "the last member to rejoin completes the join phase"
    rb = jb.poll()
    assert rb is not None
    assert ja["generation_id"] == rb["generation_id"] == 2
    assert ja["leader"] == rb["leader"] == a
    assert len(ja["members"]) == 2 and rb["members"] == []
    sb = sync(h, b, 2)
    assert isinstance(sb, Parked) and not sb.done
    sa = sync(h, a, 2, {a: assignment({"t": (0,)}), b: assignment({"t": (1,)})})
    assert isinstance(sa, dict) and sa["assignment"] == assignment({"t": (0,)})
    got = sb.poll()
    assert got is not None and got["assignment"] == assignment({"t": (1,)})
    assert heartbeat(h, a, 2) == heartbeat(h, b, 2) == 0
    assert group_view(h.state, G).assignments == {a: {"t": [0]}, b: {"t": [1]}}


def test_heartbeat_errors(h: Harness) -> None:
    a = stable_group_of_one(h)
    assert heartbeat(h, a, 0) == ErrorCode.ILLEGAL_GENERATION
    assert heartbeat(h, "nobody", 1) == ErrorCode.UNKNOWN_MEMBER_ID
    r = h.sync_call(
        "Heartbeat", 0, {"group_id": "no-such-group", "generation_id": 1, "member_id": a}
    )
    assert r["error_code"] == ErrorCode.UNKNOWN_MEMBER_ID


def test_member_that_stops_heartbeating_is_expired_after_session_timeout(h: Harness) -> None:
    a = stable_group_of_one(h)
    b, jb = join_new(h)
    join(h, a)
    assert isinstance(jb, Parked) and jb.poll() is not None
    sync(h, a, 2, {})
    sync(h, b, 2)
    for _ in range(4):  # a keeps heartbeating, b does not
        h.advance(3000)
        assert heartbeat(h, a, 2) in (0, ErrorCode.REBALANCE_IN_PROGRESS)
    g = group(h)
    assert b not in g.members
    assert g.state_name == "PreparingRebalance"
    assert heartbeat(h, b, 2) == ErrorCode.UNKNOWN_MEMBER_ID
    r = join(h, a)
    assert isinstance(r, dict) and r["generation_id"] == 3 and len(r["members"]) == 1


def test_member_that_does_not_rejoin_is_dropped_at_rebalance_timeout(h: Harness) -> None:
    a = stable_group_of_one(h)
    b, jb = join_new(h, rebalance_ms=20_000)
    assert isinstance(jb, Parked)
    # a never rejoins; its heartbeats keep it alive but the join phase ends without it
    h.advance(5000)
    heartbeat(h, a, 1)
    assert not jb.done
    h.advance(25_000)
    rb = jb.poll()
    assert rb is not None and rb["error_code"] == 0
    assert rb["leader"] == b and [m["member_id"] for m in rb["members"]] == [b]
    assert a not in group(h).members


def test_initial_rebalance_delay_holds_the_first_join_and_extends_for_newcomers() -> None:
    h = Harness(brokers=1, group_initial_rebalance_delay_ms=3000)
    _a, ja = join_new(h)
    assert isinstance(ja, Parked)
    h.advance(2000)
    assert not ja.done
    _b, jb = join_new(h)
    h.advance(1000)  # first delay over, but a member arrived during it: wait again
    assert not ja.done and isinstance(jb, Parked) and not jb.done
    h.advance(3000)
    ra, rb = ja.poll(), jb.poll()
    assert ra is not None and rb is not None
    assert ra["generation_id"] == rb["generation_id"] == 1
    assert len(ra["members"]) == 2


def test_pending_member_id_blocks_join_completion_until_its_session_expires(h: Harness) -> None:
    a = stable_group_of_one(h)
    first = join(h)  # b is told MEMBER_ID_REQUIRED and never comes back
    assert isinstance(first, dict) and first["error_code"] == ErrorCode.MEMBER_ID_REQUIRED
    ja = join(h, a, protocols=[("range", subscription("t", "u"))])  # a changes metadata
    assert isinstance(ja, Parked) and not ja.done
    h.advance(10_000)
    r = ja.poll()
    assert r is not None and r["generation_id"] == 2


def test_protocol_selection_and_inconsistent_protocols(h: Harness) -> None:
    _, ra = join_new(h, protocols=[("range", b"x"), ("roundrobin", b"y")])
    assert isinstance(ra, dict) and ra["protocol_name"] == "range"
    bad = join(h, protocols=[("sticky", b"z")])
    assert isinstance(bad, dict) and bad["error_code"] == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    _b, jb = join_new(h, protocols=[("roundrobin", b"y")])
    assert isinstance(jb, Parked)
    a = group(h).leader_id
    assert a is not None
    ra2 = join(h, a, protocols=[("range", b"x"), ("roundrobin", b"y")])
    assert isinstance(ra2, dict) and ra2["protocol_name"] == "roundrobin"
    assert {m["metadata"] for m in ra2["members"]} == {b"y"}


def test_static_member_restart_does_not_rebalance_and_fences_old_id(h: Harness) -> None:
    r = join(h, instance_id="i-1")
    assert isinstance(r, dict) and r["error_code"] == 0, "static members skip MEMBER_ID_REQUIRED"
    old = r["member_id"]
    sync(h, old, 1, {old: assignment({"t": (0,)})}, instance_id="i-1")
    r2 = join(h, instance_id="i-1")
    assert isinstance(r2, dict) and r2["error_code"] == 0
    assert r2["generation_id"] == 1 and r2["member_id"] != old
    assert r2["skip_assignment"] is True  # it is the leader: no need to assign again
    assert group(h).state_name == "Stable"
    assert heartbeat(h, old, 1, "i-1") == ErrorCode.FENCED_INSTANCE_ID
    assert heartbeat(h, r2["member_id"], 1, "i-1") == 0
    s = sync(h, r2["member_id"], 1, instance_id="i-1")
    assert isinstance(s, dict) and s["assignment"] == assignment({"t": (0,)})


def test_static_member_survives_restart_within_session_timeout(h: Harness) -> None:
    r = join(h, instance_id="i-1", session_ms=10_000)
    assert isinstance(r, dict)
    sync(h, r["member_id"], 1, {}, instance_id="i-1")
    h.advance(6000)
    r2 = join(h, instance_id="i-1", session_ms=10_000)
    assert isinstance(r2, dict) and r2["generation_id"] == 1
    h.advance(6000)
    assert heartbeat(h, r2["member_id"], 1, "i-1") == 0


def test_leave_group_batch_and_single(h: Harness) -> None:
    a = stable_group_of_one(h)
    r = h.sync_call(
        "LeaveGroup",
        5,
        {"group_id": G, "members": [{"member_id": a}, {"member_id": "ghost"}]},
    )
    assert r["error_code"] == 0
    assert [m["error_code"] for m in r["members"]] == [0, ErrorCode.UNKNOWN_MEMBER_ID]
    g = group(h)
    assert g.state_name == "Empty" and g.generation_id == 2
    r0 = h.sync_call("LeaveGroup", 0, {"group_id": G, "member_id": a})
    assert r0["error_code"] == ErrorCode.UNKNOWN_MEMBER_ID


def test_leaving_member_completes_the_join_phase_for_the_others(h: Harness) -> None:
    a = stable_group_of_one(h)
    b, jb = join_new(h)
    assert isinstance(jb, Parked)
    h.sync_call("LeaveGroup", 2, {"group_id": G, "member_id": a})
    r = jb.poll()
    assert r is not None and r["leader"] == b and r["generation_id"] == 2


def test_sync_in_preparing_rebalance_and_with_wrong_generation(h: Harness) -> None:
    a = stable_group_of_one(h)
    s = sync(h, a, 7)
    assert isinstance(s, dict) and s["error_code"] == ErrorCode.ILLEGAL_GENERATION
    h.state.groups.trigger_rebalance(G)
    s = sync(h, a, 1)
    assert isinstance(s, dict) and s["error_code"] == ErrorCode.REBALANCE_IN_PROGRESS
    assert heartbeat(h, a, 1) == ErrorCode.REBALANCE_IN_PROGRESS


def test_member_missing_sync_is_removed_after_rebalance_timeout(h: Harness) -> None:
    a = stable_group_of_one(h)
    b, jb = join_new(h)
    join(h, a)
    assert isinstance(jb, Parked) and jb.poll() is not None
    sa = sync(h, a, 2, {})
    assert isinstance(sa, dict)
    for _ in range(11):
        h.advance(3000)
        heartbeat(h, a, 2)
    assert b not in group(h).members


def test_not_coordinator_and_coordinator_move_keeps_generation(h: Harness) -> None:
    a = stable_group_of_one(h)
    coord = h.coordinator(G)
    other = next(b for b in (1, 2, 3) if b != coord)
    r = h.sync_call(
        "Heartbeat", 4, {"group_id": G, "generation_id": 1, "member_id": a}, broker=other
    )
    assert r["error_code"] == ErrorCode.NOT_COORDINATOR
    h.state.groups.move_coordinator(G, other)
    r = h.sync_call(
        "Heartbeat", 4, {"group_id": G, "generation_id": 1, "member_id": a}, broker=coord
    )
    assert r["error_code"] == ErrorCode.NOT_COORDINATOR
    r = h.sync_call(
        "Heartbeat", 4, {"group_id": G, "generation_id": 1, "member_id": a}, broker=other
    )
    assert r["error_code"] == 0
    assert group(h).generation_id == 1 and group(h).state_name == "Stable"


def test_coordinator_load_in_progress(h: Harness) -> None:
    from mockkafka.cluster.coordinators import GROUP as GROUP_KEY

    h.state.coordinators.set_loading(GROUP_KEY, G, 1000)
    r = join(h)
    assert isinstance(r, dict) and r["error_code"] == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
    h.advance(1000)
    r = join(h)
    assert isinstance(r, dict) and r["error_code"] == ErrorCode.MEMBER_ID_REQUIRED


def test_a_heartbeat_to_a_loading_coordinator_is_answered_none_as_kafka_does(h: Harness) -> None:
    from mockkafka.cluster.coordinators import GROUP as GROUP_KEY

    a = stable_group_of_one(h)
    h.state.coordinators.set_loading(GROUP_KEY, G, 1000)
    assert heartbeat(h, a, 1) == ErrorCode.NONE  # never COORDINATOR_LOAD_IN_PROGRESS
    s = sync(h, a, 1)  # SyncGroup (a write) does get it, as in Kafka's coordinator runtime
    assert isinstance(s, dict) and s["error_code"] == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS


def test_find_coordinator_batched_and_single(h: Harness) -> None:
    r = h.sync_call("FindCoordinator", 4, {"key_type": 0, "coordinator_keys": ["a", "b"]}, broker=1)
    assert [c["key"] for c in r["coordinators"]] == ["a", "b"]
    for c in r["coordinators"]:
        assert c["node_id"] == h.coordinator(c["key"])
    r = h.sync_call("FindCoordinator", 0, {"key": "a"}, broker=1)
    assert r["error_code"] == 0 and r["node_id"] == h.coordinator("a")


def test_invalid_session_timeout(h: Harness) -> None:
    r = join(h, session_ms=10)
    assert isinstance(r, dict) and r["error_code"] == ErrorCode.INVALID_SESSION_TIMEOUT


def test_a_sync_parked_when_the_coordinator_moves_gets_a_valid_not_coordinator_answer(
    h: Harness,
) -> None:
    """Regression (found by test_stateful's ConsumerGroupMachine): the parked SyncGroup was
    failed with a JoinGroup-shaped answer carrying ``member_id``, which SyncGroupResponse
    has no field for (an error inside the broker)."""
    a = stable_group_of_one(h)
    b, jb = join_new(h)
    assert isinstance(jb, Parked)
    ja = join(h, a)
    assert isinstance(ja, dict) and jb.poll() is not None
    gen = ja["generation_id"]
    follower = sync(h, b, gen)
    assert isinstance(follower, Parked)  # waits for the leader's assignments
    coord = h.coordinator(G)
    h.state.groups.move_coordinator(G, next(x for x in (1, 2, 3) if x != coord))
    answer = follower.poll()  # encoded and decoded as SyncGroupResponse v5
    assert answer is not None and answer["error_code"] == ErrorCode.NOT_COORDINATOR

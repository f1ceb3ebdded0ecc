"""The transaction coordinator over its handlers, sans-IO (ClusterState + ManualClock)."""

from __future__ import annotations

from typing import Any

import pytest

from mockkafka.cluster.transactions import MAX_EPOCH, TxnState
from mockkafka.errors import ErrorCode
from mockkafka.protocol.records import decode_records
from tests.transactions.conftest import Harness


def _begin(h: Harness, tid: str, parts: dict[str, list[int]]) -> tuple[int, int]:
    r = h.init(tid)
    assert r["error_code"] == 0
    pid, epoch = r["producer_id"], r["producer_epoch"]
    assert set(h.add_partitions(tid, pid, epoch, parts).values()) == {0}
    return pid, epoch


def _values(fetched: dict[str, Any]) -> list[bytes | None]:
    return [r.value for r in decode_records(fetched["records"] or b"")]


# -- InitProducerId ---------------------------------------------------------------------------


def test_init_allocates_producer_id_at_epoch_0_and_reinit_bumps_epoch(h: Harness) -> None:
    r1 = h.init("t1")
    assert (r1["error_code"], r1["producer_epoch"]) == (0, 0)
    r2 = h.init("t1")
    assert (r2["producer_id"], r2["producer_epoch"]) == (r1["producer_id"], 1)
    assert h.state.producer_ids[r1["producer_id"]].transactional_id == "t1"
    assert h.init("t2")["producer_id"] != r1["producer_id"]


def test_init_at_another_broker_is_not_coordinator(h: Harness) -> None:
    other = next(b for b in h.state.brokers if b != h.txn_coordinator("t1"))
    body = {"transactional_id": "t1", "transaction_timeout_ms": 1000}
    r = h.send("InitProducerId", 4, body, broker=other)
    assert r["error_code"] == ErrorCode.NOT_COORDINATOR


def test_transaction_timeout_above_the_maximum_is_refused(h: Harness) -> None:
    r = h.init("t1", timeout_ms=h.state.config.transaction_max_timeout_ms + 1)
    assert r["error_code"] == ErrorCode.INVALID_TRANSACTION_TIMEOUT


def test_kip360_init_with_current_id_and_epoch_bumps_and_stale_epoch_is_fenced(
    h: Harness,
) -> None:
    r = h.init("t1", version=4)
    pid = r["producer_id"]
    r = h.init("t1", version=4, producer_id=pid, producer_epoch=0)
    assert (r["error_code"], r["producer_epoch"]) == (0, 1)
    # The same request again (its answer was lost): the same answer, no further bump.
    r = h.init("t1", version=4, producer_id=pid, producer_epoch=0)
    assert (r["error_code"], r["producer_epoch"]) == (0, 1)
    h.init("t1")  # another instance: epoch 2
    r = h.init("t1", version=4, producer_id=pid, producer_epoch=1)
    assert r["error_code"] == ErrorCode.PRODUCER_FENCED
    r = h.init("t1", version=3, producer_id=pid, producer_epoch=1)
    assert r["error_code"] == ErrorCode.INVALID_PRODUCER_EPOCH  # before KIP-588


def test_epoch_exhaustion_moves_to_a_new_producer_id(h: Harness) -> None:
    old = h.init("t1")["producer_id"]
    h.state.transactions.transactions["t1"].producer_epoch = MAX_EPOCH - 1
    r = h.init("t1")
    assert r["producer_id"] != old and r["producer_epoch"] == 0
    assert h.state.transactions.for_producer_id(r["producer_id"]) is not None


# -- commit and abort -----------------------------------------------------------------------


def test_commit_writes_markers_to_every_partition_and_releases_read_committed(h: Harness) -> None:
    pid, epoch = _begin(h, "t1", {"a": [0, 1], "b": [0]})
    assert h.produce("a", 0, pid, epoch, 0, [b"a0"], tid="t1") == 0
    assert h.produce("b", 0, pid, epoch, 0, [b"b0"], tid="t1") == 0
    f = h.fetch("a", 0, committed=True)
    assert _values(f) == [] and f["last_stable_offset"] == 0 and f["high_watermark"] == 1
    assert _values(h.fetch("a", 0, committed=False)) == [b"a0"]

    assert h.end("t1", pid, epoch, True) == 0
    for topic, idx in [("a", 0), ("a", 1), ("b", 0)]:
        p = h.state.partition(topic, idx)
        assert p.log.batches[-1].is_control  # a marker even where nothing was written
        assert p.last_stable_offset == p.high_watermark
    f = h.fetch("a", 0, committed=True)
    assert _values(f) == [b"a0"] and f["aborted_transactions"] == []
    txn = h.state.transactions.transactions["t1"]
    assert txn.state is TxnState.COMPLETE_COMMIT and txn.committed_count == 1


def test_abort_lists_the_aborted_transaction_for_read_committed_fetchers(h: Harness) -> None:
    pid, epoch = _begin(h, "t1", {"a": [0]})
    h.produce("a", 0, pid, epoch, 0, [b"x1", b"x2"], tid="t1")
    assert h.end("t1", pid, epoch, False) == 0
    f = h.fetch("a", 0, committed=True)
    assert f["aborted_transactions"] == [{"producer_id": pid, "first_offset": 0}]
    assert f["last_stable_offset"] == 3  # two records and the abort marker
    assert h.fetch("a", 0, committed=False)["aborted_transactions"] is None


def test_last_stable_offset_stops_before_the_open_transaction(h: Harness) -> None:
    r = h.init("idem-less")
    pid, epoch = r["producer_id"], r["producer_epoch"]
    h.add_partitions("idem-less", pid, epoch, {"a": [0]})
    h.produce("a", 0, 77, 0, 0, [b"plain-before"])
    h.produce("a", 0, pid, epoch, 0, [b"txn"], tid="idem-less")
    h.produce("a", 0, 77, 0, 1, [b"plain-after"])
    f = h.fetch("a", 0, committed=True)
    assert _values(f) == [b"plain-before"] and f["last_stable_offset"] == 1
    h.end("idem-less", pid, epoch, True)
    assert _values(h.fetch("a", 0, committed=True)) == [b"plain-before", b"txn", b"plain-after"]


def test_end_txn_retries_answer_as_kafka_does(h: Harness) -> None:
    pid, epoch = _begin(h, "t1", {"a": [0]})
    assert h.end("t1", pid, epoch, True) == 0
    assert h.end("t1", pid, epoch, True) == 0
    assert h.end("t1", pid, epoch, False) == ErrorCode.INVALID_TXN_STATE
    assert len(h.state.transactions.transactions["t1"].history) == 1
    h.init("t1")
    r = h.init("t1")
    assert h.end("t1", pid, r["producer_epoch"], True) == ErrorCode.INVALID_TXN_STATE  # Empty


def test_sequence_numbers_continue_across_transactions(h: Harness) -> None:
    pid, epoch = _begin(h, "t1", {"a": [0]})
    assert h.produce("a", 0, pid, epoch, 0, [b"1", b"2"], tid="t1") == 0
    h.end("t1", pid, epoch, True)
    h.add_partitions("t1", pid, epoch, {"a": [0]})
    assert h.produce("a", 0, pid, epoch, 0, [b"3"], tid="t1") != 0  # not a restart
    assert h.produce("a", 0, pid, epoch, 2, [b"3"], tid="t1") == 0


# -- validation and fencing -------------------------------------------------------------------


def test_produce_to_a_partition_not_in_the_transaction_is_invalid_txn_state(h: Harness) -> None:
    pid, epoch = _begin(h, "t1", {"a": [0]})
    assert h.produce("a", 1, pid, epoch, 0, [b"x"], tid="t1") == ErrorCode.INVALID_TXN_STATE
    assert h.state.partition("a", 1).high_watermark == 0


def test_unknown_partition_fails_the_whole_add(h: Harness) -> None:
    r = h.init("t1")
    res = h.add_partitions("t1", r["producer_id"], 0, {"a": [0, 9], "nope": [0]})
    assert res == {
        ("a", 0): ErrorCode.OPERATION_NOT_ATTEMPTED,
        ("a", 9): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ("nope", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    }
    assert h.state.transactions.transactions["t1"].state is TxnState.EMPTY


def test_wrong_producer_id_is_invalid_producer_id_mapping(h: Harness) -> None:
    r = h.init("t1")
    res = h.add_partitions("t1", r["producer_id"] + 100, 0, {"a": [0]})
    assert res == {("a", 0): ErrorCode.INVALID_PRODUCER_ID_MAPPING}
    assert h.end("never-seen", 1, 0, True) == ErrorCode.INVALID_PRODUCER_ID_MAPPING


def test_new_producer_instance_aborts_ongoing_transaction_and_fences_the_old(h: Harness) -> None:
    pid, epoch = _begin(h, "t1", {"a": [0]})
    h.produce("a", 0, pid, epoch, 0, [b"zombie"], tid="t1")
    r = h.init("t1")
    assert r["producer_id"] == pid and r["producer_epoch"] > epoch
    last = h.state.transactions.transactions["t1"].history[-1]
    assert (last.committed, last.reason) == (False, "init")
    assert h.state.partition("a", 0).last_stable_offset == 2  # aborted, marker written
    assert h.end("t1", pid, epoch, True) == ErrorCode.PRODUCER_FENCED
    assert h.end("t1", pid, epoch, True, version=1) == ErrorCode.INVALID_PRODUCER_EPOCH
    assert h.add_partitions("t1", pid, epoch, {"a": [0]}) == {("a", 0): ErrorCode.PRODUCER_FENCED}
    assert h.add_partitions("t1", pid, epoch, {"a": [0]}, version=1) == {
        ("a", 0): ErrorCode.INVALID_PRODUCER_EPOCH
    }
    assert h.produce("a", 0, pid, epoch, 1, [b"z"], tid="t1") == ErrorCode.INVALID_PRODUCER_EPOCH
    f = h.fetch("a", 0, committed=True)
    assert f["aborted_transactions"] == [{"producer_id": pid, "first_offset": 0}]


def test_hung_transaction_times_out_aborts_and_fences(h: Harness) -> None:
    r = h.init("t1", timeout_ms=5000)
    pid, epoch = r["producer_id"], r["producer_epoch"]
    h.add_partitions("t1", pid, epoch, {"a": [0]})
    h.produce("a", 0, pid, epoch, 0, [b"hung"], tid="t1")
    h.clock.advance(4999)
    h.state.run_timers()
    assert h.state.transactions.transactions["t1"].state is TxnState.ONGOING
    h.clock.advance(1)
    assert h.state.run_timers() == 1
    txn = h.state.transactions.transactions["t1"]
    assert txn.state is TxnState.COMPLETE_ABORT and txn.history[-1].reason == "timeout"
    assert txn.producer_epoch == epoch + 1
    assert h.state.partition("a", 0).last_stable_offset == 2
    assert h.end("t1", pid, epoch, True) == ErrorCode.PRODUCER_FENCED


def test_timer_of_a_finished_transaction_does_nothing(h: Harness) -> None:
    r = h.init("t1", timeout_ms=1000)
    pid = r["producer_id"]
    h.add_partitions("t1", pid, 0, {"a": [0]})
    h.end("t1", pid, 0, True)
    h.add_partitions("t1", pid, 0, {"a": [0]})
    h.clock.advance(999)  # the second transaction's own timeout is still running
    h.state.run_timers()
    txn = h.state.transactions.transactions["t1"]
    assert txn.state is TxnState.ONGOING and txn.producer_epoch == 0


def test_delayed_markers_answer_concurrent_transactions_until_written(h: Harness) -> None:
    pid, epoch = _begin(h, "t1", {"a": [0]})
    h.state.transactions.marker_delay_ms = 100
    assert h.end("t1", pid, epoch, True) == 0
    assert h.end("t1", pid, epoch, True) == ErrorCode.CONCURRENT_TRANSACTIONS
    assert h.add_partitions("t1", pid, epoch, {"a": [0]}) == {
        ("a", 0): ErrorCode.CONCURRENT_TRANSACTIONS
    }
    assert h.init("t1")["error_code"] == ErrorCode.CONCURRENT_TRANSACTIONS
    assert h.state.partition("a", 0).high_watermark == 0
    h.clock.advance(100)
    h.state.run_timers()
    assert h.state.partition("a", 0).high_watermark == 1
    assert h.add_partitions("t1", pid, epoch, {"a": [0]}) == {("a", 0): 0}


def test_coordinator_move_answers_not_coordinator_at_the_old_broker(h: Harness) -> None:
    pid, epoch = _begin(h, "t1", {"a": [0]})
    old = h.txn_coordinator("t1")
    new = next(b for b in h.state.brokers if b != old)
    h.state.coordinators.move(1, "t1", new)
    body = {
        "transactional_id": "t1",
        "producer_id": pid,
        "producer_epoch": epoch,
        "committed": True,
    }
    assert h.send("EndTxn", 3, body, broker=old)["error_code"] == ErrorCode.NOT_COORDINATOR
    assert h.send("EndTxn", 3, body, broker=new)["error_code"] == 0


# -- AddPartitionsToTxn v4+ -------------------------------------------------------------------


def test_batched_add_partitions_and_verify_only(h: Harness) -> None:
    r1, r2 = h.init("t1"), h.init("t2")
    coord = h.txn_coordinator("t1")

    def txn(tid: str, r: dict[str, Any], parts: list[int], verify: bool) -> dict[str, Any]:
        return {
            "transactional_id": tid,
            "producer_id": r["producer_id"],
            "producer_epoch": r["producer_epoch"],
            "verify_only": verify,
            "topics": [{"name": "a", "partitions": parts}],
        }

    def codes(resp: dict[str, Any]) -> dict[str, dict[int, int]]:
        return {
            t["transactional_id"]: {
                p["partition_index"]: p["partition_error_code"]
                for tr in t["topic_results"]
                for p in tr["results_by_partition"]
            }
            for t in resp["results_by_transaction"]
        }

    body = {"transactions": [txn("t1", r1, [0, 1], False)]}
    assert codes(h.send("AddPartitionsToTxn", 5, body, broker=coord)) == {"t1": {0: 0, 1: 0}}
    body = {"transactions": [txn("t1", r1, [1, 2], True)]}
    verified = codes(h.send("AddPartitionsToTxn", 5, body, broker=coord))
    assert verified == {"t1": {1: 0, 2: ErrorCode.INVALID_TXN_STATE}}
    assert ("a", 2) not in h.state.transactions.transactions["t1"].partitions
    if h.txn_coordinator("t2") == coord:
        body = {"transactions": [txn("t1", r1, [2], False), txn("t2", r2, [0], False)]}
        assert codes(h.send("AddPartitionsToTxn", 4, body, broker=coord)) == {
            "t1": {2: 0},
            "t2": {0: 0},
        }


# -- offsets in transactions ------------------------------------------------------------------


class _Groups:
    """Stands in for the group coordinator's two entry points."""

    def __init__(self) -> None:
        self.stored: list[tuple[Any, ...]] = []
        self.verdict = ErrorCode.NONE

    def store_committed_offset(self, *args: Any) -> None:
        self.stored.append(args)

    def validate_txn_offset_commit(self, *args: Any) -> ErrorCode:
        return self.verdict


def _offsets(h: Harness, tid: str, pid: int, epoch: int, group: str, offset: int, **kw: Any) -> int:
    body = {
        "transactional_id": tid,
        "group_id": group,
        "producer_id": pid,
        "producer_epoch": epoch,
        "generation_id_or_member_epoch": kw.get("generation_id", -1),
        "member_id": kw.get("member_id", ""),
        "topics": [
            {
                "name": "b",
                "partitions": [
                    {"partition_index": 0, "committed_offset": offset, "committed_metadata": "m"}
                ],
            }
        ],
    }
    broker = kw.get("broker", h.group_coordinator(group))
    r = h.send("TxnOffsetCommit", 3, body, broker=broker)
    code: int = r["topics"][0]["partitions"][0]["error_code"]
    return code


def _add_offsets(h: Harness, tid: str, pid: int, epoch: int, group: str) -> int:
    body = {"transactional_id": tid, "producer_id": pid, "producer_epoch": epoch, "group_id": group}
    code: int = h.send("AddOffsetsToTxn", 3, body, broker=h.txn_coordinator(tid))["error_code"]
    return code


@pytest.fixture
def groups(h: Harness, monkeypatch: pytest.MonkeyPatch) -> _Groups:
    g = _Groups()
    monkeypatch.setattr(h.state, "groups", g)
    return g


def test_offsets_are_staged_until_commit(h: Harness, groups: _Groups) -> None:
    pid, epoch = _begin(h, "t1", {"a": [0]})
    assert _offsets(h, "t1", pid, epoch, "g1", 5) == ErrorCode.INVALID_TXN_STATE  # no AddOffsets
    assert _add_offsets(h, "t1", pid, epoch, "g1") == 0
    assert _offsets(h, "t1", pid, epoch, "g1", 5) == 0
    assert h.state.transactions.has_pending_offsets("g1", "b", 0)
    assert not h.state.transactions.has_pending_offsets("g1", "b", 1)
    assert groups.stored == []
    assert h.end("t1", pid, epoch, True) == 0
    assert groups.stored == [("g1", "b", 0, 5, -1, "m")]
    assert not h.state.transactions.has_pending_offsets("g1", "b", 0)
    assert h.state.transactions.transactions["t1"].history[-1].offsets == {"g1": {("b", 0): 5}}


def test_aborted_offsets_are_discarded(h: Harness, groups: _Groups) -> None:
    r = h.init("t1")
    pid, epoch = r["producer_id"], r["producer_epoch"]
    assert _add_offsets(h, "t1", pid, epoch, "g1") == 0  # offsets alone start a transaction
    assert _offsets(h, "t1", pid, epoch, "g1", 7) == 0
    assert h.end("t1", pid, epoch, False) == 0
    assert groups.stored == []
    assert not h.state.transactions.has_pending_offsets("g1", "b", 0)


def test_txn_offset_commit_checks_coordinator_member_and_epoch(h: Harness, groups: _Groups) -> None:
    pid, epoch = _begin(h, "t1", {"a": [0]})
    _add_offsets(h, "t1", pid, epoch, "g1")
    other = next(b for b in h.state.brokers if b != h.group_coordinator("g1"))
    assert _offsets(h, "t1", pid, epoch, "g1", 1, broker=other) == ErrorCode.NOT_COORDINATOR
    groups.verdict = ErrorCode.ILLEGAL_GENERATION
    assert _offsets(h, "t1", pid, epoch, "g1", 1, generation_id=3) == ErrorCode.ILLEGAL_GENERATION
    groups.verdict = ErrorCode.NONE
    assert _offsets(h, "t1", pid, epoch + 1, "g1", 1) == ErrorCode.PRODUCER_FENCED


# -- tooling ----------------------------------------------------------------------------------


def test_describe_and_list_transactions(h: Harness) -> None:
    pid, epoch = _begin(h, "t1", {"a": [0, 2]})
    h.init("t2")
    _add_offsets(h, "t1", pid, epoch, "g1")
    coord = h.txn_coordinator("t1")
    r = h.send("DescribeTransactions", 0, {"transactional_ids": ["t1", "zz"]}, broker=coord)
    t1, zz = r["transaction_states"]
    assert t1["transaction_state"] == "Ongoing" and t1["producer_id"] == pid
    assert t1["transaction_start_time_ms"] == h.clock.now_ms()
    topics = {t["topic"]: t["partitions"] for t in t1["topics"]}
    assert topics["a"] == [0, 2] and "__consumer_offsets" in topics
    assert zz["error_code"] in (ErrorCode.TRANSACTIONAL_ID_NOT_FOUND, ErrorCode.NOT_COORDINATOR)

    def listed(body: dict[str, Any], version: int = 2) -> tuple[set[str], list[str]]:
        ids: set[str] = set()
        unknown: list[str] = []
        for b in h.state.brokers:
            resp = h.send("ListTransactions", version, body, broker=b)
            ids |= {t["transactional_id"] for t in resp["transaction_states"]}
            unknown = resp["unknown_state_filters"]
        return ids, unknown

    assert listed({}) == ({"t1", "t2"}, [])
    assert listed({"state_filters": ["Ongoing", "Bogus"]}) == ({"t1"}, ["Bogus"])
    assert listed({"state_filters": ["Bogus"]}) == (set(), ["Bogus"])
    assert listed({"producer_id_filters": [pid]}) == ({"t1"}, [])
    assert listed({"transactional_id_pattern": "t[2-9]"}) == ({"t2"}, [])
    assert listed({"duration_filter": 1000}, version=1) == (set(), [])
    h.clock.advance(1000)
    assert listed({"duration_filter": 1000}, version=1) == ({"t1"}, [])


def test_describe_producers_and_admin_abort_of_a_hanging_transaction(h: Harness) -> None:
    pid, epoch = _begin(h, "t1", {"a": [1]})
    h.produce("a", 1, pid, epoch, 0, [b"x", b"y"], tid="t1")
    leader = h.state.partition("a", 1).leader
    body = {"topics": [{"name": "a", "partition_indexes": [1]}]}
    part = h.send("DescribeProducers", 0, body, broker=leader)["topics"][0]["partitions"][0]
    (prod,) = part["active_producers"]
    assert (prod["producer_id"], prod["producer_epoch"], prod["last_sequence"]) == (pid, epoch, 1)
    assert prod["current_txn_start_offset"] == 0 and prod["last_timestamp"] > 0
    other = next(b for b in h.state.brokers if b != leader)
    err = h.send("DescribeProducers", 0, body, broker=other)["topics"][0]["partitions"][0]
    assert err["error_code"] == ErrorCode.NOT_LEADER_OR_FOLLOWER

    marker = {
        "markers": [
            {
                "producer_id": pid,
                "producer_epoch": epoch,
                "transaction_result": False,
                "topics": [{"name": "a", "partition_indexes": [1]}],
                "coordinator_epoch": 0,
            }
        ]
    }
    r = h.send("WriteTxnMarkers", 1, marker, broker=leader)
    assert r["markers"][0]["topics"][0]["partitions"][0]["error_code"] == 0
    p = h.state.partition("a", 1)
    assert p.last_stable_offset == p.high_watermark == 3
    assert p.log.aborted_txns == [(pid, 0, 2)]

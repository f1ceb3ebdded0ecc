"""Transaction version 2 (KIP-890 part 2) at the coordinator, sans-IO: Produce v12+ and
TxnOffsetCommit v5+ add partitions and groups themselves, every EndTxn v5+ bumps the epoch
the markers carry, and older request versions keep the v1 flow. InitProducerId v6 (KIP-939
two-phase commit) is refused. (The Java client 4.4.0 drives the same flow over sockets:
tests/interop/test_java_clients.py::test_consume_transform_produce_in_transactions.)"""

from __future__ import annotations

from typing import Any

from mockkafka.cluster.features import finalized
from mockkafka.errors import ErrorCode
from mockkafka.protocol.records import decode_records
from tests.transactions.conftest import Harness


def _end(h: Harness, tid: str, pid: int, epoch: int, commit: bool) -> dict[str, Any]:
    body = {
        "transactional_id": tid,
        "producer_id": pid,
        "producer_epoch": epoch,
        "committed": commit,
    }
    out: dict[str, Any] = h.send("EndTxn", 5, body, broker=h.txn_coordinator(tid))
    return out


def _init(h: Harness, tid: str) -> tuple[int, int]:
    r = h.init(tid, version=5)
    assert r["error_code"] == 0
    return r["producer_id"], r["producer_epoch"]


def test_produce_adds_its_partition_and_end_txn_bumps_the_epoch(h: Harness) -> None:
    pid, e0 = _init(h, "t1")
    assert h.produce("a", 0, pid, e0, 0, [b"x"], tid="t1", version=12) == 0
    txn = h.state.transactions.get("t1")
    assert txn is not None and txn.state.value == "Ongoing" and list(txn.partitions) == [("a", 0)]
    # an old-version Produce still needs AddPartitionsToTxn
    assert h.produce("a", 1, pid, e0, 0, [b"y"], tid="t1", version=11) == (
        ErrorCode.INVALID_TXN_STATE
    )
    done = _end(h, "t1", pid, e0, True)
    assert (done["error_code"], done["producer_id"], done["producer_epoch"]) == (0, pid, e0 + 1)
    assert txn.history[-1].producer_epoch == e0 + 1  # the markers carry the new epoch
    got = h.fetch("a", 0, committed=True)
    assert [r.value for r in decode_records(got["records"] or b"")] == [b"x"]
    # a retry of the same EndTxn (old epoch) answers the same; anything else is fenced
    again = _end(h, "t1", pid, e0, True)
    assert (again["error_code"], again["producer_epoch"]) == (0, e0 + 1)
    assert _end(h, "t1", pid, e0, False)["error_code"] == ErrorCode.PRODUCER_FENCED
    # a late batch of the old epoch is fenced; the new epoch starts over at sequence 0
    assert h.produce("a", 0, pid, e0, 1, [b"late"], tid="t1", version=12) == (
        ErrorCode.INVALID_PRODUCER_EPOCH
    )
    assert h.produce("a", 0, pid, e0 + 1, 0, [b"z"], tid="t1", version=12) == 0
    assert _end(h, "t1", pid, e0 + 1, False)["producer_epoch"] == e0 + 2
    assert [t.committed for t in txn.history] == [True, False]


def test_an_abort_with_nothing_ongoing_still_bumps_the_epoch(h: Harness) -> None:
    pid, e0 = _init(h, "t1")
    assert _end(h, "t1", pid, e0, True)["error_code"] == ErrorCode.INVALID_TXN_STATE
    aborted = _end(h, "t1", pid, e0, False)
    assert (aborted["error_code"], aborted["producer_epoch"]) == (0, e0 + 1)
    txn = h.state.transactions.get("t1")
    assert txn is not None and txn.history == []  # nothing was written


def test_txn_offset_commit_adds_its_group(h: Harness) -> None:
    groups: list[tuple[Any, ...]] = []
    h.state.groups.store_committed_offset = lambda *a: groups.append(a)  # type: ignore[method-assign]
    h.state.groups.validate_txn_offset_commit = lambda *a: ErrorCode.NONE  # type: ignore[method-assign]
    pid, e0 = _init(h, "t1")
    body = {
        "transactional_id": "t1",
        "group_id": "g1",
        "producer_id": pid,
        "producer_epoch": e0,
        "generation_id_or_member_epoch": -1,
        "member_id": "",
        "topics": [
            {
                "name": "b",
                "partitions": [
                    {"partition_index": 0, "committed_offset": 4, "committed_metadata": None}
                ],
            }
        ],
    }
    old = h.send("TxnOffsetCommit", 4, body, broker=h.group_coordinator("g1"))
    assert old["topics"][0]["partitions"][0]["error_code"] == ErrorCode.INVALID_TXN_STATE
    new = h.send("TxnOffsetCommit", 5, body, broker=h.group_coordinator("g1"))
    assert new["topics"][0]["partitions"][0]["error_code"] == 0
    assert _end(h, "t1", pid, e0, True)["error_code"] == 0
    assert groups == [("g1", "b", 0, 4, -1, None)]


def test_the_epoch_overflow_moves_the_transactional_id_to_a_new_producer_id(h: Harness) -> None:
    pid, _ = _init(h, "t1")
    txn = h.state.transactions.get("t1")
    assert txn is not None
    txn.producer_epoch = 32766
    assert h.produce("a", 0, pid, 32766, 0, [b"x"], tid="t1", version=12) == 0
    done = _end(h, "t1", pid, 32766, True)
    assert done["error_code"] == 0 and done["producer_id"] != pid and done["producer_epoch"] == 0
    retry = _end(h, "t1", pid, 32766, True)  # the retry names the old id
    assert (retry["error_code"], retry["producer_id"]) == (0, done["producer_id"])


def test_transaction_version_1_keeps_the_v1_flow_for_every_client(h: Harness) -> None:
    finalized(h.state).levels["transaction.version"] = 1
    pid, e0 = _init(h, "t1")
    assert h.produce("a", 0, pid, e0, 0, [b"x"], tid="t1", version=12) == (
        ErrorCode.INVALID_TXN_STATE
    )
    assert set(h.add_partitions("t1", pid, e0, {"a": [0]}).values()) == {0}
    assert h.produce("a", 0, pid, e0, 0, [b"x"], tid="t1", version=12) == 0
    assert _end(h, "t1", pid, e0, True)["producer_epoch"] == e0  # no bump


def test_init_producer_id_v6_refuses_two_phase_commit(h: Harness) -> None:
    refused = h.init("t1", version=6, enable2_pc=True)
    assert refused["error_code"] == ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    plain = h.init("t1", version=6)
    assert plain["error_code"] == 0 and plain["producer_id"] >= 0
    assert (plain["ongoing_txn_producer_id"], plain["ongoing_txn_producer_epoch"]) == (-1, -1)


def test_the_next_transaction_after_a_marker_is_stored_not_taken_for_a_duplicate(
    h: Harness,
) -> None:
    """The marker of a v2 commit carries the bumped epoch, and the partition remembers the
    producer at it: the next transaction's first batch (that epoch, sequence 0) is new data,
    not a duplicate of the previous transaction's sequence 0 (a merge once dropped it)."""
    pid, e0 = _init(h, "t9")
    assert h.produce("a", 0, pid, e0, 0, [b"first"], tid="t9", version=12) == 0
    assert _end(h, "t9", pid, e0, True)["producer_epoch"] == e0 + 1
    assert h.produce("a", 0, pid, e0 + 1, 0, [b"second"], tid="t9", version=12) == 0
    assert _end(h, "t9", pid, e0 + 1, True)["error_code"] == 0
    got = h.fetch("a", 0, committed=True)
    assert [r.value for r in decode_records(got["records"] or b"")] == [b"first", b"second"]

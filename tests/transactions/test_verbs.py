"""The public transaction verbs and views (``Cluster.transaction`` & co), sans-IO."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import pytest

from mockkafka import WaitTimeout
from mockkafka._api.public import BlockingWaits
from mockkafka._api.verbs import ClusterVerbs
from mockkafka.cluster.state import ClusterState
from mockkafka.errors import ConfigError, ErrorCode, KafkaApiError
from mockkafka.server.waits import Waits
from tests.transactions.conftest import Harness

T = TypeVar("T")


class Verbs(ClusterVerbs, BlockingWaits):
    """The verbs over a bare state, as the Cluster runs them on its loop; its waits probe
    in place (``Waits.inline``)."""

    def __init__(self, state: ClusterState) -> None:
        self._state = state
        self._waits = Waits.inline()

    def _call(self, fn: Callable[[], T]) -> T:
        return fn()

    _read = _call


def _ongoing(h: Harness, tid: str) -> tuple[int, int]:
    r = h.init(tid)
    pid, epoch = r["producer_id"], r["producer_epoch"]
    h.add_partitions(tid, pid, epoch, {"a": [0]})
    h.produce("a", 0, pid, epoch, 0, [b"x"], tid=tid)
    return pid, epoch


def test_view_reports_state_partitions_and_history(h: Harness) -> None:
    v = Verbs(h.state)
    pid, epoch = _ongoing(h, "t1")
    view = v.transaction("t1")
    assert view.ongoing and view.state == "Ongoing" and view.partitions == (("a", 0),)
    assert (view.producer_id, view.producer_epoch, view.timeout_ms) == (pid, epoch, 60_000)
    assert view.coordinator == h.txn_coordinator("t1") and view.last is None
    h.end("t1", pid, epoch, True)
    view = v.transaction("t1")
    assert not view.ongoing and view.committed_count == 1 and view.aborted_count == 0
    assert view.last is not None and view.last.partitions == (("a", 0),)
    assert [t.transactional_id for t in v.transactions(state="CompleteCommit")] == ["t1"]
    assert v.transactions(state="Ongoing") == []


def test_unknown_ids_and_bad_arguments_raise_at_once(h: Harness) -> None:
    v = Verbs(h.state)
    with pytest.raises(KafkaApiError) as info:
        v.transaction("nope")
    assert info.value.error == ErrorCode.TRANSACTIONAL_ID_NOT_FOUND
    with pytest.raises(ConfigError):
        v.transactions(state="Running")
    with pytest.raises(ConfigError):
        v.delay_transaction_markers(ms=-1)


def test_abort_transaction_keeps_the_epoch_so_the_commit_is_refused(h: Harness) -> None:
    v = Verbs(h.state)
    pid, epoch = _ongoing(h, "t1")
    assert v.abort_transaction("t1") is True
    assert v.abort_transaction("t1") is False
    assert v.transaction("t1").last is not None
    assert v.transaction("t1").producer_epoch == epoch
    assert h.end("t1", pid, epoch, True) == ErrorCode.INVALID_TXN_STATE
    assert h.state.partition("a", 0).last_stable_offset == 2


def test_fence_and_expire_bump_the_epoch(h: Harness) -> None:
    v = Verbs(h.state)
    pid, epoch = _ongoing(h, "t1")
    assert v.fence_producer("t1") == epoch + 1
    assert v.transaction("t1").aborted_count == 1
    assert h.end("t1", pid, epoch, False) == ErrorCode.PRODUCER_FENCED
    assert v.fence_producer("t1") == epoch + 2  # nothing ongoing: just the bump
    assert v.expire_transaction("t1") is False
    _ongoing(h, "t2")
    assert v.expire_transaction("t2") is True
    last = v.transaction("t2").last
    assert last is not None and last.reason == "timeout"


def test_move_transaction_coordinator_and_marker_delay(h: Harness) -> None:
    v = Verbs(h.state)
    pid, epoch = _ongoing(h, "t1")
    new = h.txn_coordinator("t1") % 3 + 1
    v.move_coordinator(transactional_id="t1", to=new)
    assert v.coordinator(transactional_id="t1") == new == v.transaction("t1").coordinator
    v.delay_transaction_markers(ms=50)
    assert h.end("t1", pid, epoch, True) == 0
    assert v.transaction("t1").state == "PrepareCommit"
    h.clock.advance(50)
    h.state.run_timers()
    assert v.wait_for_transaction(
        "t1", where=lambda t: t.committed_count == 1, timeout=1
    ).state == ("CompleteCommit")
    with pytest.raises(
        WaitTimeout, match=r"not reached within 0\.05 s; last seen: 't1' CompleteCommit"
    ):
        v.wait_for_transaction("t1", where=lambda t: t.ongoing, timeout=0.05)

"""Cluster timers: what the server's timer task is woken for, and that every timer fires."""

from __future__ import annotations

from collections.abc import Hashable

from mockkafka.cluster.state import TIMERS_CHANGED, ClusterConfig, ClusterState, ManualClock


def _state() -> tuple[ClusterState, list[Hashable]]:
    clock = ManualClock()
    state = ClusterState(ClusterConfig(brokers=1), clock=clock)
    woken: list[Hashable] = []
    state.add_waker(woken.append)
    return state, woken


def test_only_a_new_earliest_timer_wakes_the_timer_task() -> None:
    """The timer task sleeps until the earliest timer; a heartbeat or a transaction re-arms
    a later one on every request, and that must not wake it each time."""
    state, woken = _state()
    now = state.now_ms()
    state.call_at(now + 1000, lambda: None)
    assert woken.count(TIMERS_CHANGED) == 1
    state.call_at(now + 5000, lambda: None)  # later than the earliest: nothing to re-plan
    assert woken.count(TIMERS_CHANGED) == 1
    state.call_at(now + 10, lambda: None)  # the new earliest
    assert woken.count(TIMERS_CHANGED) == 2
    assert state.next_timer_at() == now + 10


def test_every_timer_fires_in_order_including_those_that_did_not_wake_the_task() -> None:
    state, _ = _state()
    clock = state.clock
    assert isinstance(clock, ManualClock)
    fired: list[int] = []
    now = state.now_ms()
    for delay in (300, 100, 200, 400):
        state.call_at(now + delay, lambda d=delay: fired.append(d))
    cancelled = state.call_at(now + 150, lambda: fired.append(-1))
    cancelled.cancel()  # the earliest pending after 100 is then 200
    clock.advance(100)
    assert state.run_timers() == 1
    assert state.next_timer_at() == now + 200
    clock.advance(500)
    assert state.run_timers() == 3
    assert fired == [100, 200, 300, 400]
    assert state.next_timer_at() is None

"""Helpers for the consumer-group interop tests (all clients)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import mockkafka

# Short timeouts so expiry tests take seconds; KIP-848 members heartbeat every 200 ms.
GROUP_CLUSTER_OPTIONS = {
    "group_min_session_timeout_ms": 1000,
    "broker_configs": (
        ("group.consumer.heartbeat.interval.ms", "200"),
        ("group.consumer.session.timeout.ms", "3000"),
    ),
}


@contextmanager
def group_cluster(
    brokers: int = 3, *, initial_rebalance_delay_ms: int = 0
) -> Iterator[mockkafka.Cluster]:
    with mockkafka.Cluster(
        brokers=brokers,
        group_initial_rebalance_delay_ms=initial_rebalance_delay_ms,
        **GROUP_CLUSTER_OPTIONS,  # type: ignore[arg-type]
    ) as c:
        yield c


def no_overlap_and_complete(
    assignments: list[set[tuple[str, int]]], expected: set[tuple[str, int]]
) -> bool:
    """True when the members' assignments partition ``expected`` exactly."""
    union: set[tuple[str, int]] = set()
    for a in assignments:
        if union & a:
            return False
        union |= a
    return union == expected and all(assignments)


@contextmanager
def consumer_process(script: str, *args: str) -> Iterator[subprocess.Popen[str]]:
    """Run a consumer in a child process (so the test can kill it with no goodbye)."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-c", script, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)
        if proc.stdout is not None:
            proc.stdout.close()


def kill_hard(proc: subprocess.Popen[str]) -> float:
    """SIGKILL the child (no LeaveGroup, no last heartbeat); returns the time it died."""
    proc.kill()
    proc.wait(10)
    return time.monotonic()

"""Consumer-group timing: confluent-kafka against mockkafka and librdkafka's mock cluster.

Run ``python benchmarks/bench_groups.py`` (``--rounds`` repeats each case; about 40 s).
Two measurements, each the median over the rounds:

- *first assignment*: from creating a consumer (subscribe) to its first non-empty
  assignment, for a new group on a 4-partition topic;
- *3-member rebalance*: three consumers started at once, until their assignments cover all
  partitions without overlap.

Targets: mockkafka with the default group.initial.rebalance.delay.ms (0) and with 3000
(real Kafka's default); librdkafka's mock cluster (``test.mock.num.brokers``), whose
initial rebalance delay is 3000 ms and cannot be changed from Python. Clients use the classic
protocol with librdkafka's defaults (heartbeat.interval.ms 3000), and mockkafka also with
``group.protocol=consumer`` (KIP-848, server heartbeat interval 5000 ms by default).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from confluent_kafka import Consumer, Producer

import mockkafka

# librdkafka's mock cluster auto-creates topics with 4 partitions (no CreateTopics).
PARTITIONS = 4


def _consumer(bootstrap: str, group: str, protocol: str) -> Consumer:
    return Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "group.protocol": protocol,
            "auto.offset.reset": "earliest",
            "log_level": 0,
        }
    )


def _wait(consumers: list[Consumer], done: Callable[[], bool], timeout: float = 30.0) -> float:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        for c in consumers:
            c.poll(0.005)
        if done():
            return time.monotonic() - t0
    raise RuntimeError("timed out waiting for the group")


def first_assignment(bootstrap: str, topic: str, protocol: str) -> float:
    c = _consumer(bootstrap, f"g-{uuid.uuid4().hex[:8]}", protocol)
    try:
        t0 = time.monotonic()
        c.subscribe([topic])
        _wait([c], lambda: bool(c.assignment()))
        return time.monotonic() - t0
    finally:
        c.close()


def three_member_rebalance(bootstrap: str, topic: str, protocol: str) -> float:
    group = f"g-{uuid.uuid4().hex[:8]}"
    cs = [_consumer(bootstrap, group, protocol) for _ in range(3)]
    try:
        t0 = time.monotonic()
        for c in cs:
            c.subscribe([topic])

        def done() -> bool:
            owned = [{tp.partition for tp in c.assignment()} for c in cs]
            return all(owned) and sum(map(len, owned)) == PARTITIONS == len(set().union(*owned))

        _wait(cs, done)
        return time.monotonic() - t0
    finally:
        for c in cs:
            c.close()


def run_case(name: str, bootstrap: str, topic: str, protocol: str, rounds: int) -> None:
    firsts = [first_assignment(bootstrap, topic, protocol) for _ in range(rounds)]
    rebs = [three_member_rebalance(bootstrap, topic, protocol) for _ in range(rounds)]
    print(
        f"{name:<44} {statistics.median(firsts) * 1000:>10.0f} ms "
        f"{statistics.median(rebs) * 1000:>12.0f} ms"
    )


def librdkafka_mock(rounds: int) -> None:
    # A client with test.mock.num.brokers creates the mock cluster; others connect to it.
    p = Producer({"test.mock.num.brokers": 3, "log_level": 0})
    try:
        topic = "bench"
        md = p.list_topics(topic, timeout=10)
        bootstrap = ",".join(f"{b.host}:{b.port}" for b in md.brokers.values())
        assert len(md.topics[topic].partitions) == PARTITIONS
        run_case("librdkafka mock cluster (delay 3000, fixed)", bootstrap, topic, "classic", rounds)
    finally:
        p.flush(1)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    print(f"{'target':<44} {'first assign':>13} {'3-member rebal':>15}")
    cases: list[tuple[str, dict[str, Any], str]] = [
        ("mockkafka classic (delay 0, default)", {}, "classic"),
        ("mockkafka classic (delay 3000)", {"group_initial_rebalance_delay_ms": 3000}, "classic"),
        ("mockkafka group.protocol=consumer", {}, "consumer"),
    ]
    for name, opts, protocol in cases:
        with mockkafka.Cluster(brokers=3, **opts) as cluster:
            cluster.create_topic("bench", partitions=PARTITIONS)
            run_case(name, cluster.bootstrap_servers, "bench", protocol, args.rounds)
    librdkafka_mock(args.rounds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Transactions per second of a confluent-kafka transactional producer: mockkafka versus
librdkafka's built-in mock cluster (``test.mock.num.brokers``).

Run ``python benchmarks/bench_transactions.py`` (``--seconds`` per case, default 5). Each
transaction writes ``--messages`` small records to 3 partitions, then commits (a
consume-transform-produce style cycle without the consumer). Prints commits/s and the time of
init_transactions.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from confluent_kafka import Producer

import mockkafka


def run(conf: dict[str, Any], topic: str, seconds: float, messages: int) -> tuple[float, float]:
    p = Producer({**conf, "transactional.id": f"bench-{time.monotonic_ns()}", "linger.ms": 0})
    t0 = time.perf_counter()
    p.init_transactions(30)
    init_s = time.perf_counter() - t0
    n = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        p.begin_transaction()
        for i in range(messages):
            p.produce(topic, value=b"v%d" % i, partition=i % 3)
        p.commit_transaction(30)
        n += 1
    rate = n / (time.perf_counter() - start)
    p.close()
    return init_s, rate


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--messages", type=int, default=10)
    a = ap.parse_args()
    with mockkafka.Cluster(brokers=3) as c:
        c.create_topic("bench", partitions=3, replication_factor=3)
        init_s, rate = run(
            {"bootstrap.servers": c.bootstrap_servers}, "bench", a.seconds, a.messages
        )
    print(f"mockkafka (3 brokers):        init {init_s * 1000:7.1f} ms  {rate:8.1f} commits/s")
    # librdkafka's mock cluster lives inside the producer and auto-creates the topic.
    init_s, rate = run({"test.mock.num.brokers": 3}, "bench", a.seconds, a.messages)
    print(f"librdkafka mock (3 brokers):  init {init_s * 1000:7.1f} ms  {rate:8.1f} commits/s")


if __name__ == "__main__":
    main()

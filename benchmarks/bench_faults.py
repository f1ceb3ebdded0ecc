"""Cost of the fault engine on the request path.

Run ``python benchmarks/bench_faults.py [--messages 50000]`` (about 30 s). A confluent-kafka
producer sends ``--messages`` 100-byte records in small batches (``batch.num.messages=10``,
so thousands of Produce requests) to a 1-broker cluster, three times in one run: with no
fault rules, with 20 rules that never match (each request is checked against all), and with
one rule observing every Produce. Prints Produce requests per second and the ratio to the
no-rules case.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from confluent_kafka import Producer

import mockkafka


def run(messages: int, setup: Callable[[mockkafka.Cluster], object]) -> tuple[float, int]:
    with mockkafka.Cluster(brokers=1) as cluster:
        cluster.create_topic("bench", partitions=1)
        setup(cluster)
        p = Producer(
            {
                "bootstrap.servers": cluster.bootstrap_servers,
                "linger.ms": 0,
                "batch.num.messages": 10,
                "log_level": 0,
            }
        )
        start = time.perf_counter()
        deadline = time.monotonic() + 120
        for _ in range(messages):
            while time.monotonic() < deadline:
                try:
                    p.produce("bench", b"x" * 100)
                    break
                except BufferError:
                    p.poll(0.01)
        p.flush(60)
        elapsed = time.perf_counter() - start
        return elapsed, len(cluster.traffic.requests("Produce"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--messages", type=int, default=50_000)
    args = ap.parse_args()
    cases: list[tuple[str, Callable[[mockkafka.Cluster], object]]] = [
        ("no rules", lambda c: None),
        (
            "20 non-matching rules",
            lambda c: [
                c.faults.on("Produce", topic=f"other-{i}").every_time().delay(ms=1)
                for i in range(20)
            ],
        ),
        ("observe every Produce", lambda c: c.faults.on("Produce").every_time().observe()),
    ]
    base = None
    print(f"{'case':<24} {'seconds':>8} {'Produce req':>12} {'req/s':>9} {'ratio':>6}")
    for name, setup in cases:
        elapsed, n = run(args.messages, setup)
        rate = n / elapsed
        base = base or rate
        print(f"{name:<24} {elapsed:8.2f} {n:12d} {rate:9.0f} {rate / base:6.2f}")


if __name__ == "__main__":
    main()

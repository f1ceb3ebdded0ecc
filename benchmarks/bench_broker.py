"""Broker benchmark: cluster start/stop times, and confluent-kafka produce + consume
throughput against mockkafka and against librdkafka's own mock cluster, in one run.

    python benchmarks/bench_broker.py                # 1,000,000 x 100 B (a few minutes)
    python benchmarks/bench_broker.py --quick        # 50,000 messages: a CI smoke run
    python benchmarks/bench_broker.py --messages 200000 --size 1000

Everything runs in this process on 127.0.0.1. The producer uses acks=all and linger.ms=5;
the consumer assigns every partition from the beginning (no group). The topic has 4
partitions, replication factor 3 (the mock cluster's auto-created default). librdkafka's mock
cluster is the one ``test.mock.num.brokers`` starts inside a client instance; its broker
addresses are read from that client's metadata, and the benchmark's own producer and
consumer connect to it like any other cluster.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, Producer, TopicPartition

import mockkafka

TOPIC = "bench"
QUIET = {"log_level": 3}  # errors only: shutdown chatter is not interesting here


@dataclass
class Result:
    target: str
    produce_s: float
    consume_s: float
    messages: int
    held: int  # messages the cluster still held after producing (and were consumed)

    @property
    def produce_rate(self) -> float:
        return self.messages / self.produce_s

    @property
    def consume_rate(self) -> float:
        return self.held / self.consume_s


def time_start_stop(rounds: int, brokers: int) -> tuple[list[float], list[float]]:
    starts, stops = [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        c = mockkafka.Cluster(brokers=brokers).start()
        t1 = time.perf_counter()
        c.stop()
        t2 = time.perf_counter()
        starts.append(t1 - t0)
        stops.append(t2 - t1)
    return starts, stops


def produce_consume(
    bootstrap: str, messages: int, size: int, partitions: int, label: str
) -> Result:
    value = b"x" * size
    p = Producer(
        {
            "bootstrap.servers": bootstrap,
            "acks": "all",
            "linger.ms": 5,
            "queue.buffering.max.messages": 1_000_000,
            **QUIET,
        }
    )
    failed: list[KafkaError] = []

    def on_delivery(err: KafkaError | None, _msg: object) -> None:
        if err is not None:
            failed.append(err)

    t0 = time.perf_counter()
    for i in range(messages):
        while True:
            try:
                p.produce(TOPIC, value, partition=i % partitions, on_delivery=on_delivery)
                break
            except BufferError:
                p.poll(0.01)
        if i % 10_000 == 0:
            p.poll(0)
    left = p.flush(120)
    produce_s = time.perf_counter() - t0
    if left or failed:
        raise SystemExit(f"{label}: {left} undelivered, {len(failed)} failed: {failed[:3]}")

    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "bench",
            "enable.auto.commit": False,
            "fetch.wait.max.ms": 100,
            **QUIET,
        }
    )
    got = 0
    try:
        tps = [TopicPartition(TOPIC, i) for i in range(partitions)]
        marks = [c.get_watermark_offsets(tp, timeout=10) for tp in tps]
        # librdkafka's mock cluster keeps a bounded log per partition and silently drops
        # the oldest segments; consume what it still holds and report that.
        held = sum(hi - lo for lo, hi in marks)
        t0 = time.perf_counter()
        deadline = time.monotonic() + 300
        c.assign([TopicPartition(TOPIC, i, OFFSET_BEGINNING) for i in range(partitions)])
        while got < held and time.monotonic() < deadline:
            for m in c.consume(10_000, 1.0):
                if m.error() is None:
                    got += 1
        consume_s = time.perf_counter() - t0
    finally:
        c.close()
    if got != held:
        raise SystemExit(f"{label}: consumed {got} of the {held} messages held")
    return Result(label, produce_s, consume_s, messages, held)


def bench_mockkafka(messages: int, size: int, partitions: int, *, record_traffic: bool) -> Result:
    label = f"mockkafka (record_traffic={record_traffic})"
    with mockkafka.Cluster(brokers=3, record_traffic=record_traffic) as cluster:
        cluster.create_topic(TOPIC, partitions=partitions, replication_factor=3)
        return produce_consume(cluster.bootstrap_servers, messages, size, partitions, label)


def bench_librdkafka_mock(messages: int, size: int, partitions: int) -> Result:
    # The mock cluster lives as long as the client instance that started it. It does not
    # answer CreateTopics; a Metadata request auto-creates the topic with its default of
    # 4 partitions, so the comparison uses 4 unless told otherwise.
    host = Producer({"test.mock.num.brokers": 3, **QUIET})
    try:
        md = host.list_topics(TOPIC, timeout=10)
        bootstrap = ",".join(f"{b.host}:{b.port}" for b in md.brokers.values())
        have = len(md.topics[TOPIC].partitions)
        if have != partitions:
            print(f"  (librdkafka mock topic has {have} partitions)", file=sys.stderr)
        return produce_consume(bootstrap, messages, size, have, "librdkafka mock cluster")
    finally:
        host.flush(1)


def run(label: str, fn: Callable[[], Result]) -> Result:
    gc.collect()
    print(f"running: {label} ...", file=sys.stderr, flush=True)
    return fn()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--messages", type=int, default=1_000_000)
    ap.add_argument("--size", type=int, default=100, help="value size in bytes")
    ap.add_argument("--partitions", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=20, help="start/stop rounds")
    ap.add_argument("--quick", action="store_true", help="50,000 messages, 5 start/stop rounds")
    ap.add_argument("--skip-librdkafka", action="store_true")
    args = ap.parse_args(argv)
    if args.quick:
        args.messages, args.rounds = min(args.messages, 50_000), 5

    starts, stops = time_start_stop(args.rounds, 3)
    print(f"Cluster(brokers=3), {args.rounds} rounds:")
    print(
        f"  start-to-ready  median {statistics.median(starts) * 1000:7.1f} ms"
        f"   max {max(starts) * 1000:7.1f} ms"
    )
    print(
        f"  stop            median {statistics.median(stops) * 1000:7.1f} ms"
        f"   max {max(stops) * 1000:7.1f} ms"
    )

    n, size, parts = args.messages, args.size, args.partitions
    results = [
        run("mockkafka", lambda: bench_mockkafka(n, size, parts, record_traffic=False)),
        run("mockkafka+traffic", lambda: bench_mockkafka(n, size, parts, record_traffic=True)),
    ]
    if not args.skip_librdkafka:
        results.append(run("librdkafka mock", lambda: bench_librdkafka_mock(n, size, parts)))

    print(f"\nconfluent-kafka, {n:,} x {size} B, {parts} partitions, acks=all, linger.ms=5:")
    print(
        f"  {'target':<36} {'produce msg/s':>14} {'consume msg/s':>14} {'produce s':>10}"
        f" {'consume s':>10} {'held':>10}"
    )
    for r in results:
        print(
            f"  {r.target:<36} {r.produce_rate:>14,.0f} {r.consume_rate:>14,.0f}"
            f" {r.produce_s:>10.2f} {r.consume_s:>10.2f} {r.held:>10,}"
        )
    if any(r.held < r.messages for r in results):
        print("  held < produced: that cluster dropped its oldest records by itself")
    if not args.skip_librdkafka:
        ref = results[-1]
        print("\n  ratio mockkafka / librdkafka mock (1.0 = as fast):")
        for r in results[:-1]:
            print(
                f"  {r.target:<36} produce {r.produce_rate / ref.produce_rate:5.2f}"
                f"   consume {r.consume_rate / ref.consume_rate:5.2f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())

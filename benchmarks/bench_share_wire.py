"""Share-group delivery over the wire: confluent-kafka's ShareConsumer against mockkafka and
against Apache Kafka itself, in the same run.

    python benchmarks/bench_share_wire.py            # 100,000 records per target, 3 repetitions
    python benchmarks/bench_share_wire.py --quick    # 10,000 records, 1 repetition

For each target -- a ``mockkafka.Cluster`` and a real Apache Kafka 4.4 broker (one KRaft node,
``mockkafka.kafka_broker``) -- a 3-partition topic is filled with N records of 100 B, the share
group is set to start at the earliest offset (IncrementalAlterConfigs on the GROUP resource,
the same admin call on both), and one ShareConsumer (librdkafka's KIP-932 consumer: the GA
share APIs, ShareGroupHeartbeat v1 and ShareFetch/ShareAcknowledge v1+, implicit
acknowledgement) drains it. Figures: records/s from subscribing to the last record, and the
time to the first record. Targets that cannot run print why (the real broker needs Java and
Maven).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

TIMEOUT_S = 120.0
PARTITIONS = 3


@contextmanager
def fake() -> Iterator[str]:
    import mockkafka

    with mockkafka.Cluster() as cluster:
        yield cluster.bootstrap_servers


@contextmanager
def real_kafka() -> Iterator[str]:
    from mockkafka.kafka_broker import KafkaBroker

    with KafkaBroker() as broker:
        yield broker.bootstrap_servers


def prepare(bootstrap: str, topic: str, group: str, n: int) -> None:
    from confluent_kafka import Producer
    from confluent_kafka.admin import (
        AdminClient,
        AlterConfigOpType,
        ConfigEntry,
        ConfigResource,
        NewTopic,
        ResourceType,
    )

    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(topic, PARTITIONS, 1)]).values():
        f.result(30)
    entry = ConfigEntry(
        "share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET
    )
    resource = ConfigResource(ResourceType.GROUP, group, incremental_configs=[entry])
    for f in admin.incremental_alter_configs([resource]).values():
        f.result(30)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    payload = b"x" * 100
    for i in range(n):
        producer.produce(topic, payload, partition=i % PARTITIONS)
        if i % 10_000 == 9_999:
            producer.poll(0)
    assert producer.flush(60) == 0


def drain(bootstrap: str, topic: str, group: str, n: int) -> tuple[float, float]:
    """(seconds to receive all n records, seconds to the first one) from subscribing."""
    from confluent_kafka import ShareConsumer

    consumer = ShareConsumer({"bootstrap.servers": bootstrap, "group.id": group})
    seen: set[tuple[int, int]] = set()
    first = 0.0
    try:
        t0 = time.monotonic()
        consumer.subscribe([topic])
        while len(seen) < n:
            if time.monotonic() - t0 > TIMEOUT_S:
                raise RuntimeError(f"received {len(seen)} of {n} records in {TIMEOUT_S:.0f} s")
            for msg in consumer.poll(0.5) or []:
                if msg.error() is None:
                    if not seen:
                        first = time.monotonic() - t0
                    seen.add((msg.partition(), msg.offset()))
        return time.monotonic() - t0, first
    finally:
        consumer.close()


def run_once(target: Callable[[], AbstractContextManager[str]], n: int) -> tuple[float, float]:
    with target() as bootstrap:
        topic, group = f"jobs-{uuid.uuid4().hex[:6]}", f"workers-{uuid.uuid4().hex[:6]}"
        prepare(bootstrap, topic, group, n)
        return drain(bootstrap, topic, group, n)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--records", type=int, default=100_000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="10,000 records, 1 repetition")
    args = ap.parse_args()
    if args.quick:
        args.records, args.reps = 10_000, 1
    import confluent_kafka

    if not hasattr(confluent_kafka, "ShareConsumer"):
        print(
            f"bench_share_wire: confluent-kafka {confluent_kafka.version()[0]} has no ShareConsumer"
        )
        return 0
    targets: dict[str, Callable[[], AbstractContextManager[str]]] = {
        "mockkafka": fake,
        "Apache Kafka 4.4.0": real_kafka,
    }
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in targets}
    problems: dict[str, str] = {}
    for _ in range(args.reps):
        for name, target in targets.items():
            if name not in problems:
                try:
                    runs[name].append(run_once(target, args.records))
                except Exception as exc:
                    problems[name] = f"{type(exc).__name__}: {exc}"
    print(f"share-group delivery, ShareConsumer, {args.records:,} x 100 B, {args.reps} rep(s)")
    print(f"{'target':<22} {'records/s':>10} {'first record s':>15}")
    rates: dict[str, float] = {}
    for name, got in runs.items():
        if not got:
            print(f"{name:<22} not measured: {problems.get(name, 'no run')}")
            continue
        secs = statistics.median(r[0] for r in got)
        rates[name] = args.records / secs
        first = statistics.median(r[1] for r in got)
        print(f"{name:<22} {rates[name]:>10,.0f} {first:>15.2f}")
    if len(rates) == 2:
        print(
            f"ratio mockkafka / Apache Kafka: {rates['mockkafka'] / rates['Apache Kafka 4.4.0']:.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Helpers of the proxy tests: set-up and read-back done *directly* against Kafka.

What a client was told through the proxy is checked against what Kafka itself holds, read
on a connection that bypasses the proxy, so a proxy that loses, duplicates or reorders
records cannot hide it.
"""

from __future__ import annotations

import time
from typing import Any

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic


def create_topic(bootstrap: str, name: str, partitions: int = 3, replication: int = 1) -> None:
    """Create ``name`` (waits up to 30 s for the answer)."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(name, partitions, replication)]).values():
        f.result(30)


def fill(bootstrap: str, topic: str, n: int, partitions: int, prefix: str = "m") -> list[str]:
    """Write ``prefix0..prefix{n-1}`` round-robin over ``partitions``; the values written."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    values = [f"{prefix}{i}" for i in range(n)]
    for i, v in enumerate(values):
        producer.produce(topic, v.encode(), key=f"k{i}".encode(), partition=i % partitions)
    assert producer.flush(30) == 0
    return values


def read_partitions(
    bootstrap: str,
    topic: str,
    partitions: int,
    *,
    isolation: str = "read_uncommitted",
    expect: int | None = None,
    timeout: float = 30.0,
) -> dict[int, list[bytes]]:
    """Every value of ``topic``, per partition in log order, read from ``bootstrap`` by an
    assigned (group-less) consumer until each partition's end (or ``expect`` values)."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "direct-reader",
            "enable.auto.commit": False,
            "isolation.level": isolation,
            "enable.partition.eof": True,
        }
    )
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    got: dict[int, list[bytes]] = {p: [] for p in range(partitions)}
    at_end: set[int] = set()
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            msg = consumer.poll(0.2)
            if msg is None:
                continue
            if msg.error() is not None:
                if msg.error().code() == -191:  # _PARTITION_EOF
                    at_end.add(msg.partition())
                    total = sum(map(len, got.values()))
                    if len(at_end) == partitions and (expect is None or total >= expect):
                        break
                continue
            at_end.discard(msg.partition())
            got[msg.partition()].append(msg.value())
    finally:
        consumer.close()
    return got


def read_values(bootstrap: str, topic: str, partitions: int, **kw: Any) -> list[str]:
    """:func:`read_partitions` flattened and decoded (partition by partition)."""
    got = read_partitions(bootstrap, topic, partitions, **kw)
    return [v.decode() for p in sorted(got) for v in got[p]]


def committed(bootstrap: str, group: str, topic: str, partitions: int) -> int:
    """The sum of ``group``'s committed offsets over ``topic``'s partitions (asked directly)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        tps = consumer.committed([TopicPartition(topic, p) for p in range(partitions)], timeout=20)
    finally:
        consumer.close()
    return sum(max(tp.offset, 0) for tp in tps)

"""What the fault-action suites check the same way for every client: the cases are driven
by each client's own consumer (passed in as a ``read``), the expectations live here once.

``read(topic, n)`` returns the values of up to ``n`` records of ``topic`` partition 0 read
from the beginning by a fresh consumer of that client."""

from __future__ import annotations

import struct
from collections.abc import Callable

import mockkafka
from mockkafka.faults import Rule
from mockkafka.protocol.records import iter_batches
from tests.interop.conftest import unique

#: The values of the transactions ``TRANSACTIONS`` writes that read_committed must return
#: (transaction 1 is aborted).
TRANSACTIONS = [True, False, True, True]
COMMITTED = [b"t%d-%d" % (i, j) for i, ok in enumerate(TRANSACTIONS) if ok for j in range(2)]
#: Their offsets: two records per transaction, a commit or abort marker after each.
COMMITTED_OFFSETS = [0, 1, 6, 7, 9, 10]


def registry_value(schema_id: int, payload: bytes) -> bytes:
    """A value in the Confluent schema-registry wire format."""
    return struct.pack(">bI", 0, schema_id) + payload


def check_schema_id(cluster: mockkafka.Cluster, read: Callable[[str, int], list[bytes]]) -> None:
    """``schema_id(id=)`` rewrites the registry header of framed values only (once, in the
    one answer carrying them), and ``schema_id(magic=)`` the magic byte, keeping the id."""
    topic = unique("avro")
    cluster.create_topic(topic, partitions=1)
    for i in range(3):
        cluster.produce(topic, registry_value(1, b"payload-%d" % i))
    cluster.produce(topic, b"plain text")  # not registry framed: left alone
    rule = cluster.faults.on("Fetch", topic=topic).once().schema_id(id=999)
    got = read(topic, 4)
    assert rule.fired == 1
    assert got == [*(registry_value(999, b"payload-%d" % i) for i in range(3)), b"plain text"]
    cluster.faults.on("Fetch", topic=topic).once().schema_id(magic=1)
    assert read(topic, 4)[0][:5] == b"\x01\x00\x00\x00\x01"  # wrong magic byte, id kept


def read_committed_rule(cluster: mockkafka.Cluster, topic: str, action: str) -> Rule:
    """The rule of the read_committed cases, on ``topic`` whose ``TRANSACTIONS`` the client
    wrote (checked here: the aborted one is in the log)."""
    stored = [r.value for r in cluster.topic(topic).partition(0).records()]
    assert b"t1-0" in stored  # the aborted transaction is in the log
    on = cluster.faults.on("Fetch", topic=topic).every_time()
    return on.duplicate() if action == "duplicate" else on.corrupt_payload(seed=5)


def check_read_committed(
    cluster: mockkafka.Cluster, rule: Rule, action: str, got: list[tuple[int, bytes]]
) -> None:
    """A read_committed consumer got (offset, value) ``got`` under ``rule``: each committed
    record once and no aborted one; ``duplicate`` repeated both a marker and a data batch
    (dropped below the fetch position), ``corrupt_payload`` garbled every value, length
    kept; ``fired`` counts the exchanges that carried the rule."""
    assert rule.fired >= 1
    assert len(cluster.traffic.requests("Fetch", fault=rule)) == rule.fired
    assert [offset for offset, _ in got] == COMMITTED_OFFSETS  # markers at 2, 5, 8, 11
    values = [value for _, value in got]
    if action == "duplicate":
        assert values == COMMITTED
        firsts = []  # the repeated batch leads each answer the rule edited
        for ex in cluster.traffic.requests("Fetch", fault=rule):
            for t in (ex.response or {})["responses"]:
                for part in t["partitions"]:
                    firsts += [h for h, _raw in iter_batches(part["records"])][:1]
        assert any(h.is_control for h in firsts)  # a commit or abort marker repeated
        assert any(h.is_transactional and not h.is_control for h in firsts)  # data repeated
    else:
        assert all(len(v) == len(w) and v != w for v, w in zip(values, COMMITTED, strict=True))


def check_skew_timestamps(
    cluster: mockkafka.Cluster,
    read: Callable[[str], dict[int, tuple[int, int]]],
    *,
    create_time: int,
) -> None:
    """``skew_timestamps`` on partition 1 moves its records' CreateTime by the hour and
    leaves partition 0 alone. ``read(topic)`` returns {partition: (timestamp type,
    timestamp)} of the one record of each of the topic's two partitions, from the start;
    ``create_time`` is the client's code for CreateTime."""
    topic = unique("clock")
    cluster.create_topic(topic, partitions=2)
    ts = 1_700_000_000_000
    for p in (0, 1):
        cluster.produce(topic, b"v", partition=p, timestamp=ts)
    hour = 3_600_000
    rule = (
        cluster.faults.on("Fetch", topic=topic, partition=1).every_time().skew_timestamps(ms=hour)
    )
    got = read(topic)
    assert rule.fired >= 1
    assert len(cluster.traffic.requests("Fetch", fault=rule)) == rule.fired
    assert got == {0: (create_time, ts), 1: (create_time, ts + hour)}

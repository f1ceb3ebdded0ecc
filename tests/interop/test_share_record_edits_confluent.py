"""confluent-kafka's ShareConsumer under the record-editing fault actions on ShareFetch.

librdkafka's share consumer must accept every re-encoded batch (CRCs valid), hand the
application the edited records (garbled values, a rewritten schema-registry id, moved
timestamps) at the offsets it acquired, and acknowledge them like any others: each record is
delivered once and the share-partition start offset passes them all. ``rule.fired`` equals
the ShareFetch answers that carried records, each named by the rule in the traffic log (that
answers without records never count is pinned on the raw wire, with the corrupt_batch and
partial_trailing_batch actions librdkafka cannot observe: it checks no CRC by default, and
skips a cut trailing batch silently: tests/faults/test_share_fetch_record_edits.py).
"""

from __future__ import annotations

import struct
import time
from collections.abc import Callable
from typing import Any

import pytest

import mockkafka
from tests.interop.conftest import unique

ck = pytest.importorskip("confluent_kafka")
if not hasattr(ck, "ShareConsumer"):  # pragma: no cover - confluent-kafka < 2.16
    pytest.skip(
        f"confluent-kafka {ck.version()[0]} has no ShareConsumer (2.16+)", allow_module_level=True
    )

pytestmark = [pytest.mark.interop]

N = 20
TS = 1_700_000_000_000
SCHEMA_ID = 7
DEADLINE_S = 30.0


def _value(i: int) -> bytes:
    return struct.pack(">bi", 0, SCHEMA_ID) + f"payload-{i}".encode()


def _garbled(a: bytes, b: bytes) -> bool:
    return len(a) == len(b) and all(x != y for x, y in zip(a, b, strict=True))


Expect = Callable[[int, Any], bool]

EDITS: list[tuple[str, dict[str, Any], Expect]] = [
    (
        "corrupt_payload",
        {"seed": 5},
        lambda i, m: _garbled(_value(i), m.value()) and m.key() == f"k{i}".encode(),
    ),
    (
        "schema_id",
        {"id": 4242},
        lambda i, m: m.value() == struct.pack(">bi", 0, 4242) + f"payload-{i}".encode(),
    ),
    (
        "skew_timestamps",
        {"ms": -3_600_000},
        lambda i, m: (
            m.timestamp() == (ck.TIMESTAMP_CREATE_TIME, TS + i - 3_600_000)
            and m.value() == _value(i)
        ),
    ),
]


@pytest.mark.parametrize(("action", "kwargs", "expect"), EDITS, ids=[e[0] for e in EDITS])
def test_a_share_consumer_reads_and_acknowledges_edited_records(
    action: str, kwargs: dict[str, Any], expect: Expect
) -> None:
    topic, group = unique("she"), unique("sheg")
    with mockkafka.Cluster(brokers=1) as cluster:
        cluster.create_topic(topic)
        cluster.set_group_config(group, {"share.auto.offset.reset": "earliest"})
        rule = getattr(cluster.faults.on("ShareFetch", group=group).every_time(), action)(**kwargs)
        consumer = ck.ShareConsumer(
            {
                "bootstrap.servers": cluster.bootstrap_servers,
                "group.id": group,
                "share.acknowledgement.mode": "explicit",
            }
        )
        got: dict[int, Any] = {}
        deliveries: dict[int, int] = {}
        try:
            consumer.subscribe([topic])
            deadline = time.monotonic() + DEADLINE_S
            # two rounds: at least two answers carry records, with empty ones between them
            for first, last in ((0, N // 2), (N // 2, N)):
                for i in range(first, last):
                    cluster.produce(
                        topic, _value(i), key=f"k{i}", headers=[("h", f"hv{i}")], timestamp=TS + i
                    )
                while len(got) < last:
                    assert time.monotonic() < deadline, f"got {sorted(got)} of {N} records"
                    for m in consumer.poll(0.2) or []:
                        assert m.error() is None, m.error()
                        deliveries[m.offset()] = deliveries.get(m.offset(), 0) + 1
                        got[m.offset()] = m
                        consumer.acknowledge(m)
            consumer.commit_sync(10)
        finally:
            consumer.close()
        bad = [i for i in range(N) if not expect(i, got[i])]
        assert bad == [], [(got[i].value(), got[i].timestamp()) for i in bad]
        assert set(deliveries.values()) == {1}  # acknowledged: none delivered again
        assert all(got[i].delivery_count() == 1 for i in range(N))
        sp = cluster.share_group(group).partition(topic, 0)
        assert sp.start_offset == N and sp.records == {}
        # the log holds what was produced
        assert [r.value for r in cluster.topic(topic).partition(0).records()] == [
            _value(i) for i in range(N)
        ]
        fetches = cluster.traffic.requests("ShareFetch", group=group)
        with_records = [
            e
            for e in fetches
            if any(
                p.get("records")
                for t in (e.response or {}).get("responses") or []
                for p in t.get("partitions") or []
            )
        ]
        assert len(with_records) >= 2
        assert [e.seq for e in fetches if rule.name in e.faults] == [e.seq for e in with_records]
        assert rule.fired == len(with_records)


def test_a_share_consumer_skips_the_cut_batch_after_its_acquired_ones() -> None:
    # The broker hands a share consumer at most 200 records an answer here (the in-flight
    # limit), so 250 single-record batches take two answers: the first ends in a cut copy
    # of the batch after its acquired ones, the last has nothing after it to cut.
    n = 250
    topic, group = unique("shp"), unique("shpg")
    with mockkafka.Cluster(brokers=1) as cluster:
        cluster.create_topic(topic)
        cluster.set_group_config(group, {"share.auto.offset.reset": "earliest"})
        for i in range(n):
            cluster.produce(topic, f"v{i}")
        rule = cluster.faults.on("ShareFetch", group=group).every_time().partial_trailing_batch()
        consumer = ck.ShareConsumer(
            {
                "bootstrap.servers": cluster.bootstrap_servers,
                "group.id": group,
                "share.acknowledgement.mode": "explicit",
            }
        )
        deliveries: dict[int, int] = {}
        try:
            consumer.subscribe([topic])
            deadline = time.monotonic() + DEADLINE_S
            while len(deliveries) < n:
                assert time.monotonic() < deadline, f"got {len(deliveries)} of {n} records"
                for m in consumer.poll(0.2) or []:
                    assert m.error() is None, m.error()
                    assert m.value() == f"v{m.offset()}".encode()
                    deliveries[m.offset()] = deliveries.get(m.offset(), 0) + 1
                    consumer.acknowledge(m)
            consumer.commit_sync(10)
        finally:
            consumer.close()
        assert set(deliveries.values()) == {1}
        assert cluster.share_group(group).partition(topic, 0).start_offset == n
        ends = {
            e.seq: max(
                a["last_offset"]
                for t in (e.response or {}).get("responses") or []
                for p in t.get("partitions") or []
                for a in p.get("acquired_records") or []
            )
            for e in cluster.traffic.requests("ShareFetch", group=group)
            if any(
                p.get("acquired_records")
                for t in (e.response or {}).get("responses") or []
                for p in t.get("partitions") or []
            )
        }
        cut = [seq for seq, last in ends.items() if last < n - 1]
        assert cut and len(ends) > len(cut)  # some answers had a next batch, the last none
        assert [
            e.seq for e in cluster.traffic.requests("ShareFetch") if rule.name in e.faults
        ] == cut
        assert rule.fired == len(cut)

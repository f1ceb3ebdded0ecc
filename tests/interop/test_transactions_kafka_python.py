"""kafka-python 3.0.12 transactional producers against mockkafka.

Pins: commit and abort across partitions of two topics seen through read_committed and
read_uncommitted consumers, the last stable offset holding a consumer back, consume-
transform-produce with send_offsets_to_transaction in a subscribed group, fencing by a second
instance, and a transaction timeout aborting a hung transaction.
"""

from __future__ import annotations

import time
from contextlib import suppress
from typing import Any

import pytest
from kafka import KafkaConsumer, KafkaProducer, OffsetAndMetadata, TopicPartition
from kafka.admin import AbortTransactionSpec, KafkaAdminClient
from kafka.errors import KafkaError

import mockkafka
from tests.interop.conftest import requires_apis, source_and_sink, txn_partitions, unique

pytestmark = [pytest.mark.interop, pytest.mark.timeout(45)]


def _producer(cluster: mockkafka.Cluster, tid: str, **conf: Any) -> KafkaProducer:
    p = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, transactional_id=tid, **conf)
    p.init_transactions()
    return p


def _close(p: KafkaProducer) -> None:
    with suppress(KafkaError):  # a fenced producer reports its fatal error again
        p.close(timeout=2)


def _read(
    cluster: mockkafka.Cluster, parts: list[tuple[str, int]], isolation: str, *, idle_ms: int = 700
) -> list[bytes]:
    """Every value readable from the start of ``parts`` (stops after ``idle_ms`` quiet)."""
    c = KafkaConsumer(
        bootstrap_servers=cluster.bootstrap_servers,
        isolation_level=isolation,
        enable_auto_commit=False,
        consumer_timeout_ms=idle_ms,
        fetch_max_wait_ms=50,
    )
    try:
        c.assign([TopicPartition(t, i) for t, i in parts])
        c.seek_to_beginning()
        out = []
        deadline = time.monotonic() + 10
        for m in c:
            out.append(m.value)
            if time.monotonic() > deadline:
                break
        return sorted(out)
    finally:
        c.close()


def _send(p: KafkaProducer, topics: tuple[str, str], tag: str) -> list[bytes]:
    sent = []
    for topic, idx in txn_partitions(topics):
        for i in range(2):
            v = f"{tag}-{topic}-{idx}-{i}".encode()
            p.send(topic, value=v, partition=idx)
            sent.append(v)
    return sent


def test_commit_and_abort_across_partitions_of_two_topics(
    cluster: mockkafka.Cluster, topics: tuple[str, str]
) -> None:
    tid = unique("tx")
    p = _producer(cluster, tid)
    try:
        p.begin_transaction()
        committed = _send(p, topics, "c")
        p.commit_transaction()
        p.begin_transaction()
        aborted = _send(p, topics, "a")
        p.flush(10)
        p.abort_transaction()
    finally:
        _close(p)
    txn = cluster.transaction(tid)
    assert [t.committed for t in txn.history] == [True, False]
    assert set(txn.history[1].partitions) == set(txn_partitions(topics))
    assert _read(cluster, txn_partitions(topics), "read_committed") == sorted(committed)
    assert _read(cluster, txn_partitions(topics), "read_uncommitted") == sorted(committed + aborted)


def test_read_committed_consumer_waits_for_the_commit(
    cluster: mockkafka.Cluster, topics: tuple[str, str]
) -> None:
    a, _ = topics
    tid = unique("tx")
    p = _producer(cluster, tid)
    try:
        p.begin_transaction()
        p.send(a, value=b"pending", partition=0)
        p.flush(10)
        assert _read(cluster, [(a, 0)], "read_committed", idle_ms=300) == []
        assert _read(cluster, [(a, 0)], "read_uncommitted", idle_ms=300) == [b"pending"]
        p.commit_transaction()
    finally:
        _close(p)
    assert _read(cluster, [(a, 0)], "read_committed") == [b"pending"]


@requires_apis("JoinGroup", "SyncGroup", "Heartbeat", "OffsetFetch")
def test_consume_transform_produce_commits_the_group_offsets(
    cluster: mockkafka.Cluster,
) -> None:
    src, dst = source_and_sink(cluster, 4)
    group, tid = unique("g"), unique("tx")
    consumer = KafkaConsumer(
        src,
        bootstrap_servers=cluster.bootstrap_servers,
        group_id=group,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        isolation_level="read_committed",
        fetch_max_wait_ms=50,
    )
    producer = _producer(cluster, tid)
    try:
        got: list[Any] = []
        deadline = time.monotonic() + 15
        while len(got) < 4 and time.monotonic() < deadline:
            for msgs in consumer.poll(timeout_ms=200).values():
                got.extend(msgs)
        assert len(got) == 4
        producer.begin_transaction()
        for m in got:
            producer.send(dst, value=m.value.upper(), partition=0)
        tp = TopicPartition(src, 0)
        producer.send_offsets_to_transaction(
            {tp: OffsetAndMetadata(got[-1].offset + 1, "", -1)}, consumer.group_metadata()
        )
        producer.commit_transaction()
        assert consumer.committed(tp) == 4
    finally:
        consumer.close()
        _close(producer)
    assert cluster.transaction(tid).history[-1].offsets == {group: {(src, 0): 4}}
    assert _read(cluster, [(dst, 0)], "read_committed") == [b"M0", b"M1", b"M2", b"M3"]


def test_second_instance_fences_the_first(
    cluster: mockkafka.Cluster, topics: tuple[str, str]
) -> None:
    a, _ = topics
    tid = unique("tx")
    first = _producer(cluster, tid)
    second: KafkaProducer | None = None
    try:
        first.begin_transaction()
        first.send(a, value=b"zombie", partition=0)
        first.flush(10)
        second = _producer(cluster, tid)
        second.begin_transaction()
        second.send(a, value=b"winner", partition=0)
        second.commit_transaction()
        with pytest.raises(KafkaError) as info:
            first.commit_transaction()
        assert "Fenced" in type(info.value).__name__ or "fenced" in str(info.value).lower()
    finally:
        _close(first)
        if second is not None:
            _close(second)
    assert _read(cluster, [(a, 0)], "read_committed") == [b"winner"]


def test_transaction_left_open_times_out_and_is_aborted(
    cluster: mockkafka.Cluster, topics: tuple[str, str]
) -> None:
    a, _ = topics
    tid = unique("tx")
    p = _producer(cluster, tid, transaction_timeout_ms=1000)
    try:
        p.begin_transaction()
        p.send(a, value=b"hung", partition=1)
        p.flush(10)
        txn = cluster.wait_for_transaction(tid, state="CompleteAbort", timeout=5)
        assert txn.last is not None and txn.last.reason == "timeout"
        with pytest.raises(KafkaError):
            p.commit_transaction()
    finally:
        _close(p)
    assert _read(cluster, [(a, 1)], "read_committed", idle_ms=300) == []


def test_admin_tooling_lists_describes_and_aborts_a_hanging_transaction(
    cluster: mockkafka.Cluster, topics: tuple[str, str]
) -> None:
    a, _ = topics
    tid = unique("tx")
    p = _producer(cluster, tid)
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
    try:
        p.begin_transaction()
        p.send(a, value=b"hanging", partition=1)
        p.flush(10)
        txn = cluster.transaction(tid)
        by_broker = admin.list_transactions(state_filters=["Ongoing"])
        listed = [(b, t.transactional_id, t.producer_id) for b, ts in by_broker.items() for t in ts]
        assert listed == [(txn.coordinator, tid, txn.producer_id)]
        pattern = admin.list_transactions(transactional_id_pattern="nomatch.*")
        assert not any(pattern.values())
        desc = admin.describe_transactions([tid])[tid]
        assert desc.coordinator_id == cluster.coordinator(transactional_id=tid)
        assert (desc.producer_id, desc.producer_epoch) == (txn.producer_id, txn.producer_epoch)
        assert desc.topic_partitions == {TopicPartition(a, 1)}
        assert desc.transaction_start_time_ms == txn.start_time_ms
        tp = TopicPartition(a, 1)
        (prod,) = admin.describe_producers([tp])[tp].active_producers
        assert prod.producer_id == txn.producer_id and prod.current_transaction_start_offset == 0
        part = cluster.topic(a).partition(1)
        assert part.last_stable_offset == 0
        admin.abort_transaction(AbortTransactionSpec(tp, prod.producer_id, prod.producer_epoch))
        part = cluster.topic(a).partition(1)  # views are snapshots: take a new one
        assert part.last_stable_offset == part.high_watermark == 2
    finally:
        admin.close()
        _close(p)
    assert _read(cluster, [(a, 1)], "read_committed", idle_ms=300) == []

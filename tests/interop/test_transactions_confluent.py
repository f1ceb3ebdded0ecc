"""confluent-kafka (librdkafka) transactional producers against mockkafka.

Pins: commit and abort across partitions of two topics, read_committed versus
read_uncommitted consumers, the last stable offset holding consumers back, consume-transform-
produce with send_offsets_to_transaction, fencing by a second instance, transaction timeouts,
and the cluster's transaction verbs (fence, expire, move coordinator, delayed markers).
"""

from __future__ import annotations

import time
import warnings
from contextlib import suppress
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

import mockkafka
from tests.interop.conftest import (
    requires_apis,
    source_and_sink,
    txn_partitions,
    unique,
)

pytestmark = [pytest.mark.interop, pytest.mark.timeout(30)]


def _producer(cluster: mockkafka.Cluster, tid: str, **conf: Any) -> Producer:
    p = Producer({"bootstrap.servers": cluster.bootstrap_servers, "transactional.id": tid, **conf})
    p.init_transactions(10)
    return p


def _close(p: Producer) -> None:
    """Flush (a fenced producer raises its fatal error here: ignored) and close."""
    with suppress(KafkaException):
        p.flush(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # "abort_transaction failed": fenced
        p.close()


def _consumer(cluster: mockkafka.Cluster, isolation: str, **conf: Any) -> Consumer:
    return Consumer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "group.id": unique("g"),
            "isolation.level": isolation,
            "enable.auto.commit": False,
            "fetch.wait.max.ms": 50,
            **conf,
        }
    )


def _read(
    cluster: mockkafka.Cluster,
    parts: list[tuple[str, int]],
    isolation: str,
    *,
    expect: int,
    timeout: float = 8.0,
    settle: float = 0.0,
) -> list[bytes]:
    """Values read from the start of ``parts``: stop at ``expect`` messages (then wait
    ``settle`` seconds for any extra one) or at ``timeout``."""
    c = _consumer(cluster, isolation)
    got: list[bytes] = []
    try:
        c.assign([TopicPartition(t, i, 0) for t, i in parts])
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and len(got) < expect:
            m = c.poll(0.1)
            if m is not None and m.error() is None:
                got.append(m.value())
        settle_until = time.monotonic() + settle
        while time.monotonic() < settle_until:
            m = c.poll(0.1)
            if m is not None and m.error() is None:
                got.append(m.value())
    finally:
        c.close()
    return sorted(got)


def _send_batch(
    p: Producer, topics: tuple[str, str], tag: str
) -> dict[tuple[str, int], list[bytes]]:
    """Two messages to each partition; returns what went where."""
    sent: dict[tuple[str, int], list[bytes]] = {}
    for topic, idx in txn_partitions(topics):
        for i in range(2):
            v = f"{tag}-{idx}-{i}".encode()
            p.produce(topic, value=v, partition=idx)
            sent.setdefault((topic, idx), []).append(v)
    return sent


def _flat(sent: dict[tuple[str, int], list[bytes]]) -> list[bytes]:
    return [v for vs in sent.values() for v in vs]


def test_commit_and_abort_across_partitions_of_two_topics(
    cluster: mockkafka.Cluster, topics: tuple[str, str]
) -> None:
    tid = unique("tx")
    p = _producer(cluster, tid)
    try:
        p.begin_transaction()
        committed = _send_batch(p, topics, "commit")
        p.commit_transaction(10)
        p.begin_transaction()
        aborted = _send_batch(p, topics, "abort")
        p.flush(10)
        p.abort_transaction(10)
    finally:
        _close(p)
    txn = cluster.transaction(tid)
    assert txn.state == "CompleteAbort" and (txn.committed_count, txn.aborted_count) == (1, 1)
    assert set(txn.history[0].partitions) == set(txn_partitions(topics))
    for topic, idx in txn_partitions(topics):
        part = cluster.topic(topic).partition(idx)
        assert part.last_stable_offset == part.high_watermark == 6  # 2 + marker, 2 + marker
        stored = [r.value for r in part.records()]
        assert stored == committed[(topic, idx)] + aborted[(topic, idx)]
    got = _read(cluster, txn_partitions(topics), "read_committed", expect=6, settle=0.3)
    assert got == sorted(_flat(committed))
    got = _read(cluster, txn_partitions(topics), "read_uncommitted", expect=12)
    assert got == sorted(_flat(committed) + _flat(aborted))


def test_open_transaction_holds_read_committed_consumers_at_the_last_stable_offset(
    cluster: mockkafka.Cluster, topics: tuple[str, str]
) -> None:
    a, _ = topics
    cluster.produce(a, b"before", partition=0)
    tid = unique("tx")
    p = _producer(cluster, tid)
    c = _consumer(cluster, "read_committed")
    try:
        p.begin_transaction()
        p.produce(a, value=b"pending", partition=0)
        p.flush(10)
        cluster.produce(a, b"after", partition=0)  # behind the open transaction
        part = cluster.topic(a).partition(0)
        assert (part.last_stable_offset, part.high_watermark) == (1, 3)
        c.assign([TopicPartition(a, 0, 0)])
        seen: list[bytes] = []
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:
            m = c.poll(0.1)
            if m is not None and m.error() is None:
                seen.append(m.value())
        assert seen == [b"before"]
        p.commit_transaction(10)
        deadline = time.monotonic() + 8
        while time.monotonic() < deadline and len(seen) < 3:
            m = c.poll(0.1)
            if m is not None and m.error() is None:
                seen.append(m.value())
        assert seen == [b"before", b"pending", b"after"]
    finally:
        c.close()
        _close(p)


def _group_consumer(cluster: mockkafka.Cluster, group: str) -> Consumer:
    return _consumer(
        cluster, "read_committed", **{"group.id": group, "auto.offset.reset": "earliest"}
    )


def _transform_loop(
    cluster: mockkafka.Cluster,
    consumer: Consumer,
    producer: Producer,
    out_topic: str,
    n: int,
    *,
    commit: bool,
) -> list[TopicPartition]:
    """Consume ``n`` messages, produce them upper-cased and send the offsets, in one
    transaction; returns the offsets sent."""
    producer.begin_transaction()
    got = 0
    positions: dict[tuple[str, int], int] = {}
    deadline = time.monotonic() + 10
    while got < n and time.monotonic() < deadline:
        m = consumer.poll(0.1)
        if m is None or m.error() is not None:
            continue
        producer.produce(out_topic, value=m.value().upper(), partition=0)
        positions[(m.topic(), m.partition())] = m.offset() + 1
        got += 1
    assert got == n
    offsets = [TopicPartition(t, i, o) for (t, i), o in positions.items()]
    producer.send_offsets_to_transaction(offsets, consumer.consumer_group_metadata(), 10)
    if commit:
        producer.commit_transaction(10)
    else:
        producer.abort_transaction(10)
    return offsets


def test_consume_transform_produce_commits_offsets_with_the_transaction(
    cluster: mockkafka.Cluster,
) -> None:
    src, dst = source_and_sink(cluster, 5)
    group, tid = unique("g"), unique("tx")
    consumer = _group_consumer(cluster, group)
    producer = _producer(cluster, tid)
    try:
        consumer.assign([TopicPartition(src, 0, 0)])
        _transform_loop(cluster, consumer, producer, dst, 3, commit=True)
        _transform_loop(cluster, consumer, producer, dst, 2, commit=False)
    finally:
        consumer.close()
        _close(producer)
    txn = cluster.transaction(tid)
    assert [t.committed for t in txn.history] == [True, False]
    assert txn.history[0].offsets == {group: {(src, 0): 3}}
    assert txn.history[0].groups == (group,)
    assert _read(cluster, [(dst, 0)], "read_committed", expect=3, settle=0.3) == [
        b"M0",
        b"M1",
        b"M2",
    ]


@requires_apis("JoinGroup", "SyncGroup", "Heartbeat", "OffsetFetch", "OffsetCommit")
def test_consume_transform_produce_in_a_subscribed_group_resumes_from_committed_offsets(
    cluster: mockkafka.Cluster,
) -> None:
    src, dst = source_and_sink(cluster, 5)
    group, tid = unique("g"), unique("tx")
    consumer = _group_consumer(cluster, group)
    producer = _producer(cluster, tid)
    try:
        consumer.subscribe([src])
        _transform_loop(cluster, consumer, producer, dst, 3, commit=True)
        committed = consumer.committed([TopicPartition(src, 0)], 10)
        assert committed[0].offset == 3
    finally:
        consumer.close()
    consumer = _group_consumer(cluster, group)
    try:
        consumer.subscribe([src])
        _transform_loop(cluster, consumer, producer, dst, 2, commit=True)
    finally:
        consumer.close()
        _close(producer)
    assert _read(cluster, [(dst, 0)], "read_committed", expect=5, settle=0.3) == [
        b"M0",
        b"M1",
        b"M2",
        b"M3",
        b"M4",
    ]


def _is_fenced(exc: KafkaException) -> bool:
    err: KafkaError = exc.args[0]
    return err.fatal() or err.code() in (KafkaError._FENCED, KafkaError.PRODUCER_FENCED)


def test_second_instance_with_the_same_transactional_id_fences_the_first(
    cluster: mockkafka.Cluster, topics: tuple[str, str]
) -> None:
    a, _ = topics
    tid = unique("tx")
    first = _producer(cluster, tid)
    second: Producer | None = None
    try:
        first.begin_transaction()
        first.produce(a, value=b"zombie", partition=0)
        first.flush(10)
        epoch = cluster.transaction(tid).producer_epoch
        second = _producer(cluster, tid)
        txn = cluster.transaction(tid)
        assert txn.producer_epoch > epoch and txn.history[-1].reason == "init"
        second.begin_transaction()
        second.produce(a, value=b"winner", partition=0)
        second.commit_transaction(10)
        with pytest.raises(KafkaException) as info:
            first.commit_transaction(10)
        assert _is_fenced(info.value)
    finally:
        _close(first)
        if second is not None:
            _close(second)
    assert _read(cluster, [(a, 0)], "read_committed", expect=1, settle=0.3) == [b"winner"]


def test_transaction_left_open_times_out_and_is_aborted(
    cluster: mockkafka.Cluster, topics: tuple[str, str]
) -> None:
    a, b = topics
    tid = unique("tx")
    p = _producer(cluster, tid, **{"transaction.timeout.ms": 1000})
    try:
        assert cluster.transaction(tid).timeout_ms == 1000
        p.begin_transaction()
        p.produce(a, value=b"hung", partition=1)
        p.produce(b, value=b"hung", partition=0)
        p.flush(10)
        txn = cluster.wait_for_transaction(tid, state="CompleteAbort", timeout=5)
        assert txn.last is not None and txn.last.reason == "timeout"
        assert cluster.topic(a).partition(1).last_stable_offset == 2
        with pytest.raises(KafkaException) as info:
            p.commit_transaction(10)
        assert _is_fenced(info.value) or info.value.args[0].txn_requires_abort()
    finally:
        _close(p)
    assert _read(cluster, [(a, 1), (b, 0)], "read_committed", expect=1, timeout=1.0) == []


def test_fence_producer_verb_fences_the_running_producer(
    cluster: mockkafka.Cluster, topics: tuple[str, str]
) -> None:
    a, _ = topics
    tid = unique("tx")
    p = _producer(cluster, tid)
    try:
        p.begin_transaction()
        p.produce(a, value=b"x", partition=0)
        p.flush(10)
        cluster.fence_producer(tid)
        with pytest.raises(KafkaException) as info:
            p.commit_transaction(10)
        assert _is_fenced(info.value)
    finally:
        _close(p)
    assert cluster.transaction(tid).last is not None
    assert cluster.transaction(tid).aborted_count == 1


def test_expire_transaction_verb_aborts_at_once(
    cluster: mockkafka.Cluster, topics: tuple[str, str]
) -> None:
    a, _ = topics
    tid = unique("tx")
    p = _producer(cluster, tid)
    try:
        p.begin_transaction()
        p.produce(a, value=b"x", partition=0)
        p.flush(10)
        assert cluster.transaction(tid).ongoing
        assert cluster.expire_transaction(tid)
        assert cluster.transaction(tid).state == "CompleteAbort"
        with pytest.raises(KafkaException):
            p.commit_transaction(10)
    finally:
        _close(p)


def test_client_follows_a_moved_transaction_coordinator_and_retries_concurrent_txns(
    cluster: mockkafka.Cluster, topics: tuple[str, str]
) -> None:
    a, b = topics
    tid = unique("tx")
    p = _producer(cluster, tid)
    try:
        old = cluster.coordinator(transactional_id=tid)
        new = old % 3 + 1
        p.begin_transaction()
        p.produce(a, value=b"one", partition=0)
        p.flush(10)
        cluster.move_coordinator(transactional_id=tid, to=new)
        p.commit_transaction(10)
        assert cluster.transaction(tid).coordinator == new
        cluster.delay_transaction_markers(ms=300)
        p.begin_transaction()
        p.produce(b, value=b"two", partition=0)
        p.commit_transaction(10)
        p.begin_transaction()  # markers of "two" may still be pending: CONCURRENT_TRANSACTIONS
        p.produce(b, value=b"three", partition=0)
        p.commit_transaction(10)
    finally:
        _close(p)
    cluster.wait_for_transaction(tid, where=lambda t: t.committed_count == 3)
    ends = [
        e
        for e in cluster.traffic.requests(api="AddPartitionsToTxn")
        if e.response and _has_error(e.response, 51)
    ]
    assert ends, "the client never saw CONCURRENT_TRANSACTIONS"
    assert _read(cluster, [(a, 0), (b, 0)], "read_committed", expect=3) == [
        b"one",
        b"three",
        b"two",
    ]


def test_transaction_survives_its_coordinator_broker_stopping(
    cluster: mockkafka.Cluster, topics: tuple[str, str]
) -> None:
    a, _ = topics
    tid = unique("tx")
    p = _producer(cluster, tid)
    try:
        p.begin_transaction()
        p.produce(a, value=b"before-failover", partition=0)
        p.flush(10)
        old = cluster.coordinator(transactional_id=tid)
        cluster.stop_broker(old)
        p.produce(a, value=b"after-failover", partition=0)
        p.commit_transaction(15)
        txn = cluster.transaction(tid)
        assert txn.coordinator != old and txn.committed_count == 1
    finally:
        _close(p)
    got = _read(cluster, [(a, 0)], "read_committed", expect=2)
    assert got == [b"after-failover", b"before-failover"]


def _has_error(resp: Any, code: int) -> bool:
    return any(
        p.get("partition_error_code") == code
        for t in resp.get("results_by_topic_v3_and_below") or []
        for p in t.get("results_by_partition") or []
    )

"""kafka-python (and aiokafka where it differs) under scripted faults: each test pins the
documented client reaction, asserting on broker state and recorded traffic."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Iterator
from typing import Any

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.errors import KafkaError

import mockkafka
from mockkafka.errors import ErrorCode
from tests.interop.conftest import requires_apis, unique

pytestmark = [pytest.mark.interop, pytest.mark.timeout(60)]


@pytest.fixture
def cluster() -> Iterator[mockkafka.Cluster]:
    with mockkafka.Cluster(brokers=3) as c:
        yield c


def _producer(cluster: mockkafka.Cluster, **conf: Any) -> KafkaProducer:
    base: dict[str, Any] = {
        "bootstrap_servers": cluster.bootstrap_servers,
        "enable_idempotence": True,
        "acks": "all",
        "linger_ms": 5,
        "retry_backoff_ms": 50,
        "client_id": "kp-producer",
    }
    return KafkaProducer(**{**base, **conf})


def _consumer(cluster: mockkafka.Cluster, **conf: Any) -> KafkaConsumer:
    base: dict[str, Any] = {
        "bootstrap_servers": cluster.bootstrap_servers,
        "group_id": None,
        "enable_auto_commit": False,
        "fetch_max_wait_ms": 50,
        "client_id": "kp-consumer",
        "metadata_max_age_ms": 1000,
    }
    return KafkaConsumer(**{**base, **conf})


def _values(n: int, tag: str = "v") -> list[bytes]:
    return [f"{tag}-{i:04d}".encode() for i in range(n)]


def _produce(p: KafkaProducer, topic: str, values: list[bytes]) -> None:
    futures = [p.send(topic, value=v, partition=0) for v in values]
    p.flush(timeout=20)
    for f in futures:
        f.get(timeout=1)


def _consume(c: KafkaConsumer, n: int, *, timeout: float = 15.0) -> list[Any]:
    out: list[Any] = []
    deadline = time.monotonic() + timeout
    while len(out) < n and time.monotonic() < deadline:
        for recs in c.poll(timeout_ms=100).values():
            out.extend(recs)
    return out


def _stored(cluster: mockkafka.Cluster, topic: str) -> list[bytes | None]:
    return [r.value for r in cluster.topic(topic).partition(0).records()]


def _topic(cluster: mockkafka.Cluster) -> str:
    topic = unique("orders")
    cluster.create_topic(topic, partitions=1, replication_factor=3)
    return topic


def test_not_leader_on_produce_retries_without_loss_or_duplicate(
    cluster: mockkafka.Cluster,
) -> None:
    topic = _topic(cluster)
    rule = cluster.faults.on("Produce", topic=topic).times(2).error("NOT_LEADER_OR_FOLLOWER")
    p = _producer(cluster)
    try:
        _produce(p, topic, _values(40))
    finally:
        p.close(timeout=5)
    assert rule.fired == 2
    assert _stored(cluster, topic) == _values(40)
    failed = cluster.traffic.requests("Produce", fault=rule)
    assert all(ErrorCode.NOT_LEADER_OR_FOLLOWER in ex.error_codes for ex in failed)
    assert cluster.traffic.requests("Metadata", since_seq=failed[0].seq)


def test_drop_after_processing_with_idempotent_producer_does_not_duplicate(
    cluster: mockkafka.Cluster,
) -> None:
    topic = _topic(cluster)
    rule = cluster.faults.on("Produce", topic=topic).once().drop_connection(after_processing=True)
    p = _producer(cluster)
    try:
        _produce(p, topic, _values(25))
    finally:
        p.close(timeout=5)
    dropped = cluster.traffic.requests("Produce", fault=rule)
    assert len(dropped) == 1 and dropped[0].closed_connection
    assert _stored(cluster, topic) == _values(25)


def test_never_respond_makes_the_producer_time_out_and_retry(cluster: mockkafka.Cluster) -> None:
    topic = _topic(cluster)
    rule = cluster.faults.on("Produce", topic=topic).once().never_respond()
    p = _producer(cluster, request_timeout_ms=1500)
    try:
        _produce(p, topic, _values(5))
    finally:
        p.close(timeout=5)
    parked = cluster.traffic.requests("Produce", fault=rule)[0]
    assert parked.no_response
    retried = cluster.traffic.requests("Produce", since_seq=parked.seq, answered=True)
    assert retried and retried[0].time_ms - parked.time_ms >= 1000
    assert _stored(cluster, topic) == _values(5)


def test_leader_move_during_consumption_continues_from_the_right_offset(
    cluster: mockkafka.Cluster,
) -> None:
    topic = _topic(cluster)
    for v in _values(20, "a"):
        cluster.produce(topic, v)
    c = _consumer(cluster)
    try:
        c.assign([TopicPartition(topic, 0)])
        c.seek(TopicPartition(topic, 0), 0)
        assert [r.offset for r in _consume(c, 20)] == list(range(20))
        old = cluster.topic(topic).partition(0).leader
        new = next(b for b in (1, 2, 3) if b != old)
        mark = cluster.traffic.mark()
        cluster.move_leader(topic, 0, to=new)
        for v in _values(20, "b"):
            cluster.produce(topic, v)
        second = _consume(c, 20)
    finally:
        c.close()
    assert [r.offset for r in second] == list(range(20, 40))
    assert [r.value for r in second] == _values(20, "b")
    assert cluster.traffic.requests("Fetch", broker=new, since_seq=mark, answered=True)


def test_stopped_broker_clients_fail_over(cluster: mockkafka.Cluster) -> None:
    topic = _topic(cluster)
    p = _producer(cluster)
    c = _consumer(cluster)
    try:
        _produce(p, topic, _values(10, "a"))
        c.assign([TopicPartition(topic, 0)])
        c.seek(TopicPartition(topic, 0), 0)
        assert len(_consume(c, 10)) == 10
        old = cluster.topic(topic).partition(0).leader
        cluster.stop_broker(old)
        mark = cluster.traffic.mark()  # (requests in flight to ``old`` were sent before)
        new = cluster.topic(topic).partition(0).leader
        _produce(p, topic, _values(10, "b"))
        got = _consume(c, 10)
        assert [r.offset for r in got] == list(range(10, 20))
        assert cluster.traffic.requests("Produce", broker=new, since_seq=mark, answered=True)
        assert not cluster.traffic.requests(broker=old, since_seq=mark)
    finally:
        c.close()
        p.close(timeout=5)
    assert _stored(cluster, topic) == _values(10, "a") + _values(10, "b")


def test_partial_trailing_batch_is_ignored_and_every_record_read_once(
    cluster: mockkafka.Cluster,
) -> None:
    topic = _topic(cluster)
    for v in _values(30):
        cluster.produce(topic, v)
    rule = cluster.faults.on("Fetch", topic=topic).times(3).partial_trailing_batch()
    c = _consumer(cluster)
    try:
        c.assign([TopicPartition(topic, 0)])
        c.seek(TopicPartition(topic, 0), 0)
        got = _consume(c, 30)
        got += _consume(c, 1, timeout=0.3)
    finally:
        c.close()
    assert rule.fired >= 1
    assert [r.value for r in got] == _values(30)
    assert len(cluster.traffic.requests("Fetch", fault=rule)) == rule.fired


def test_throttle_makes_the_client_wait(cluster: mockkafka.Cluster) -> None:
    topic = _topic(cluster)
    leader = cluster.topic(topic).partition(0).leader
    rule = cluster.faults.on("Fetch", broker=leader).every_time().throttle(ms=400)
    c = _consumer(cluster)
    try:
        c.assign([TopicPartition(topic, 0)])
        c.seek(TopicPartition(topic, 0), 0)
        deadline = time.monotonic() + 15
        while rule.fired < 4 and time.monotonic() < deadline:
            c.poll(timeout_ms=100)
        rule.remove()
    finally:
        c.close()
    fetches = cluster.traffic.requests("Fetch", fault=rule)
    assert len(fetches) >= 4
    ts = [ex.time_ms for ex in fetches if ex.connection_id == fetches[0].connection_id]
    gaps = [b - a for a, b in itertools.pairwise(ts)]
    assert gaps and min(gaps) >= 380


def test_offset_out_of_range_after_retention_follows_auto_offset_reset(
    cluster: mockkafka.Cluster,
) -> None:
    topic = _topic(cluster)
    for v in _values(30):
        cluster.produce(topic, v)
    cluster.delete_records(topic, 0, before_offset=20)
    c = _consumer(cluster, auto_offset_reset="earliest")
    try:
        c.assign([TopicPartition(topic, 0)])
        c.seek(TopicPartition(topic, 0), 5)
        got = _consume(c, 10)
    finally:
        c.close()
    assert [r.offset for r in got] == list(range(20, 30))
    oor = cluster.traffic.requests("Fetch", with_error="OFFSET_OUT_OF_RANGE")
    assert oor
    assert cluster.traffic.requests("ListOffsets", since_seq=oor[0].seq)


@requires_apis("OffsetForLeaderEpoch")
def test_truncated_log_is_detected_by_the_consumer(cluster: mockkafka.Cluster) -> None:
    topic = _topic(cluster)
    for v in _values(20, "a"):
        cluster.produce(topic, v)
    c = _consumer(cluster, auto_offset_reset="earliest")
    try:
        c.assign([TopicPartition(topic, 0)])
        c.seek(TopicPartition(topic, 0), 0)
        assert len(_consume(c, 20)) == 20
        mark = cluster.traffic.mark()
        cluster.truncate_log(topic, 0, to_offset=10)
        for v in _values(15, "b"):
            cluster.produce(topic, v)
        got: list[Any] = []
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and not (got and got[-1].value == b"b-0014"):
            try:
                for recs in c.poll(timeout_ms=100).values():
                    got.extend(recs)
            except KafkaError:
                pass
    finally:
        c.close()
    # KIP-320: the position is validated (OffsetForLeaderEpoch or Fetch diverging_epoch)
    # and the consumer re-reads from the divergence point.
    ofle = cluster.traffic.requests("OffsetForLeaderEpoch", since_seq=mark, answered=True)
    diverged = cluster.traffic.requests(
        "Fetch",
        since_seq=mark,
        where=lambda ex: any(
            "diverging_epoch" in p and p["diverging_epoch"].get("end_offset", -1) >= 0
            for t in (ex.response or {}).get("responses", [])
            for p in t["partitions"]
        ),
    )
    assert ofle or diverged
    assert [r.offset for r in got][-15:] == list(range(10, 25))
    assert [r.value for r in got][-15:] == _values(15, "b")


# -- aiokafka where it differs: its own fetcher and idempotent sender ----------------------


def test_aiokafka_partial_trailing_batch_and_dropped_ack(cluster: mockkafka.Cluster) -> None:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
    from aiokafka.structs import TopicPartition as ATP

    topic = _topic(cluster)
    partial = cluster.faults.on("Fetch", topic=topic).times(2).partial_trailing_batch()
    dropped = (
        cluster.faults.on("Produce", topic=topic).once().drop_connection(after_processing=True)
    )

    async def main() -> list[bytes]:
        p = AIOKafkaProducer(
            bootstrap_servers=cluster.bootstrap_servers,
            enable_idempotence=True,
            retry_backoff_ms=50,
            linger_ms=0,
        )
        await p.start()
        try:
            for v in _values(20):
                await asyncio.wait_for(p.send_and_wait(topic, v, partition=0), 15)
        finally:
            await p.stop()
        c = AIOKafkaConsumer(bootstrap_servers=cluster.bootstrap_servers, fetch_max_wait_ms=50)
        await c.start()
        out: list[bytes] = []
        try:
            c.assign([ATP(topic, 0)])
            c.seek(ATP(topic, 0), 0)
            deadline = time.monotonic() + 15
            while len(out) < 20 and time.monotonic() < deadline:
                batch = await c.getmany(timeout_ms=100)
                out.extend(r.value for recs in batch.values() for r in recs)
        finally:
            await c.stop()
        return out

    assert asyncio.run(main()) == _values(20)
    assert dropped.fired == 1
    assert _stored(cluster, topic) == _values(20)  # the retried batch was deduplicated
    assert partial.fired >= 1

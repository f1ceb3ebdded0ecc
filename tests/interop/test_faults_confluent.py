"""confluent-kafka (librdkafka) under scripted faults: each test pins the documented client
reaction, asserting on broker state and recorded traffic (never on log output)."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition

import mockkafka
from mockkafka.errors import ErrorCode
from tests.interop.conftest import requires_apis, unique

pytestmark = [pytest.mark.interop, pytest.mark.timeout(60)]


@pytest.fixture
def cluster() -> Iterator[mockkafka.Cluster]:
    with mockkafka.Cluster(brokers=3) as c:
        yield c


def _producer(cluster: mockkafka.Cluster, **conf: Any) -> Producer:
    base = {
        "bootstrap.servers": cluster.bootstrap_servers,
        "enable.idempotence": True,
        "linger.ms": 5,
        "retry.backoff.ms": 50,
        "client.id": "faults-producer",
    }
    return Producer({**base, **conf})


def _consumer(cluster: mockkafka.Cluster, **conf: Any) -> Consumer:
    base = {
        "bootstrap.servers": cluster.bootstrap_servers,
        "group.id": unique("g"),
        "enable.auto.commit": False,
        "fetch.wait.max.ms": 50,
        "client.id": "faults-consumer",
        "topic.metadata.refresh.interval.ms": 1000,
    }
    return Consumer({**base, **conf})


def _produce(p: Producer, topic: str, values: list[bytes], partition: int = 0) -> list[Any]:
    errors: list[Any] = []
    for v in values:
        p.produce(topic, value=v, partition=partition, on_delivery=lambda e, m: errors.append(e))
    assert p.flush(20) == 0, "messages still in flight after 20 s"
    return [e for e in errors if e is not None]


def _consume(c: Consumer, n: int, *, timeout: float = 15.0) -> list[Any]:
    out: list[Any] = []
    deadline = time.monotonic() + timeout
    while len(out) < n and time.monotonic() < deadline:
        m = c.poll(0.1)
        if m is not None and not m.error():
            out.append(m)
    return out


def _fetch_offsets(ex: mockkafka.Exchange) -> list[int]:
    req = ex.request or {}
    return [p["fetch_offset"] for t in req.get("topics") or [] for p in t["partitions"]]


def _values(n: int, tag: str = "v") -> list[bytes]:
    return [f"{tag}-{i:04d}".encode() for i in range(n)]


def _stored(cluster: mockkafka.Cluster, topic: str, partition: int = 0) -> list[bytes | None]:
    return [r.value for r in cluster.topic(topic).partition(partition).records()]


# -- produce path ------------------------------------------------------------------------------


def test_not_leader_on_produce_refreshes_metadata_and_retries_without_loss_or_duplicate(
    cluster: mockkafka.Cluster,
) -> None:
    topic = unique("orders")
    cluster.create_topic(topic, partitions=1, replication_factor=3)
    rule = (
        cluster.faults.on("Produce", topic=topic, partition=0)
        .times(2)
        .error("NOT_LEADER_OR_FOLLOWER")
    )
    p = _producer(cluster)
    try:
        assert _produce(p, topic, _values(50)) == []
    finally:
        p.flush(5)
    assert rule.fired == 2
    assert _stored(cluster, topic) == _values(50)  # no loss, no duplicate, in order
    produces = cluster.traffic.requests("Produce", client_id="faults-producer")
    failed = [ex for ex in produces if rule.name in ex.faults]
    assert len(failed) == 2
    assert all(ErrorCode.NOT_LEADER_OR_FOLLOWER in ex.error_codes for ex in failed)
    # The client refreshed its metadata after the error (and then retried successfully).
    assert cluster.traffic.wait_for("Metadata", since_seq=failed[0].seq, timeout=5)
    assert any(not ex.faults and ex.seq > failed[-1].seq for ex in produces)


def test_leader_moved_mid_production_retries_to_the_new_leader(
    cluster: mockkafka.Cluster,
) -> None:
    topic = unique("orders")
    cluster.create_topic(topic, partitions=1, replication_factor=3)
    old = cluster.topic(topic).partition(0).leader
    new = next(b for b in (1, 2, 3) if b != old)

    def move_leader(request: dict[str, Any], ctx: Any) -> None:
        ctx.cluster.set_leader(topic, 0, new)  # then let the request through

    rule = cluster.faults.on("Produce", topic=topic, broker=old).once().handler(move_leader)
    p = _producer(cluster)
    try:
        assert _produce(p, topic, _values(40)) == []
    finally:
        p.flush(5)
    assert rule.fired == 1
    assert cluster.topic(topic).partition(0).leader == new
    assert _stored(cluster, topic) == _values(40)
    rejected = cluster.traffic.requests("Produce", broker=old, fault=rule)
    assert ErrorCode.NOT_LEADER_OR_FOLLOWER in rejected[0].error_codes
    assert cluster.traffic.requests("Produce", broker=new, since_seq=rejected[0].seq)


def test_drop_after_processing_with_idempotent_producer_does_not_duplicate(
    cluster: mockkafka.Cluster,
) -> None:
    topic = unique("orders")
    cluster.create_topic(topic, partitions=1, replication_factor=3)
    rule = cluster.faults.on("Produce", topic=topic).once().drop_connection(after_processing=True)
    p = _producer(cluster)
    try:
        assert _produce(p, topic, _values(30)) == []
    finally:
        p.flush(5)
    assert rule.fired == 1
    dropped = cluster.traffic.requests("Produce", fault=rule)[0]
    assert dropped.closed_connection and dropped.response is not None  # applied, ack lost
    assert _stored(cluster, topic) == _values(30)  # the retry was deduplicated


def test_never_respond_makes_the_producer_time_out_and_retry(cluster: mockkafka.Cluster) -> None:
    topic = unique("orders")
    cluster.create_topic(topic, partitions=1, replication_factor=3)
    rule = cluster.faults.on("Produce", topic=topic).once().never_respond()
    p = _producer(cluster, **{"socket.timeout.ms": 1500, "request.timeout.ms": 1500})
    try:
        start = time.monotonic()
        assert _produce(p, topic, _values(10)) == []
        elapsed = time.monotonic() - start
    finally:
        p.flush(5)
    assert rule.fired == 1 and elapsed >= 1.0
    parked = cluster.traffic.requests("Produce", fault=rule)[0]
    assert parked.no_response and parked.response is None
    retried = cluster.traffic.requests("Produce", since_seq=parked.seq, answered=True)
    assert retried and retried[0].connection_id != parked.connection_id
    assert retried[0].time_ms - parked.time_ms >= 1000
    assert _stored(cluster, topic) == _values(10)  # the unanswered request was not applied


def test_stopped_broker_refuses_connections_and_clients_fail_over(
    cluster: mockkafka.Cluster,
) -> None:
    topic = unique("orders")
    cluster.create_topic(topic, partitions=1, replication_factor=3)
    p = _producer(cluster)
    c = _consumer(cluster)
    try:
        assert _produce(p, topic, _values(10, "a")) == []
        c.assign([TopicPartition(topic, 0, 0)])
        assert len(_consume(c, 10)) == 10
        old = cluster.topic(topic).partition(0).leader
        cluster.stop_broker(old)
        mark = cluster.traffic.mark()  # (requests in flight to ``old`` were sent before)
        new = cluster.topic(topic).partition(0).leader
        assert new not in (old, -1)
        assert old not in cluster.topic(topic).partition(0).isr
        assert _produce(p, topic, _values(10, "b")) == []
        got = _consume(c, 10)
        assert [m.value() for m in got] == _values(10, "b")
        assert [m.offset() for m in got] == list(range(10, 20))
        assert cluster.traffic.requests("Produce", broker=new, since_seq=mark)
        assert cluster.traffic.requests("Fetch", broker=new, since_seq=mark)
        assert not cluster.traffic.requests(broker=old, since_seq=mark)
        md = cluster.traffic.requests("Metadata", since_seq=mark, answered=True)
        assert md and old not in {b["node_id"] for b in md[-1].response["brokers"]}
        # Restarting works repeatedly, and the broker is listed again.
        for _ in range(2):
            cluster.restart_broker(old)
        cluster.start_broker(old)
        assert old in cluster.topic(topic).partition(0).isr
        assert old in {b.node_id for b in cluster.brokers if b.running}
    finally:
        c.close()
        p.flush(5)


# -- consume path ------------------------------------------------------------------------------


def test_leader_move_during_consumption_continues_from_the_right_offset(
    cluster: mockkafka.Cluster,
) -> None:
    topic = unique("orders")
    cluster.create_topic(topic, partitions=1, replication_factor=3)
    for v in _values(20, "a"):
        cluster.produce(topic, v)
    c = _consumer(cluster)
    try:
        c.assign([TopicPartition(topic, 0, 0)])
        first = _consume(c, 20)
        assert [m.offset() for m in first] == list(range(20))
        old = cluster.topic(topic).partition(0).leader
        new = next(b for b in (1, 2, 3) if b != old)
        epoch = cluster.topic(topic).partition(0).leader_epoch
        mark = cluster.traffic.mark()
        cluster.move_leader(topic, 0, to=new)
        assert cluster.topic(topic).partition(0).leader_epoch == epoch + 1
        for v in _values(20, "b"):
            cluster.produce(topic, v)
        second = _consume(c, 20)
        assert [m.offset() for m in second] == list(range(20, 40))
        assert [m.value() for m in second] == _values(20, "b")
        fetches = cluster.traffic.requests("Fetch", broker=new, since_seq=mark, answered=True)
        assert fetches
        # The old leader told the client to go away (or it learnt from Metadata first).
        stale = cluster.traffic.requests("Fetch", broker=old, since_seq=mark, answered=True)
        assert all(
            ex.error_codes <= {ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.FENCED_LEADER_EPOCH}
            for ex in stale
        )
    finally:
        c.close()


def test_partial_trailing_batch_is_ignored_and_every_record_read_exactly_once(
    cluster: mockkafka.Cluster,
) -> None:
    topic = unique("orders")
    cluster.create_topic(topic, partitions=1, replication_factor=3)
    for v in _values(30):
        cluster.produce(topic, v)  # one batch per record
    rule = cluster.faults.on("Fetch", topic=topic).times(3).partial_trailing_batch()
    c = _consumer(cluster)
    try:
        c.assign([TopicPartition(topic, 0, 0)])
        got = _consume(c, 30)
        time.sleep(0.3)
        extra = c.poll(0.2)
    finally:
        c.close()
    assert rule.fired >= 1
    assert [m.value() for m in got] == _values(30)
    assert extra is None or extra.error() is not None
    cut = cluster.traffic.requests("Fetch", fault=rule)
    assert len(cut) == rule.fired
    assert not any(ex.error_codes for ex in cut)


def test_throttle_makes_the_client_wait(cluster: mockkafka.Cluster) -> None:
    topic = unique("orders")
    cluster.create_topic(topic, partitions=1, replication_factor=3)
    leader = cluster.topic(topic).partition(0).leader
    throttles: list[Any] = []
    c = _consumer(cluster, throttle_cb=throttles.append)
    rule = cluster.faults.on("Fetch", broker=leader).every_time().throttle(ms=400)
    try:
        c.assign([TopicPartition(topic, 0, 0)])
        deadline = time.monotonic() + 15
        while rule.fired < 4 and time.monotonic() < deadline:
            c.poll(0.1)
        rule.remove()
    finally:
        c.close()
    assert rule.fired >= 4
    assert throttles and throttles[0].throttle_time == pytest.approx(0.4)  # seconds
    fetches = cluster.traffic.requests("Fetch", fault=rule)
    answered = [ex for ex in fetches if ex.response is not None]
    assert answered and all(ex.response["throttle_time_ms"] == 400 for ex in answered)
    by_conn: dict[int, list[int]] = {}
    for ex in fetches:
        by_conn.setdefault(ex.connection_id, []).append(ex.time_ms)
    gaps = [b - a for ts in by_conn.values() for a, b in itertools.pairwise(ts)]
    assert gaps and min(gaps) >= 380


def test_offset_out_of_range_after_retention_follows_auto_offset_reset(
    cluster: mockkafka.Cluster,
) -> None:
    topic = unique("orders")
    cluster.create_topic(topic, partitions=1, replication_factor=3)
    for v in _values(30):
        cluster.produce(topic, v)
    assert cluster.delete_records(topic, 0, before_offset=20) == 20
    c = _consumer(cluster, **{"auto.offset.reset": "earliest"})
    try:
        c.assign([TopicPartition(topic, 0, 5)])  # below the log start offset
        got = _consume(c, 10)
    finally:
        c.close()
    assert [m.offset() for m in got] == list(range(20, 30))
    oor = cluster.traffic.requests("Fetch", with_error="OFFSET_OUT_OF_RANGE")
    assert oor and _fetch_offsets(oor[0]) == [5]
    # The client reset to the log start offset (ListOffsets or the fetch response's
    # log_start_offset) and fetched from there.
    later = cluster.traffic.requests("Fetch", since_seq=oor[0].seq)
    assert 20 in [o for ex in later for o in _fetch_offsets(ex)]
    assert cluster.topic(topic).partition(0).log_start_offset == 20


@requires_apis("OffsetForLeaderEpoch")
def test_truncated_log_is_detected_by_the_consumer(cluster: mockkafka.Cluster) -> None:
    topic = unique("orders")
    cluster.create_topic(topic, partitions=1, replication_factor=3)
    for v in _values(20, "a"):
        cluster.produce(topic, v)
    errors: list[Any] = []
    c = _consumer(cluster, **{"auto.offset.reset": "earliest"})
    try:
        c.assign([TopicPartition(topic, 0, 0)])
        assert len(_consume(c, 20)) == 20
        epoch = cluster.topic(topic).partition(0).leader_epoch
        mark = cluster.traffic.mark()
        cluster.truncate_log(topic, 0, to_offset=10)  # unclean election: 10..19 lost
        assert cluster.topic(topic).partition(0).high_watermark == 10
        assert cluster.topic(topic).partition(0).leader_epoch == epoch + 1
        for v in _values(15, "b"):
            cluster.produce(topic, v)  # new offsets 10..24
        got: list[Any] = []
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and not (got and got[-1].value() == b"b-0014"):
            m = c.poll(0.1)
            if m is None:
                continue
            if m.error():
                errors.append(m.error())
            else:
                got.append(m)
    finally:
        c.close()
    # librdkafka validated its position with OffsetForLeaderEpoch (KIP-320)...
    ofle = cluster.traffic.requests("OffsetForLeaderEpoch", since_seq=mark, answered=True)
    assert ofle
    ends = [p["end_offset"] for t in ofle[-1].response["topics"] for p in t["partitions"]]
    assert ends == [10]
    # ...and re-read from the divergence point (no record from the lost range survives).
    assert [m.value() for m in got][-15:] == _values(15, "b")
    assert [m.offset() for m in got][-15:] == list(range(10, 25))
    assert all(e.code() != KafkaError._FAIL for e in errors)


# -- traffic tools -----------------------------------------------------------------------------


def test_traffic_wait_for_and_jsonl_export(cluster: mockkafka.Cluster, tmp_path: Path) -> None:
    topic = unique("orders")
    cluster.create_topic(topic, partitions=1, replication_factor=3)
    rule = cluster.faults.on("Metadata", client_id="faults-*").nth(2).delay(ms=300)
    p = _producer(cluster, **{"topic.metadata.refresh.interval.ms": 200})
    try:
        assert _produce(p, topic, [b"x"]) == []
        got = cluster.traffic.wait_for("Metadata", count=3, timeout=10, client_id="faults-*")
        assert len(got) >= 3
        delayed = cluster.traffic.wait_for("Metadata", fault=rule, answered=True, timeout=5)
        assert len(delayed) == 1 and (delayed[0].duration_ms or 0) >= 290
        with pytest.raises(TimeoutError, match="JoinGroup"):
            cluster.traffic.wait_for("JoinGroup", count=1, timeout=0.2)
    finally:
        p.flush(5)
    path = tmp_path / "traffic.jsonl"
    n = cluster.traffic.write_jsonl(path, api="Metadata")
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert n == len(lines) >= 3
    assert {d["api"] for d in lines} == {"Metadata"}
    assert any(d["faults"] == [rule.name] for d in lines)


def test_every_client_matching_a_wildcard_can_be_starved(cluster: mockkafka.Cluster) -> None:
    topic = unique("orders")
    cluster.create_topic(topic, partitions=1, replication_factor=3)
    rule = cluster.faults.on("*", client_id="svc-*").every_time().never_respond()
    p = _producer(cluster, **{"client.id": "svc-billing", "message.timeout.ms": 1500})
    ok = _producer(cluster, **{"client.id": "web"})
    try:
        failed = _produce(p, topic, [b"x"])
        assert [e.code() for e in failed] == [KafkaError._MSG_TIMED_OUT]
        assert _produce(ok, topic, [b"y"]) == []
    finally:
        rule.remove()
        p.flush(5)
        ok.flush(5)
    assert _stored(cluster, topic) == [b"y"]
    assert all(ex.response is None for ex in cluster.traffic.requests(client_id="svc-*"))
    rule.wait_fired()

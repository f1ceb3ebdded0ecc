"""kafka-python under the record-editing and connection-level fault actions: ``duplicate``,
``corrupt_payload``, ``schema_id``, ``skew_timestamps``, ``lost_ack`` and ``blackhole``,
written as a user would (KafkaProducer / KafkaConsumer), asserting what kafka-python does."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.serializer import Deserializer

import mockkafka
from mockkafka import GroupView
from mockkafka.protocol.records import decode_records, iter_batches
from tests.interop._fault_checks import (
    COMMITTED,
    TRANSACTIONS,
    check_read_committed,
    check_schema_id,
    check_skew_timestamps,
    read_committed_rule,
)
from tests.interop.conftest import CODECS, unique

pytestmark = [pytest.mark.interop, pytest.mark.timeout(60)]


@pytest.fixture
def cluster() -> Iterator[mockkafka.Cluster]:
    with mockkafka.Cluster(brokers=1) as c:
        yield c


def _consumer(cluster: mockkafka.Cluster, **conf: Any) -> KafkaConsumer:
    base: dict[str, Any] = {
        "bootstrap_servers": cluster.bootstrap_servers,
        "group_id": None,
        "enable_auto_commit": False,
        "fetch_max_wait_ms": 50,
        "check_crcs": True,  # the edited batches must pass kafka-python's CRC check
        "client_id": "kp-actions-consumer",
    }
    return KafkaConsumer(**{**base, **conf})


def _consume(c: KafkaConsumer, n: int, *, timeout: float = 15.0) -> list[Any]:
    """Up to ``n`` records, polling at most ``timeout`` seconds."""
    out: list[Any] = []
    deadline = time.monotonic() + timeout
    while len(out) < n and time.monotonic() < deadline:
        for recs in c.poll(timeout_ms=100).values():
            out.extend(recs)
    return out


def _read_all(cluster: mockkafka.Cluster, topic: str, n: int) -> list[Any]:
    c = _consumer(cluster)
    try:
        tp = TopicPartition(topic, 0)
        c.assign([tp])
        c.seek(tp, 0)
        return _consume(c, n)
    finally:
        c.close()


def test_duplicate_batch_is_dropped_below_the_fetch_position(cluster: mockkafka.Cluster) -> None:
    """kafka-python skips records below its fetch position (``PartitionRecords`` drops
    them), like librdkafka and the Java client: a repeated batch is delivered once. With
    kafka-python's incremental fetch session an unchanged partition is left out of the
    answer, so the rule fires when new records arrive."""
    topic = unique("orders")
    cluster.create_topic(topic, partitions=1)
    for i in range(10):
        cluster.produce(topic, f"v-{i}".encode())  # one batch per record
    c = _consumer(cluster)
    try:
        tp = TopicPartition(topic, 0)
        c.assign([tp])
        c.seek(tp, 0)
        first = _consume(c, 10)
        rule = cluster.faults.on("Fetch", topic=topic).times(3).duplicate()
        got_rest: list[Any] = []
        for i in range(10, 15):  # one at a time: each new record makes a non-empty answer
            cluster.produce(topic, f"v-{i}".encode())
            got_rest += _consume(c, 1, timeout=5)
        rule.wait_fired(3, timeout=10)
        extra = _consume(c, 1, timeout=0.5)
    finally:
        c.close()
    got = [r.value for r in first + got_rest + extra]
    assert got == [f"v-{i}".encode() for i in range(15)]
    fired = cluster.traffic.requests("Fetch", fault=rule)
    assert len(fired) == rule.fired == 3
    for ex in fired:
        req = ex.request or {}
        (fetch_offset,) = [p["fetch_offset"] for t in req["topics"] for p in t["partitions"]]
        (part,) = [p for t in (ex.response or {})["responses"] for p in t["partitions"]]
        offsets = [r.offset for r in decode_records(part["records"])]
        assert offsets[0] == fetch_offset - 1  # the batch read last, at its own offset


class _JsonDeserializer(Deserializer):  # type: ignore[misc]
    """What an application plugs in: JSON values, a ValueError on anything else."""

    def deserialize(self, topic: str, headers: list[tuple[str, bytes]], data: bytes) -> Any:
        return json.loads(data)


def test_corrupt_payload_passes_the_crc_and_fails_the_deserializer(
    cluster: mockkafka.Cluster,
) -> None:
    """The garbled values pass kafka-python's CRC check; a ``value_deserializer`` that
    parses JSON raises out of ``poll()`` itself (kafka-python deserializes while it
    unpacks the batch), so the application sees the error at the poll, not per record."""
    topic = unique("events")
    cluster.create_topic(topic, partitions=1)
    values = [json.dumps({"n": i}).encode() for i in range(5)]
    for v in values:
        cluster.produce(topic, v, key=b"k")
    rule = cluster.faults.on("Fetch", topic=topic).once().corrupt_payload(seed=7)
    got = _read_all(cluster, topic, 5)
    assert rule.fired == 1
    assert [r.key for r in got] == [b"k"] * 5  # only values were touched
    for r, v in zip(got, values, strict=True):
        assert len(r.value) == len(v) and r.value != v
        with pytest.raises(ValueError):  # UnicodeDecodeError or JSONDecodeError
            json.loads(r.value)
    # The log itself is untouched: the next reader gets the real values.
    assert [r.value for r in _read_all(cluster, topic, 5)] == values

    cluster.faults.on("Fetch", topic=topic).once().corrupt_payload(seed=7)
    c = _consumer(cluster, value_deserializer=_JsonDeserializer())
    try:
        tp = TopicPartition(topic, 0)
        c.assign([tp])
        c.seek(tp, 0)
        with pytest.raises(ValueError):
            _consume(c, 5, timeout=10)
    finally:
        c.close()


def test_corrupt_payload_on_keys_and_headers(cluster: mockkafka.Cluster) -> None:
    topic = unique("events")
    cluster.create_topic(topic, partitions=1)
    cluster.produce(topic, b"value", key=b"key-1", headers=[("trace", b"abc")])
    rule = cluster.faults.on("Fetch", topic=topic).once().corrupt_payload(part="headers", seed=1)
    (r,) = _read_all(cluster, topic, 1)
    assert rule.fired == 1
    assert (r.key, r.value) == (b"key-1", b"value")
    ((name, hv),) = r.headers
    assert name == "trace" and len(hv) == 3 and hv != b"abc"
    cluster.faults.on("Fetch", topic=topic).once().corrupt_payload(part="key", seed=1)
    (r,) = _read_all(cluster, topic, 1)
    assert r.value == b"value" and r.key != b"key-1" and len(r.key) == 5


@pytest.mark.parametrize("codec", CODECS)
def test_edited_batches_keep_kafka_pythons_codec(cluster: mockkafka.Cluster, codec: str) -> None:
    """Batches kafka-python compressed (snappy in its xerial framing, lz4 frames, gzip,
    zstd) are garbled and re-stamped in the same codec, and kafka-python decompresses
    them and accepts their CRCs: every record arrives once, value garbled, length kept."""
    topic = unique(f"kp-{codec}")
    cluster.create_topic(topic, partitions=1)
    values = [f"value-{i:03d}-{'x' * 40}".encode() for i in range(30)]
    p = KafkaProducer(
        bootstrap_servers=cluster.bootstrap_servers,
        compression_type=None if codec == "none" else codec,
        linger_ms=20,
        batch_size=1 << 20,
    )
    try:
        futures = [p.send(topic, v, key=b"k", partition=0) for v in values]
        p.flush(timeout=15)
        for f in futures:
            f.get(timeout=1)
    finally:
        p.close(timeout=5)
    rule = cluster.faults.on("Fetch", topic=topic).once().corrupt_payload(seed=11)
    got = _read_all(cluster, topic, 30)
    assert rule.fired == 1
    assert [r.offset for r in got] == list(range(30))
    assert [r.key for r in got] == [b"k"] * 30
    assert all(len(r.value) == len(v) and r.value != v for r, v in zip(got, values, strict=True))
    (ex,) = cluster.traffic.requests("Fetch", fault=rule)
    (part,) = [p for t in (ex.response or {})["responses"] for p in t["partitions"]]
    sent = {CODECS[h.attributes & 0x07] for h, _raw in iter_batches(part["records"])}
    assert codec in sent and sent <= {codec, "none"}  # a lone record may go uncompressed


@pytest.mark.parametrize("api_version", [(0, 10), (0, 9)], ids=["v1-format", "v0-format"])
def test_record_edits_on_old_message_formats(
    cluster: mockkafka.Cluster, api_version: tuple[int, int]
) -> None:
    """kafka-python pinned to an old protocol fetches message format v1 (Fetch v2) or v0
    (Fetch v1); the broker down-converts and the edits re-encode in that format with
    valid CRC32s. v0 messages carry no timestamp, so ``skew_timestamps`` finds nothing
    to edit there and does not fire."""
    topic = unique("old")
    cluster.create_topic(topic, partitions=1)
    ts = 1_700_000_000_000
    for i in range(3):
        cluster.produce(topic, b"val-%d" % i, key=b"k", timestamp=ts)
    garble = cluster.faults.on("Fetch", topic=topic).once().corrupt_payload(seed=3)
    skew = cluster.faults.on("Fetch", topic=topic).once().skew_timestamps(ms=1000)
    got = []
    c = _consumer(cluster, api_version=api_version)
    try:
        tp = TopicPartition(topic, 0)
        c.assign([tp])
        c.seek(tp, 0)
        got = _consume(c, 3, timeout=10)
    finally:
        c.close()
    assert [r.offset for r in got] == [0, 1, 2]
    assert [r.key for r in got] == [b"k"] * 3
    assert all(len(r.value) == 5 and r.value != b"val-%d" % i for i, r in enumerate(got))
    assert garble.fired == 1
    (ex,) = cluster.traffic.requests("Fetch", fault=garble)
    assert ex.version == (2 if api_version == (0, 10) else 1)
    if api_version == (0, 10):
        assert skew.fired == 1
        assert [(r.timestamp_type, r.timestamp) for r in got] == [(0, ts + 1000)] * 3
    else:
        assert skew.fired == 0
        assert [r.timestamp for r in got] == [None] * 3
        skew.remove()  # never fires here: no UnfiredRuleWarning at teardown


@pytest.mark.parametrize("action", ["corrupt_payload", "duplicate"])
def test_record_edits_keep_read_committed_filtering(
    cluster: mockkafka.Cluster, action: str
) -> None:
    """The edited batches keep their producer id and transactional flag, and the commit
    and abort markers are left alone, so a ``read_committed`` kafka-python consumer still
    drops the aborted transaction and gets each committed record once (garbled, for
    ``corrupt_payload``; the repeated batch, a commit marker or data, dropped below the
    fetch position, for ``duplicate``)."""
    topic = unique("txn")
    cluster.create_topic(topic, partitions=1)
    p = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, transactional_id=unique("t"))
    try:
        p.init_transactions()
        for i, commit in enumerate(TRANSACTIONS):
            p.begin_transaction()
            for j in range(2):
                p.send(topic, b"t%d-%d" % (i, j), partition=0)
            p.flush(timeout=10)  # the aborted records reach the log too
            if commit:
                p.commit_transaction()
            else:
                p.abort_transaction()
    finally:
        p.close(timeout=5)
    rule = read_committed_rule(cluster, topic, action)
    c = _consumer(cluster, isolation_level="read_committed", max_partition_fetch_bytes=120)
    try:
        tp = TopicPartition(topic, 0)
        c.assign([tp])
        c.seek(tp, 0)
        got = _consume(c, len(COMMITTED), timeout=10)
        got += _consume(c, 1, timeout=0.5)
    finally:
        c.close()
    check_read_committed(cluster, rule, action, [(r.offset, r.value) for r in got])


def test_schema_id_rewrites_the_registry_header(cluster: mockkafka.Cluster) -> None:
    check_schema_id(cluster, lambda topic, n: [r.value for r in _read_all(cluster, topic, n)])


def test_skew_timestamps_moves_create_time(cluster: mockkafka.Cluster) -> None:
    def read(topic: str) -> dict[int, tuple[int, int]]:
        c = _consumer(cluster)
        try:
            tps = [TopicPartition(topic, 0), TopicPartition(topic, 1)]
            c.assign(tps)
            c.seek_to_beginning(*tps)
            return {r.partition: (r.timestamp_type, r.timestamp) for r in _consume(c, 2)}
        finally:
            c.close()

    check_skew_timestamps(cluster, read, create_time=0)


@pytest.mark.parametrize(("idempotent", "copies"), [(False, 2), (True, 1)])
def test_lost_ack_makes_the_producer_retry(
    cluster: mockkafka.Cluster, idempotent: bool, copies: int
) -> None:
    """The batch is stored, the answer lost: kafka-python fails the in-flight request with
    a connection error (retriable) and sends the batch again on a new connection, so
    without idempotence the log holds it twice; with idempotence (kafka-python's default)
    the broker recognises the retry. Each future succeeds either way."""
    topic = unique("payments")
    cluster.create_topic(topic, partitions=1)
    rule = cluster.faults.on("Produce", topic=topic).once().lost_ack()
    p = KafkaProducer(
        bootstrap_servers=cluster.bootstrap_servers,
        enable_idempotence=idempotent,
        acks="all",
        linger_ms=50,
        retry_backoff_ms=50,
        client_id="kp-actions-producer",
    )
    try:
        futures = [p.send(topic, f"pay-{i}".encode(), partition=0) for i in range(5)]
        p.flush(timeout=20)
        metas = [f.get(timeout=1) for f in futures]
    finally:
        p.close(timeout=5)
    assert [m.offset for m in metas] == list(range(5 * (copies - 1), 5 * copies))
    assert rule.fired == 1
    lost = cluster.traffic.requests("Produce", fault=rule)[0]
    assert lost.closed_connection and lost.response is not None  # applied, answer not sent
    stored = [r.value for r in cluster.topic(topic).partition(0).records()]
    assert stored == [f"pay-{i}".encode() for i in range(5)] * copies


def test_blackholed_producer_times_out_retries_and_lands_once(
    cluster: mockkafka.Cluster,
) -> None:
    """Each swallowed Produce is not applied and never answered: kafka-python waits its
    ``request_timeout_ms``, drops the connection, reconnects and retries; once the rule's
    ``for_ms`` is over the batch lands, once (idempotence, kafka-python's default)."""
    topic = unique("bh")
    cluster.create_topic(topic, partitions=1)
    p = KafkaProducer(
        bootstrap_servers=cluster.bootstrap_servers,
        client_id="kp-cut-off",
        request_timeout_ms=1000,
        retry_backoff_ms=50,
        linger_ms=5,
    )
    try:
        p.send(topic, b"warm", partition=0).get(timeout=10)
        rule = cluster.faults.on("Produce", client_id="kp-cut-off").blackhole().for_ms(1500)
        futures = [p.send(topic, b"v%d" % i, partition=0) for i in range(5)]
        p.flush(timeout=15)
        metas = [f.get(timeout=1) for f in futures]
    finally:
        p.close(timeout=5)
    assert [m.offset for m in metas] == [1, 2, 3, 4, 5]
    swallowed = cluster.traffic.requests("Produce", fault=rule)
    assert rule.fired == len(swallowed) >= 1
    assert all(ex.no_response and not ex.closed_connection for ex in swallowed)
    (landed,) = cluster.traffic.requests("Produce", since_seq=swallowed[-1].seq, answered=True)
    assert landed.time_ms - swallowed[-1].time_ms >= 900  # after request_timeout_ms
    assert landed.connection_id not in {ex.connection_id for ex in swallowed}  # reconnected
    assert len({ex.connection_id for ex in swallowed}) == len(swallowed)  # one per connection
    stored = [r.value for r in cluster.topic(topic).partition(0).records()]
    assert stored == [b"warm"] + [b"v%d" % i for i in range(5)]


@contextmanager
def _polled(*consumers: KafkaConsumer) -> Iterator[list[BaseException]]:
    """Poll each consumer on its own thread (kafka-python's one-consumer-per-thread model;
    one thread polling two group members in turn meets the kafka-python 3.0.12 join bug
    described in ``test_groups_kafka_python``) until the block ends; yields the errors
    the pollers raised."""
    stop = threading.Event()
    errors: list[BaseException] = []

    def run(c: KafkaConsumer) -> None:
        try:
            while not stop.is_set():
                c.poll(timeout_ms=50)
        except BaseException as exc:  # reported by the test
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(c,), daemon=True) for c in consumers]
    for t in threads:
        t.start()
    try:
        yield errors
    finally:
        stop.set()
        for t in threads:
            t.join(10)


def _wait_group(
    cluster: mockkafka.Cluster,
    group: str,
    want: list[str],
    *,
    settle: float = 0.5,
    timeout: float = 15.0,
) -> GroupView | None:
    """The group once Stable with exactly the members ``want`` (client ids), each holding
    an assignment, in one generation for ``settle`` seconds; the last view seen after
    ``timeout`` seconds otherwise. (The settle time lets a kafka-python 3.0.12 member that
    races its own assignment and rejoins right after SyncGroup show it, so the test does
    not blackhole a JoinGroup, which kafka-python waits ``max_poll_interval_ms`` + 5 s
    for.)"""
    deadline = time.monotonic() + timeout
    view = None
    since: tuple[int, float] | None = None
    while time.monotonic() < deadline:
        view = cluster.group(group) if group in cluster.groups() else None
        if (
            view is not None
            and view.state == "Stable"
            and sorted(m.client_id for m in view.members) == want
            and all(m.assignment for m in view.members)
        ):
            if since is None or since[0] != view.generation_id:
                since = (view.generation_id, time.monotonic())
            elif time.monotonic() - since[1] >= settle:
                break
        else:
            since = None
        time.sleep(0.02)
    return view


def test_blackholed_member_is_evicted_and_its_partitions_move() -> None:
    """kafka-python's heartbeat thread hears nothing back; the coordinator evicts the
    member after its session timeout and the other member takes both partitions. Once the
    rule is removed the cut-off member's new connection is answered again and it rejoins.
    Each member polls on its own thread, the cluster holds the first join 1000 ms
    (``group.initial.rebalance.delay.ms``) and the group must stay in one generation for
    0.5 s before the rule goes in: kafka-python 3.0.12 races its own first assignment
    (see ``test_groups_kafka_python``) and may rejoin right after SyncGroup."""
    topic = unique("work")
    group = unique("g")
    conf: dict[str, Any] = {
        "group_id": group,
        "session_timeout_ms": 1500,
        "heartbeat_interval_ms": 200,
        "request_timeout_ms": 3000,
        "partition_assignment_strategy": _range_assignor(),
    }
    with mockkafka.Cluster(brokers=1, group_initial_rebalance_delay_ms=1000) as cluster:
        cluster.create_topic(topic, partitions=2)
        a = _consumer(cluster, **conf, client_id="member-a")
        b = _consumer(cluster, **conf, client_id="member-b")
        try:
            for c in (a, b):
                c.subscribe([topic])
            with _polled(a, b) as errors:
                view = _wait_group(cluster, group, ["member-a", "member-b"])
                assert view is not None and len(view.members) == 2, view
                rule = cluster.faults.on(client_id="member-a").blackhole()
                view = _wait_group(cluster, group, ["member-b"])
                assert view is not None and [m.client_id for m in view.members] == ["member-b"]
                assert view.members[0].assignment == {topic: [0, 1]}
                swallowed = cluster.traffic.requests(client_id="member-a", fault=rule)
                assert swallowed and all(ex.no_response for ex in swallowed)
                assert not any(ex.closed_connection for ex in swallowed)
                # one firing per connection cut off; the requests read and dropped after
                # it on that connection carry the rule in traffic too
                assert rule.fired == len({ex.connection_id for ex in swallowed})
                rule.remove()
                since = cluster.traffic.mark()
                # a is answered again once the rule is gone, and rejoins
                view = _wait_group(cluster, group, ["member-a", "member-b"])
                assert cluster.traffic.requests(
                    client_id="member-a", since_seq=since, answered=True
                )
                assert view is not None
                assert sorted(m.client_id for m in view.members) == ["member-a", "member-b"]
                assigned = [p for m in view.members for p in (m.assignment or {}).get(topic, [])]
                assert sorted(assigned) == [0, 1]
            assert errors == []
        finally:
            a.close(autocommit=False)
            b.close(autocommit=False)


def _range_assignor() -> tuple[Any, ...]:
    from kafka.coordinator.assignors.range import RangePartitionAssignor

    return (RangePartitionAssignor,)

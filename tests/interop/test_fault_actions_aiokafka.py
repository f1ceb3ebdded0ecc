"""aiokafka under the record-editing and connection-level fault actions: ``duplicate``,
``corrupt_payload``, ``schema_id``, ``skew_timestamps``, ``lost_ack`` and ``blackhole``,
written as a user would (AIOKafkaProducer / AIOKafkaConsumer under asyncio, inside sync
tests), asserting what aiokafka does."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Coroutine, Iterator
from typing import Any, TypeVar

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

import mockkafka
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

T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T], timeout: float = 30.0) -> T:
    """Run ``coro`` on a fresh asyncio loop, bounded by ``timeout`` seconds."""
    return asyncio.run(asyncio.wait_for(coro, timeout))


@pytest.fixture
def cluster() -> Iterator[mockkafka.Cluster]:
    with mockkafka.Cluster(brokers=1) as c:
        yield c


def _consumer(cluster: mockkafka.Cluster, **conf: Any) -> AIOKafkaConsumer:
    base: dict[str, Any] = {
        "bootstrap_servers": cluster.bootstrap_servers,
        "group_id": None,
        "enable_auto_commit": False,
        "fetch_max_wait_ms": 50,
        "check_crcs": True,  # the edited batches must pass aiokafka's CRC check
        "client_id": "aio-actions-consumer",
    }
    return AIOKafkaConsumer(**{**base, **conf})


async def _consume(c: AIOKafkaConsumer, n: int, *, timeout: float = 15.0) -> list[Any]:
    """Up to ``n`` records, fetching at most ``timeout`` seconds."""
    out: list[Any] = []
    deadline = time.monotonic() + timeout
    while len(out) < n and time.monotonic() < deadline:
        for recs in (await c.getmany(timeout_ms=100)).values():
            out.extend(recs)
    return out


async def _read_all(cluster: mockkafka.Cluster, topic: str, n: int, **conf: Any) -> list[Any]:
    c = _consumer(cluster, **conf)
    await c.start()
    try:
        tp = TopicPartition(topic, 0)
        c.assign([tp])
        c.seek(tp, 0)
        return await _consume(c, n)
    finally:
        await c.stop()


def test_duplicate_batch_is_dropped_below_the_fetch_position(cluster: mockkafka.Cluster) -> None:
    """aiokafka skips records below its fetch position (its partition-records iterator
    drops them), like librdkafka and the Java client: a repeated batch is delivered once.
    aiokafka uses no incremental fetch session, so a caught-up consumer's empty answers
    get the repeat too; its fetcher sends the next Fetch only after ``getmany()`` took
    the last answer, so a consumer that stops calling it stops fetching."""
    topic = unique("orders")
    cluster.create_topic(topic, partitions=1)
    for i in range(10):
        cluster.produce(topic, f"v-{i}".encode())  # one batch per record

    async def main() -> tuple[mockkafka.Rule, list[Any]]:
        c = _consumer(cluster)
        await c.start()
        try:
            tp = TopicPartition(topic, 0)
            c.assign([tp])
            c.seek(tp, 0)
            got = await _consume(c, 10)
            rule = cluster.faults.on("Fetch", topic=topic).times(3).duplicate()
            for i in range(10, 15):
                cluster.produce(topic, f"v-{i}".encode())
            got += await _consume(c, 5)
            deadline = time.monotonic() + 10
            while rule.fired < 3 and time.monotonic() < deadline:
                # aiokafka fetches again only once getmany() has taken the last answer,
                # so keep calling it (an answer holding only the repeat yields nothing)
                got += await _consume(c, 1, timeout=0.1)
            got += await _consume(c, 1, timeout=0.5)
            return rule, got
        finally:
            await c.stop()

    rule, got = run(main())
    assert [r.value for r in got] == [f"v-{i}".encode() for i in range(15)]
    fired = cluster.traffic.requests("Fetch", fault=rule)
    assert len(fired) == rule.fired == 3
    for ex in fired:
        req = ex.request or {}
        (fetch_offset,) = [p["fetch_offset"] for t in req["topics"] for p in t["partitions"]]
        (part,) = [p for t in (ex.response or {})["responses"] for p in t["partitions"]]
        offsets = [r.offset for r in decode_records(part["records"])]
        assert offsets[0] == fetch_offset - 1  # the batch read last, at its own offset


def test_corrupt_payload_passes_the_crc_and_fails_the_deserializer(
    cluster: mockkafka.Cluster,
) -> None:
    """The garbled values pass aiokafka's CRC check; a ``value_deserializer`` that parses
    JSON raises out of ``getmany()`` itself (aiokafka deserializes as it hands the records
    out), so the application sees the error at the fetch call, not per record."""
    topic = unique("events")
    cluster.create_topic(topic, partitions=1)
    values = [json.dumps({"n": i}).encode() for i in range(5)]
    for v in values:
        cluster.produce(topic, v, key=b"k")
    rule = cluster.faults.on("Fetch", topic=topic).once().corrupt_payload(seed=7)
    got = run(_read_all(cluster, topic, 5))
    assert rule.fired == 1
    assert [r.key for r in got] == [b"k"] * 5  # only values were touched
    for r, v in zip(got, values, strict=True):
        assert len(r.value) == len(v) and r.value != v
        with pytest.raises(ValueError):  # UnicodeDecodeError or JSONDecodeError
            json.loads(r.value)
    # The log itself is untouched: the next reader gets the real values.
    assert [r.value for r in run(_read_all(cluster, topic, 5))] == values

    cluster.faults.on("Fetch", topic=topic).once().corrupt_payload(seed=7)
    with pytest.raises(ValueError):
        run(_read_all(cluster, topic, 5, value_deserializer=json.loads))


def test_corrupt_payload_on_keys_and_headers(cluster: mockkafka.Cluster) -> None:
    topic = unique("events")
    cluster.create_topic(topic, partitions=1)
    cluster.produce(topic, b"value", key=b"key-1", headers=[("trace", b"abc")])
    rule = cluster.faults.on("Fetch", topic=topic).once().corrupt_payload(part="headers", seed=1)
    (r,) = run(_read_all(cluster, topic, 1))
    assert rule.fired == 1
    assert (r.key, r.value) == (b"key-1", b"value")
    ((name, hv),) = r.headers
    assert name == "trace" and len(hv) == 3 and hv != b"abc"
    cluster.faults.on("Fetch", topic=topic).once().corrupt_payload(part="key", seed=1)
    (r,) = run(_read_all(cluster, topic, 1))
    assert r.value == b"value" and r.key != b"key-1" and len(r.key) == 5


@pytest.mark.parametrize("codec", CODECS)
def test_edited_batches_keep_aiokafkas_codec(cluster: mockkafka.Cluster, codec: str) -> None:
    """Batches aiokafka compressed (snappy in its xerial framing, lz4, gzip, zstd) are
    garbled and re-stamped in the same codec; aiokafka decompresses them and accepts
    their CRCs: every record arrives once, value garbled, length kept."""
    topic = unique(f"aio-{codec}")
    cluster.create_topic(topic, partitions=1)
    values = [f"value-{i:03d}-{'x' * 40}".encode() for i in range(30)]

    async def produce() -> None:
        p = AIOKafkaProducer(
            bootstrap_servers=cluster.bootstrap_servers,
            compression_type=None if codec == "none" else codec,
            linger_ms=20,
            max_batch_size=1 << 20,
        )
        await p.start()
        try:
            futs = [await p.send(topic, v, key=b"k", partition=0) for v in values]
            await asyncio.gather(*futs)
        finally:
            await p.stop()

    run(produce())
    rule = cluster.faults.on("Fetch", topic=topic).once().corrupt_payload(seed=11)
    got = run(_read_all(cluster, topic, 30))
    assert rule.fired == 1
    assert [r.offset for r in got] == list(range(30))
    assert [r.key for r in got] == [b"k"] * 30
    assert all(len(r.value) == len(v) and r.value != v for r, v in zip(got, values, strict=True))
    (ex,) = cluster.traffic.requests("Fetch", fault=rule)
    (part,) = [p for t in (ex.response or {})["responses"] for p in t["partitions"]]
    sent = {CODECS[h.attributes & 0x07] for h, _raw in iter_batches(part["records"])}
    assert codec in sent and sent <= {codec, "none"}  # a lone record may go uncompressed


@pytest.mark.parametrize("action", ["corrupt_payload", "duplicate"])
def test_record_edits_keep_read_committed_filtering(
    cluster: mockkafka.Cluster, action: str
) -> None:
    """The edited batches keep their producer id and transactional flag, and the commit
    and abort markers are left alone, so a ``read_committed`` aiokafka consumer still
    drops the aborted transaction and gets each committed record once (garbled, for
    ``corrupt_payload``; the repeated batch dropped below the fetch position, for
    ``duplicate``)."""
    topic = unique("txn")
    cluster.create_topic(topic, partitions=1)

    async def produce() -> None:
        p = AIOKafkaProducer(
            bootstrap_servers=cluster.bootstrap_servers, transactional_id=unique("t")
        )
        await p.start()
        try:
            for i, commit in enumerate(TRANSACTIONS):
                await p.begin_transaction()
                futs = [await p.send(topic, b"t%d-%d" % (i, j), partition=0) for j in range(2)]
                await asyncio.gather(*futs)  # the aborted records reach the log too
                if commit:
                    await p.commit_transaction()
                else:
                    await p.abort_transaction()
        finally:
            await p.stop()

    run(produce())
    rule = read_committed_rule(cluster, topic, action)

    async def consume() -> list[Any]:
        c = _consumer(cluster, isolation_level="read_committed", max_partition_fetch_bytes=120)
        await c.start()
        try:
            tp = TopicPartition(topic, 0)
            c.assign([tp])
            c.seek(tp, 0)
            got = await _consume(c, len(COMMITTED), timeout=10)
            return got + await _consume(c, 1, timeout=0.5)
        finally:
            await c.stop()

    got = run(consume())
    check_read_committed(cluster, rule, action, [(r.offset, r.value) for r in got])


def test_schema_id_rewrites_the_registry_header(cluster: mockkafka.Cluster) -> None:
    check_schema_id(cluster, lambda topic, n: [r.value for r in run(_read_all(cluster, topic, n))])


def test_skew_timestamps_moves_create_time(cluster: mockkafka.Cluster) -> None:
    async def main(topic: str) -> dict[int, tuple[int, int]]:
        c = _consumer(cluster)
        await c.start()
        try:
            tps = [TopicPartition(topic, 0), TopicPartition(topic, 1)]
            c.assign(tps)
            await c.seek_to_beginning(*tps)
            return {r.partition: (r.timestamp_type, r.timestamp) for r in await _consume(c, 2)}
        finally:
            await c.stop()

    check_skew_timestamps(cluster, lambda topic: run(main(topic)), create_time=0)


@pytest.mark.parametrize(("idempotent", "copies"), [(False, 2), (True, 1)])
def test_lost_ack_makes_the_producer_retry(
    cluster: mockkafka.Cluster, idempotent: bool, copies: int
) -> None:
    """The batch is stored, the answer lost: aiokafka's sender treats the closed connection
    as retriable and sends the batch again, so without idempotence (aiokafka's default)
    the log holds it twice; with idempotence the broker recognises the retry. Each send
    future succeeds either way."""
    topic = unique("payments")
    cluster.create_topic(topic, partitions=1)
    rule = cluster.faults.on("Produce", topic=topic).once().lost_ack()

    async def main() -> list[Any]:
        p = AIOKafkaProducer(
            bootstrap_servers=cluster.bootstrap_servers,
            enable_idempotence=idempotent,
            acks="all",
            linger_ms=50,
            retry_backoff_ms=50,
            request_timeout_ms=5000,
            client_id="aio-actions-producer",
        )
        await p.start()
        try:
            futs = [await p.send(topic, f"pay-{i}".encode(), partition=0) for i in range(5)]
            return list(await asyncio.gather(*futs))
        finally:
            await p.stop()

    metas = run(main())
    assert [m.offset for m in metas] == list(range(5 * (copies - 1), 5 * copies))
    assert rule.fired == 1
    lost = cluster.traffic.requests("Produce", fault=rule)[0]
    assert lost.closed_connection and lost.response is not None  # applied, answer not sent
    stored = [r.value for r in cluster.topic(topic).partition(0).records()]
    assert stored == [f"pay-{i}".encode() for i in range(5)] * copies


def test_blackholed_producer_times_out_retries_and_lands_once(
    cluster: mockkafka.Cluster,
) -> None:
    """Each swallowed Produce is not applied and never answered: aiokafka waits its
    ``request_timeout_ms``, closes the connection, reconnects and retries; once the rule's
    ``for_ms`` is over the batch lands, once (with idempotence)."""
    topic = unique("bh")
    cluster.create_topic(topic, partitions=1)

    async def main() -> tuple[mockkafka.Rule, list[Any]]:
        p = AIOKafkaProducer(
            bootstrap_servers=cluster.bootstrap_servers,
            client_id="aio-cut-off",
            enable_idempotence=True,
            request_timeout_ms=1000,
            retry_backoff_ms=50,
            linger_ms=5,
        )
        await p.start()
        try:
            await p.send_and_wait(topic, b"warm", partition=0)
            rule = cluster.faults.on("Produce", client_id="aio-cut-off").blackhole().for_ms(1500)
            futs = [await p.send(topic, b"v%d" % i, partition=0) for i in range(5)]
            return rule, list(await asyncio.gather(*futs))
        finally:
            await p.stop()

    rule, metas = run(main())
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


def test_blackholed_member_is_evicted_and_its_partitions_move(cluster: mockkafka.Cluster) -> None:
    """aiokafka's heartbeat task hears nothing back; the coordinator evicts the member
    after its session timeout and the other member takes both partitions. Once the rule
    is removed the cut-off member's new connection is answered again and it rejoins."""
    from aiokafka.coordinator.assignors.range import RangePartitionAssignor

    topic = unique("work")
    group = unique("g")
    cluster.create_topic(topic, partitions=2)
    conf: dict[str, Any] = {
        "group_id": group,
        "session_timeout_ms": 1500,
        "heartbeat_interval_ms": 200,
        "request_timeout_ms": 3000,
        "partition_assignment_strategy": (RangePartitionAssignor,),
    }

    async def main() -> None:
        a = _consumer(cluster, **conf, client_id="member-a")
        b = _consumer(cluster, **conf, client_id="member-b")
        await a.start()
        await b.start()
        try:
            for c in (a, b):
                c.subscribe([topic])
            deadline = time.monotonic() + 15
            view = None
            while time.monotonic() < deadline:
                await a.getmany(timeout_ms=50)
                await b.getmany(timeout_ms=50)
                view = cluster.group(group)
                members = view.members
                if (
                    view.state == "Stable"
                    and len(members) == 2
                    and all(m.assignment for m in members)
                ):
                    break
            assert view is not None and len(view.members) == 2
            rule = cluster.faults.on(client_id="member-a").blackhole()
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:  # only b fetches: a is cut off anyway
                await b.getmany(timeout_ms=50)
                view = cluster.group(group)
                if view.state == "Stable" and [m.client_id for m in view.members] == ["member-b"]:
                    break
            assert [m.client_id for m in view.members] == ["member-b"]
            assert view.members[0].assignment == {topic: [0, 1]}
            swallowed = cluster.traffic.requests(client_id="member-a", fault=rule)
            assert swallowed and all(ex.no_response for ex in swallowed)
            assert not any(ex.closed_connection for ex in swallowed)
            # one firing per connection cut off; the requests read and dropped after it
            # on that connection carry the rule in traffic too
            assert rule.fired == len({ex.connection_id for ex in swallowed})
            rule.remove()
            since = cluster.traffic.requests()[-1].seq
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:  # a is answered again once the rule is gone
                await b.getmany(timeout_ms=50)
                if cluster.traffic.requests(client_id="member-a", since_seq=since, answered=True):
                    break
            assert cluster.traffic.requests(client_id="member-a", since_seq=since, answered=True)
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:  # ...and rejoins: the partitions split again
                await a.getmany(timeout_ms=50)
                await b.getmany(timeout_ms=50)
                view = cluster.group(group)
                if view.state == "Stable" and len(view.members) == 2:
                    break
            assert sorted(m.client_id for m in view.members) == ["member-a", "member-b"]
            assert sorted(p for m in view.members for p in (m.assignment or {}).get(topic, [])) == [
                0,
                1,
            ]
        finally:
            await a.stop()
            await b.stop()

    run(main(), timeout=50)

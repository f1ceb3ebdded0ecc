"""aiokafka against mockkafka: produce, consume, offsets, admin (asyncio inside sync tests)."""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from collections.abc import Coroutine
from typing import Any, TypeVar

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
from aiokafka.errors import KafkaError, MessageSizeTooLargeError

import mockkafka
from tests.interop.conftest import (
    CODECS,
    assert_sent_with_codec,
    keyed_messages,
    requires_apis,
    unique,
)

pytestmark = [pytest.mark.interop, pytest.mark.timeout(60)]

T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T], timeout: float = 30.0) -> T:
    """Run ``coro`` on a fresh asyncio loop, bounded by ``timeout`` seconds."""
    return asyncio.run(asyncio.wait_for(coro, timeout))


def _consumer(cluster: mockkafka.Cluster, **conf: Any) -> AIOKafkaConsumer:
    return AIOKafkaConsumer(
        bootstrap_servers=cluster.bootstrap_servers,
        group_id=None,
        enable_auto_commit=False,
        fetch_max_wait_ms=100,
        **conf,
    )


async def _consume_n(c: AIOKafkaConsumer, n: int, timeout: float = 20.0) -> list[Any]:
    out: list[Any] = []
    deadline = time.monotonic() + timeout
    while len(out) < n and time.monotonic() < deadline:
        for records in (await c.getmany(timeout_ms=200, max_records=2000)).values():
            out.extend(records)
    return out


@pytest.mark.parametrize("codec", CODECS)
def test_10k_keyed_messages_round_trip_exactly_with_each_codec(
    cluster: mockkafka.Cluster, codec: str
) -> None:
    topic = unique(f"aio-{codec}")
    cluster.create_topic(topic, partitions=3, replication_factor=3)
    msgs = keyed_messages(10_000, tag=codec)

    async def main() -> tuple[list[Any], list[Any]]:
        p = AIOKafkaProducer(
            bootstrap_servers=cluster.bootstrap_servers,
            acks="all",
            compression_type=None if codec == "none" else codec,
            linger_ms=5,
        )
        await p.start()
        try:
            futs = [await p.send(topic, key=k, value=v) for k, v in msgs]
            metas = list(await asyncio.gather(*futs))
        finally:
            await p.stop()
        c = _consumer(cluster)
        await c.start()
        try:
            tps = [TopicPartition(topic, i) for i in range(3)]
            c.assign(tps)
            await c.seek_to_beginning(*tps)
            got = await _consume_n(c, 10_000)
        finally:
            await c.stop()
        return metas, got

    metas, got = run(main())
    assert len(got) == 10_000
    by_partition: dict[int, list[Any]] = defaultdict(list)
    for m in got:
        by_partition[m.partition].append(m)
    for part, ms in by_partition.items():
        assert [m.offset for m in ms] == list(range(len(ms))), f"gap in partition {part}"
    assert sorted((m.key, m.value) for m in got) == sorted(msgs)
    assert {(m.partition, m.offset) for m in metas} == {(m.partition, m.offset) for m in got}
    assert_sent_with_codec(cluster, topic, codec)


def test_idempotent_producer_writes_each_message_once(cluster: mockkafka.Cluster) -> None:
    topic = unique("aio-idem")
    cluster.create_topic(topic, partitions=2, replication_factor=3)
    msgs = keyed_messages(2_000)

    async def main() -> None:
        p = AIOKafkaProducer(
            bootstrap_servers=cluster.bootstrap_servers, enable_idempotence=True, linger_ms=2
        )
        await p.start()
        try:
            futs = [await p.send(topic, key=k, value=v) for k, v in msgs]
            await asyncio.gather(*futs)
        finally:
            await p.stop()

    run(main())
    assert cluster.traffic.requests("InitProducerId")
    held = cluster.topic(topic).records()
    assert sorted((r.key, r.value) for r in held) == sorted(msgs)


def test_seek_and_reset_to_earliest_or_latest(cluster: mockkafka.Cluster) -> None:
    topic = unique("aio-seek")
    cluster.create_topic(topic, partitions=1)
    for i in range(20):
        cluster.produce(topic, f"v{i}")
    tp = TopicPartition(topic, 0)

    async def main() -> None:
        early = _consumer(cluster, auto_offset_reset="earliest")
        late = _consumer(cluster, auto_offset_reset="latest")
        p = AIOKafkaProducer(bootstrap_servers=cluster.bootstrap_servers)
        await early.start()
        await late.start()
        await p.start()
        try:
            early.assign([tp])
            assert [m.offset for m in await _consume_n(early, 20)] == list(range(20))
            early.seek(tp, 15)
            got = await _consume_n(early, 5)
            assert [m.value for m in got] == [f"v{i}".encode() for i in range(15, 20)]
            late.assign([tp])
            assert await late.position(tp) == 20
            await p.send_and_wait(topic, b"new")
            got = await _consume_n(late, 1)
            assert [(m.offset, m.value) for m in got] == [(20, b"new")]
            await early.seek_to_end(tp)
            assert await early.position(tp) == 21
        finally:
            await p.stop()
            await late.stop()
            await early.stop()

    run(main())


def test_offsets_for_times_and_end_offsets(cluster: mockkafka.Cluster) -> None:
    topic = unique("aio-times")
    cluster.create_topic(topic, partitions=1)
    for i in range(10):
        cluster.produce(topic, f"v{i}", timestamp=1_000_000 + i * 1000)
    tp = TopicPartition(topic, 0)

    async def main() -> None:
        c = _consumer(cluster)
        await c.start()
        try:
            found = await c.offsets_for_times({tp: 1_004_500})
            assert found[tp] is not None
            assert (found[tp].offset, found[tp].timestamp) == (5, 1_005_000)
            assert (await c.offsets_for_times({tp: 9_999_999}))[tp] is None
            assert await c.beginning_offsets([tp]) == {tp: 0}
            assert await c.end_offsets([tp]) == {tp: 10}
        finally:
            await c.stop()

    run(main())


def test_oversized_message_is_refused_by_the_broker(cluster: mockkafka.Cluster) -> None:
    topic = unique("aio-big")
    cluster.create_topic(topic, config={"max.message.bytes": "2000"})

    async def main() -> None:
        p = AIOKafkaProducer(bootstrap_servers=cluster.bootstrap_servers, max_request_size=10**6)
        await p.start()
        try:
            with pytest.raises(MessageSizeTooLargeError):
                await p.send_and_wait(topic, b"x" * 5000)
            assert (await p.send_and_wait(topic, b"small")).offset == 0
        finally:
            await p.stop()

    run(main())
    assert [r.value for r in cluster.topic(topic).records()] == [b"small"]


def test_long_poll_returns_as_soon_as_data_arrives(cluster: mockkafka.Cluster) -> None:
    topic = unique("aio-longpoll")
    cluster.create_topic(topic)
    tp = TopicPartition(topic, 0)

    async def main() -> float:
        c = AIOKafkaConsumer(
            bootstrap_servers=cluster.bootstrap_servers,
            group_id=None,
            fetch_max_wait_ms=10_000,  # the broker holds the fetch up to 10 s
        )
        await c.start()
        try:
            c.assign([tp])
            await c.seek_to_beginning(tp)
            assert await c.getmany(timeout_ms=300) == {}
            loop = asyncio.get_running_loop()
            t0 = time.monotonic()
            loop.call_later(0.2, lambda: cluster.produce(topic, b"wake"))
            got = await _consume_n(c, 1, timeout=8)
            assert [m.value for m in got] == [b"wake"]
            return time.monotonic() - t0
        finally:
            await c.stop()

    elapsed = run(main())
    assert elapsed < 2.0, f"fetch did not wake on new data ({elapsed:.2f} s)"


@requires_apis("CreateTopics", "DeleteTopics", "DescribeConfigs")
def test_admin_create_describe_delete(cluster: mockkafka.Cluster) -> None:
    topic = unique("aio-admin")

    async def main() -> None:
        admin = AIOKafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
        await admin.start()
        try:
            await admin.create_topics(
                [NewTopic(topic, 2, 3, topic_configs={"retention.ms": "3600000"})]
            )
            assert len(cluster.topic(topic).partitions) == 2
            res = await admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])
            entries = {e[0]: e[1] for r in res for e in r.resources[0][4]}
            assert entries["retention.ms"] == "3600000"
            await admin.delete_topics([topic])
            assert topic not in cluster.topics()
            with pytest.raises(KafkaError):
                resp = await admin.create_topics([NewTopic("bad name!", 1, 1)])
                errors = [e[1] for e in resp.topic_errors if e[1]]
                if errors:
                    raise KafkaError(str(errors))
        finally:
            await admin.close()

    run(main())

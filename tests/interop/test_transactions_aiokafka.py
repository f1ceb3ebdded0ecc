"""aiokafka transactional producers against mockkafka (run with asyncio.run in sync tests).

Pins: ``async with producer.transaction()`` commit and abort across partitions of two
topics, read_committed versus read_uncommitted consumers, consume-transform-produce with
send_offsets_to_transaction in a subscribed group, fencing by a second instance, and a
transaction timeout aborting a hung transaction.
"""

from __future__ import annotations

import asyncio
import time
from contextlib import suppress

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.errors import KafkaError

import mockkafka
from tests.interop.conftest import requires_apis, source_and_sink, txn_partitions, unique

pytestmark = [pytest.mark.interop, pytest.mark.timeout(45)]


class Boom(Exception):
    """Raised inside a transaction block to make aiokafka abort it."""


async def _stop(p: AIOKafkaProducer) -> None:
    with suppress(KafkaError):  # a fenced producer reports its error again
        await p.stop()


async def _read(
    cluster: mockkafka.Cluster,
    parts: list[tuple[str, int]],
    isolation: str,
    *,
    expect: int,
    timeout: float = 8.0,
    settle: float = 0.3,
) -> list[bytes]:
    """Values from the start of ``parts``: until ``expect`` arrived (then ``settle`` s more
    for any extra one) or ``timeout``."""
    c = AIOKafkaConsumer(
        bootstrap_servers=cluster.bootstrap_servers,
        isolation_level=isolation,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        fetch_max_wait_ms=50,
    )
    await c.start()
    out: list[bytes] = []
    try:
        c.assign([TopicPartition(t, i) for t, i in parts])
        deadline = time.monotonic() + timeout
        while len(out) < expect and time.monotonic() < deadline:
            batch = await c.getmany(timeout_ms=100)
            out.extend(m.value for ms in batch.values() for m in ms)
        settle_until = time.monotonic() + settle
        while time.monotonic() < settle_until:
            batch = await c.getmany(timeout_ms=100)
            out.extend(m.value for ms in batch.values() for m in ms)
    finally:
        await c.stop()
    return sorted(out)


async def _send(p: AIOKafkaProducer, topics: tuple[str, str], tag: str) -> list[bytes]:
    sent = []
    for topic, idx in txn_partitions(topics):
        for i in range(2):
            v = f"{tag}-{topic}-{idx}-{i}".encode()
            await p.send(topic, v, partition=idx)
            sent.append(v)
    return sent


def test_commit_and_abort_across_partitions_of_two_topics(
    cluster: mockkafka.Cluster, topics: tuple[str, str]
) -> None:
    tid = unique("tx")

    async def main() -> None:
        p = AIOKafkaProducer(bootstrap_servers=cluster.bootstrap_servers, transactional_id=tid)
        await p.start()
        try:
            async with p.transaction():
                committed = await _send(p, topics, "c")
            aborted: list[bytes] = []
            with pytest.raises(Boom):
                async with p.transaction():
                    aborted = await _send(p, topics, "a")
                    await p.flush()
                    raise Boom
        finally:
            await _stop(p)
        txn = cluster.transaction(tid)
        assert [t.committed for t in txn.history] == [True, False]
        assert set(txn.history[0].partitions) == set(txn_partitions(topics))
        got = await _read(cluster, txn_partitions(topics), "read_committed", expect=6)
        assert got == sorted(committed)
        got = await _read(cluster, txn_partitions(topics), "read_uncommitted", expect=12)
        assert got == sorted(committed + aborted)

    asyncio.run(asyncio.wait_for(main(), 30))


@requires_apis("JoinGroup", "SyncGroup", "Heartbeat", "OffsetFetch")
def test_consume_transform_produce_commits_the_group_offsets(
    cluster: mockkafka.Cluster,
) -> None:
    src, dst = source_and_sink(cluster, 4)
    group, tid = unique("g"), unique("tx")

    async def main() -> None:
        consumer = AIOKafkaConsumer(
            src,
            bootstrap_servers=cluster.bootstrap_servers,
            group_id=group,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            isolation_level="read_committed",
            fetch_max_wait_ms=50,
        )
        producer = AIOKafkaProducer(
            bootstrap_servers=cluster.bootstrap_servers, transactional_id=tid
        )
        await consumer.start()
        await producer.start()
        try:
            got = []
            deadline = time.monotonic() + 15
            while len(got) < 4 and time.monotonic() < deadline:
                batch = await consumer.getmany(timeout_ms=200)
                got.extend(m for ms in batch.values() for m in ms)
            assert len(got) == 4
            tp = TopicPartition(src, 0)
            async with producer.transaction():
                for m in got:
                    await producer.send(dst, m.value.upper(), partition=0)
                await producer.send_offsets_to_transaction({tp: got[-1].offset + 1}, group)
            assert await consumer.committed(tp) == 4
        finally:
            await consumer.stop()
            await _stop(producer)
        assert cluster.transaction(tid).history[-1].offsets == {group: {(src, 0): 4}}
        got_values = await _read(cluster, [(dst, 0)], "read_committed", expect=4)
        assert got_values == [b"M0", b"M1", b"M2", b"M3"]

    asyncio.run(asyncio.wait_for(main(), 30))


def test_second_instance_fences_the_first(
    cluster: mockkafka.Cluster, topics: tuple[str, str]
) -> None:
    a, _ = topics
    tid = unique("tx")

    async def main() -> None:
        first = AIOKafkaProducer(bootstrap_servers=cluster.bootstrap_servers, transactional_id=tid)
        second = AIOKafkaProducer(bootstrap_servers=cluster.bootstrap_servers, transactional_id=tid)
        await first.start()
        try:
            await first.begin_transaction()
            await first.send_and_wait(a, b"zombie", partition=0)
            await second.start()
            async with second.transaction():
                await second.send(a, b"winner", partition=0)
            with pytest.raises(KafkaError) as info:
                await first.commit_transaction()
            assert "Fenced" in type(info.value).__name__
        finally:
            await _stop(first)
            await _stop(second)
        assert await _read(cluster, [(a, 0)], "read_committed", expect=1) == [b"winner"]

    asyncio.run(asyncio.wait_for(main(), 30))


def test_transaction_left_open_times_out_and_is_aborted(
    cluster: mockkafka.Cluster, topics: tuple[str, str]
) -> None:
    a, _ = topics
    tid = unique("tx")

    async def main() -> None:
        p = AIOKafkaProducer(
            bootstrap_servers=cluster.bootstrap_servers,
            transactional_id=tid,
            transaction_timeout_ms=1000,
        )
        await p.start()
        try:
            await p.begin_transaction()
            await p.send_and_wait(a, b"hung", partition=1)
            view = await cluster.wait_for_transaction_async(tid, state="CompleteAbort", timeout=5)
            last = view.last
            assert last is not None and last.reason == "timeout"
            with pytest.raises(KafkaError):
                await p.commit_transaction()
        finally:
            await _stop(p)
        assert await _read(cluster, [(a, 1)], "read_committed", expect=1, timeout=0.5) == []

    asyncio.run(asyncio.wait_for(main(), 30))

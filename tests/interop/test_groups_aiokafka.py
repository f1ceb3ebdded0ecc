"""aiokafka consumer groups (classic protocol) against mockkafka; each test runs its own
asyncio loop with ``asyncio.run``."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer
from aiokafka.admin import AIOKafkaAdminClient

import mockkafka
from tests.interop._groups_helpers import (
    consumer_process,
    group_cluster,
    kill_hard,
    no_overlap_and_complete,
)
from tests.interop.conftest import unique

pytestmark = [pytest.mark.interop, pytest.mark.timeout(60)]


def consumer(cluster: mockkafka.Cluster, group: str, topic: str, **extra: Any) -> AIOKafkaConsumer:
    conf: dict[str, Any] = {
        "bootstrap_servers": cluster.bootstrap_servers,
        "group_id": group,
        "auto_offset_reset": "earliest",
        "enable_auto_commit": False,
        "session_timeout_ms": 3000,
        "heartbeat_interval_ms": 200,
        "fetch_max_wait_ms": 50,
        **extra,
    }
    return AIOKafkaConsumer(topic, **conf)


def assigned(c: AIOKafkaConsumer) -> set[tuple[str, int]]:
    return {(tp.topic, tp.partition) for tp in c.assignment()}


async def poll_until(
    consumers: list[AIOKafkaConsumer],
    cond: Callable[[], bool],
    *,
    timeout: float = 15.0,
    sink: list[bytes] | None = None,
) -> None:
    deadline = time.monotonic() + timeout
    for _ in range(int(timeout / 0.05) + 1):
        for c in consumers:
            for msgs in (await c.getmany(timeout_ms=50)).values():
                if sink is not None:
                    sink.extend(m.value for m in msgs)
        if cond():
            return
        if time.monotonic() > deadline:
            break
    raise AssertionError(f"condition not met in {timeout} s: {[assigned(c) for c in consumers]}")


@pytest.mark.parametrize("members", [2, 3])
def test_consumers_share_partitions_without_overlap(members: int) -> None:
    async def main(cluster: mockkafka.Cluster) -> None:
        topic, group = unique("t"), unique("g")
        cluster.create_topic(topic, partitions=6)
        everything = {(topic, p) for p in range(6)}
        consumers: list[AIOKafkaConsumer] = []
        try:
            for _ in range(members):
                c = consumer(cluster, group, topic)
                await c.start()
                consumers.append(c)
                await poll_until(
                    consumers,
                    lambda: no_overlap_and_complete([assigned(x) for x in consumers], everything),
                )
            assert sorted(len(assigned(c)) for c in consumers) == [6 // members] * members
            assert len(cluster.group(group).members) == members
        finally:
            for c in consumers:
                await c.stop()

    with group_cluster() as cluster:
        asyncio.run(main(cluster))


def test_leaving_member_partitions_move_to_the_others() -> None:
    async def main(cluster: mockkafka.Cluster) -> None:
        topic, group = unique("t"), unique("g")
        cluster.create_topic(topic, partitions=4)
        a = consumer(cluster, group, topic)
        b = consumer(cluster, group, topic)
        await a.start()
        await b.start()
        try:
            await poll_until([a, b], lambda: len(assigned(a)) == 2 and len(assigned(b)) == 2)
            await b.stop()
            await poll_until([a], lambda: len(assigned(a)) == 4)
            assert len(cluster.group(group).members) == 1
        finally:
            await a.stop()
            await b.stop()

    with group_cluster() as cluster:
        asyncio.run(main(cluster))


_CHILD = """
import asyncio, json, sys
from aiokafka import AIOKafkaConsumer
async def main():
    c = AIOKafkaConsumer(sys.argv[2], **json.loads(sys.argv[1]))
    await c.start()
    while True:
        await c.getmany(timeout_ms=100)
asyncio.run(main())
"""


def test_member_that_stops_heartbeating_is_expired_after_session_timeout() -> None:
    async def main(cluster: mockkafka.Cluster) -> None:
        topic, group = unique("t"), unique("g")
        cluster.create_topic(topic, partitions=4)
        a = consumer(cluster, group, topic)
        await a.start()
        try:
            await poll_until([a], lambda: len(assigned(a)) == 4)
            conf = {
                "bootstrap_servers": cluster.bootstrap_servers,
                "group_id": group,
                "session_timeout_ms": 3000,
                "heartbeat_interval_ms": 200,
            }
            with consumer_process(_CHILD, json.dumps(conf), topic) as child:
                await poll_until([a], lambda: len(assigned(a)) == 2, timeout=20)
                died = kill_hard(child)
            await poll_until([a], lambda: len(assigned(a)) == 4, timeout=20)
            assert time.monotonic() - died >= 2.0
            assert len(cluster.group(group).members) == 1
        finally:
            await a.stop()

    with group_cluster() as cluster:
        asyncio.run(main(cluster))


def test_commit_restart_resume_without_loss_or_duplicates() -> None:
    async def main(cluster: mockkafka.Cluster) -> None:
        topic, group = unique("t"), unique("g")
        cluster.create_topic(topic, partitions=3)
        for i in range(30):
            cluster.produce(topic, f"v{i:03d}".encode(), partition=i % 3)
        got: list[bytes] = []
        first = consumer(cluster, group, topic, max_poll_records=4)
        await first.start()
        try:
            await poll_until([first], lambda: len(got) >= 12, sink=got)
            await first.commit()
        finally:
            await first.stop()
        assert sum(cluster.committed_offsets(group).values()) == len(got)
        second = consumer(cluster, group, topic)
        await second.start()
        try:
            await poll_until([second], lambda: len(got) >= 30, sink=got)
            await poll_until([second], lambda: True, sink=got)
        finally:
            await second.stop()
        assert len(got) == 30 and len(set(got)) == 30

    with group_cluster() as cluster:
        asyncio.run(main(cluster))


def test_static_member_restart_does_not_rebalance() -> None:
    async def main(cluster: mockkafka.Cluster) -> None:
        topic, group = unique("t"), unique("g")
        cluster.create_topic(topic, partitions=4)
        static_conf = {"group_instance_id": "static-1", "session_timeout_ms": 10000}
        other = consumer(cluster, group, topic)
        static = consumer(cluster, group, topic, **static_conf)
        await other.start()
        await static.start()
        try:
            await poll_until(
                [other, static], lambda: len(assigned(other)) == 2 and len(assigned(static)) == 2
            )
            before = cluster.group(group)
            mine = assigned(static)
            await static.stop()
            static = consumer(cluster, group, topic, **static_conf)
            await static.start()
            await poll_until([other, static], lambda: assigned(static) == mine)
            after = cluster.group(group)
            assert (after.generation_id, after.rebalances) == (
                before.generation_id,
                before.rebalances,
            )
        finally:
            await other.stop()
            await static.stop()

    with group_cluster() as cluster:
        asyncio.run(main(cluster))


def test_admin_lists_and_describes_groups() -> None:
    async def main(cluster: mockkafka.Cluster) -> None:
        topic, group = unique("t"), unique("g")
        cluster.create_topic(topic, partitions=2)
        admin = AIOKafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
        await admin.start()
        c = consumer(cluster, group, topic)
        await c.start()
        try:
            await poll_until([c], lambda: len(assigned(c)) == 2)
            listed = await admin.list_consumer_groups()
            assert (group, "consumer") in listed
            (desc,) = await admin.describe_consumer_groups([group])
            (g,) = desc.groups
            # (error_code, group_id, group_state, protocol_type, protocol, members, ...)
            assert g[0] == 0 and g[1] == group and g[2] == "Stable" and g[3] == "consumer"
            assert len(g[5]) == 1
        finally:
            await c.stop()
            await admin.close()

    with group_cluster() as cluster:
        asyncio.run(main(cluster))

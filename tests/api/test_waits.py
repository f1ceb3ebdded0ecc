"""The waits: one primitive woken by cluster state changes, in sync, trio and asyncio code."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
import trio
from aiokafka import AIOKafkaConsumer
from confluent_kafka import Consumer, Producer

import mockkafka
from tests.interop.conftest import unique

T = 15.0


def _consumer(cluster: mockkafka.Cluster | mockkafka.AsyncCluster, group: str) -> Consumer:
    return Consumer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )


def _poll_until_assigned(c: Consumer, topic: str) -> None:
    c.subscribe([topic])
    for _ in range(300):  # at most ~30 s
        c.poll(0.1)
        if c.assignment():
            return
    raise AssertionError("the consumer was never assigned a partition")


@pytest.fixture
def cluster() -> Any:
    with mockkafka.Cluster(brokers=3) as c:
        yield c


def test_wait_for_group_returns_the_stable_view_once_a_consumer_joins(
    cluster: mockkafka.Cluster,
) -> None:
    topic, group = unique("t"), unique("g")
    cluster.create_topic(topic, partitions=2)
    c = _consumer(cluster, group)
    t = threading.Thread(target=_poll_until_assigned, args=(c, topic))
    t.start()
    try:
        view = cluster.wait_for_group(group, state="Stable", members=1, timeout=T)
    finally:
        t.join(T)
        c.close()
    assert isinstance(view, mockkafka.GroupView)
    assert view.state == "Stable" and len(view.members) == 1
    assert view.members[0].assignment == {topic: [0, 1]}


def test_wait_for_committed_and_records_see_a_client_commit(cluster: mockkafka.Cluster) -> None:
    topic, group = unique("t"), unique("g")
    cluster.create_topic(topic)
    p = Producer({"bootstrap.servers": cluster.bootstrap_servers})
    for i in range(5):
        p.produce(topic, b"v%d" % i, partition=0)
    assert p.flush(T) == 0
    records = cluster.wait_for_records(topic, partition=0, count=5, timeout=T)
    assert [r.value for r in records] == [b"v%d" % i for i in range(5)]
    c = _consumer(cluster, group)
    try:
        _poll_until_assigned(c, topic)
        for _ in range(100):
            m = c.poll(0.1)
            if m is not None and m.error() is None and m.offset() == 4:
                break
        c.commit(asynchronous=True)
        assert cluster.wait_for_committed(group, topic, 0, offset=5, timeout=T) == 5
    finally:
        c.close()


def test_wait_for_broker_and_traffic_and_rule_waits(cluster: mockkafka.Cluster) -> None:
    topic = unique("t")
    cluster.create_topic(topic, replication_factor=3)
    cluster.stop_broker(2)
    cluster.wait_for_broker(2, up=False, timeout=1)
    cluster.start_broker(2)
    cluster.wait_for_broker(2, timeout=1)
    rule = cluster.faults.on("Produce", topic=topic).once().error("NOT_LEADER_OR_FOLLOWER")
    p = Producer({"bootstrap.servers": cluster.bootstrap_servers, "retry.backoff.ms": 10})
    p.produce(topic, b"x")
    assert p.flush(T) == 0
    assert rule.wait_fired(timeout=T) == 1
    produced = cluster.traffic.wait_for("Produce", count=2, topic=topic, timeout=T)
    assert [ex.faults for ex in produced] == [[rule.name], []]


def test_wait_timeout_shows_the_last_state_seen(cluster: mockkafka.Cluster) -> None:
    topic = unique("t")
    cluster.create_topic(topic)
    cluster.produce(topic, b"one")
    with pytest.raises(mockkafka.WaitTimeout) as info:
        cluster.wait_for_records(topic, count=3, timeout=0.05)
    assert isinstance(info.value, TimeoutError) and isinstance(info.value, mockkafka.MockKafkaError)
    assert "holds at most 1 record(s)" in str(info.value) and "within 0.05 s" in str(info.value)
    with pytest.raises(mockkafka.WaitTimeout, match="the group does not exist"):
        cluster.wait_for_group("nobody", timeout=0.05)
    with pytest.raises(mockkafka.WaitTimeout, match="Produce"):
        cluster.traffic.wait_for("Produce", timeout=0.05)


def test_a_traffic_wait_on_a_cluster_nobody_talked_to_says_so_not_an_empty_timeline(
    cluster: mockkafka.Cluster,
) -> None:
    with pytest.raises(mockkafka.WaitTimeout) as info:
        cluster.traffic.wait_for("Produce", timeout=0.05)
    text = str(info.value)
    assert not text.endswith("recent traffic:\n")
    assert text.endswith(
        "last seen: 0 matching; no traffic recorded yet (no client sent a request to this "
        "cluster: does it use its bootstrap_servers?)"
    )


@pytest.mark.parametrize(
    "wait",
    [
        "kafka_cluster.traffic.wait_for('Produce', timeout=0.05)",
        "kafka_cluster.wait_for_records('t', count=1, timeout=0.05)",
        "kafka_cluster.faults.on('Produce').delay(ms=1).wait_fired(timeout=0.05)",
    ],
)
def test_a_wait_timeout_in_pytest_points_at_the_test_not_at_mockkafka_source(
    pytester: pytest.Pytester, wait: str
) -> None:
    pytester.makepyfile(
        f"""
        import pytest

        @pytest.mark.kafka_cluster(topics=["t"])
        def test_waits(kafka_cluster):
            {wait}
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "-W", "ignore")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "WaitTimeout" in out and wait in out  # the test's own line is shown
    for internal in ("waits.py", "public.py", "traffic.py", "engine.py", "def wait"):
        assert internal not in out, internal


def test_waits_refuse_bad_arguments_at_once(cluster: mockkafka.Cluster) -> None:
    with pytest.raises(mockkafka.ConfigError, match="did you mean 'Stable'"):
        cluster.wait_for_group("g", state="stable")
    with pytest.raises(mockkafka.ConfigError, match="did you mean Produce"):
        cluster.traffic.wait_for("Produc")
    with pytest.raises(mockkafka.ConfigError, match="timeout"):
        cluster.wait_for_broker(1, timeout=-1)
    with pytest.raises(mockkafka.KafkaApiError, match="no broker 9"):
        cluster.wait_for_broker(9)


def test_a_sync_wait_on_the_clusters_own_thread_says_to_await_instead(
    cluster: mockkafka.Cluster,
) -> None:
    seen: list[BaseException] = []

    def on_loop() -> None:
        try:
            cluster.wait_for_group("g", timeout=1)
        except mockkafka.MockKafkaError as exc:
            seen.append(exc)

    cluster.call(lambda _state: on_loop())
    assert seen and "await cluster.wait_for_group_async" in str(seen[0])


def test_awaitable_waits_of_the_threaded_cluster_work_under_asyncio(
    cluster: mockkafka.Cluster,
) -> None:
    topic, group = unique("t"), unique("g")
    cluster.create_topic(topic, partitions=3)

    rule = cluster.faults.on("Fetch", topic=topic).every_time().observe()

    async def main() -> tuple[mockkafka.GroupView, int, int]:
        c = AIOKafkaConsumer(topic, bootstrap_servers=cluster.bootstrap_servers, group_id=group)
        await c.start()
        try:
            waiting = asyncio.gather(
                cluster.wait_for_group_async(group, members=1, timeout=T),
                rule.wait_fired_async(2, timeout=T),
                cluster.traffic.wait_for_async("Fetch", count=2, topic=topic, timeout=T),
            )
            for _ in range(300):  # aiokafka joins in the background; keep the loop free
                if waiting.done():
                    break
                await c.getmany(timeout_ms=100)
            view, fired, fetches = await waiting
            return view, fired, len(fetches)
        finally:
            await c.stop()

    view, fired, fetches = asyncio.run(main())
    assert view.state == "Stable" and len(view.members) == 1
    assert fired >= 2 and fetches >= 2


def test_awaitable_waits_of_the_threaded_cluster_work_under_trio(
    cluster: mockkafka.Cluster,
) -> None:
    topic = unique("t")
    cluster.create_topic(topic)

    async def main() -> list[mockkafka.Record]:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(trio.to_thread.run_sync, cluster.produce, topic, b"late")
            return await cluster.wait_for_records_async(topic, count=1, timeout=T)

    assert [r.value for r in trio.run(main)] == [b"late"]


@pytest.mark.trio
async def test_trio_cluster_waits_see_a_consumer_joining_from_a_thread() -> None:
    # The waits are coroutines here: they must not block the loop that serves the cluster.
    async with mockkafka.open_cluster(brokers=1) as cluster:
        topic, group = unique("t"), unique("g")
        cluster.create_topic(topic)
        c = _consumer(cluster, group)
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(trio.to_thread.run_sync, _poll_until_assigned, c, topic)
                view = await cluster.wait_for_group(group, members=1, timeout=T)
        finally:
            await trio.to_thread.run_sync(c.close)
        assert view.state == "Stable"
        rule = cluster.faults.on("Metadata").observe()
        with pytest.raises(mockkafka.MockKafkaError, match=r"await rule\.wait_fired_async"):
            rule.wait_fired(timeout=1)
        cluster.faults.clear()


def test_threaded_cluster_verbs_work_from_trio_and_asyncio_code(
    cluster: mockkafka.Cluster,
) -> None:
    # Verbs block the caller's own loop briefly; they must not refuse to run there.
    topic = unique("t")

    async def in_trio() -> None:
        cluster.create_topic(topic, partitions=2)
        cluster.stop_broker(3)
        cluster.start_broker(3)  # waits for the network on the cluster's loop
        cluster.produce(topic, b"from trio")

    async def in_asyncio() -> list[mockkafka.Record]:
        cluster.produce(topic, b"from asyncio", partition=1)
        return await cluster.wait_for_records_async(topic, count=2, timeout=T)

    trio.run(in_trio)
    assert [r.value for r in asyncio.run(in_asyncio())] == [b"from trio", b"from asyncio"]
    with pytest.raises(mockkafka.KafkaApiError, match="TOPIC_ALREADY_EXISTS"):
        trio.run(lambda: _create_async(cluster, topic))


async def _create_async(cluster: mockkafka.Cluster, topic: str) -> None:
    cluster.create_topic(topic)

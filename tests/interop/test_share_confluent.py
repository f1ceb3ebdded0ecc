"""confluent-kafka's ShareConsumer (librdkafka's KIP-932 share consumer, which speaks the GA
share APIs: ShareGroupHeartbeat v1, ShareFetch/ShareAcknowledge v1+) against mockkafka.

Two share consumers of one group split a topic's records; explicit acknowledgement RELEASEs
one record (delivered again, delivery count 2) and REJECTs another (never again); a consumer
whose connections are cut by a fault rule rides it out; and a consumer process killed
without acknowledging gives its records back at once, because its share sessions die with
its connections (Kafka 4.1+), not after the 30 s acquisition lock.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

import mockkafka
from tests.interop.conftest import unique

ck = pytest.importorskip("confluent_kafka")
if not hasattr(ck, "ShareConsumer"):  # pragma: no cover - confluent-kafka < 2.16
    pytest.skip(
        f"confluent-kafka {ck.version()[0]} has no ShareConsumer (2.16+)", allow_module_level=True
    )

pytestmark = [pytest.mark.interop]

DEADLINE_S = 30.0


def _consumer(cluster: mockkafka.Cluster, group: str, **extra: Any) -> Any:
    return ck.ShareConsumer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "group.id": group,
            "share.acknowledgement.mode": "explicit",
            "client.id": "share-confluent",
            **extra,
        }
    )


@pytest.fixture
def share_cluster() -> Iterator[mockkafka.Cluster]:
    with mockkafka.Cluster(brokers=3) as c:
        yield c


def _setup(cluster: mockkafka.Cluster, partitions: int = 2) -> tuple[str, str]:
    topic, group = unique("sh"), unique("shg")
    cluster.create_topic(topic, partitions=partitions, replication_factor=3)
    cluster.set_group_config(group, {"share.auto.offset.reset": "earliest"})
    return topic, group


def _poll_all(
    consumers: list[Any], until: Any, on_message: Any, *, timeout: float = DEADLINE_S
) -> None:
    """Poll every consumer in turn until ``until()`` holds (fails after ``timeout``)."""
    deadline = time.monotonic() + timeout
    while not until():
        assert time.monotonic() < deadline, "share consumers did not get there in time"
        for i, c in enumerate(consumers):
            for m in c.poll(0.2) or []:
                assert m.error() is None, m.error()
                on_message(i, c, m)
            c.commit_async()


def test_two_share_consumers_split_release_and_reject(share_cluster: mockkafka.Cluster) -> None:
    cluster = share_cluster
    topic, group = _setup(cluster)
    n = 40
    for i in range(n):
        cluster.produce(topic, f"v{i}", partition=i % 2)
    cluster.produce(topic, "release-me", partition=0)
    cluster.produce(topic, "reject-me", partition=1)
    consumers = [_consumer(cluster, group), _consumer(cluster, group)]
    seen: list[list[str]] = [[], []]
    deliveries: dict[str, int] = {}
    try:
        for c in consumers:
            c.subscribe([topic])

        def on_message(i: int, c: Any, m: Any) -> None:
            value = m.value().decode()
            deliveries[value] = deliveries.get(value, 0) + 1
            seen[i].append(value)
            if value == "release-me" and deliveries[value] == 1:
                c.acknowledge(m, ck.AcknowledgeType.RELEASE)
            elif value == "reject-me":
                c.acknowledge(m, ck.AcknowledgeType.REJECT)
            else:
                c.acknowledge(m)

        wanted = {f"v{i}" for i in range(n)} | {"release-me", "reject-me"}
        _poll_all(
            consumers,
            lambda: set(deliveries) == wanted and deliveries["release-me"] == 2,
            on_message,
        )
        for c in consumers:
            c.commit_sync(10)
    finally:
        for c in consumers:
            c.close()
    assert all(deliveries[f"v{i}"] == 1 for i in range(n))
    assert deliveries["reject-me"] == 1  # rejected: archived, never delivered again
    view = cluster.share_group(group)
    for p in (0, 1):
        sp = view.partition(topic, p)
        assert sp.start_offset == n // 2 + 1 and sp.records == {}  # every record done
    assert {e.version for e in cluster.traffic.requests("ShareGroupHeartbeat", group=group)} == {1}
    assert min(e.version for e in cluster.traffic.requests("ShareFetch", group=group)) >= 1


def test_a_share_consumer_rides_out_dropped_connections(share_cluster: mockkafka.Cluster) -> None:
    cluster = share_cluster
    topic, group = _setup(cluster, partitions=1)
    cut = cluster.faults.on("ShareFetch", group=group).nth(1).drop_connection()
    consumer = _consumer(cluster, group)
    got: list[str] = []
    try:
        consumer.subscribe([topic])
        cluster.wait_for_share_group(group, members=1, timeout=20)
        for i in range(30):
            cluster.produce(topic, f"v{i}")

        def on_message(_i: int, c: Any, m: Any) -> None:
            got.append(m.value().decode())
            c.acknowledge(m)

        _poll_all([consumer], lambda: set(got) >= {f"v{i}" for i in range(30)}, on_message)
        consumer.commit_sync(10)
    finally:
        consumer.close()
    assert cut.fired == 1
    assert cluster.share_group(group).partition(topic, 0).start_offset == 30


def test_a_share_consumer_follows_a_moved_coordinator_and_expired_locks(
    share_cluster: mockkafka.Cluster,
) -> None:
    cluster = share_cluster
    topic, group = _setup(cluster, partitions=1)
    for i in range(3):
        cluster.produce(topic, f"v{i}")
    consumer = _consumer(cluster, group)
    held: list[Any] = []
    redelivered: list[tuple[str, int]] = []
    try:
        consumer.subscribe([topic])
        _poll_all([consumer], lambda: len(held) == 3, lambda _i, _c, m: held.append(m))
        old = cluster.coordinator(group=group)
        cluster.move_coordinator(group=group, to=3 if old != 3 else 2)
        # the locks run out before the consumer acknowledges: its ACCEPTs come too late
        assert cluster.expire_acquisition_locks(group, topic=topic) == 3
        for m in held:
            consumer.acknowledge(m)
        with contextlib.suppress(ck.KafkaException):
            consumer.commit_sync(10)

        def on_message(_i: int, c: Any, m: Any) -> None:
            redelivered.append((m.value().decode(), m.delivery_count()))
            c.acknowledge(m)

        _poll_all([consumer], lambda: len(redelivered) == 3, on_message)
        consumer.commit_sync(10)
        view = cluster.wait_for_share_group(group, members=1, timeout=20)
    finally:
        consumer.close()
    assert sorted(redelivered) == [("v0", 2), ("v1", 2), ("v2", 2)]
    assert view.members[0].member_epoch >= 1
    assert cluster.share_group(group).partition(topic, 0).start_offset == 3
    # the old coordinator refused the heartbeat; the client found the new one
    assert cluster.traffic.requests("ShareGroupHeartbeat", with_error="NOT_COORDINATOR")


# A share consumer in its own process: acquires every record it can, prints how many, then
# hangs without acknowledging (until the test kills it).
_HOLDER = """
import sys, time
import confluent_kafka as ck
c = ck.ShareConsumer({"bootstrap.servers": sys.argv[1], "group.id": sys.argv[2],
                      "share.acknowledgement.mode": "explicit"})
c.subscribe([sys.argv[3]])
held, deadline = 0, time.monotonic() + 30
while held < int(sys.argv[4]) and time.monotonic() < deadline:
    held += len(c.poll(0.2) or [])
print(held, flush=True)
time.sleep(120)
"""


def test_a_killed_share_consumer_gives_its_records_back_at_once(
    share_cluster: mockkafka.Cluster,
) -> None:
    cluster = share_cluster
    topic, group = _setup(cluster, partitions=1)
    for i in range(5):
        cluster.produce(topic, f"v{i}")
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, cluster.bootstrap_servers, group, topic, "5"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "5"
        assert cluster.share_group(group).partition(topic, 0).offsets("Acquired") == list(range(5))
    finally:
        holder.kill()  # its sockets close with it; it never acknowledged
        holder.wait(10)
    start = time.monotonic()
    cluster.wait_for_share_group(
        group,
        state=None,
        where=lambda v: v.partition(topic, 0).offsets("Available") == list(range(5)),
        timeout=10,
    )
    assert time.monotonic() - start < 10  # not after the 30 s acquisition lock
    second = _consumer(cluster, group)
    again: list[tuple[str, int]] = []
    try:
        second.subscribe([topic])

        def on_message(_i: int, c: Any, m: Any) -> None:
            again.append((m.value().decode(), m.offset()))
            c.acknowledge(m)

        _poll_all([second], lambda: len(again) == 5, on_message)
        second.commit_sync(10)
    finally:
        second.close()
    assert sorted(again) == [(f"v{i}", i) for i in range(5)]
    assert [cluster.share_group(group).partition(topic, 0).delivery_count(i) for i in range(5)] == [
        0
    ] * 5  # all done

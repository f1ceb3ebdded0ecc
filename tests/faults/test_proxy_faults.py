"""The proxy applies fault actions through the broker's own phases (``server/faults.py``),
so every action works on proxied traffic -- here with a mockkafka cluster as the upstream
(the oracle tier runs the same proxy in front of Apache Kafka: tests/oracle/test_proxy.py).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

import mockkafka

ck = pytest.importorskip("confluent_kafka")

pytestmark = [pytest.mark.interop, pytest.mark.timeout(60)]


@pytest.fixture
def upstream() -> Iterator[mockkafka.Cluster]:
    with mockkafka.Cluster() as cluster:
        cluster.create_topic("orders", partitions=2)
        yield cluster


@pytest.fixture
def proxy(upstream: mockkafka.Cluster) -> Iterator[mockkafka.Proxy]:
    with mockkafka.Proxy(upstream=upstream.bootstrap_servers) as p:
        yield p


def produce(bootstrap: str, n: int, **config: Any) -> None:
    p = ck.Producer({"bootstrap.servers": bootstrap, "retry.backoff.ms": 10, **config})
    for i in range(n):
        p.produce("orders", b"v%d" % i, partition=i % 2)
    assert p.flush(20) == 0


def consumer(bootstrap: str) -> Any:
    c = ck.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "g",
            "auto.offset.reset": "earliest",
            "fetch.wait.max.ms": 50,
            "check.crcs": True,
        }
    )
    c.subscribe(["orders"])
    return c


def consume(bootstrap: str, n: int) -> list[bytes]:
    c = consumer(bootstrap)
    got: list[bytes] = []
    try:
        deadline = time.monotonic() + 20
        while len(got) < n and time.monotonic() < deadline:
            msg = c.poll(0.2)
            if msg is not None and msg.error() is None:
                got.append(msg.value())
    finally:
        c.close()
    return got


def test_partition_error_on_produce_keeps_the_partition_from_upstream(
    proxy: mockkafka.Proxy, upstream: mockkafka.Cluster
) -> None:
    rule = (
        proxy.faults.on("Produce", topic="orders", partition=0)
        .times(2)
        .error("NOT_LEADER_OR_FOLLOWER")
    )
    produce(proxy.bootstrap_servers, 10)
    assert rule.fired == 2
    assert len(proxy.traffic.requests("Produce", with_error="NOT_LEADER_OR_FOLLOWER")) == 2
    held = [r.value for p in (0, 1) for r in upstream.topic("orders").partition(p).records()]
    assert sorted(held) == sorted(b"v%d" % i for i in range(10))  # each once


def test_corrupt_batch_now_works_through_the_proxy(proxy: mockkafka.Proxy) -> None:
    produce(proxy.bootstrap_servers, 4)
    rule = proxy.faults.on("Fetch", topic="orders").once().corrupt_batch()
    c = consumer(proxy.bootstrap_servers)
    errors: list[Any] = []
    try:
        deadline = time.monotonic() + 20
        while rule.fired < 1 and time.monotonic() < deadline:
            msg = c.poll(0.2)
            if msg is not None and msg.error() is not None:
                errors.append(msg.error())
        deadline = time.monotonic() + 5
        while not errors and time.monotonic() < deadline:
            msg = c.poll(0.2)
            if msg is not None and msg.error() is not None:
                errors.append(msg.error())
    finally:
        c.close()
    assert rule.fired == 1
    assert len(proxy.traffic.requests("Fetch", fault=rule)) == 1
    assert errors, "the client should report the corrupt batch"


@pytest.mark.parametrize("fault", ["throttle", "delay", "drop_connection", "request_error"])
def test_connection_and_answer_faults_fire_once_per_carrying_exchange(
    proxy: mockkafka.Proxy, fault: str
) -> None:
    on = proxy.faults.on("Produce", topic="orders").times(2)
    if fault == "throttle":
        rule = on.throttle(ms=100)
    elif fault == "delay":
        rule = on.delay(ms=50)
    elif fault == "drop_connection":
        rule = on.drop_connection()
    else:
        rule = on.error("NOT_LEADER_OR_FOLLOWER", level="request")
    produce(proxy.bootstrap_servers, 6)
    assert rule.fired == 2
    assert len(proxy.traffic.requests("Produce", fault=rule)) == 2
    if fault == "throttle":
        throttled = proxy.traffic.requests("Produce", fault=rule)
        assert all(ex.response["throttle_time_ms"] == 100 for ex in throttled)


def test_fetch_partition_error_through_the_proxy_is_counted_as_seen(
    proxy: mockkafka.Proxy,
) -> None:
    produce(proxy.bootstrap_servers, 4)
    rule = (
        proxy.faults.on("Fetch", topic="orders", partition=0)
        .times(2)
        .error("NOT_LEADER_OR_FOLLOWER")
    )
    assert sorted(consume(proxy.bootstrap_servers, 4)) == [b"v0", b"v1", b"v2", b"v3"]
    assert rule.fired == 2
    assert len(proxy.traffic.requests("Fetch", with_error="NOT_LEADER_OR_FOLLOWER")) == 2

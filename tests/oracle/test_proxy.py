"""``mockkafka.Proxy`` in front of a real Apache Kafka 4.4 broker (the oracle tier's).

Clients talk only to the proxy (every broker address Kafka hands out is rewritten); fault
rules fire on the relayed traffic; what the client was told was written is read back
*directly* from Kafka, so the tests see what really reached the broker.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

import mockkafka
from mockkafka.kafka_broker import KafkaBroker
from mockkafka.server.proxy import UpstreamUnavailable
from tests.interop.conftest import unique

pytestmark = [pytest.mark.kafka_oracle, pytest.mark.interop, pytest.mark.timeout(120)]


@pytest.fixture
def proxy(kafka: KafkaBroker) -> Iterator[mockkafka.Proxy]:
    with mockkafka.Proxy(upstream=kafka.bootstrap_servers) as p:
        yield p


def create_topic(bootstrap: str, name: str, partitions: int = 3) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(name, partitions, 1)]).values():
        f.result(30)


def read_directly(kafka: KafkaBroker, topic: str, expect: int) -> list[bytes]:
    """Every value of ``topic``, read from Kafka itself (not through the proxy)."""
    consumer = Consumer(
        {
            "bootstrap.servers": kafka.bootstrap_servers,
            "group.id": unique("direct"),
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe([topic])
    got: list[bytes] = []
    deadline = time.monotonic() + 30
    try:
        while time.monotonic() < deadline and len(got) < expect:
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                got.append(msg.value())
        # A little longer: anything beyond ``expect`` is a duplicate the test must see.
        end = time.monotonic() + 1.0
        while time.monotonic() < end:
            msg = consumer.poll(0.2)
            if msg is not None and msg.error() is None:
                got.append(msg.value())
    finally:
        consumer.close()
    return got


def produce_through(proxy: mockkafka.Proxy, topic: str, n: int, **config: Any) -> list[bytes]:
    """Produce ``n`` records through the proxy; the values Kafka acknowledged."""
    acked: list[bytes] = []

    def on_delivery(err: Any, msg: Any) -> None:
        if err is None:
            acked.append(msg.value())

    producer = Producer(
        {"bootstrap.servers": proxy.bootstrap_servers, "retry.backoff.ms": 10, **config}
    )
    for i in range(n):
        producer.produce(topic, f"{topic}-{i}".encode(), on_delivery=on_delivery)
    assert producer.flush(30) == 0
    return acked


def test_clients_only_ever_see_the_proxy(proxy: mockkafka.Proxy, kafka: KafkaBroker) -> None:
    topic = unique("px")
    create_topic(proxy.bootstrap_servers, topic)
    produce_through(proxy, topic, 5)
    proxy_port = int(proxy.bootstrap_servers.rsplit(":", 1)[1])
    answered = [ex for ex in proxy.traffic.requests("Metadata") if ex.answered]
    assert answered
    for ex in answered:
        response = ex.response
        assert response is not None
        assert [(b["host"], b["port"]) for b in response["brokers"]] == [("127.0.0.1", proxy_port)]
    assert kafka.port != proxy_port
    assert proxy.brokers == {1: ("127.0.0.1", kafka.port)} or len(proxy.brokers) == 1
    assert "<Proxy upstream" in repr(proxy)


def test_idempotent_producer_rides_out_errors_and_kafka_holds_each_record_once(
    proxy: mockkafka.Proxy, kafka: KafkaBroker
) -> None:
    topic = unique("pxi")
    create_topic(proxy.bootstrap_servers, topic)
    rule = proxy.faults.on("Produce", topic=topic).times(2).error("NOT_LEADER_OR_FOLLOWER")
    acked = produce_through(proxy, topic, 50, **{"enable.idempotence": True, "linger.ms": 5})
    assert rule.fired == 2
    assert len(proxy.traffic.requests("Produce", with_error="NOT_LEADER_OR_FOLLOWER")) == 2
    stored = read_directly(kafka, topic, len(acked))
    assert sorted(stored) == sorted(acked) and len(acked) == 50


def test_a_partition_error_keeps_that_partition_from_reaching_kafka(
    proxy: mockkafka.Proxy, kafka: KafkaBroker
) -> None:
    topic = unique("pxp")
    create_topic(proxy.bootstrap_servers, topic, partitions=2)
    rule = (
        proxy.faults.on("Produce", topic=topic, partition=0).once().error("NOT_LEADER_OR_FOLLOWER")
    )
    producer = Producer({"bootstrap.servers": proxy.bootstrap_servers, "linger.ms": 50})
    producer.produce(topic, b"p0", partition=0)
    producer.produce(topic, b"p1", partition=1)
    assert producer.flush(30) == 0
    assert rule.fired == 1
    # The first Produce carried both partitions: partition 1 was written once, partition 0
    # was kept back by the proxy, answered with the error, and written by the retry.
    assert sorted(read_directly(kafka, topic, 2)) == [b"p0", b"p1"]


def test_a_request_level_error_is_answered_by_the_proxy(
    proxy: mockkafka.Proxy, kafka: KafkaBroker
) -> None:
    topic = unique("pxc")
    rule = proxy.faults.on("CreateTopics").once().error("POLICY_VIOLATION")
    admin = AdminClient({"bootstrap.servers": proxy.bootstrap_servers})
    with pytest.raises(Exception, match="POLICY_VIOLATION"):
        admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    assert rule.fired == 1
    direct = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})
    assert topic not in direct.list_topics(timeout=10).topics


def test_consumer_group_reads_everything_through_dropped_connections_and_fetch_errors(
    proxy: mockkafka.Proxy,
) -> None:
    topic, group = unique("pxg"), unique("pxgg")
    create_topic(proxy.bootstrap_servers, topic)
    acked = produce_through(proxy, topic, 30)
    fetch = proxy.faults.on("Fetch", topic=topic).once().error("NOT_LEADER_OR_FOLLOWER")
    drop = proxy.faults.on("OffsetCommit").once().drop_connection(after_processing=True)
    slow = proxy.faults.on("Fetch").times(3).delay(ms=50)
    consumer = Consumer(
        {
            "bootstrap.servers": proxy.bootstrap_servers,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe([topic])
    got: list[bytes] = []
    deadline = time.monotonic() + 40
    try:
        while len(got) < len(acked) and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                got.append(msg.value())
                consumer.commit(msg, asynchronous=True)
    finally:
        consumer.close()
    assert sorted(set(got)) == sorted(acked)
    assert (fetch.fired, drop.fired, slow.fired) == (1, 1, 3)


def test_nothing_acknowledged_is_lost_under_a_mixed_fault_plan(
    proxy: mockkafka.Proxy, kafka: KafkaBroker
) -> None:
    topic = unique("pxn")
    create_topic(proxy.bootstrap_servers, topic)
    proxy.faults.on("Produce", topic=topic).nth(2).drop_connection(after_processing=True)
    proxy.faults.on("Produce", topic=topic).nth(4).error("NOT_ENOUGH_REPLICAS")
    proxy.faults.on("Produce", topic=topic).nth(5).delay(ms=200)
    proxy.faults.on("Metadata").nth(2).throttle(ms=20)
    acked = produce_through(
        proxy, topic, 200, **{"enable.idempotence": True, "linger.ms": 2, "batch.size": 2000}
    )
    stored = read_directly(kafka, topic, len(acked))
    assert len(acked) == 200
    assert sorted(stored) == sorted(acked)  # exactly once, though a response was lost


def test_proxy_refuses_an_upstream_it_cannot_reach() -> None:
    with pytest.raises(mockkafka.ConfigError, match="HOST:PORT"):
        mockkafka.Proxy(upstream="no-port-here")
    proxy = mockkafka.Proxy(upstream="127.0.0.1:1")
    with pytest.raises(UpstreamUnavailable, match=r"127\.0\.0\.1:1"):
        proxy.start()


def test_the_proxy_command_prints_bootstrap_servers_and_relays(kafka: KafkaBroker) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "mockkafka.cli", "proxy", "--upstream", kafka.bootstrap_servers],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("bootstrap.servers=127.0.0.1:"), line
        bootstrap = line.split("=", 1)[1]
        control = proc.stdout.readline().strip()
        assert control.startswith("control=http://127.0.0.1:"), control
        topic = unique("pxcli")
        create_topic(bootstrap, topic, partitions=1)
        producer = Producer({"bootstrap.servers": bootstrap})
        producer.produce(topic, b"via the command")
        assert producer.flush(30) == 0
        assert read_directly_values(kafka, topic) == [b"via the command"]
    finally:
        proc.terminate()
        proc.wait(10)


def read_directly_values(kafka: KafkaBroker, topic: str) -> list[bytes]:
    return read_directly(kafka, topic, 1)


def test_the_proxy_command_reports_a_bad_upstream_in_one_line() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mockkafka.cli", "proxy", "--upstream", "127.0.0.1:1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "mockkafka proxy:" in result.stderr and "127.0.0.1:1" in result.stderr
    assert "Traceback" not in result.stderr


def test_open_proxy_runs_on_the_callers_trio_loop(kafka: KafkaBroker) -> None:
    import trio

    from mockkafka.protocol.framing import NEED_DATA, ClientConnection, Response

    async def main() -> tuple[int, int, int]:
        async with mockkafka.open_proxy(kafka.bootstrap_servers) as proxy:
            rule = proxy.faults.on("ApiVersions").once().delay(ms=5)
            host, port = proxy.bootstrap_servers.rsplit(":", 1)
            conn = ClientConnection(client_id="trio-test")
            async with await trio.open_tcp_stream(host, int(port)) as stream:
                body = {"client_software_name": "trio-test", "client_software_version": "1.0"}
                await stream.send_all(conn.send_request("ApiVersions", 3, body))
                while (ev := conn.next_event()) is NEED_DATA:
                    conn.receive_data(await stream.receive_some())
            assert isinstance(ev, Response)
            await proxy.traffic.wait_for_async("ApiVersions", timeout=5)
            return ev.body["error_code"], rule.fired, len(proxy.traffic.requests("ApiVersions"))

    assert trio.run(main) == (0, 1, 1)

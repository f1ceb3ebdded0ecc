"""Release presets: a cluster that advertises exactly what one Kafka release advertises."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer

import mockkafka
from mockkafka.protocol.releases import release_api_versions
from tests.cli.test_serve import serving


@pytest.mark.parametrize(
    ("release", "inferred"),
    [("0.10.2", (0, 10, 2)), ("1.1", (1, 1)), ("2.8", (2, 8)), ("3.9", (3, 9)), ("4.0", (4, 0))],
)
def test_kafka_python_infers_the_preset_release(release: str, inferred: tuple[int, ...]) -> None:
    with mockkafka.Cluster(kafka_version=release) as cluster:
        admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
        try:
            assert admin._manager.broker_version == inferred
        finally:
            admin.close()


@pytest.mark.parametrize("release", ["0.9", "0.11", "3.9"])
def test_kafka_python_produces_and_consumes_against_an_old_release(release: str) -> None:
    # Before 0.10 brokers had no ApiVersions: clients are told the release, as in production.
    pinned = {"api_version": (0, 9)} if release == "0.9" else {}
    with mockkafka.Cluster(kafka_version=release) as cluster:
        cluster.create_topic("t")
        p = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, **pinned)
        for i in range(5):
            p.send("t", b"m%d" % i)
        p.flush(10)
        p.close()
        c = KafkaConsumer(
            bootstrap_servers=cluster.bootstrap_servers,
            auto_offset_reset="earliest",
            consumer_timeout_ms=5000,
            **pinned,
        )
        c.assign([__import__("kafka").TopicPartition("t", 0)])
        got = [m.value for m in c]
        c.close()
        assert got == [b"m%d" % i for i in range(5)]
        advertised = release_api_versions(cluster.state.config.kafka_version or "")
        for r in cluster.traffic.requests():
            assert r.api_key in advertised, r.api
            if r.api == "ApiVersions" and r.version > advertised[r.api_key][1]:
                # Clients open with their newest ApiVersions; an older broker says so.
                assert r.response is not None and r.response["error_code"] == 35
                continue
            lo, hi = advertised[r.api_key]
            assert lo <= r.version <= hi, (r.api, r.version)


def test_pre_0_10_preset_closes_the_connection_on_api_versions() -> None:
    import socket

    from mockkafka.protocol.framing import ClientConnection

    with mockkafka.Cluster(kafka_version="0.9") as cluster:
        b = cluster.brokers[0]
        with socket.create_connection((b.host, b.port), timeout=5) as sock:
            sock.sendall(ClientConnection().send_request("ApiVersions", 0, {}))
            assert sock.recv(100) == b""  # closed, as a 0.9 broker does


def test_librdkafka_negotiates_the_preset_versions() -> None:
    with mockkafka.Cluster(kafka_version="2.0") as cluster:
        cluster.create_topic("t")
        p = Producer({"bootstrap.servers": cluster.bootstrap_servers})
        p.produce("t", b"x")
        assert p.flush(10) == 0
        c = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": "g"})
        try:
            c.assign([TopicPartition("t", 0, 0)])
            deadline = time.monotonic() + 10
            m = None
            while m is None and time.monotonic() < deadline:
                m = c.poll(0.2)
            assert m is not None and m.value() == b"x"
        finally:
            c.close()
        produce = cluster.traffic.requests(api="Produce")
        fetch = cluster.traffic.requests(api="Fetch")
        assert max(r.version for r in produce) == 6  # Kafka 2.0 serves Produce v0-6
        assert max(r.version for r in fetch) == 8  # and Fetch v0-8


def test_unknown_release_is_refused_with_a_did_you_mean() -> None:
    with pytest.raises(mockkafka.ConfigError, match="did you mean"):
        mockkafka.Cluster(kafka_version="3.10")


def test_serve_kafka_version_flag() -> None:
    with serving("--kafka-version", "2.8") as (_proc, bootstrap):
        admin = KafkaAdminClient(bootstrap_servers=bootstrap)
        try:
            assert admin._manager.broker_version == (2, 8)
        finally:
            admin.close()


@pytest.mark.timeout(60)
def test_marker_and_ini_option_select_the_release(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nkafka_kafka_version = 3.9\n")
    pytester.makepyfile(
        """
        import pytest

        def test_ini(kafka_cluster):
            assert kafka_cluster.state.config.kafka_version == "3.9"

        @pytest.mark.kafka_cluster(kafka_version="1.0")
        def test_marker(kafka_cluster):
            assert kafka_cluster.state.config.kafka_version == "1.0"
        """
    )
    pytester.runpytest().assert_outcomes(passed=2)

"""KIP-714 client telemetry: off by default (as on a default Kafka broker), one option away."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Producer

import mockkafka

TELEMETRY_KEYS = {71, 72}  # GetTelemetrySubscriptions, PushTelemetry


def _produce_one(cluster: mockkafka.Cluster) -> Producer:
    cluster.create_topic("t")
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers})
    producer.produce("t", b"v")
    assert producer.flush(10) == 0
    return producer


def _advertised(cluster: mockkafka.Cluster) -> set[int]:
    [ex] = cluster.traffic.requests("ApiVersions")[:1]
    assert ex.response is not None
    return {k["api_key"] for k in ex.response["api_keys"]}


def test_librdkafka_logs_no_telemetry_line_against_a_default_cluster(
    capfd: pytest.CaptureFixture[str],
) -> None:
    with mockkafka.Cluster() as cluster:
        _produce_one(cluster)
        assert not _advertised(cluster) & TELEMETRY_KEYS
        assert cluster.traffic.requests("GetTelemetrySubscriptions") == []
    err = capfd.readouterr().err
    assert "Telemetry" not in err and "GETSUBSCRIPTIONS" not in err


def test_telemetry_option_advertises_and_serves_the_telemetry_apis(
    capfd: pytest.CaptureFixture[str],
) -> None:
    with mockkafka.Cluster(telemetry=True) as cluster:
        producer = _produce_one(cluster)
        assert _advertised(cluster) >= TELEMETRY_KEYS
        [ex] = cluster.traffic.wait_for("GetTelemetrySubscriptions", answered=True)[:1]
        assert ex.response is not None and ex.response["error_code"] == 0
        del producer
    # librdkafka says so on stderr (the line a default cluster no longer causes).
    seen = ""
    deadline = time.monotonic() + 5
    while "Telemetry" not in seen and time.monotonic() < deadline:
        seen += capfd.readouterr().err
        time.sleep(0.05)
    assert "Telemetry client instance id" in seen

"""``Proxy.stop_broker`` / ``start_broker``: the proxy's emulation of a stopped broker, with
a fake ``mockkafka.Cluster`` as the upstream (no Java needed; against three real Kafka nodes:
tests/oracle/test_proxy_three_brokers.py)."""

from __future__ import annotations

import socket

import pytest

import mockkafka
from mockkafka.kafka_broker import request_to


def listener(proxy: mockkafka.Proxy, broker: int) -> int:
    ports = [int(a.rsplit(":", 1)[1]) for a in proxy.bootstrap_servers.split(",")]
    return ports[sorted(proxy.brokers).index(broker)]


def api_versions(port: int) -> int:
    answer = request_to("127.0.0.1", port, "ApiVersions", 0, {}, timeout=5)
    code: int = answer["error_code"]
    return code


def test_a_stopped_broker_drops_open_connections_and_refuses_new_ones() -> None:
    with (
        mockkafka.Cluster(brokers=3) as upstream,
        mockkafka.Proxy(upstream=upstream.bootstrap_servers) as proxy,
    ):
        port = listener(proxy, 2)
        assert api_versions(port) == 0
        with socket.create_connection(("127.0.0.1", port), timeout=5) as open_conn:
            proxy.traffic.wait_for("ApiVersions", timeout=5)
            proxy.stop_broker(2)
            assert open_conn.recv(1) == b""  # dropped
        with pytest.raises(OSError):
            api_versions(port)  # closed at once
        assert api_versions(listener(proxy, 1)) == 0  # the others relay
        proxy.start_broker(2)
        assert api_versions(port) == 0
        with pytest.raises(mockkafka.KafkaApiError, match=r"no broker 9; it has \[1, 2, 3\]"):
            proxy.stop_broker(9)

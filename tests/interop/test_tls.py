"""TLS listeners with every Python client: a throwaway CA per cluster, client settings from
``cluster.client_config(...)``, optional client certificates (``ssl_client_auth``).

Each test produces and consumes a few records over TLS with one client, using nothing but
the settings the cluster hands out; a client that does not trust the CA, or lacks the
certificate a ``required`` cluster asks for, is refused and the broker keeps serving.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import Iterator

import pytest

import mockkafka
from mockkafka.protocol.framing import ClientConnection
from tests.interop.conftest import unique

pytest.importorskip("trustme")

pytestmark = [pytest.mark.interop, pytest.mark.timeout(60)]

VALUES = [f"tls-{i}".encode() for i in range(5)]


@pytest.fixture(params=["none", "required"])
def tls_cluster(request: pytest.FixtureRequest) -> Iterator[mockkafka.Cluster]:
    with mockkafka.Cluster(brokers=2, security_protocol="SSL", ssl_client_auth=request.param) as c:
        yield c


def _values(cluster: mockkafka.Cluster, topic: str) -> list[bytes]:
    return [r.value for r in cluster.topic(topic).records() if r.value is not None]


def test_confluent_over_tls(tls_cluster: mockkafka.Cluster) -> None:
    from confluent_kafka import Consumer, Producer

    topic = unique()
    tls_cluster.create_topic(topic)
    p = Producer(tls_cluster.client_config("confluent"))
    for v in VALUES:
        p.produce(topic, v)
    assert p.flush(20) == 0
    assert _values(tls_cluster, topic) == VALUES
    c = Consumer(
        {
            **tls_cluster.client_config("confluent"),
            "group.id": unique("g"),
            "auto.offset.reset": "earliest",
        }
    )
    c.subscribe([topic])
    got: list[bytes] = []
    for _ in range(100):
        m = c.poll(0.2)
        if m is not None and m.error() is None:
            got.append(m.value())
        if len(got) == len(VALUES):
            break
    c.close()
    assert got == VALUES


def test_kafka_python_over_tls(tls_cluster: mockkafka.Cluster) -> None:
    from kafka import KafkaConsumer, KafkaProducer

    topic = unique()
    tls_cluster.create_topic(topic)
    p = KafkaProducer(**tls_cluster.client_config("kafka-python"))
    for v in VALUES:
        p.send(topic, v).get(timeout=20)
    p.close(5)
    c = KafkaConsumer(
        topic,
        **tls_cluster.client_config("kafka-python"),
        auto_offset_reset="earliest",
        consumer_timeout_ms=5000,
    )
    got = [m.value for _, m in zip(range(len(VALUES)), c, strict=False)]
    c.close()
    assert got == VALUES


def test_aiokafka_over_tls(tls_cluster: mockkafka.Cluster) -> None:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

    topic = unique()
    tls_cluster.create_topic(topic)

    async def main() -> list[bytes]:
        p = AIOKafkaProducer(**tls_cluster.client_config("aiokafka"))
        await p.start()
        try:
            for v in VALUES:
                await p.send_and_wait(topic, v)
        finally:
            await p.stop()
        c = AIOKafkaConsumer(
            topic, **tls_cluster.client_config("aiokafka"), auto_offset_reset="earliest"
        )
        await c.start()
        got: list[bytes] = []
        try:
            for _ in range(50):
                batches = await c.getmany(timeout_ms=200)
                got += [r.value for rs in batches.values() for r in rs]
                if len(got) >= len(VALUES):
                    break
        finally:
            await c.stop()
        return got

    assert asyncio.run(main()) == VALUES


def _refused(cluster: mockkafka.Cluster, ctx: ssl.SSLContext) -> bool:
    """Whether the broker refuses a TLS client using ``ctx``: a handshake error, or the
    connection closed at the first read (TLS 1.3 reports a refused client certificate only
    then) instead of an answer to ApiVersions."""
    b = cluster.brokers[0]
    try:
        with (
            socket.create_connection((b.host, b.port), timeout=5) as raw,
            ctx.wrap_socket(raw, server_hostname="localhost") as s,
        ):
            s.settimeout(3)
            s.sendall(ClientConnection(client_id="t").send_request("ApiVersions", 0, {}))
            return len(s.recv(4)) != 4
    except (ssl.SSLError, ConnectionError):
        return True


def test_untrusted_or_certless_clients_are_refused() -> None:
    with mockkafka.Cluster(security_protocol="SSL", ssl_client_auth="required") as cluster:
        tls = cluster._server.tls
        assert tls is not None
        # A client that does not trust the throwaway CA.
        assert _refused(cluster, ssl.create_default_context())
        # A client that trusts it but has no certificate.
        assert _refused(cluster, tls.client_ssl_context(with_cert=False))
        # With the certificate it is answered.
        assert not _refused(cluster, tls.client_ssl_context(with_cert=True))
        # The broker keeps serving a client that does everything right.
        from confluent_kafka.admin import AdminClient

        admin = AdminClient(cluster.client_config("confluent"))
        assert admin.list_topics(timeout=10).brokers
        assert cluster.broker_errors == []


def test_plaintext_client_on_a_tls_listener_is_closed() -> None:
    with mockkafka.Cluster(security_protocol="SSL") as cluster:
        b = cluster.brokers[0]
        with socket.create_connection((b.host, b.port), timeout=5) as s:
            s.sendall(b"\x00\x00\x00\x0a" + b"\x00" * 10)
            s.settimeout(3)
            # The broker closes it (after a TLS alert, perhaps): no hang, no error inside.
            got = b""
            try:
                for _ in range(10):
                    chunk = s.recv(100)
                    if not chunk:
                        break
                    got += chunk
            except ConnectionResetError:
                pass
            assert not got.startswith(b"\x00\x00")  # never a Kafka response
        assert cluster.client_config("kafka-python")["security_protocol"] == "SSL"
        assert cluster.broker_errors == []


def test_client_config_without_tls_and_bad_arguments() -> None:
    with mockkafka.Cluster() as cluster:
        assert cluster.client_config() == {"bootstrap.servers": cluster.bootstrap_servers}
        assert cluster.client_config("aiokafka") == {"bootstrap_servers": cluster.bootstrap_servers}
        with pytest.raises(mockkafka.ConfigError, match="did you mean 'confluent'"):
            cluster.client_config("confluen")
    with pytest.raises(mockkafka.ConfigError, match="did you mean 'SSL'"):
        mockkafka.Cluster(security_protocol="SSLL")
    with pytest.raises(mockkafka.ConfigError, match="needs users"):
        mockkafka.Cluster(security_protocol="SASL_SSL")
    with pytest.raises(mockkafka.ConfigError, match="needs security_protocol 'SSL' or 'SASL_SSL'"):
        mockkafka.Cluster(ssl_client_auth="required")


@pytest.mark.kafka_cluster(security_protocol="SSL", ssl_client_auth="required")
def test_plugin_marker_gives_a_tls_cluster(kafka_cluster: mockkafka.Cluster) -> None:
    from confluent_kafka import Producer

    conf = kafka_cluster.client_config("confluent")
    assert conf["security.protocol"] == "SSL" and "ssl.certificate.location" in conf
    topic = unique()
    kafka_cluster.create_topic(topic)
    p = Producer(conf)
    p.produce(topic, b"over-tls")
    assert p.flush(20) == 0
    assert _values(kafka_cluster, topic) == [b"over-tls"]


def test_principal_comes_from_the_client_certificate() -> None:
    from confluent_kafka.admin import AdminClient

    with mockkafka.Cluster(security_protocol="SSL", ssl_client_auth="required") as cluster:
        seen: list[str] = []
        cluster.faults.on("Metadata").every_time().handler(
            lambda request, ctx: seen.append(ctx.principal)
        )
        AdminClient(cluster.client_config("confluent")).list_topics(timeout=10)
        assert seen and seen[0].startswith("User:CN=client")

"""The proxy in front of a real Kafka 4.4 broker's SASL_PLAINTEXT and SSL listeners.

SASL: clients log in *through* the proxy (their SaslHandshake and SaslAuthenticate are
relayed and Kafka checks them, PLAIN and SCRAM-SHA-256/512); the proxy logs in itself only
for its Metadata discovery; what the client sends after the login is decoded into the
traffic log and fault rules fire on it. TLS: the proxy speaks TLS to Kafka's SSL listener
(certificate from a throwaway trustme CA, given to Kafka as a PEM keystore) and offers its
own TLS listeners to clients. Every test reads back directly from Kafka's plaintext
listener. Skips without Java and the Kafka jars.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient

import mockkafka
from mockkafka.kafka_broker import KafkaBroker, KafkaUnavailable
from mockkafka.server.upstream import UpstreamAuthFailed
from tests.interop.conftest import unique
from tests.oracle._proxy_helpers import create_topic, read_values

pytestmark = [pytest.mark.kafka_oracle, pytest.mark.interop, pytest.mark.timeout(120)]

USERS = {"alice": "alice-secret", "proxy": "proxy-secret"}
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")


@pytest.fixture(scope="module")
def secure_kafka() -> Iterator[KafkaBroker]:
    """One broker with PLAINTEXT, SASL_PLAINTEXT (PLAIN, SCRAM-SHA-256/512) and SSL."""
    try:
        broker = KafkaBroker(sasl_mechanisms=MECHANISMS, users=USERS, tls=True).start()
    except KafkaUnavailable as exc:
        pytest.skip(f"kafka oracle tier: {exc}")
    yield broker
    broker.stop()


def sasl_proxy(kafka: KafkaBroker, mechanism: str, **kw: Any) -> mockkafka.Proxy:
    return mockkafka.Proxy(
        upstream=kafka.sasl_bootstrap_servers,
        upstream_security_protocol="SASL_PLAINTEXT",
        upstream_sasl_mechanism=mechanism,
        upstream_sasl_username="proxy",
        upstream_sasl_password=USERS["proxy"],
        **kw,
    )


def produce(config: dict[str, Any], topic: str, n: int) -> list[str]:
    acked: list[str] = []

    def on_delivery(err: Any, msg: Any) -> None:
        if err is None:
            acked.append(msg.value().decode())

    producer = Producer({**config, "enable.idempotence": True, "retry.backoff.ms": 20})
    for i in range(n):
        producer.produce(topic, f"v{i}".encode(), partition=i % 2, on_delivery=on_delivery)
    assert producer.flush(30) == 0
    return acked


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_clients_log_in_through_the_proxy_and_their_traffic_is_decoded_and_faulted(
    secure_kafka: KafkaBroker, mechanism: str
) -> None:
    topic, group = unique("pxsasl"), unique("pxsaslg")
    create_topic(secure_kafka.bootstrap_servers, topic, partitions=2)
    with sasl_proxy(secure_kafka, mechanism) as proxy:
        assert proxy.security_protocol == "SASL_PLAINTEXT"
        config = proxy.client_config("confluent", user="alice", password=USERS["alice"])
        config["sasl.mechanism"] = mechanism
        rule = proxy.faults.on("Produce", topic=topic).times(2).error("NOT_LEADER_OR_FOLLOWER")
        fetch = proxy.faults.on("Fetch", topic=topic).once().error("NOT_LEADER_OR_FOLLOWER")
        acked = produce(config, topic, 40)
        consumer = Consumer(
            {**config, "group.id": group, "auto.offset.reset": "earliest"}
            | {"enable.auto.commit": False}
        )
        consumer.subscribe([topic])
        got: set[str] = set()
        try:
            for _ in range(120):
                if len(got) >= 40:
                    break
                msg = consumer.poll(0.5)
                if msg is not None and msg.error() is None:
                    got.add(msg.value().decode())
        finally:
            consumer.close()
        assert (rule.fired, fetch.fired) == (2, 1)
        handshakes = proxy.traffic.requests("SaslHandshake")
        assert handshakes and {h.request["mechanism"] for h in handshakes} == {mechanism}
        logins = [e for e in proxy.traffic.requests("SaslAuthenticate") if e.answered]
        assert logins and all(e.response and e.response["error_code"] == 0 for e in logins)
        logged_in = {e.connection_id for e in logins}
        produces = proxy.traffic.requests("Produce")
        assert {e.connection_id for e in produces} <= logged_in  # decoded after the login
    assert sorted(acked) == sorted(f"v{i}" for i in range(40))
    assert got == set(acked)
    assert sorted(read_values(secure_kafka.bootstrap_servers, topic, 2, expect=40)) == sorted(acked)


def test_a_wrong_password_is_refused_by_kafka_through_the_proxy(secure_kafka: KafkaBroker) -> None:
    with sasl_proxy(secure_kafka, "SCRAM-SHA-256") as proxy:
        config = proxy.client_config("confluent", user="alice", password="wrong")
        config["sasl.mechanism"] = "SCRAM-SHA-256"
        errors: list[str] = []
        admin = AdminClient({**config, "error_cb": lambda err: errors.append(err.str())})
        with pytest.raises(Exception, match="metadata"):
            admin.list_topics(timeout=3)
        admin.poll(0.5)  # serves error_cb
        assert any("invalid credentials" in e for e in errors), errors
        refused = proxy.traffic.requests(
            "SaslAuthenticate", with_error="SASL_AUTHENTICATION_FAILED"
        )
        assert refused


def test_the_proxy_names_a_refused_login_of_its_own(secure_kafka: KafkaBroker) -> None:
    proxy = mockkafka.Proxy(
        upstream=secure_kafka.sasl_bootstrap_servers,
        upstream_security_protocol="SASL_PLAINTEXT",
        upstream_sasl_mechanism="SCRAM-SHA-512",
        upstream_sasl_username="proxy",
        upstream_sasl_password="not-it",
    )
    with pytest.raises(UpstreamAuthFailed, match="refused the proxy's SCRAM-SHA-512 login"):
        proxy.start()


@pytest.mark.parametrize("towards_clients", ["SSL", "PLAINTEXT"])
def test_the_proxy_speaks_tls_to_kafka_and_offers_its_own(
    secure_kafka: KafkaBroker, towards_clients: str
) -> None:
    topic = unique("pxtls")
    create_topic(secure_kafka.bootstrap_servers, topic, partitions=2)
    with mockkafka.Proxy(
        upstream=secure_kafka.ssl_bootstrap_servers,
        upstream_security_protocol="SSL",
        upstream_ssl_cafile=str(secure_kafka.ca_file),
        security_protocol=towards_clients,
    ) as proxy:
        assert proxy.brokers == {1: ("127.0.0.1", secure_kafka.ssl_port)}
        config = proxy.client_config("confluent")
        assert config.get("security.protocol", "PLAINTEXT") == towards_clients
        rule = proxy.faults.on("Produce", topic=topic).once().error("NOT_ENOUGH_REPLICAS")
        acked = produce(config, topic, 30)
        assert rule.fired == 1
        assert proxy.traffic.requests("Produce", with_error="NOT_ENOUGH_REPLICAS")
    assert sorted(read_values(secure_kafka.bootstrap_servers, topic, 2, expect=30)) == sorted(acked)
    assert len(acked) == 30


def test_sasl_over_the_proxys_tls_to_a_sasl_plaintext_kafka(secure_kafka: KafkaBroker) -> None:
    topic = unique("pxsaslssl")
    create_topic(secure_kafka.bootstrap_servers, topic, partitions=2)
    with sasl_proxy(secure_kafka, "PLAIN", security_protocol="SASL_SSL") as proxy:
        config = proxy.client_config("confluent", user="alice", password=USERS["alice"])
        assert config["security.protocol"] == "SASL_SSL" and "ssl.ca.location" in config
        acked = produce(config, topic, 20)
    assert len(acked) == 20
    assert sorted(read_values(secure_kafka.bootstrap_servers, topic, 2, expect=20)) == sorted(acked)


def test_the_proxy_command_takes_the_security_options(secure_kafka: KafkaBroker) -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mockkafka.cli",
            "proxy",
            "--upstream",
            secure_kafka.sasl_bootstrap_servers,
            "--upstream-security-protocol",
            "SASL_PLAINTEXT",
            "--upstream-sasl-mechanism",
            "SCRAM-SHA-256",
            "--upstream-sasl-username",
            "proxy",
            "--security-protocol",
            "SASL_SSL",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "MOCKKAFKA_UPSTREAM_SASL_PASSWORD": USERS["proxy"]},
    )
    try:
        assert proc.stdout is not None
        boot = proc.stdout.readline().strip()
        control = proc.stdout.readline().strip()
        ca = proc.stdout.readline().strip()
        assert boot.startswith("bootstrap.servers=127.0.0.1:"), (boot, proc.stderr)
        assert control.startswith("control=http://127.0.0.1:"), control
        assert ca.startswith("ssl.ca.location="), ca
        admin = AdminClient(
            {
                "bootstrap.servers": boot.split("=", 1)[1],
                "security.protocol": "SASL_SSL",
                "ssl.ca.location": ca.split("=", 1)[1],
                "sasl.mechanism": "SCRAM-SHA-512",
                "sasl.username": "alice",
                "sasl.password": USERS["alice"],
            }
        )
        assert admin.list_topics(timeout=10).brokers
    finally:
        proc.terminate()
        proc.wait(10)


def test_kafka_python_logs_in_with_scram_through_the_proxy(secure_kafka: KafkaBroker) -> None:
    from kafka import KafkaProducer

    topic = unique("pxkpsasl")
    create_topic(secure_kafka.bootstrap_servers, topic, partitions=2)
    with sasl_proxy(secure_kafka, "SCRAM-SHA-256", security_protocol="SASL_SSL") as proxy:
        config = proxy.client_config(
            "kafka-python", user="alice", password=USERS["alice"], mechanism="SCRAM-SHA-512"
        )
        rule = proxy.faults.on("Produce", topic=topic).once().error("NOT_LEADER_OR_FOLLOWER")
        producer = KafkaProducer(**config, enable_idempotence=True, retry_backoff_ms=20)
        futures = [producer.send(topic, f"v{i}".encode(), partition=i % 2) for i in range(20)]
        producer.flush(30)
        assert all(f.get(10) for f in futures)
        producer.close(5)
        assert rule.fired == 1
        handshakes = proxy.traffic.requests("SaslHandshake")
        assert {(h.version >= 1, h.request["mechanism"]) for h in handshakes} == {
            (True, "SCRAM-SHA-512")
        }
    stored = read_values(secure_kafka.bootstrap_servers, topic, 2, expect=20)
    assert sorted(stored) == sorted(f"v{i}" for i in range(20))


@pytest.mark.go
def test_franz_go_logs_in_over_the_proxys_tls(secure_kafka: KafkaBroker, tmp_path: Any) -> None:
    import json

    from tests.interop._build import build_go

    go = build_go()
    topic, group = unique("pxgosasl"), unique("pxgosaslg")
    create_topic(secure_kafka.bootstrap_servers, topic, partitions=2)
    with sasl_proxy(secure_kafka, "PLAIN", security_protocol="SASL_SSL") as proxy:
        config = proxy.client_config(
            "confluent", user="alice", password=USERS["alice"], mechanism="SCRAM-SHA-256"
        )
        conf = tmp_path / "client.json"
        conf.write_text(json.dumps(config))
        env = {"INTEROP_CLIENT_CONFIG": str(conf)}
        rule = proxy.faults.on("Produce", topic=topic).once().error("NOT_LEADER_OR_FOLLOWER")
        boot = proxy.bootstrap_servers
        assert go.run("kgo-produce", boot, topic, "60", env=env) == {"acked": 60}
        assert go.run("kgo-group", boot, topic, group, "60", env=env)["consumed"] >= 60
        assert rule.fired == 1
        assert {h.request["mechanism"] for h in proxy.traffic.requests("SaslHandshake")} == {
            "SCRAM-SHA-256"
        }
    stored = read_values(secure_kafka.bootstrap_servers, topic, 2, expect=60)
    assert sorted(stored) == sorted(f"v{i}" for i in range(60))


def test_an_upstream_certificate_the_proxy_cannot_verify_is_named(
    secure_kafka: KafkaBroker,
) -> None:
    from mockkafka.server.proxy import UpstreamUnavailable

    proxy = mockkafka.Proxy(
        upstream=secure_kafka.ssl_bootstrap_servers, upstream_security_protocol="SSL"
    )  # the system's roots do not know the broker's throwaway CA
    with pytest.raises(UpstreamUnavailable, match=r"(?i)certificate verify failed"):
        proxy.start()


@pytest.mark.java
def test_the_java_client_logs_in_over_the_proxys_tls(
    secure_kafka: KafkaBroker, tmp_path: Any
) -> None:
    from tests.interop._build import KAFKA_CLIENTS_VERSIONS, build_java

    java = build_java(KAFKA_CLIENTS_VERSIONS[0])
    topic = unique("pxjsasl")
    create_topic(secure_kafka.bootstrap_servers, topic, partitions=2)
    with sasl_proxy(secure_kafka, "SCRAM-SHA-512", security_protocol="SASL_SSL") as proxy:
        settings = proxy.client_config(
            "java", user="alice", password=USERS["alice"], mechanism="SCRAM-SHA-256"
        )
        props = tmp_path / "client.properties"
        props.write_text(
            "".join(f"{k}={v}\n" for k, v in settings.items() if k != "bootstrap.servers")
        )
        env = {"INTEROP_CLIENT_PROPERTIES": str(props)}
        rule = proxy.faults.on("Produce", topic=topic).nth(2).error("NOT_LEADER_OR_FOLLOWER")
        result = java.run("produce", proxy.bootstrap_servers, topic, "100", "true", env=env)
        assert result == {"acked": 100}
        assert rule.fired == 1
        assert {h.request["mechanism"] for h in proxy.traffic.requests("SaslHandshake")} == {
            "SCRAM-SHA-256"
        }
    stored = read_values(secure_kafka.bootstrap_servers, topic, 2, expect=100)
    assert sorted(stored) == sorted(f"v{i}" for i in range(100))

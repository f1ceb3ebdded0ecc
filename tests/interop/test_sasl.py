"""SASL with every Python client: PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 over SASL_PLAINTEXT
(and SASL_SSL), users configured on the cluster, settings from ``cluster.client_config``.

Each client produces over an authenticated connection (the records land in the log); a wrong
password gets SASL_AUTHENTICATION_FAILED and the broker keeps serving; a request before
authentication closes the connection, as Kafka does.
"""

from __future__ import annotations

import asyncio
import struct
from collections.abc import Iterator
from typing import Any

import pytest

import mockkafka
from mockkafka.errors import ErrorCode
from tests.interop.conftest import unique
from tests.robustness._wire import Raw

pytestmark = [pytest.mark.interop, pytest.mark.timeout(60)]

USERS = {"alice": "alice-secret", "bob": "bob-secret"}
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")


@pytest.fixture(params=["SASL_PLAINTEXT", "SASL_SSL"])
def sasl_cluster(request: pytest.FixtureRequest) -> Iterator[mockkafka.Cluster]:
    if request.param == "SASL_SSL":
        pytest.importorskip("trustme")
    with mockkafka.Cluster(brokers=2, security_protocol=request.param, users=USERS) as c:
        yield c


def _produce_confluent(conf: dict[str, Any], topic: str) -> None:
    from confluent_kafka import Producer

    p = Producer(conf)
    p.produce(topic, b"v")
    assert p.flush(20) == 0


def _produce_kafka_python(conf: dict[str, Any], topic: str) -> None:
    from kafka import KafkaProducer

    p = KafkaProducer(**conf)
    try:
        p.send(topic, b"v").get(timeout=20)
    finally:
        p.close(5)


def _produce_aiokafka(conf: dict[str, Any], topic: str) -> None:
    from aiokafka import AIOKafkaProducer

    async def main() -> None:
        p = AIOKafkaProducer(**conf)
        await p.start()
        try:
            await p.send_and_wait(topic, b"v")
        finally:
            await p.stop()

    asyncio.run(main())


PRODUCERS = {
    "confluent": _produce_confluent,
    "kafka-python": _produce_kafka_python,
    "aiokafka": _produce_aiokafka,
}


@pytest.mark.parametrize("mechanism", MECHANISMS)
@pytest.mark.parametrize("client", sorted(PRODUCERS))
def test_client_authenticates(sasl_cluster: mockkafka.Cluster, client: str, mechanism: str) -> None:
    _produce_as_bob(sasl_cluster, client, mechanism)
    auth = sasl_cluster.traffic.requests("SaslAuthenticate")
    assert auth and all(not ex.error_codes for ex in auth)


def _produce_as_bob(cluster: mockkafka.Cluster, client: str, mechanism: str) -> None:
    topic = unique()
    cluster.create_topic(topic)
    PRODUCERS[client](cluster.client_config(client, user="bob", mechanism=mechanism), topic)
    assert [r.value for r in cluster.topic(topic).records()] == [b"v"]
    assert cluster.broker_errors == []


def test_wrong_password_is_refused_and_the_broker_keeps_serving() -> None:
    with mockkafka.Cluster(security_protocol="SASL_PLAINTEXT", users=USERS) as cluster:
        b = cluster.brokers[0]
        for mechanism in MECHANISMS:
            with Raw(b.host, b.port) as c:
                hs = c.request("SaslHandshake", 1, {"mechanism": mechanism})
                assert hs["error_code"] == 0 and mechanism in hs["mechanisms"]
                token = (
                    b"\x00alice\x00wrong"
                    if mechanism == "PLAIN"
                    else b"n,,n=alice,r=abcdefghijklmnop"
                )
                resp = c.request("SaslAuthenticate", 2, {"auth_bytes": token})
                if mechanism != "PLAIN":  # the proof is checked in the final message
                    assert resp["error_code"] == 0
                    final = b"c=biws,r=" + resp["auth_bytes"].split(b",")[0][2:] + b",p=AAAA"
                    resp = c.request("SaslAuthenticate", 2, {"auth_bytes": final})
                assert resp["error_code"] == ErrorCode.SASL_AUTHENTICATION_FAILED
                assert "Authentication failed" in resp["error_message"]
                assert c.closed_by_broker()
        from confluent_kafka import Producer

        bad = cluster.client_config("confluent") | {"sasl.password": "nope"}
        p = Producer(bad | {"message.timeout.ms": 2000})
        errors: list[Any] = []
        p.produce(cluster_topic := unique(), b"v", on_delivery=lambda e, m: errors.append(e))
        p.flush(10)
        assert errors and errors[0] is not None
        cluster.create_topic(cluster_topic)
        _produce_confluent(cluster.client_config("confluent"), cluster_topic)
        assert cluster.broker_errors == []


def test_requests_before_authentication_close_the_connection() -> None:
    with mockkafka.Cluster(security_protocol="SASL_PLAINTEXT", users=USERS) as cluster:
        b = cluster.brokers[0]
        with Raw(b.host, b.port) as c:
            assert (
                c.request(
                    "ApiVersions", 3, {"client_software_name": "t", "client_software_version": "1"}
                )["error_code"]
                == 0
            )
            c.send(c.conn.send_request("Metadata", 12, {"topics": None}))
            assert c.closed_by_broker()
        with Raw(b.host, b.port) as c:
            resp = c.request("SaslHandshake", 1, {"mechanism": "GSSAPI"})
            assert resp["error_code"] == ErrorCode.UNSUPPORTED_SASL_MECHANISM
            assert set(resp["mechanisms"]) == {*MECHANISMS, "OAUTHBEARER"}


def test_sasl_options_are_checked() -> None:
    with pytest.raises(mockkafka.ConfigError, match="needs users"):
        mockkafka.Cluster(security_protocol="SASL_PLAINTEXT")
    with mockkafka.Cluster(security_protocol="SASL_PLAINTEXT", users=USERS) as cluster:
        with pytest.raises(mockkafka.ConfigError, match="did you mean 'alice'"):
            cluster.client_config(user="alcie")
        with pytest.raises(mockkafka.ConfigError, match="did you mean 'SCRAM-SHA-256'"):
            cluster.client_config(mechanism="SCRAM-SHA256")
        java = cluster.client_config("java", mechanism="SCRAM-SHA-512")
        assert java["security.protocol"] == "SASL_PLAINTEXT"
        assert "ScramLoginModule" in java["sasl.jaas.config"]


@pytest.mark.kafka_cluster(security_protocol="SASL_PLAINTEXT", users={"carol": "pw-carol"})
def test_plugin_marker_gives_a_sasl_cluster(kafka_cluster: mockkafka.Cluster) -> None:
    topic = unique()
    kafka_cluster.create_topic(topic)
    _produce_kafka_python(
        kafka_cluster.client_config("kafka-python", mechanism="SCRAM-SHA-256"), topic
    )
    assert [r.value for r in kafka_cluster.topic(topic).records()] == [b"v"]


def test_describe_user_scram_credentials_lists_the_users() -> None:
    from confluent_kafka.admin import AdminClient

    with mockkafka.Cluster(security_protocol="SASL_PLAINTEXT", users=USERS) as cluster:
        admin = AdminClient(cluster.client_config("confluent", mechanism="SCRAM-SHA-512"))
        described = admin.describe_user_scram_credentials().result(10)
        assert set(described) == set(USERS)
        infos = described["alice"].scram_credential_infos
        assert sorted(i.mechanism.name for i in infos) == ["SCRAM_SHA_256", "SCRAM_SHA_512"]
        assert all(i.iterations == 4096 for i in infos)


def test_principal_and_auth_path_faults() -> None:
    """The SASL user is the request's principal; a fault can fail authentication once
    (the client retries and gets in) -- a test of a client's handling of auth failures."""
    from confluent_kafka.admin import AdminClient

    with mockkafka.Cluster(security_protocol="SASL_PLAINTEXT", users=USERS) as cluster:
        seen: list[str] = []
        cluster.faults.on("Metadata").every_time().handler(
            lambda request, ctx: seen.append(ctx.principal)
        )
        rule = cluster.faults.on("SaslAuthenticate").once().error("SASL_AUTHENTICATION_FAILED")
        admin = AdminClient(cluster.client_config("confluent", user="bob"))
        md = admin.list_topics(timeout=15)
        assert md.brokers
        assert rule.fired == 1
        assert seen and set(seen) == {"User:bob"}


@pytest.mark.parametrize("mechanism", MECHANISMS)
@pytest.mark.parametrize("client", ["confluent", "kafka-python"])
def test_pre_kip_152_unframed_exchange_with_an_old_broker(client: str, mechanism: str) -> None:
    # Kafka 0.11 has SaslHandshake v0 only: the tokens follow as raw frames, no header.
    with mockkafka.Cluster(
        security_protocol="SASL_PLAINTEXT", users=USERS, kafka_version="0.11"
    ) as cluster:
        _produce_as_bob(cluster, client, mechanism)
        handshakes = cluster.traffic.requests("SaslHandshake")
        assert handshakes and {ex.version for ex in handshakes} == {0}
        assert not cluster.traffic.requests("SaslAuthenticate")


def test_unframed_exchange_with_a_wrong_password_closes_the_connection() -> None:
    with mockkafka.Cluster(security_protocol="SASL_PLAINTEXT", users=USERS) as cluster:
        b = cluster.brokers[0]
        with Raw(b.host, b.port) as c:
            assert c.request("SaslHandshake", 0, {"mechanism": "PLAIN"})["error_code"] == 0
            bad = b"\x00alice\x00wrong!"
            c.send(struct.pack(">i", len(bad)) + bad)
            assert c.closed_by_broker()
        with Raw(b.host, b.port) as c:  # the right password: an empty token, then requests
            assert c.request("SaslHandshake", 0, {"mechanism": "PLAIN"})["error_code"] == 0
            password = USERS["alice"].encode()
            token = b"\x00alice\x00" + password
            c.send(struct.pack(">i", len(token)) + token)
            assert c.sock.recv(4) == b"\x00\x00\x00\x00"  # PLAIN answers an empty token
            assert c.request("Metadata", 12, {"topics": None})["topics"] == []

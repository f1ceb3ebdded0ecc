"""SASL/OAUTHBEARER with unsecured JWS tokens (Kafka's unsecured validator): the token's
``sub`` is the principal; an expired or malformed token fails authentication."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from confluent_kafka import KafkaError, Producer

import mockkafka
from mockkafka.cluster.security import (
    OAuthBearerExchange,
    SaslFailed,
    unsecured_token,
    unsecured_token_problem,
)

pytestmark = pytest.mark.interop


@pytest.fixture
def cluster() -> Iterator[mockkafka.Cluster]:
    with mockkafka.Cluster(
        security_protocol="SASL_PLAINTEXT",
        users={"admin": "admin-secret"},
        authorizer=True,
        super_users=["User:admin"],
    ) as c:
        c.create_topic("orders")
        yield c


def test_confluent_unsecured_token_names_the_principal_acls_see(
    cluster: mockkafka.Cluster,
) -> None:
    p = Producer(cluster.client_config("confluent", user="admin", mechanism="OAUTHBEARER"))
    p.produce("orders", b"as admin")
    assert p.flush(10) == 0
    errors: list[KafkaError] = []
    other = Producer(
        {
            **cluster.client_config("confluent", user="mallory", mechanism="OAUTHBEARER"),
            "message.timeout.ms": 3000,
        }
    )
    other.produce("orders", b"x", on_delivery=lambda e, _m: errors.append(e))
    other.flush(10)
    assert errors[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED  # authenticated, not allowed
    assert [r.value for r in cluster.topic("orders").records()] == [b"as admin"]


def test_kafka_python_token_provider(cluster: mockkafka.Cluster) -> None:
    from kafka import KafkaProducer

    p = KafkaProducer(
        **cluster.client_config("kafka-python", user="admin", mechanism="OAUTHBEARER")
    )
    try:
        p.send("orders", b"kp").get(timeout=10)
    finally:
        p.close()
    assert b"kp" in [r.value for r in cluster.topic("orders").records()]


def _first(token: str) -> bytes:
    return f"n,,\x01auth=Bearer {token}\x01\x01".encode()


def test_expired_and_malformed_tokens_fail_after_the_error_challenge() -> None:
    now = 1_700_000_000_000
    ex = OAuthBearerExchange(lambda: now)
    assert ex.step(_first(unsecured_token("alice", 1000, now_ms=now))) == b""
    assert ex.principal == "User:alice" and ex.expires_ms == now + 1000

    expired = OAuthBearerExchange(lambda: now + 5000)
    # Kafka's bytes exactly: the challenge, then the same JSON as the failure message.
    assert expired.step(_first(unsecured_token("alice", 1000, now_ms=now))) == (
        b'{"status":"invalid_token"}'
    )
    with pytest.raises(SaslFailed) as failed:
        expired.step(b"\x01")
    assert str(failed.value) == '{"status":"invalid_token"}'
    assert expired.problem is not None and "expired" in expired.problem
    assert unsecured_token_problem("a.b.sig", now)[0] is not None
    with pytest.raises(SaslFailed, match="auth=Bearer"):
        OAuthBearerExchange(lambda: now).step(b"n,,\x01\x01")

"""KIP-368 re-authentication: SaslAuthenticate v1+ tells the client its session lifetime
(``connections.max.reauth.ms``, cut to an OAUTHBEARER token's expiry); a client that
re-authenticates in time keeps its connection, one that does not is closed."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Producer

import mockkafka
from mockkafka.errors import ErrorCode
from tests.robustness._wire import Raw

pytestmark = pytest.mark.interop

USERS = {"alice": "alice-secret", "bob": "bob-secret"}
REAUTH = {"connections.max.reauth.ms": "1000"}


def _login(c: Raw, user: str, version: int = 2) -> dict[str, object]:
    assert c.request("SaslHandshake", 1, {"mechanism": "PLAIN"})["error_code"] == 0
    token = f"\x00{user}\x00{USERS[user]}".encode()
    resp: dict[str, object] = c.request("SaslAuthenticate", version, {"auth_bytes": token})
    return resp


def test_session_lifetime_and_expiry_close_the_connection() -> None:
    with mockkafka.Cluster(
        security_protocol="SASL_PLAINTEXT", users=USERS, broker_configs=REAUTH
    ) as cluster:
        b = cluster.brokers[0]
        with Raw(b.host, b.port) as c:
            resp = _login(c, "alice")
            assert resp["error_code"] == 0 and resp["session_lifetime_ms"] == 1000
            assert c.request("Metadata", 12, {"topics": None})["topics"] == []
            time.sleep(1.2)
            c.send(c.conn.send_request("Metadata", 12, {"topics": None}))
            assert c.closed_by_broker()
        with Raw(b.host, b.port) as c:  # re-authenticated in time: the connection stays
            assert _login(c, "alice")["error_code"] == 0
            time.sleep(0.6)
            assert _login(c, "alice")["error_code"] == 0
            time.sleep(0.6)
            assert c.request("Metadata", 12, {"topics": None})["topics"] == []
        with Raw(b.host, b.port) as c:  # another principal may not take the connection over
            assert _login(c, "alice")["error_code"] == 0
            resp = _login(c, "bob")
            assert resp["error_code"] == ErrorCode.SASL_AUTHENTICATION_FAILED
            assert "Cannot change principals" in str(resp["error_message"])
            assert c.closed_by_broker()
        with Raw(b.host, b.port) as c:  # v0 clients cannot re-authenticate: no lifetime
            assert _login(c, "alice", version=0)["error_code"] == 0


def test_without_reauth_sessions_do_not_end() -> None:
    with mockkafka.Cluster(security_protocol="SASL_PLAINTEXT", users=USERS) as cluster:
        b = cluster.brokers[0]
        with Raw(b.host, b.port) as c:
            assert _login(c, "alice")["session_lifetime_ms"] == 0
            resp = c.request("SaslHandshake", 1, {"mechanism": "PLAIN"})
            assert resp["error_code"] == ErrorCode.ILLEGAL_SASL_STATE


def test_librdkafka_re_authenticates_and_keeps_producing() -> None:
    with mockkafka.Cluster(
        security_protocol="SASL_PLAINTEXT", users=USERS, broker_configs=REAUTH
    ) as cluster:
        cluster.create_topic("orders")
        p = Producer(cluster.client_config("confluent", user="alice", mechanism="SCRAM-SHA-256"))
        for i in range(3):
            p.produce("orders", b"m%d" % i)
            assert p.flush(10) == 0
            time.sleep(1.1)
        auths: dict[int, int] = {}
        for ex in cluster.traffic.requests(api="SaslAuthenticate"):
            auths[ex.connection_id] = auths.get(ex.connection_id, 0) + 1
        # SCRAM takes two SaslAuthenticate steps; some connection did it more than once.
        assert max(auths.values()) >= 4, auths
        assert [r.value for r in cluster.topic("orders").records()] == [b"m0", b"m1", b"m2"]


def test_an_oauthbearer_token_s_expiry_shortens_the_session() -> None:
    from mockkafka.cluster.security import unsecured_token

    with mockkafka.Cluster(
        security_protocol="SASL_PLAINTEXT",
        users=USERS,
        broker_configs={"connections.max.reauth.ms": "60000"},
    ) as cluster:
        b = cluster.brokers[0]
        with Raw(b.host, b.port) as c:
            assert c.request("SaslHandshake", 1, {"mechanism": "OAUTHBEARER"})["error_code"] == 0
            token = unsecured_token("carol", lifetime_ms=800)
            first = f"n,,\x01auth=Bearer {token}\x01\x01".encode()
            resp = c.request("SaslAuthenticate", 2, {"auth_bytes": first})
            assert resp["error_code"] == 0 and 0 < resp["session_lifetime_ms"] <= 800
            time.sleep(1.0)
            c.send(c.conn.send_request("Metadata", 12, {"topics": None}))
            assert c.closed_by_broker()

"""AlterUserScramCredentials with confluent-kafka's AdminClient: a new user logs in with
SCRAM; a deleted credential fails new logins and the next re-authentication of a session
that used it (expired credentials mid-session)."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import KafkaError, Producer
from confluent_kafka.admin import (
    AdminClient,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialDeletion,
    UserScramCredentialUpsertion,
)

import mockkafka
from mockkafka.errors import ErrorCode
from tests.robustness._wire import Raw

pytestmark = pytest.mark.interop

USERS = {"admin": "admin-secret", "alice": "alice-secret"}
SHA256 = ScramMechanism.SCRAM_SHA_256


def _produce(conf: dict[str, object]) -> KafkaError | None:
    errors: list[KafkaError | None] = []
    p = Producer({**conf, "message.timeout.ms": 3000})
    p.produce("orders", b"v", on_delivery=lambda e, _m: errors.append(e))
    p.flush(10)
    return errors[0] if errors else KafkaError(KafkaError._TIMED_OUT)


def test_upsert_and_delete_scram_credentials() -> None:
    with mockkafka.Cluster(
        security_protocol="SASL_PLAINTEXT",
        users=USERS,
        broker_configs={"connections.max.reauth.ms": "1000"},
    ) as cluster:
        cluster.create_topic("orders")
        admin = AdminClient(cluster.client_config("confluent", user="admin"))
        upsert = UserScramCredentialUpsertion("carol", ScramCredentialInfo(SHA256, 8192), b"c-pw")
        for f in admin.alter_user_scram_credentials([upsert]).values():
            assert f.result(10) is None
        carol = cluster.client_config("confluent", user="alice", mechanism="SCRAM-SHA-256")
        carol |= {"sasl.username": "carol", "sasl.password": "c-pw"}
        assert _produce(carol) is None
        described = admin.describe_user_scram_credentials(["carol"])["carol"].result(10)
        assert [(i.mechanism, i.iterations) for i in described.scram_credential_infos] == [
            (SHA256, 8192)
        ]

        # alice logs in on a raw connection, then loses her SCRAM-SHA-256 credential.
        b = cluster.brokers[0]
        with Raw(b.host, b.port) as c:
            _scram_login(c, "alice", "alice-secret")
            deletion = UserScramCredentialDeletion("alice", SHA256)
            for f in admin.alter_user_scram_credentials([deletion]).values():
                assert f.result(10) is None
            time.sleep(0.5)  # within the session: the connection still works
            assert c.request("Metadata", 12, {"topics": None})["throttle_time_ms"] == 0
            resp = c.request("SaslHandshake", 1, {"mechanism": "SCRAM-SHA-256"})
            assert resp["error_code"] == 0
            first = b"n,,n=alice,r=abc"
            resp = c.request("SaslAuthenticate", 2, {"auth_bytes": first})
            assert resp["error_code"] == ErrorCode.SASL_AUTHENTICATION_FAILED
            assert c.closed_by_broker()
        alice = cluster.client_config("confluent", user="alice", mechanism="SCRAM-SHA-256")
        err = _produce(alice)
        assert err is not None
        # PLAIN users are not SCRAM credentials: alice still logs in with PLAIN.
        assert _produce(cluster.client_config("confluent", user="alice")) is None
        # Bad requests are answered with Kafka's errors.
        bad = UserScramCredentialUpsertion("dave", ScramCredentialInfo(SHA256, 10), b"x")
        (f,) = admin.alter_user_scram_credentials([bad]).values()
        with pytest.raises(Exception, match=r"UNACCEPTABLE_CREDENTIAL|[Ii]terations"):
            f.result(10)
        gone = UserScramCredentialDeletion("nobody", SHA256)
        (f,) = admin.alter_user_scram_credentials([gone]).values()
        with pytest.raises(Exception, match=r"RESOURCE_NOT_FOUND|does not exist"):
            f.result(10)


def _scram_login(c: Raw, user: str, password: str) -> None:
    import base64
    import hashlib
    import hmac

    assert c.request("SaslHandshake", 1, {"mechanism": "SCRAM-SHA-256"})["error_code"] == 0
    bare = f"n={user},r=clientnonce"
    resp = c.request("SaslAuthenticate", 2, {"auth_bytes": f"n,,{bare}".encode()})
    assert resp["error_code"] == 0
    server_first = resp["auth_bytes"].decode()
    attrs = dict(kv.split("=", 1) for kv in server_first.split(","))
    salted = hashlib.pbkdf2_hmac(
        "sha256", password.encode(), base64.b64decode(attrs["s"]), int(attrs["i"])
    )
    without_proof = f"c=biws,r={attrs['r']}"
    auth_message = f"{bare},{server_first},{without_proof}".encode()
    client_key = hmac.digest(salted, b"Client Key", "sha256")
    sig = hmac.digest(hashlib.sha256(client_key).digest(), auth_message, "sha256")
    proof = base64.b64encode(bytes(a ^ b for a, b in zip(client_key, sig, strict=True)))
    final = f"{without_proof},p={proof.decode()}".encode()
    resp = c.request("SaslAuthenticate", 2, {"auth_bytes": final})
    assert resp["error_code"] == 0 and resp["session_lifetime_ms"] == 1000

"""Delegation tokens: refused as Kafka refuses them, and their life cycle once enabled."""

from __future__ import annotations

from mockkafka.cluster import delegation_tokens as dt
from mockkafka.cluster.state import ClusterConfig, ClusterState, ManualClock
from mockkafka.errors import ErrorCode
from mockkafka.handlers.base import call_handler


def test_plaintext_connection_is_refused_before_the_secret_is_even_looked_at() -> None:
    state = ClusterState()
    r = call_handler(state, "CreateDelegationToken", {"renewers": [], "max_lifetime_ms": -1})
    assert isinstance(r, dict)
    assert r["error_code"] == ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED
    r = call_handler(state, "DescribeDelegationToken", {"owners": None})
    assert isinstance(r, dict)
    assert r["error_code"] == ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED


def test_sasl_connection_without_a_secret_key_gets_auth_disabled() -> None:
    assert dt.refusal(ClusterState(), "SASL_PLAINTEXT") == ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED


def test_token_is_created_renewed_within_its_max_lifetime_and_expired() -> None:
    clock = ManualClock()
    state = ClusterState(
        ClusterConfig(broker_configs=(("delegation.token.secret.key", "s3cret"),)), clock=clock
    )
    assert dt.refusal(state, "SASL_PLAINTEXT") is None
    alice, bob = ("User", "alice"), ("User", "bob")
    tok = dt.create(state, alice, None, [bob], max_lifetime_ms=10_000)
    assert tok.expiry_timestamp == tok.max_timestamp == clock.now_ms() + 10_000
    clock.advance(5_000)
    assert dt.renew(state, bob, tok.hmac, 60_000) == tok.max_timestamp
    try:
        dt.renew(state, ("User", "mallory"), tok.hmac, 1)
    except dt.TokenError as exc:
        assert exc.code == ErrorCode.DELEGATION_TOKEN_OWNER_MISMATCH
    else:
        raise AssertionError("a stranger renewed the token")
    dt.expire(state, alice, tok.hmac, -1)
    assert not dt.tokens(state).by_hmac

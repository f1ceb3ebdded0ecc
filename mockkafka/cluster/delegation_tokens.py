"""Delegation tokens (KIP-48): created, renewed, expired and described as Kafka does.

Theory of operation
-------------------
Tokens are off until the broker config ``delegation.token.secret.key`` is set (then every
token API answers DELEGATION_TOKEN_AUTH_DISABLED), and Kafka refuses token requests on a
connection that did not authenticate with SASL (PLAINTEXT, or SSL without a client
certificate): DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, checked first. A token's HMAC is
HMAC-SHA512 of its id under the secret key; it lives until ``expiry`` (renewable up to
``max_timestamp``), from ``delegation.token.expiry.time.ms`` (1 day) and
``delegation.token.max.lifetime.ms`` (7 days).
"""

from __future__ import annotations

import hashlib
import hmac as hmac_lib
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mockkafka.errors import ErrorCode

if TYPE_CHECKING:
    from mockkafka.cluster.state import ClusterState

SECRET_KEY = "delegation.token.secret.key"
Principal = tuple[str, str]  # (type, name), e.g. ("User", "alice")


@dataclass(slots=True)
class DelegationToken:
    token_id: str
    hmac: bytes
    owner: Principal
    requester: Principal
    renewers: list[Principal]
    issue_timestamp: int
    expiry_timestamp: int
    max_timestamp: int


@dataclass(slots=True)
class DelegationTokens:
    by_hmac: dict[bytes, DelegationToken] = field(default_factory=dict)


def tokens(state: ClusterState) -> DelegationTokens:
    """The cluster's tokens (expired ones dropped on each call, as Kafka's expiry task)."""
    t: DelegationTokens | None = state.extensions.get("delegation_tokens")
    if t is None:
        t = state.extensions["delegation_tokens"] = DelegationTokens()
    now = state.now_ms()
    for key in [k for k, tok in t.by_hmac.items() if tok.expiry_timestamp < now]:
        del t.by_hmac[key]
    return t


def refusal(state: ClusterState, listener: str) -> ErrorCode | None:
    """Why a token request is refused on ``listener`` (None: it may proceed)."""
    if not listener.upper().startswith("SASL"):
        return ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED
    if not state.broker_configs.get(SECRET_KEY):
        return ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED
    return None


def parse_principal(text: str) -> Principal:
    kind, _, name = text.partition(":")
    return (kind, name) if name else ("User", kind)


def _ms(state: ClusterState, key: str, default: int) -> int:
    return int(state.broker_configs.get(key, str(default)))


def create(
    state: ClusterState,
    requester: Principal,
    owner: Principal | None,
    renewers: list[Principal],
    max_lifetime_ms: int,
) -> DelegationToken:
    now = state.now_ms()
    server_max = _ms(state, "delegation.token.max.lifetime.ms", 604_800_000)
    lifetime = server_max if max_lifetime_ms <= 0 else min(max_lifetime_ms, server_max)
    max_ts = now + lifetime
    expiry = min(now + _ms(state, "delegation.token.expiry.time.ms", 86_400_000), max_ts)
    token_id = uuid.uuid4().hex[:22]
    secret = state.broker_configs[SECRET_KEY].encode()
    mac = hmac_lib.new(secret, token_id.encode(), hashlib.sha512).digest()
    tok = DelegationToken(
        token_id, mac, owner or requester, requester, renewers, now, expiry, max_ts
    )
    tokens(state).by_hmac[mac] = tok
    return tok


def renew(state: ClusterState, requester: Principal, mac: bytes, period_ms: int) -> int:
    """New expiry timestamp; raises TokenError with Kafka's code."""
    tok = _lookup(state, requester, mac)
    now = state.now_ms()
    default = _ms(state, "delegation.token.expiry.time.ms", 86_400_000)
    tok.expiry_timestamp = min(tok.max_timestamp, now + (default if period_ms < 0 else period_ms))
    return tok.expiry_timestamp


def expire(state: ClusterState, requester: Principal, mac: bytes, period_ms: int) -> int:
    tok = _lookup(state, requester, mac)
    now = state.now_ms()
    if period_ms < 0:
        del tokens(state).by_hmac[mac]
        return now
    tok.expiry_timestamp = min(tok.max_timestamp, now + period_ms)
    return tok.expiry_timestamp


class TokenError(Exception):
    def __init__(self, code: ErrorCode) -> None:
        super().__init__(code.name)
        self.code = code


def _lookup(state: ClusterState, requester: Principal, mac: bytes) -> DelegationToken:
    tok = tokens(state).by_hmac.get(bytes(mac))
    if tok is None:
        raise TokenError(ErrorCode.DELEGATION_TOKEN_NOT_FOUND)
    if requester != tok.owner and requester not in tok.renewers:
        raise TokenError(ErrorCode.DELEGATION_TOKEN_OWNER_MISMATCH)
    if tok.expiry_timestamp < state.now_ms():
        raise TokenError(ErrorCode.DELEGATION_TOKEN_EXPIRED)
    return tok

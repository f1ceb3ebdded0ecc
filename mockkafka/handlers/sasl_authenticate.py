"""SaslAuthenticate (key 36), versions 0-2.

Carries one step of the SASL exchange chosen by SaslHandshake (``cluster/security.py``).
A failed step answers SASL_AUTHENTICATION_FAILED with Kafka's message and the server closes
the connection after sending it; ILLEGAL_SASL_STATE without a handshake first. Once the
exchange completes the connection is authenticated as ``User:<name>``;
``session_lifetime_ms`` (v1+) is Kafka's ``connections.max.reauth.ms`` (0 by default:
sessions do not end), shortened to an OAUTHBEARER token's expiry; the client must
re-authenticate (KIP-368) before it ends, with the same principal, or the broker closes the
connection at its next request.
"""

from __future__ import annotations

from typing import Any

from mockkafka.cluster.security import SaslExchange, SaslFailed
from mockkafka.errors import ErrorCode
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.handlers.sasl_handshake import PRINCIPAL, SASL_EXCHANGE, SESSION_EXPIRES
from mockkafka.protocol.codec import Message

#: connection_state key set when authentication failed: the server closes the connection.
SASL_FAILED = "sasl.failed"


@handler("SaslAuthenticate", versions=(0, 2))
def handle(ctx: RequestContext, request: Message) -> Result:
    exchange = ctx.connection_state.get(SASL_EXCHANGE)
    if exchange is None:
        ctx.connection_state[SASL_FAILED] = True
        return {
            "error_code": ErrorCode.ILLEGAL_SASL_STATE,
            "error_message": "SaslAuthenticate without a SaslHandshake first",
            "auth_bytes": b"",
        }
    state = ctx.connection_state
    out, failure = sasl_step(state, exchange, bytes(request.get("auth_bytes") or b""))
    if failure is not None:
        return {
            "error_code": ErrorCode.SASL_AUTHENTICATION_FAILED,
            "error_message": failure,
            "auth_bytes": b"",
        }
    lifetime = 0
    if exchange.principal is not None:
        lifetime = session_lifetime_ms(ctx, getattr(exchange, "expires_ms", None))
        if lifetime > 0:
            state[SESSION_EXPIRES] = ctx.now_ms + lifetime
        else:
            state.pop(SESSION_EXPIRES, None)
    return {
        "error_code": ErrorCode.NONE,
        "error_message": "",  # Kafka sends an empty string, not null
        "auth_bytes": out,
        "session_lifetime_ms": lifetime,
    }


def sasl_step(
    state: dict[str, Any], exchange: SaslExchange, token: bytes
) -> tuple[bytes, str | None]:
    """Feed one client ``token`` to the connection's ``exchange`` (SaslAuthenticate, or a
    raw token after SaslHandshake v0): ``(server token, None)``, or ``(b"", why)`` when
    authentication failed (the connection is then closed: ``SASL_FAILED`` is set). When the
    exchange completes, ``PRINCIPAL`` is set; a re-authentication may not change it."""
    try:
        out = exchange.step(token)
    except SaslFailed as exc:
        state.pop(SASL_EXCHANGE, None)
        state[SASL_FAILED] = True
        return b"", str(exc)
    if exchange.principal is not None:
        state.pop(SASL_EXCHANGE, None)
        before = state.get(PRINCIPAL)
        if before is not None and before != exchange.principal:
            state[SASL_FAILED] = True
            return b"", (
                f"Cannot change principals during re-authentication from {before}: "
                f"{exchange.principal}"
            )
        state[PRINCIPAL] = exchange.principal
    return out, None


def session_lifetime_ms(ctx: RequestContext, credential_expires_ms: int | None) -> int:
    """KIP-368: ``connections.max.reauth.ms`` (0: sessions never end), cut short by the
    credential's own expiry (an OAUTHBEARER token's ``exp``); 0 before SaslAuthenticate v1,
    whose clients cannot re-authenticate."""
    try:
        reauth = int(ctx.cluster.broker_configs.get("connections.max.reauth.ms", "0"))
    except ValueError:
        reauth = 0
    if reauth <= 0 or ctx.version < 1:
        return 0
    if credential_expires_ms is not None:
        return max(1, min(reauth, credential_expires_ms - ctx.now_ms))
    return reauth

"""SaslAuthenticate (key 36), versions 0-2.

Carries one step of the SASL exchange chosen by SaslHandshake (``cluster/security.py``).
A failed step answers SASL_AUTHENTICATION_FAILED with Kafka's message and the server closes
the connection after sending it; ILLEGAL_SASL_STATE without a handshake first. Once the
exchange completes the connection is authenticated as ``User:<name>``;
``session_lifetime_ms`` (v1+) is 0: sessions do not expire.

Not implemented: re-authentication (KIP-368).
"""

from __future__ import annotations

from mockkafka.cluster.security import SaslFailed
from mockkafka.errors import ErrorCode
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.handlers.sasl_handshake import PRINCIPAL, SASL_EXCHANGE
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
    try:
        out = exchange.step(bytes(request.get("auth_bytes") or b""))
    except SaslFailed as exc:
        ctx.connection_state.pop(SASL_EXCHANGE, None)
        ctx.connection_state[SASL_FAILED] = True
        return {
            "error_code": ErrorCode.SASL_AUTHENTICATION_FAILED,
            "error_message": str(exc),
            "auth_bytes": b"",
        }
    if exchange.principal is not None:
        ctx.connection_state.pop(SASL_EXCHANGE, None)
        ctx.connection_state[PRINCIPAL] = exchange.principal
    return {"error_code": ErrorCode.NONE, "error_message": None, "auth_bytes": out}

"""SaslHandshake (key 17), versions 0-1.

Picks the SASL mechanism of the connection on a SASL listener (``security_protocol``
``SASL_PLAINTEXT`` / ``SASL_SSL``): UNSUPPORTED_SASL_MECHANISM with the enabled ones
(``cluster/security.SASL_MECHANISMS``) for another, ILLEGAL_SASL_STATE when the connection
is already authenticated or the listener does not speak SASL. After version 1 the exchange
follows in SaslAuthenticate requests; after version 0 (the pre-KIP-152 exchange of clients
for Kafka before 1.0) the client sends its SASL tokens as raw size-prefixed frames with no
request header, answered the same way, until authentication ends (``UNFRAMED``: the server
switches the connection's codec; a failure closes the connection, as Kafka does).

On a connection whose session has a lifetime (``connections.max.reauth.ms`` > 0, KIP-368)
a client re-authenticates with a new handshake of the same mechanism.
"""

from __future__ import annotations

from mockkafka.cluster.security import SASL_MECHANISMS, SASL_PROTOCOLS, sasl_exchange
from mockkafka.errors import ErrorCode
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import Message

#: connection_state key of the SASL exchange in progress.
SASL_EXCHANGE = "sasl.exchange"
#: connection_state key of the authenticated principal ("User:alice").
PRINCIPAL = "sasl.principal"
#: connection_state key: cluster time the SASL session ends (KIP-368; absent: never).
SESSION_EXPIRES = "sasl.session_expires_ms"
#: connection_state key: the mechanism the connection authenticated with.
MECHANISM = "sasl.mechanism"
#: connection_state key set by a SaslHandshake v0: raw SASL token frames follow.
UNFRAMED = "sasl.unframed"


@handler("SaslHandshake", versions=(0, 1))
def handle(ctx: RequestContext, request: Message) -> Result:
    cfg = ctx.cluster.config
    mechanism = request.get("mechanism") or ""
    state = ctx.connection_state
    # Authenticated: only a re-authentication (KIP-368: the session has a lifetime) with
    # the same mechanism may start another exchange.
    reauth = PRINCIPAL in state and SESSION_EXPIRES in state
    if cfg.security_protocol not in SASL_PROTOCOLS or (PRINCIPAL in state and not reauth):
        return {"error_code": ErrorCode.ILLEGAL_SASL_STATE, "mechanisms": []}
    if reauth and mechanism != state.get(MECHANISM):
        return {"error_code": ErrorCode.ILLEGAL_SASL_STATE, "mechanisms": []}
    if mechanism not in SASL_MECHANISMS:
        return {
            "error_code": ErrorCode.UNSUPPORTED_SASL_MECHANISM,
            "mechanisms": list(SASL_MECHANISMS),
        }
    state[MECHANISM] = mechanism
    state[SASL_EXCHANGE] = sasl_exchange(
        mechanism, dict(cfg.users), ctx.cluster.now_ms, ctx.cluster.scram_credentials
    )
    if ctx.version == 0:
        state[UNFRAMED] = True
    return {"error_code": ErrorCode.NONE, "mechanisms": list(SASL_MECHANISMS)}

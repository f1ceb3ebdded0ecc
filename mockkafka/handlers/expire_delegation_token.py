"""ExpireDelegationToken (key 40), versions 0-2.

Refused as CreateDelegationToken is (cluster/delegation_tokens.py); otherwise sets the token's expiry to now + ``expiry_time_period_ms``; a negative period
removes it at once. An unknown HMAC answers DELEGATION_TOKEN_NOT_FOUND, a requester
who is neither owner nor renewer DELEGATION_TOKEN_OWNER_MISMATCH, an expired token
DELEGATION_TOKEN_EXPIRED.
"""

from __future__ import annotations

from mockkafka.cluster import delegation_tokens as dt
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import Message


@handler("ExpireDelegationToken", versions=(0, 2))
def handle(ctx: RequestContext, request: Message) -> Result:
    refused = dt.refusal(ctx.cluster, ctx.listener)
    if refused is not None:
        return {"error_code": int(refused), "expiry_timestamp_ms": -1, "throttle_time_ms": 0}
    try:
        expiry = dt.expire(
            ctx.cluster,
            dt.parse_principal(ctx.principal),
            bytes(request.get("hmac") or b""),
            request.get("expiry_time_period_ms", -1),
        )
    except dt.TokenError as exc:
        return {"error_code": int(exc.code), "expiry_timestamp_ms": -1, "throttle_time_ms": 0}
    return {"error_code": 0, "expiry_timestamp_ms": expiry, "throttle_time_ms": 0}

"""ExpireDelegationToken (key 40), versions 0-2.

Refused as CreateDelegationToken is (``cluster/delegation_tokens.py``); otherwise sets the
token's expiry to now + ``expiry_time_period_ms``; a negative period removes it at once. An
unknown HMAC answers DELEGATION_TOKEN_NOT_FOUND, a requester who is neither owner nor
renewer DELEGATION_TOKEN_OWNER_MISMATCH, an expired token DELEGATION_TOKEN_EXPIRED.
"""

from __future__ import annotations

from mockkafka.cluster import delegation_tokens as dt
from mockkafka.handlers._tokens import change_expiry
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import Message


@handler("ExpireDelegationToken", versions=(0, 2))
def handle(ctx: RequestContext, request: Message) -> Result:
    return change_expiry(ctx, request, dt.expire, "expiry_time_period_ms")

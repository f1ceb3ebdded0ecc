"""RenewDelegationToken (key 39), versions 0-2.

Refused as CreateDelegationToken is (``cluster/delegation_tokens.py``); otherwise pushes the
token's expiry to now + ``renew_period_ms`` (the configured expiry time when negative),
never past its max lifetime. An unknown HMAC answers DELEGATION_TOKEN_NOT_FOUND, a requester
who is neither owner nor renewer DELEGATION_TOKEN_OWNER_MISMATCH, an expired token
DELEGATION_TOKEN_EXPIRED.
"""

from __future__ import annotations

from mockkafka.cluster import delegation_tokens as dt
from mockkafka.handlers._tokens import change_expiry
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import Message


@handler("RenewDelegationToken", versions=(0, 2))
def handle(ctx: RequestContext, request: Message) -> Result:
    return change_expiry(ctx, request, dt.renew, "renew_period_ms")

"""DescribeDelegationToken (key 41), versions 0-3.

Refused as CreateDelegationToken is (``cluster/delegation_tokens.py``); otherwise the live
tokens whose owner is one of ``owners`` (null: every token, empty: none). With the
authorizer on, only the tokens the requester owns, requested or may renew, or may see by
DESCRIBE on the token or DESCRIBE_TOKENS on its owner (Kafka's token filter).
"""

from __future__ import annotations

from mockkafka.cluster import delegation_tokens as dt
from mockkafka.cluster.acls import AclOperation, ResourceType
from mockkafka.handlers.authz import allowed
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import Message


@handler("DescribeDelegationToken", versions=(0, 3))
def handle(ctx: RequestContext, request: Message) -> Result:
    refused = dt.refusal(ctx.cluster, ctx.listener)
    if refused is not None:
        return {"error_code": int(refused), "tokens": [], "throttle_time_ms": 0}
    owners = request.get("owners")
    wanted = (
        None
        if owners is None
        else {(o.get("principal_type") or "", o.get("principal_name") or "") for o in owners}
    )
    out = [
        {
            "principal_type": t.owner[0],
            "principal_name": t.owner[1],
            "token_requester_principal_type": t.requester[0],
            "token_requester_principal_name": t.requester[1],
            "issue_timestamp": t.issue_timestamp,
            "expiry_timestamp": t.expiry_timestamp,
            "max_timestamp": t.max_timestamp,
            "token_id": t.token_id,
            "hmac": t.hmac,
            "renewers": [{"principal_type": a, "principal_name": b} for a, b in t.renewers],
        }
        for t in dt.tokens(ctx.cluster).by_hmac.values()
        if (wanted is None or t.owner in wanted) and _visible(ctx, t)
    ]
    return {"error_code": 0, "tokens": out, "throttle_time_ms": 0}


def _visible(ctx: RequestContext, token: dt.DelegationToken) -> bool:
    if not ctx.cluster.config.authorizer:
        return True
    me = dt.parse_principal(ctx.principal)
    if me in (token.owner, token.requester) or me in token.renewers:
        return True
    owner = f"{token.owner[0]}:{token.owner[1]}"
    return allowed(
        ctx, AclOperation.DESCRIBE, ResourceType.DELEGATION_TOKEN, token.token_id
    ) or allowed(ctx, AclOperation.DESCRIBE_TOKENS, ResourceType.USER, owner)

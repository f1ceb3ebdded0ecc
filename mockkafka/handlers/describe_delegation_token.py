"""DescribeDelegationToken (key 41), versions 0-3.

Refused as CreateDelegationToken is (``cluster/delegation_tokens.py``); otherwise the live
tokens whose owner is one of ``owners`` (null: every token, empty: none).

Not implemented: the DESCRIBE_TOKENS ACL filter (a requester sees every token here).
"""

from __future__ import annotations

from mockkafka.cluster import delegation_tokens as dt
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
        if wanted is None or t.owner in wanted
    ]
    return {"error_code": 0, "tokens": out, "throttle_time_ms": 0}

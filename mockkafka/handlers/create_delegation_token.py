"""CreateDelegationToken (key 38), versions 0-3.

See ``cluster/delegation_tokens.py``: on a connection that did not authenticate with SASL
(every PLAINTEXT connection) Kafka answers DELEGATION_TOKEN_REQUEST_NOT_ALLOWED; without
``delegation.token.secret.key`` DELEGATION_TOKEN_AUTH_DISABLED; otherwise a token owned by
``owner_principal_*`` (v3) or the requester, with the HMAC the client authenticates with.

Not implemented: the CREATE_TOKENS ACL check for creating a token owned by someone else.
"""

from __future__ import annotations

from mockkafka.cluster import delegation_tokens as dt
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import Message


@handler("CreateDelegationToken", versions=(0, 3))
def handle(ctx: RequestContext, request: Message) -> Result:
    requester = dt.parse_principal(ctx.principal)
    owner = None
    if request.get("owner_principal_name"):
        owner = (request.get("owner_principal_type") or "User", request["owner_principal_name"])
    out = {
        "error_code": 0,
        "principal_type": (owner or requester)[0],
        "principal_name": (owner or requester)[1],
        "token_requester_principal_type": requester[0],
        "token_requester_principal_name": requester[1],
        "issue_timestamp_ms": -1,
        "expiry_timestamp_ms": -1,
        "max_timestamp_ms": -1,
        "token_id": "",
        "hmac": b"",
        "throttle_time_ms": 0,
    }
    refused = dt.refusal(ctx.cluster, ctx.listener)
    if refused is not None:
        out["error_code"] = int(refused)
        return out
    renewers = [
        (r.get("principal_type") or "User", r.get("principal_name") or "")
        for r in request.get("renewers") or []
    ]
    tok = dt.create(ctx.cluster, requester, owner, renewers, request.get("max_lifetime_ms", -1))
    out.update(
        issue_timestamp_ms=tok.issue_timestamp,
        expiry_timestamp_ms=tok.expiry_timestamp,
        max_timestamp_ms=tok.max_timestamp,
        token_id=tok.token_id,
        hmac=tok.hmac,
    )
    return out

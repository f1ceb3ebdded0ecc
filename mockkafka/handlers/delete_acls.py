"""DeleteAcls (key 31), versions 0-3.

With ``Cluster(authorizer=True)`` each filter removes and lists the ACLs it matches (the
caller needs ALTER on the cluster). Without an authorizer every filter answers
SECURITY_DISABLED ("No Authorizer is configured.") with no matching ACLs, as a Kafka
broker without an authorizer does.
"""

from __future__ import annotations

from typing import Any

from mockkafka.cluster.acls import AclOperation
from mockkafka.errors import ErrorCode
from mockkafka.handlers._acls import (
    acl_entry,
    acl_filter,
    filter_problem,
    refusal,
)
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import Message


@handler("DeleteAcls", versions=(0, 3))
def handle(ctx: RequestContext, request: Message) -> Result:
    filters = request.get("filters") or []
    refused = refusal(ctx, AclOperation.ALTER)
    if refused is not None:
        return {"filter_results": [_failed(*refused) for _ in filters]}
    results = []
    for f in filters:
        flt = acl_filter(f)
        problem = filter_problem(flt)
        if problem is not None:
            results.append(_failed(ErrorCode.INVALID_REQUEST, problem))
            continue
        matching = [
            {
                "error_code": 0,
                "error_message": None,
                "resource_type": int(acl.resource_type),
                "resource_name": acl.resource_name,
                "pattern_type": int(acl.pattern_type),
                **acl_entry(acl),
            }
            for acl in ctx.cluster.acls.delete(flt)
        ]
        results.append({"error_code": 0, "error_message": None, "matching_acls": matching})
    return {"filter_results": results}


def _failed(code: int, message: str | None) -> dict[str, Any]:
    return {"error_code": code, "error_message": message, "matching_acls": []}

"""CreateAcls (key 30), versions 0-3.

With ``Cluster(authorizer=True)`` each creation is validated as Kafka does (resource type,
pattern type LITERAL or PREFIXED, operation and permission not ANY/UNKNOWN, principal
``Type:name``; else INVALID_REQUEST) and stored; the caller needs ALTER on the cluster
(CLUSTER_AUTHORIZATION_FAILED otherwise). Without an authorizer every creation answers
SECURITY_DISABLED ("No Authorizer is configured."), as a broker without
``authorizer.class.name`` does.
"""

from __future__ import annotations

from typing import Any

from mockkafka.cluster.acls import AclOperation, binding_problem
from mockkafka.errors import ErrorCode
from mockkafka.handlers._acls import binding, refusal
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import Message


@handler("CreateAcls", versions=(0, 3))
def handle(ctx: RequestContext, request: Message) -> Result:
    creations = request.get("creations") or []
    refused = refusal(ctx, AclOperation.ALTER)
    if refused is not None:
        return {"results": [_result(*refused) for _ in creations]}
    results = []
    for creation in creations:
        acl = binding(creation)
        problem = binding_problem(acl)
        if problem is not None:
            results.append(_result(ErrorCode.INVALID_REQUEST, problem))
            continue
        ctx.cluster.acls.create(acl)
        results.append(_result(0, None))
    return {"results": results}


def _result(code: int, message: str | None) -> dict[str, Any]:
    return {"error_code": code, "error_message": message}

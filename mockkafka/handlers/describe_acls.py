"""DescribeAcls (key 29), versions 0-3.

With ``Cluster(authorizer=True)``: the ACLs the filter matches (pattern type ANY, MATCH,
LITERAL or PREFIXED; null name, principal and host match any), grouped by resource; the
caller needs DESCRIBE on the cluster. Without an authorizer: SECURITY_DISABLED, "No
Authorizer is configured.", and no ACLs, as such a Kafka broker answers.
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


@handler("DescribeAcls", versions=(0, 3))
def handle(ctx: RequestContext, request: Message) -> Result:
    refused = refusal(ctx, AclOperation.DESCRIBE)
    if refused is not None:
        return _error(*refused)
    flt = acl_filter(request)
    problem = filter_problem(flt)
    if problem is not None:
        return _error(ErrorCode.INVALID_REQUEST, problem)
    by_resource: dict[tuple[int, str, int], list[dict[str, Any]]] = {}
    for acl in ctx.cluster.acls.describe(flt):
        key = (int(acl.resource_type), acl.resource_name, int(acl.pattern_type))
        by_resource.setdefault(key, []).append(acl_entry(acl))
    resources = [
        {"resource_type": t, "resource_name": n, "pattern_type": p, "acls": acls}
        for (t, n, p), acls in by_resource.items()
    ]
    return {"error_code": 0, "error_message": None, "resources": resources}


def _error(code: int, message: str | None) -> dict[str, Any]:
    return {"error_code": code, "error_message": message, "resources": []}

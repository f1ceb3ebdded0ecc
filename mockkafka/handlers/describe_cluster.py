"""DescribeCluster (key 60), versions 0-2.

The cluster id, the controller id and the running brokers (with ``include_fenced_brokers``
(v2) stopped brokers too, marked ``is_fenced``), sorted by id. ``endpoint_type`` (v1+):
1 (brokers) is served; 2 (controllers) answers UNSUPPORTED_ENDPOINT_TYPE, as a broker does
(only KRaft controllers list controllers). ``cluster_authorized_operations`` is every cluster
operation when asked for (no authorizer), else -2147483648.

Not implemented: authorization (every client may describe the cluster).
"""

from __future__ import annotations

from typing import Any

from mockkafka.errors import ErrorCode
from mockkafka.handlers.authz import cluster_operations
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import Message

BROKERS_ENDPOINT = 1
CONTROLLERS_ENDPOINT = 2


@handler("DescribeCluster", versions=(0, 2))
def handle(ctx: RequestContext, request: Message) -> Result:
    c = ctx.cluster
    endpoint_type = request.get("endpoint_type", BROKERS_ENDPOINT) if ctx.version >= 1 else 1
    resp: dict[str, Any] = {
        "error_code": 0,
        "error_message": None,
        "endpoint_type": endpoint_type,
        "cluster_id": c.cluster_id,
        "controller_id": c.controller_id,
        "cluster_authorized_operations": cluster_operations(
            ctx, bool(request.get("include_cluster_authorized_operations"))
        ),
    }
    if endpoint_type != BROKERS_ENDPOINT:
        resp["error_code"] = ErrorCode.UNSUPPORTED_ENDPOINT_TYPE
        resp["error_message"] = "The broker does not support endpoint type " + str(endpoint_type)
        resp["controller_id"] = -1
        return resp
    fenced = bool(request.get("include_fenced_brokers")) and ctx.version >= 2
    resp["brokers"] = [
        {
            "broker_id": b.node_id,
            "host": b.host,
            "port": b.port,
            "rack": b.rack,
            "is_fenced": not b.running,
        }
        for _, b in sorted(c.brokers.items())
        if b.running or fenced
    ]
    return resp

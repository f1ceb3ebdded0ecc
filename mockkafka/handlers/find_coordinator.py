"""FindCoordinator (key 10), versions 0-6.

Group (key type 0), transaction (1) and share (2) keys; batched lookups from v4. The
coordinator comes from ``cluster/coordinators.py``; COORDINATOR_NOT_AVAILABLE when no broker
runs, INVALID_REQUEST for an unknown key type. The first group (transaction) lookup creates
the internal topic ``__consumer_offsets`` (``__transaction_state``) as Kafka does; Kafka
answers COORDINATOR_NOT_AVAILABLE while it creates it, mockkafka answers at once.
"""

from __future__ import annotations

from typing import Any

from mockkafka.cluster.acls import AclOperation, ResourceType
from mockkafka.errors import ErrorCode
from mockkafka.handlers.authz import allowed, failed_code
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import Message

_KEY_RESOURCE = {0: ResourceType.GROUP, 1: ResourceType.TRANSACTIONAL_ID}
#: The internal topic Kafka creates on the first lookup of a key type (the coordinator is the
#: leader of one of its partitions).
_INTERNAL_TOPIC = {0: "__consumer_offsets", 1: "__transaction_state"}


def _lookup(ctx: RequestContext, key_type: int, key: str) -> dict[str, Any]:
    c = ctx.cluster
    if key_type not in (0, 1, 2):
        return {
            "error_code": ErrorCode.INVALID_REQUEST,
            "node_id": -1,
            "host": "",
            "port": -1,
            "error_message": f"unknown key type {key_type}",
        }
    rtype = _KEY_RESOURCE.get(key_type)
    if rtype is not None and not allowed(ctx, AclOperation.DESCRIBE, rtype, key):
        return {
            "error_code": failed_code(rtype),
            "node_id": -1,
            "host": "",
            "port": -1,
            "error_message": None,
        }
    node = c.coordinators.coordinator(key_type, key)
    internal = _INTERNAL_TOPIC.get(key_type)
    if internal is not None and node >= 0:
        c.ensure_internal_topic(internal)
    if node < 0:
        return {
            "error_code": ErrorCode.COORDINATOR_NOT_AVAILABLE,
            "node_id": -1,
            "host": "",
            "port": -1,
            "error_message": "no broker is running",
        }
    b = c.brokers[node]
    return {"error_code": 0, "node_id": node, "host": b.host, "port": b.port, "error_message": None}


@handler("FindCoordinator", versions=(0, 6))
def handle(ctx: RequestContext, request: Message) -> Result:
    key_type = request.get("key_type", 0)
    if ctx.version >= 4:
        coords = []
        for key in request.get("coordinator_keys") or []:
            r = _lookup(ctx, key_type, key)
            r["key"] = key
            coords.append(r)
        return {"coordinators": coords}
    return _lookup(ctx, key_type, request.get("key") or "")

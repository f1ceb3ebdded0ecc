"""AlterShareGroupOffsets (key 91), version 0 (KIP-932).

Sets the share-partition start offset of partitions of a share group (what
``kafka-share-groups.sh --reset-offsets`` and ``Admin.alterShareGroupOffsets`` send): the
partition is then delivered from that offset on, with no record in flight. The group must be
empty (NON_EMPTY_GROUP otherwise); an unknown group id becomes an empty share group, as
altering a consumer group's offsets creates it.

Errors: top level GROUP_AUTHORIZATION_FAILED (READ on the group), NOT_COORDINATOR and
friends, GROUP_ID_NOT_FOUND (the id belongs to a classic or consumer group),
NON_EMPTY_GROUP; per partition TOPIC_AUTHORIZATION_FAILED (READ on the topic),
UNKNOWN_TOPIC_OR_PARTITION, INVALID_REQUEST for a negative offset.
"""

from __future__ import annotations

from typing import Any

from mockkafka.cluster.acls import AclOperation
from mockkafka.cluster.groups_common import Message
from mockkafka.errors import ErrorCode
from mockkafka.handlers._share_admin import empty_share_group_or_refusal
from mockkafka.handlers.authz import topic_allowed
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import ZERO_UUID


@handler("AlterShareGroupOffsets", versions=(0, 0))
def handle(ctx: RequestContext, request: Message) -> Result:
    group_id: str = request.get("group_id") or ""
    g = empty_share_group_or_refusal(ctx, group_id, AclOperation.READ, create=True)
    if isinstance(g, dict):
        return g
    responses: list[dict[str, Any]] = []
    for asked in request.get("topics") or []:
        name: str = asked.get("topic_name") or ""
        t = ctx.cluster.topics.get(name)
        allowed = topic_allowed(ctx, AclOperation.READ, name)
        parts = []
        for p in asked.get("partitions") or []:
            idx, offset = p.get("partition_index", 0), p.get("start_offset", -1)
            if not allowed:
                err, msg = ErrorCode.TOPIC_AUTHORIZATION_FAILED, None
            elif t is None or not 0 <= idx < len(t.partitions):
                err, msg = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None
            elif offset < 0:
                err, msg = ErrorCode.INVALID_REQUEST, f"Invalid start offset {offset}."
            else:
                g.alter_start_offset(name, idx, t.topic_id, offset)
                err, msg = ErrorCode.NONE, None
            parts.append({"partition_index": idx, "error_code": err, "error_message": msg})
        responses.append(
            {
                "topic_name": name,
                "topic_id": t.topic_id if t is not None and allowed else ZERO_UUID,
                "partitions": parts,
            }
        )
    return {"error_code": 0, "responses": responses}

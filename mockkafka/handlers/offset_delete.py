"""OffsetDelete (key 47), version 0.

Deletes committed offsets of a group. GROUP_ID_NOT_FOUND for an unknown group; a non-empty
group that does not use the consumer protocol answers NON_EMPTY_GROUP; a partition of a
topic the group's members subscribe to answers GROUP_SUBSCRIBED_TO_TOPIC (its offset stays);
UNKNOWN_TOPIC_OR_PARTITION for a partition that does not exist.
"""

from __future__ import annotations

from mockkafka.cluster.groups_common import Message
from mockkafka.handlers._groups import classic_group_error
from mockkafka.handlers.base import RequestContext, Result, handler


@handler("OffsetDelete", versions=(0, 0))
def handle(ctx: RequestContext, request: Message) -> Result:
    group_id: str = request.get("group_id") or ""
    wanted = [
        (t.get("name") or "", p["partition_index"])
        for t in request.get("topics") or []
        for p in t.get("partitions") or []
    ]
    err = classic_group_error(ctx, group_id)
    if err:
        return {"error_code": err, "topics": []}
    top, per = ctx.cluster.groups.delete_offsets(group_id, wanted)
    if top:
        return {"error_code": top, "topics": []}
    topics: dict[str, list[dict[str, int]]] = {}
    for (t, p), e in per.items():
        topics.setdefault(t, []).append({"partition_index": p, "error_code": e})
    return {
        "error_code": 0,
        "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()],
    }

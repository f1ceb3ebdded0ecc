"""DescribeShareGroupOffsets (key 90), versions 0-1 (KIP-932; v1 adds ``lag``, KIP-1226).

Per group, the share-partition start offset (SPSO) of the partitions asked for, or with
``topics`` null of every partition the group has share state for. A partition the group
never fetched (or whose offsets were deleted) answers start offset -1 (lag -1). ``lag``: the
records between the SPSO and the high watermark not yet delivered to completion.
``leader_epoch`` is the partition's current leader epoch.

Errors: per group GROUP_AUTHORIZATION_FAILED (DESCRIBE on the group), NOT_COORDINATOR and
friends, GROUP_ID_NOT_FOUND (unknown, or not a share group); per topic
TOPIC_AUTHORIZATION_FAILED (DESCRIBE on the topic) and UNKNOWN_TOPIC_OR_PARTITION.
"""

from __future__ import annotations

from typing import Any

from mockkafka.cluster.acls import AclOperation
from mockkafka.cluster.groups_common import Message
from mockkafka.errors import ErrorCode
from mockkafka.handlers._share_admin import share_group_or_error
from mockkafka.handlers.authz import topic_allowed
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import ZERO_UUID


@handler("DescribeShareGroupOffsets", versions=(0, 1))
def handle(ctx: RequestContext, request: Message) -> Result:
    return {"groups": [_group(ctx, g) for g in request.get("groups") or []]}


def _group(ctx: RequestContext, asked: Message) -> dict[str, Any]:
    group_id: str = asked.get("group_id") or ""
    g = share_group_or_error(ctx, group_id, AclOperation.DESCRIBE)
    if isinstance(g, tuple):
        return {"group_id": group_id, "error_code": g[0], "error_message": g[1], "topics": []}
    asked_topics = asked.get("topics")
    wanted = (
        None
        if asked_topics is None
        else [
            (t.get("topic_name") or "", p) for t in asked_topics for p in t.get("partitions") or []
        ]
    )
    by_topic: dict[str, dict[str, Any]] = {}
    for topic, idx, sp in g.start_offsets(wanted):
        t = ctx.cluster.topics.get(topic)
        entry = by_topic.setdefault(
            topic,
            {
                "topic_name": topic,
                "topic_id": t.topic_id if t is not None else ZERO_UUID,
                "partitions": [],
            },
        )
        part: dict[str, Any] = {"partition_index": idx, "start_offset": -1, "leader_epoch": -1}
        if not topic_allowed(ctx, AclOperation.DESCRIBE, topic):
            part["error_code"] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
        elif t is None or not 0 <= idx < len(t.partitions):
            part["error_code"] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        elif sp is not None:
            p = t.partitions[idx]
            part["start_offset"] = sp.start_offset
            part["leader_epoch"] = p.leader_epoch
            part["lag"] = sp.lag(p.log.high_watermark)
        entry["partitions"].append(part)
    return {"group_id": group_id, "error_code": 0, "topics": list(by_topic.values())}

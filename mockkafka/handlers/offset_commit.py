"""OffsetCommit (key 8), versions 0-10.

Stores committed offsets of a group. Member checks follow Kafka: a commit with generation -1
and no member id is a "simple" commit, allowed only to an empty group (it creates a group
that just holds offsets); otherwise the member must belong to the group at the current
generation (classic: UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, FENCED_INSTANCE_ID,
REBALANCE_IN_PROGRESS while the group completes a rebalance) or member epoch (KIP-848:
exactly the member's current epoch, else STALE_MEMBER_EPOCH; a KIP-848 member committing
below v9 gets UNSUPPORTED_VERSION). A group that does not exist gets
GROUP_ID_NOT_FOUND from v9 and ILLEGAL_GENERATION before. Per partition:
UNKNOWN_TOPIC_OR_PARTITION (UNKNOWN_TOPIC_ID for v10's topic ids), OFFSET_METADATA_TOO_LARGE
over 4096 bytes. v1's commit timestamp and v2-4's retention time are accepted and ignored
(offsets never expire here).
"""

from __future__ import annotations

from typing import Any

from mockkafka.cluster.groups_common import Message
from mockkafka.errors import ErrorCode
from mockkafka.handlers._groups import coordinator_error
from mockkafka.handlers.base import RequestContext, Result, handler


@handler("OffsetCommit", versions=(0, 10))
def handle(ctx: RequestContext, request: Message) -> Result:
    v = ctx.version
    c = ctx.cluster
    group_id: str = request.get("group_id") or ""
    member_id: str = request.get("member_id") or "" if v >= 1 else ""
    generation: int = request.get("generation_id_or_member_epoch", -1) if v >= 1 else -1
    instance_id = request.get("group_instance_id") if v >= 7 else None
    err = coordinator_error(ctx, group_id)
    if not err and not group_id:
        err = ErrorCode.INVALID_GROUP_ID
    if not err:
        err = c.groups.validate_offset_commit(
            group_id, member_id, instance_id, generation, version=v
        )
    topics_out: list[dict[str, Any]] = []
    for t in request.get("topics") or []:
        name: str = t.get("name") or ""
        topic_err = ErrorCode.NONE
        if v >= 10:
            topic = c.topics_by_id.get(t.get("topic_id"))
            if topic is None:
                topic_err = ErrorCode.UNKNOWN_TOPIC_ID
            else:
                name = topic.name
        parts_out = []
        for p in t.get("partitions") or []:
            idx = p["partition_index"]
            meta = p.get("committed_metadata")
            e = err or topic_err or c.groups.commit_error(name, idx, meta)
            if not e:
                c.groups.store_committed_offset(
                    group_id,
                    name,
                    idx,
                    p["committed_offset"],
                    p.get("committed_leader_epoch", -1) if v >= 6 else -1,
                    meta,
                )
            parts_out.append({"partition_index": idx, "error_code": e})
        out: dict[str, Any] = {"partitions": parts_out}
        if v >= 10:
            out["topic_id"] = t.get("topic_id")
        else:
            out["name"] = name
        topics_out.append(out)
    return {"topics": topics_out}

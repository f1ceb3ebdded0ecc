"""OffsetFetch (key 9), versions 0-10.

Answers a group's committed offsets: the partitions asked for, or (topics null, v2+) every
partition with a committed offset. A partition without one gets offset -1 and no error, as
does a group that does not exist. v8+ asks for several groups at once; v9+ may name the
member and member epoch of a KIP-848 group (UNKNOWN_MEMBER_ID, STALE_MEMBER_EPOCH); v10 uses
topic ids. With ``require_stable`` (v7+) a partition with a pending transactional offset
commit answers UNSTABLE_OFFSET_COMMIT (asked of ``state.transactions.has_pending_offsets``).
Errors of a whole group are the top-level error (v2-7), the group's error (v8+) or each
partition's error (v0-1).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mockkafka.cluster.groups import ConsumerGroup
from mockkafka.cluster.groups_common import Message
from mockkafka.cluster.streams_groups import StreamsGroup
from mockkafka.errors import ErrorCode
from mockkafka.handlers._groups import coordinator_error
from mockkafka.handlers.base import RequestContext, Result, handler


def _pending_check(ctx: RequestContext) -> Callable[[str, str, int], bool] | None:
    fn = getattr(ctx.cluster.transactions, "has_pending_offsets", None)
    return fn if callable(fn) else None


def fetch_group(
    ctx: RequestContext,
    group_id: str,
    topics: list[tuple[str, list[int] | None, Any]] | None,
    *,
    require_stable: bool,
    member_id: str | None = None,
    member_epoch: int = -1,
) -> tuple[ErrorCode, list[dict[str, Any]]]:
    """(group error, topics) for one group; ``topics`` entries are (name, partitions, id)."""
    c = ctx.cluster
    err = coordinator_error(ctx, group_id)
    g = c.groups.get(group_id)
    if not err and isinstance(g, (ConsumerGroup, StreamsGroup)):
        err = g.validate_offset_fetch(member_id, member_epoch)
    if err:
        return err, [
            {
                "name": name,
                "topic_id": tid,
                "partitions": [
                    {"partition_index": p, "committed_offset": -1, "error_code": err}
                    for p in parts or []
                ],
            }
            for name, parts, tid in topics or []
        ]
    offsets = g.live_offsets() if g is not None else {}
    if topics is None:
        by_topic: dict[str, list[int]] = {}
        for t, p in sorted(offsets):
            by_topic.setdefault(t, []).append(p)
        topics = [
            (t, ps, c.topics[t].topic_id if t in c.topics else None) for t, ps in by_topic.items()
        ]
    pending = _pending_check(ctx) if require_stable else None
    out = []
    for name, parts, tid in topics:
        rows = []
        for p in parts or []:
            om = offsets.get((name, p))
            row: dict[str, Any] = {
                "partition_index": p,
                "committed_offset": -1,
                "committed_leader_epoch": -1,
                "metadata": "",
                "error_code": ErrorCode.NONE,
            }
            if tid is not None and not name:  # v10+: a topic id no topic has
                row["error_code"] = ErrorCode.UNKNOWN_TOPIC_ID
            elif pending is not None and pending(group_id, name, p):
                row["error_code"] = ErrorCode.UNSTABLE_OFFSET_COMMIT
            elif om is not None:
                row["committed_offset"] = om.offset
                row["committed_leader_epoch"] = om.leader_epoch
                row["metadata"] = om.metadata if om.metadata is not None else ""
            rows.append(row)
        out.append({"name": name, "topic_id": tid, "partitions": rows})
    return ErrorCode.NONE, out


def _requested(
    ctx: RequestContext, topics: list[dict[str, Any]] | None, use_ids: bool
) -> list[tuple[str, list[int] | None, Any]] | None:
    if topics is None:
        return None
    out: list[tuple[str, list[int] | None, Any]] = []
    for t in topics:
        if use_ids:
            topic = ctx.cluster.topics_by_id.get(t["topic_id"])
            out.append((topic.name if topic else "", t.get("partition_indexes"), t.get("topic_id")))
        else:
            out.append((t.get("name") or "", t.get("partition_indexes"), None))
    return out


@handler("OffsetFetch", versions=(0, 10))
def handle(ctx: RequestContext, request: Message) -> Result:
    v = ctx.version
    require_stable = bool(request.get("require_stable")) if v >= 7 else False
    if v >= 8:
        groups = []
        for gr in request.get("groups") or []:
            err, topics = fetch_group(
                ctx,
                gr.get("group_id") or "",
                _requested(ctx, gr.get("topics"), v >= 10),
                require_stable=require_stable,
                member_id=gr.get("member_id") if v >= 9 else None,
                member_epoch=gr.get("member_epoch", -1) if v >= 9 else -1,
            )
            # A group-level error comes without topics, as in Kafka.
            groups.append(
                {"group_id": gr.get("group_id"), "topics": [] if err else topics, "error_code": err}
            )
        return {"groups": groups}
    topics_req = request.get("topics")
    if v < 2 and topics_req is None:
        topics_req = []
    err, topics = fetch_group(
        ctx,
        request.get("group_id") or "",
        _requested(ctx, topics_req, False),
        require_stable=require_stable,
    )
    for t in topics:
        del t["topic_id"]  # only the v8+ per-group form carries topic ids
    resp: dict[str, Any] = {"topics": topics}
    if v >= 2:
        resp["error_code"] = err
        if err:
            resp["topics"] = []
    return resp

"""OffsetForLeaderEpoch (key 23), versions 0-4.

For each partition, the end offset of the requested leader epoch on the partition leader:
the start offset of the first later epoch, or the log end offset for the current epoch
(KIP-101). Consumers use it after a leader change to detect log truncation (KIP-320): a
consumer positioned beyond the answer has lost records and must reset or truncate.

Follows Kafka's ``LeaderEpochFileCache.endOffsetFor`` (``PartitionLog.end_offset_for_epoch``) over the log's epoch history (with the
current leader epoch starting at the log end offset when no record was written in it yet,
as a new leader records it, and epochs wholly below the log start offset trimmed):
an unknown (-1) or too-new epoch answers leader_epoch -1 / end_offset -1
(UNDEFINED_EPOCH_OFFSET); an epoch older than every known one answers that epoch with the
start offset of the first known later epoch; otherwise the largest known epoch <= the
requested one with the start offset of the next. ``current_leader_epoch`` (v2+) fences stale
or too-new clients with FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH; non-leaders answer
NOT_LEADER_OR_FOLLOWER. ``leader_epoch`` is in the response from v1.

Not implemented: follower (``replica_id`` >= 0) requests get the same leader-only answers.
"""

from __future__ import annotations

from typing import Any

from mockkafka.errors import ErrorCode
from mockkafka.handlers._common import find_partition, find_topic, leader_error
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import Message

UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1


@handler("OffsetForLeaderEpoch", versions=(0, 4))
def handle(ctx: RequestContext, request: Message) -> Result:
    v = ctx.version
    topics_out: list[dict[str, Any]] = []
    for t in request.get("topics") or []:
        name = t.get("topic") or ""
        topic, terr = find_topic(ctx, name)
        parts: list[dict[str, Any]] = []
        for rp in t.get("partitions") or []:
            idx = rp.get("partition", 0)
            out: dict[str, Any] = {
                "partition": idx,
                "error_code": 0,
                "leader_epoch": UNDEFINED_EPOCH,
                "end_offset": UNDEFINED_EPOCH_OFFSET,
            }
            parts.append(out)
            p = find_partition(topic, idx) if topic is not None else None
            if topic is None or p is None:
                out["error_code"] = terr if topic is None else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                continue
            current = rp.get("current_leader_epoch", -1) if v >= 2 else -1
            err = leader_error(ctx, p, current)
            if err != ErrorCode.NONE:
                out["error_code"] = err
                continue
            epoch, end = p.log.end_offset_for_epoch(
                rp.get("leader_epoch", UNDEFINED_EPOCH), current_epoch=p.leader_epoch
            )
            out["leader_epoch"] = epoch
            out["end_offset"] = end
        topics_out.append({"topic": name, "partitions": parts})
    return {"topics": topics_out}

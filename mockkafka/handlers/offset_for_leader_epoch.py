"""OffsetForLeaderEpoch (key 23), versions 0-4.

For each partition, the end offset of the requested leader epoch on the partition leader:
the start offset of the first later epoch, or the log end offset for the current epoch
(KIP-101). Consumers use it after a leader change to detect log truncation (KIP-320): a
consumer positioned beyond the answer has lost records and must reset or truncate.

Follows Kafka's ``LeaderEpochFileCache.endOffsetFor`` over the log's epoch history (with the
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

import bisect
from typing import Any

from mockkafka.cluster.state import Partition
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
            epoch, end = end_offset_for_epoch(p, rp.get("leader_epoch", UNDEFINED_EPOCH))
            out["leader_epoch"] = epoch
            out["end_offset"] = end
        topics_out.append({"topic": name, "partitions": parts})
    return {"topics": topics_out}


def epoch_history(p: Partition) -> list[tuple[int, int]]:
    """(leader_epoch, start_offset) entries as the leader's epoch cache would hold them."""
    log = p.log
    entries: list[tuple[int, int]] = []
    for epoch, start in [*log.epoch_starts, (p.leader_epoch, log.log_end_offset)]:
        if entries and entries[-1][0] >= epoch:
            continue
        # Kafka's cache drops entries that a later epoch starts at or before.
        while entries and entries[-1][1] >= start:
            entries.pop()
        entries.append((epoch, start))
    # Trim from the log start: epochs that ended before it go; the one holding it starts there.
    lso = log.log_start_offset
    while len(entries) > 1 and entries[1][1] <= lso:
        entries.pop(0)
    if entries and entries[0][1] < lso:
        entries[0] = (entries[0][0], lso)
    return entries


def end_offset_for_epoch(p: Partition, requested: int) -> tuple[int, int]:
    """(leader_epoch, end_offset) answered for ``requested`` (Kafka's endOffsetFor)."""
    entries = epoch_history(p)
    if requested == UNDEFINED_EPOCH or not entries:
        return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
    if entries[-1][0] == requested:
        return requested, p.log.log_end_offset
    epochs = [e for e, _ in entries]
    higher = bisect.bisect_right(epochs, requested)
    if higher == len(entries):
        return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
    if higher == 0:
        return requested, entries[0][1]
    return entries[higher - 1][0], entries[higher][1]

"""ListOffsets (key 2), versions 0-11.

Timestamps: -1 latest (the high watermark, or the last stable offset for read_committed),
-2 earliest (log start offset), -3 the record with the largest timestamp (v7+), -4 earliest
local (v8+, same as earliest: no tiered storage), -5 latest tiered (v9+, answers -1), and any
other value: the first record with a timestamp at or after it. v0 answers with the
``old_style_offsets`` list. Leader epochs checked from v4 (KIP-320).
"""

from __future__ import annotations

from typing import Any

from mockkafka.errors import ErrorCode
from mockkafka.handlers._common import find_partition, find_topic, leader_error
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import Message

LATEST = -1
EARLIEST = -2
MAX_TIMESTAMP = -3
EARLIEST_LOCAL = -4
LATEST_TIERED = -5


@handler("ListOffsets", versions=(0, 11))
def handle(ctx: RequestContext, request: Message) -> Result:
    v = ctx.version
    committed = request.get("isolation_level", 0) == 1
    topics_out: list[dict[str, Any]] = []
    for t in request.get("topics") or []:
        topic, terr = find_topic(ctx, t.get("name"))
        parts: list[dict[str, Any]] = []
        for rp in t.get("partitions") or []:
            idx = rp.get("partition_index", 0)
            out: dict[str, Any] = {"partition_index": idx, "timestamp": -1, "offset": -1}
            parts.append(out)
            p = find_partition(topic, idx) if topic is not None else None
            if topic is None or p is None:
                out["error_code"] = terr if topic is None else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                continue
            err = leader_error(ctx, p, rp.get("current_leader_epoch", -1) if v >= 4 else -1)
            if err != ErrorCode.NONE:
                out["error_code"] = err
                continue
            log = p.log
            ts = rp.get("timestamp", LATEST)
            if ts == LATEST:
                offset, found_ts = (log.last_stable_offset if committed else log.high_watermark), -1
            elif ts in (EARLIEST, EARLIEST_LOCAL):
                offset, found_ts = log.log_start_offset, -1
            elif ts == MAX_TIMESTAMP:
                offset, found_ts = log.max_timestamp_offset()
            elif ts == LATEST_TIERED:
                offset, found_ts = -1, -1
            else:
                offset, found_ts = log.offset_for_timestamp(ts)
            out["leader_epoch"] = p.leader_epoch
            if v == 0:
                out["old_style_offsets"] = [offset] if offset >= 0 else []
            out["offset"] = offset
            out["timestamp"] = found_ts
        topics_out.append({"name": t.get("name"), "partitions": parts})
    return {"topics": topics_out}

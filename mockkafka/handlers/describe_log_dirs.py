"""DescribeLogDirs (key 35), versions 0-5.

This broker's one log directory (``/var/lib/mockkafka/<broker id>``) with every partition
it holds a replica of (or only the requested topics / partitions): ``partition_size`` is the
bytes the log holds, ``offset_lag`` 0 for ISR members (replication is instantaneous) and the
leader's high watermark for replicas outside the ISR. Top-level ``error_code`` from v3,
``total_bytes`` / ``usable_bytes`` (a nominal 1 TiB disk) from v4, ``is_cordoned`` false.

Not implemented: multiple log directories, future (``is_future_key``) replicas.
"""

from __future__ import annotations

from typing import Any

from mockkafka.cluster.configs import log_dir
from mockkafka.cluster.state import Topic
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import Message

TOTAL_BYTES = 1 << 40


@handler("DescribeLogDirs", versions=(0, 5))
def handle(ctx: RequestContext, request: Message) -> Result:
    c = ctx.cluster
    me = ctx.broker_id
    wanted = request.get("topics")
    selection: list[tuple[Topic, set[int] | None]]
    if wanted is None:
        selection = [(t, None) for t in c.topics.values()]
    else:
        selection = [
            (c.topics[w.get("topic") or ""], set(w.get("partitions") or []))
            for w in wanted
            if (w.get("topic") or "") in c.topics
        ]
    topics_out: list[dict[str, Any]] = []
    used = sum(p.log.size_bytes for p in c.iter_partitions() if me in p.replicas)
    for topic, indexes in selection:
        parts = []
        for p in topic.partitions:
            if me not in p.replicas or (indexes is not None and p.index not in indexes):
                continue
            parts.append(
                {
                    "partition_index": p.index,
                    "partition_size": p.log.size_bytes,
                    "offset_lag": 0 if me in p.isr else p.log.high_watermark,
                    "is_future_key": False,
                }
            )
        if parts:
            topics_out.append({"name": topic.name, "partitions": parts})
    return {
        "error_code": 0,
        "results": [
            {
                "error_code": 0,
                "log_dir": log_dir(me),
                "topics": topics_out,
                "total_bytes": TOTAL_BYTES,
                "usable_bytes": TOTAL_BYTES - used,
                "is_cordoned": False,
            }
        ],
    }

"""DescribeQuorum (key 55), versions 0-2.

The KRaft metadata quorum as a broker reports it (forwarded to the controller in Kafka):
partition 0 of ``__cluster_metadata``, led by the cluster's controller, which is the only
voter; every other broker is an observer. Replication is instantaneous, so every replica's
``log_end_offset`` is the high watermark and every fetch is "now". v2 adds the voters'
endpoints (``nodes``) and directory ids. Any other topic or partition answers
UNKNOWN_TOPIC_OR_PARTITION at partition level (top-level NONE), as Kafka does.
"""

from __future__ import annotations

import uuid
from typing import Any

from mockkafka.errors import ErrorCode
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import Message

METADATA_TOPIC = "__cluster_metadata"


def _replica(node_id: int, hwm: int, now_ms: int) -> dict[str, Any]:
    return {
        "replica_id": node_id,
        "replica_directory_id": uuid.UUID(int=node_id + 1),
        "log_end_offset": hwm,
        "last_fetch_timestamp": now_ms,
        "last_caught_up_timestamp": now_ms,
    }


@handler("DescribeQuorum", versions=(0, 2))
def handle(ctx: RequestContext, request: Message) -> Result:
    c = ctx.cluster
    topics = request.get("topics") or []
    wanted = [
        (t.get("topic_name"), p.get("partition_index"))
        for t in topics
        for p in t.get("partitions") or []
    ]
    if wanted != [(METADATA_TOPIC, 0)]:
        # Kafka's raft client: top-level NONE, every partition asked for answers the error.
        return {
            "error_code": ErrorCode.NONE,
            "topics": [
                {
                    "topic_name": t.get("topic_name"),
                    "partitions": [
                        {
                            "partition_index": p.get("partition_index"),
                            "error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                        }
                        for p in t.get("partitions") or []
                    ],
                }
                for t in topics
            ],
            "nodes": [],
        }
    # The metadata log grows with every change a test makes; a stable, plausible offset.
    hwm = 100 + sum(len(t.partitions) for t in c.topics.values())
    leader = c.controller_id
    observers = [b for b in sorted(c.brokers) if b != leader]
    ctrl = c.brokers[leader]
    return {
        "error_code": 0,
        "error_message": None,
        "topics": [
            {
                "topic_name": METADATA_TOPIC,
                "partitions": [
                    {
                        "partition_index": 0,
                        "error_code": 0,
                        "error_message": None,
                        "leader_id": leader,
                        "leader_epoch": 1,
                        "high_watermark": hwm,
                        "current_voters": [_replica(leader, hwm, ctx.now_ms)],
                        "observers": [_replica(b, hwm, ctx.now_ms) for b in observers],
                    }
                ],
            }
        ],
        "nodes": [
            {
                "node_id": leader,
                "listeners": [{"name": "CONTROLLER", "host": ctrl.host, "port": ctrl.port}],
            }
        ],
    }

"""AlterReplicaLogDirs (key 34), versions 0-2.

Each broker has exactly one log directory (``/var/lib/mockkafka/<broker id>``, as
DescribeLogDirs reports). Moving a replica this broker holds to that directory is a no-op
that succeeds; any other path answers LOG_DIR_NOT_FOUND, as Kafka does for a directory it
does not have; a partition this broker holds no replica of answers REPLICA_NOT_AVAILABLE,
and an unknown one UNKNOWN_TOPIC_OR_PARTITION.

Not implemented: several log directories per broker (so no future replicas to move).
"""

from __future__ import annotations

from typing import Any

from mockkafka.cluster.configs import log_dir
from mockkafka.errors import ErrorCode
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import Message


@handler("AlterReplicaLogDirs", versions=(0, 2))
def handle(ctx: RequestContext, request: Message) -> Result:
    c = ctx.cluster
    mine = log_dir(ctx.broker_id)
    by_topic: dict[str, list[dict[str, Any]]] = {}
    for d in request.get("dirs") or []:
        path = d.get("path") or ""
        for t in d.get("topics") or []:
            name = t.get("name") or ""
            topic = c.topics.get(name)
            for idx in t.get("partitions") or []:
                if path != mine:
                    err = ErrorCode.LOG_DIR_NOT_FOUND
                elif topic is None or not 0 <= idx < len(topic.partitions):
                    err = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                elif ctx.broker_id not in topic.partitions[idx].replicas:
                    err = ErrorCode.REPLICA_NOT_AVAILABLE
                else:
                    err = ErrorCode.NONE
                by_topic.setdefault(name, []).append(
                    {"partition_index": idx, "error_code": int(err)}
                )
    return {
        "throttle_time_ms": 0,
        "results": [{"topic_name": n, "partitions": ps} for n, ps in by_topic.items()],
    }

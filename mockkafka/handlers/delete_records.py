"""DeleteRecords (key 21), versions 0-2.

Advances each partition's log start offset to ``offset`` (-1: the high watermark) on the
partition leader; records below it are gone for consumers and ListOffsets(earliest) answers
the new start. Answers ``low_watermark`` = the new log start offset. An offset above the
high watermark (or below -1) is OFFSET_OUT_OF_RANGE; one below the current log start changes
nothing. A broker that does not lead the partition answers NOT_LEADER_OR_FOLLOWER; a topic
whose ``cleanup.policy`` has no ``delete`` answers POLICY_VIOLATION, as Kafka does. Fetchers
parked on the partition are woken. The rules are ``ClusterState.delete_records_before``'s,
shared with ``Cluster.delete_records``.

Not implemented: ``timeout_ms`` is ignored (followers are always caught up here).
"""

from __future__ import annotations

from typing import Any

from mockkafka.cluster.state import DELETE_TO_HIGH_WATERMARK
from mockkafka.errors import ErrorCode, KafkaApiError
from mockkafka.handlers._common import find_partition, find_topic, leader_error
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import Message


@handler("DeleteRecords", versions=(0, 2))
def handle(ctx: RequestContext, request: Message) -> Result:
    topics_out: list[dict[str, Any]] = []
    for t in request.get("topics") or []:
        name = t.get("name") or ""
        topic, terr = find_topic(ctx, name)
        parts: list[dict[str, Any]] = []
        for rp in t.get("partitions") or []:
            idx = rp.get("partition_index", 0)
            out: dict[str, Any] = {"partition_index": idx, "low_watermark": -1, "error_code": 0}
            parts.append(out)
            p = find_partition(topic, idx) if topic is not None else None
            if topic is None or p is None:
                out["error_code"] = terr if topic is None else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                continue
            err = leader_error(ctx, p)
            if err != ErrorCode.NONE:
                out["error_code"] = err
                continue
            try:
                out["low_watermark"] = ctx.cluster.delete_records_before(
                    topic.name, idx, rp.get("offset", DELETE_TO_HIGH_WATERMARK)
                )
            except KafkaApiError as exc:
                out["error_code"] = exc.error
        topics_out.append({"name": name, "partitions": parts})
    return {"topics": topics_out}

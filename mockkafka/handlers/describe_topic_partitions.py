"""DescribeTopicPartitions (key 75), version 0 (KIP-966).

Topic metadata with paging: the requested topics (all topics for an empty list), sorted by
name, starting at ``cursor`` (topic name and partition index; the cursor topic must be one
of the requested ones), at most ``response_partition_limit`` partitions (capped at 2000 as
Kafka's ``max.request.partition.size.limit``) per response; ``next_cursor`` names the first
partition left out, or is null. Each partition has leader, leader epoch, replicas, ISR,
offline replicas, and empty eligible-leader-replica lists (ELR is off, as in a default
Kafka 4.x cluster). Unknown topics answer UNKNOWN_TOPIC_OR_PARTITION.

Topics the principal may not DESCRIBE (with ``Cluster(authorizer=True)``) answer
TOPIC_AUTHORIZATION_FAILED when named and are left out of "all topics" (``handlers/authz.py``);
``topic_authorized_operations`` is the KIP-430 bit field of the principal's operations.
"""

from __future__ import annotations

from typing import Any

from mockkafka.cluster.acls import ResourceType
from mockkafka.cluster.state import Partition, Topic
from mockkafka.errors import ErrorCode
from mockkafka.handlers.authz import authorized_operations
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import ZERO_UUID, Message

MAX_PARTITION_LIMIT = 2000


@handler("DescribeTopicPartitions", versions=(0, 0))
def handle(ctx: RequestContext, request: Message) -> Result:
    c = ctx.cluster
    requested = [t.get("name") or "" for t in request.get("topics") or []]
    names = sorted(set(requested)) if requested else sorted(c.topics)
    limit = min(MAX_PARTITION_LIMIT, request.get("response_partition_limit", MAX_PARTITION_LIMIT))
    limit = max(limit, 1)
    cursor = request.get("cursor")
    start_topic, start_partition = "", 0
    if cursor is not None:
        start_topic = cursor.get("topic_name") or ""
        start_partition = cursor.get("partition_index", 0)
        if (requested and start_topic not in names) or start_partition < 0:
            return {
                "topics": [
                    {
                        "error_code": ErrorCode.INVALID_REQUEST,
                        "name": start_topic,
                        "topic_id": ZERO_UUID,
                    }
                ]
            }
        names = [n for n in names if n >= start_topic]
    topics_out: list[dict[str, Any]] = []
    next_cursor: dict[str, Any] | None = None
    remaining = limit
    for name in names:
        topic = c.topics.get(name)
        if topic is None:
            topics_out.append(
                {
                    "error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                    "name": name,
                    "topic_id": ZERO_UUID,
                }
            )
            continue
        first = start_partition if name == start_topic else 0
        if remaining == 0:
            next_cursor = {"topic_name": name, "partition_index": first}
            break
        parts = topic.partitions[first : first + remaining]
        remaining -= len(parts)
        topics_out.append(_topic(ctx, topic, parts))
        if first + len(parts) < len(topic.partitions):
            next_cursor = {"topic_name": name, "partition_index": first + len(parts)}
            break
    return {"topics": topics_out, "next_cursor": next_cursor}


def _topic(ctx: RequestContext, topic: Topic, parts: list[Partition]) -> dict[str, Any]:
    brokers = ctx.cluster.brokers
    return {
        "error_code": 0,
        "name": topic.name,
        "topic_id": topic.topic_id,
        "is_internal": topic.is_internal,
        "partitions": [
            {
                "error_code": ErrorCode.LEADER_NOT_AVAILABLE if p.leader == -1 else 0,
                "partition_index": p.index,
                "leader_id": p.leader,
                "leader_epoch": p.leader_epoch,
                "replica_nodes": list(p.replicas),
                "isr_nodes": list(p.isr),
                "eligible_leader_replicas": [],
                "last_known_elr": [],
                "offline_replicas": [
                    r for r in p.replicas if r in brokers and not brokers[r].running
                ],
            }
            for p in parts
        ],
        "topic_authorized_operations": authorized_operations(ctx, ResourceType.TOPIC, topic.name),
    }

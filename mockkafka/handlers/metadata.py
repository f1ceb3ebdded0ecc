"""Metadata (key 3), versions 0-13.

Lists the running brokers, the controller, the cluster id and the requested topics (all
topics for a null list, or an empty one before v1) with partitions, leaders, leader epochs,
replicas and ISR. Topics may be named by id (v10+). Unknown topics are created when
auto-creation is on for the cluster and the request allows it (v4+), as a broker with
``auto.create.topics.enable=true`` does; Kafka's internal topics (``__consumer_offsets``,
``__transaction_state``) are created by FindCoordinator only, and appear in "all topics"
once they exist. With ``Cluster(authorizer=True)`` topics
the principal may not DESCRIBE answer TOPIC_AUTHORIZATION_FAILED when named and are left out
of "all topics"; auto-creation needs CREATE on the cluster or the topic. Authorized operations
(KIP-430, when asked) are the principal's, every operation without an authorizer.
"""

from __future__ import annotations

from typing import Any

from mockkafka.cluster.acls import AclOperation, ResourceType
from mockkafka.cluster.state import INTERNAL_TOPICS
from mockkafka.errors import ErrorCode, KafkaApiError
from mockkafka.handlers.authz import (
    AUTHORIZED_OPERATIONS_OMITTED,
    authorized_operations,
    cluster_allowed,
    cluster_operations,
    topic_allowed,
)
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import ZERO_UUID, Message

DESCRIBE = AclOperation.DESCRIBE
CREATE = AclOperation.CREATE


@handler("Metadata", versions=(0, 13))
def handle(ctx: RequestContext, request: Message) -> Result:
    c = ctx.cluster
    v = ctx.version
    requested = request.get("topics")
    if v == 0 and requested == []:
        requested = None
    allow_create = request.get("allow_auto_topic_creation", True) if v >= 4 else True
    topic_ops = bool(request.get("include_topic_authorized_operations"))
    topics_out: list[dict[str, Any]] = []
    # Built per partition, so hoisted: thousands of partitions are answered in one request.
    down = {b.node_id for b in c.brokers.values() if not b.running}
    not_available = ErrorCode.LEADER_NOT_AVAILABLE.value
    if requested is None:
        # Topics the principal may not DESCRIBE are left out, as in Kafka.
        names = [t.name for t in c.topics.values() if topic_allowed(ctx, DESCRIBE, t.name)]
        entries: list[tuple[str | None, Any]] = [(n, None) for n in names]
    else:
        entries = [(t.get("name"), t.get("topic_id")) for t in requested]
    for name, topic_id in entries:
        if topic_id is not None and topic_id != ZERO_UUID and not name:
            topic = c.topics_by_id.get(topic_id)
            if topic is None:
                topics_out.append(
                    {"error_code": ErrorCode.UNKNOWN_TOPIC_ID, "name": None, "topic_id": topic_id}
                )
                continue
        else:
            if requested is not None and not topic_allowed(ctx, DESCRIBE, name or ""):
                topics_out.append(
                    {"error_code": ErrorCode.TOPIC_AUTHORIZATION_FAILED, "name": name}
                )
                continue
            topic = c.topics.get(name or "")
            if topic is None and name in INTERNAL_TOPICS:
                # Created by the first FindCoordinator, never by a Metadata request.
                topics_out.append(
                    {
                        "error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                        "name": name,
                        "is_internal": True,
                    }
                )
                continue
            if topic is None:
                if (
                    c.config.auto_create_topics
                    and allow_create
                    and requested is not None
                    and not (topic_allowed(ctx, CREATE, name or "") or cluster_allowed(ctx, CREATE))
                ):
                    topics_out.append(
                        {"error_code": ErrorCode.TOPIC_AUTHORIZATION_FAILED, "name": name}
                    )
                    continue
                if c.config.auto_create_topics and allow_create and requested is not None:
                    try:
                        topic = c.create_topic(name or "")
                    except KafkaApiError as exc:
                        topics_out.append({"error_code": exc.error, "name": name})
                        continue
                else:
                    topics_out.append(
                        {"error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "name": name}
                    )
                    continue
        partitions = [
            {
                "error_code": not_available if p.leader == -1 else 0,
                "partition_index": p.index,
                "leader_id": p.leader,
                "leader_epoch": p.leader_epoch,
                "replica_nodes": p.replicas,
                "isr_nodes": p.isr,
                "offline_replicas": [r for r in p.replicas if r in down] if down else [],
            }
            for p in topic.partitions
        ]
        topics_out.append(
            {
                "error_code": 0,
                "name": topic.name,
                "topic_id": topic.topic_id,
                "is_internal": topic.is_internal,
                "partitions": partitions,
                "topic_authorized_operations": authorized_operations(
                    ctx, ResourceType.TOPIC, topic.name
                )
                if topic_ops
                else AUTHORIZED_OPERATIONS_OMITTED,
            }
        )
    return {
        "brokers": [
            {"node_id": b.node_id, "host": b.host, "port": b.port, "rack": b.rack}
            for b in c.live_brokers()
        ],
        "cluster_id": c.cluster_id,
        "controller_id": c.controller_id,
        "topics": topics_out,
        "cluster_authorized_operations": cluster_operations(
            ctx, v <= 10 and bool(request.get("include_cluster_authorized_operations"))
        ),
    }

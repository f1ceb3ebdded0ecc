"""CreateTopics (key 19), versions 0-7.

Creates each topic at once on whichever broker receives the request (a KRaft broker forwards
to the controller; here every broker is the controller's proxy). Per-topic errors as Kafka
answers them, with ``error_message`` from v1: TOPIC_ALREADY_EXISTS, INVALID_TOPIC_EXCEPTION
(bad name, or one that collides with an existing topic once '.' and '_' are identified),
INVALID_PARTITIONS, INVALID_REPLICATION_FACTOR, INVALID_REPLICA_ASSIGNMENT, INVALID_CONFIG,
and INVALID_REQUEST for a topic named twice in one request or for partition counts given
together with explicit assignments. ``num_partitions`` / ``replication_factor`` of -1 take
the cluster defaults. ``validate_only`` (v1+) checks everything and creates nothing. From v5
the response carries the partition count, replication factor and every config with its
source; from v7 the topic id. With ``Cluster(authorizer=True)`` a topic needs CREATE on it
or on the cluster (``handlers/authz.py``), and a creator without DESCRIBE_CONFIGS on it gets
``topic_config_error_code`` TOPIC_AUTHORIZATION_FAILED instead of its configs.

Not implemented: ``timeout_ms`` is ignored (creation completes before the answer), no
CreateTopicPolicy, no topic-count quotas (THROTTLING_QUOTA_EXCEEDED).

A request asking for more partitions in all than the controller's bound
(``mockkafka.max.records.per.user.op``, see cluster/limits.py) answers POLICY_VIOLATION for
every topic, as Kafka's KRaft controller does, before any work is done.
"""

from __future__ import annotations

from typing import Any

from mockkafka.cluster.acls import AclOperation
from mockkafka.cluster.configs import ResourceType, describe_topic, validate_configs
from mockkafka.cluster.limits import EXCESSIVE_BATCH, limits
from mockkafka.cluster.state import Topic
from mockkafka.errors import ErrorCode, KafkaApiError
from mockkafka.handlers._common import distinct_entries
from mockkafka.handlers.authz import topic_allowed
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import ZERO_UUID, Message


@handler("CreateTopics", versions=(0, 7))
def handle(ctx: RequestContext, request: Message) -> Result:
    validate_only = bool(request.get("validate_only")) and ctx.version >= 1
    topics = request.get("topics") or []
    wanted = sum(
        len(t.get("assignments") or ())
        or max(t.get("num_partitions", -1), ctx.cluster.config.default_partitions)
        for t in topics
    )
    if wanted > limits(ctx.cluster).max_records_per_user_op:
        return {
            "topics": [
                _error(str(t.get("name") or ""), ErrorCode.POLICY_VIOLATION, EXCESSIVE_BATCH)
                for t in topics
            ]
        }
    out: list[dict[str, Any]] = []
    for t, name, repeated in distinct_entries(topics, lambda t: str(t.get("name") or "")):
        if repeated:
            out.append(
                _error(
                    name,
                    ErrorCode.INVALID_REQUEST,
                    f"Create topics request from client `{ctx.client_id}` contains multiple "
                    f"entries for the following topics: {name}",
                )
            )
            continue
        try:
            out.append(_create(ctx, t, validate_only))
        except KafkaApiError as exc:
            out.append(_error(name, exc.error, exc.detail or None))
    return {"topics": out}


def _error(name: str, code: ErrorCode, message: str | None) -> dict[str, Any]:
    return {
        "name": name,
        "error_code": code,
        "error_message": message,
        "num_partitions": -1,
        "replication_factor": -1,
        "configs": [],  # Kafka sends an empty list, not null
    }


def _create(ctx: RequestContext, t: Message, validate_only: bool) -> dict[str, Any]:
    c = ctx.cluster
    name = t.get("name") or ""
    num_partitions = t.get("num_partitions", -1)
    replication_factor = t.get("replication_factor", -1)
    assignments = _assignments(t, num_partitions, replication_factor)
    if name not in c.topics:
        collision = _collision(ctx, name)
        if collision is not None:
            raise KafkaApiError(
                ErrorCode.INVALID_TOPIC_EXCEPTION,
                f"Topic '{name}' collides with existing topic: {collision}",
            )
    configs: dict[str, str | None] = {
        cfg.get("name") or "": cfg.get("value") for cfg in t.get("configs") or []
    }
    if name not in c.topics:
        validate_configs(c, ResourceType.TOPIC, name, configs)
    topic = c.create_topic(
        name,
        num_partitions,
        replication_factor,
        {k: v for k, v in configs.items() if v is not None},
        assignments=assignments,
        validate_only=validate_only,
    )
    if validate_only:
        partitions = (
            len(assignments)
            if assignments
            else (num_partitions if num_partitions != -1 else c.config.default_partitions)
        )
        rf = (
            len(assignments[0])
            if assignments
            else (
                replication_factor
                if replication_factor != -1
                else c.config.default_replication_factor
            )
        )
    else:
        partitions = len(topic.partitions)
        rf = len(topic.partitions[0].replicas) if topic.partitions else 0
    if not topic_allowed(ctx, AclOperation.DESCRIBE_CONFIGS, name):
        # Created, but the creator may not see its configs (Kafka's controller).
        return {
            "name": name,
            "topic_id": topic.topic_id if not validate_only else ZERO_UUID,
            "error_code": ErrorCode.NONE,
            "topic_config_error_code": ErrorCode.TOPIC_AUTHORIZATION_FAILED,
            "configs": [],
        }
    return {
        "name": name,
        "topic_id": topic.topic_id if not validate_only else ZERO_UUID,
        "error_code": ErrorCode.NONE,
        "error_message": None,
        "num_partitions": partitions,
        "replication_factor": rf,
        "configs": _configs(ctx, topic),
    }


def _assignments(
    t: Message, num_partitions: int, replication_factor: int
) -> list[list[int]] | None:
    raw = t.get("assignments") or []
    if not raw:
        return None
    if num_partitions != -1 or replication_factor != -1:
        raise KafkaApiError(
            ErrorCode.INVALID_REQUEST,
            "Both numPartitions or replicationFactor and replicasAssignments were set. "
            "Both cannot be used at the same time.",
        )
    by_index = {a.get("partition_index", 0): list(a.get("broker_ids") or []) for a in raw}
    if sorted(by_index) != list(range(len(raw))):
        raise KafkaApiError(
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            "Partitions should be a consecutive 0-based integer sequence",
        )
    replicas = [by_index[i] for i in range(len(raw))]
    for i, r in enumerate(replicas):
        if not r:
            raise KafkaApiError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"The manual partition assignment includes an empty replica list for "
                f"partition {i}.",
            )
        if len(set(r)) != len(r):
            raise KafkaApiError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"The manual partition assignment includes the broker "
                f"{next(b for b in r if r.count(b) > 1)} more than once.",
            )
    if len({len(r) for r in replicas}) > 1:
        raise KafkaApiError(
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            "All partitions should have the same number of replicas",
        )
    return replicas


def _collision(ctx: RequestContext, name: str) -> str | None:
    """The existing topic ``name`` collides with (same name once '.' == '_'), if any."""
    if "." not in name and "_" not in name:
        return None
    key = name.replace(".", "_")
    for other in ctx.cluster.topics:
        if other != name and other.replace(".", "_") == key:
            return other
    return None


def _configs(ctx: RequestContext, topic: Topic) -> list[dict[str, Any]]:
    return [
        {
            "name": e.name,
            "value": e.value,
            "read_only": e.read_only,
            "config_source": e.source,
            "is_sensitive": e.is_sensitive,
        }
        for e in describe_topic(ctx.cluster, topic, ctx.broker_id)
    ]

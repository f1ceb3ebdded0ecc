"""CreatePartitions (key 37), versions 0-3.

Grows each topic to ``count`` partitions at once, placing new replicas round-robin or as the
optional ``assignments`` say (one replica list per new partition, each as long as the
topic's replication factor, naming registered brokers once each). ``validate_only`` checks
and changes nothing. Per-topic errors with Kafka's messages: UNKNOWN_TOPIC_OR_PARTITION,
INVALID_PARTITIONS (not an increase), INVALID_REPLICA_ASSIGNMENT, INVALID_REQUEST (a topic
named twice in one request).

More new partitions in all than ``mockkafka.max.records.per.user.op`` (cluster/limits.py)
answers POLICY_VIOLATION for every topic, as Kafka's KRaft controller does.

Not implemented: ``timeout_ms`` is ignored; no partition-count quotas.
"""

from __future__ import annotations

from typing import Any

from mockkafka.cluster.limits import EXCESSIVE_BATCH, limits
from mockkafka.errors import ErrorCode, KafkaApiError
from mockkafka.handlers._common import distinct_entries
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import Message


@handler("CreatePartitions", versions=(0, 3))
def handle(ctx: RequestContext, request: Message) -> Result:
    validate_only = bool(request.get("validate_only"))
    topics = request.get("topics") or []
    wanted = 0
    for t in topics:
        have = ctx.cluster.topics.get(str(t.get("name") or ""))
        wanted += max(0, t.get("count", 0) - (len(have.partitions) if have else 0))
    if wanted > limits(ctx.cluster).max_records_per_user_op:
        return {
            "results": [
                {
                    "name": str(t.get("name") or ""),
                    "error_code": ErrorCode.POLICY_VIOLATION,
                    "error_message": EXCESSIVE_BATCH,
                }
                for t in topics
            ]
        }
    out: list[dict[str, Any]] = []
    for t, name, repeated in distinct_entries(topics, lambda t: str(t.get("name") or "")):
        result: dict[str, Any] = {"name": name, "error_code": 0, "error_message": None}
        out.append(result)
        if repeated:
            result["error_code"] = ErrorCode.INVALID_REQUEST
            result["error_message"] = "Duplicate topic in request."
            continue
        try:
            _grow(ctx, name, t.get("count", 0), t.get("assignments"), validate_only)
        except KafkaApiError as exc:
            result["error_code"] = exc.error
            result["error_message"] = exc.detail or None
    return {"results": out}


def _grow(
    ctx: RequestContext,
    name: str,
    count: int,
    raw_assignments: list[Message] | None,
    validate_only: bool,
) -> None:
    c = ctx.cluster
    topic = c.topics.get(name)
    if topic is None:
        raise KafkaApiError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"Topic {name} does not exist.")
    have = len(topic.partitions)
    if count == have:
        raise KafkaApiError(ErrorCode.INVALID_PARTITIONS, f"Topic already has {have} partitions.")
    if count < have:
        raise KafkaApiError(
            ErrorCode.INVALID_PARTITIONS,
            f"The topic {name} currently has {have} partition(s); {count} would not be an "
            f"increase.",
        )
    assignments: list[list[int]] | None = None
    if raw_assignments is not None:
        assignments = [list(a.get("broker_ids") or []) for a in raw_assignments]
        if len(assignments) != count - have:
            raise KafkaApiError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"Attempted to add {count - have} additional partition(s), but only "
                f"{len(assignments)} assignment(s) were specified.",
            )
        rf = len(topic.partitions[0].replicas) if topic.partitions else 1
        for replicas in assignments:
            c.check_replica_assignment(replicas)
            if len(replicas) != rf:
                raise KafkaApiError(
                    ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                    f"The manual partition assignment includes a partition with "
                    f"{len(replicas)} replica(s), but this is not consistent with previous "
                    f"partitions, which have {rf} replica(s).",
                )
    if validate_only:
        return
    c.create_partitions(name, count, assignments)

"""AlterPartitionReassignments (key 45), versions 0-1.

Moves each partition to its target replica list at once (a reassignment completes
instantly): replicas become the target, the ISR the running targets, and if the leader is
not among them the first running target leads (leader epoch bumped). A null replica list
cancels a reassignment: none is ever in progress, so NO_REASSIGNMENT_IN_PROGRESS. Errors:
UNKNOWN_TOPIC_OR_PARTITION, INVALID_REPLICA_ASSIGNMENT (empty list, a broker twice or an
unknown broker), INVALID_REPLICATION_FACTOR when v1's ``allow_replication_factor_change``
is false and the count changes.

Not implemented: ``timeout_ms`` is ignored; throttled, gradual reassignment.
"""

from __future__ import annotations

from typing import Any

from mockkafka.cluster.state import ClusterState, Partition
from mockkafka.errors import ErrorCode, KafkaApiError
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import Message


@handler("AlterPartitionReassignments", versions=(0, 1))
def handle(ctx: RequestContext, request: Message) -> Result:
    c = ctx.cluster
    allow_rf_change = bool(request.get("allow_replication_factor_change", True))
    if ctx.version < 1:
        allow_rf_change = True
    responses: list[dict[str, Any]] = []
    for t in request.get("topics") or []:
        name = t.get("name") or ""
        topic = c.topics.get(name)
        parts: list[dict[str, Any]] = []
        for rp in t.get("partitions") or []:
            idx = rp.get("partition_index", 0)
            out: dict[str, Any] = {"partition_index": idx, "error_code": 0, "error_message": None}
            parts.append(out)
            try:
                if topic is None or not 0 <= idx < len(topic.partitions):
                    raise KafkaApiError(
                        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                        f"Unable to find partition: {name}-{idx}",
                    )
                _reassign(c, topic.partitions[idx], rp.get("replicas"), allow_rf_change)
            except KafkaApiError as exc:
                out["error_code"] = exc.error
                out["error_message"] = exc.detail or None
        responses.append({"name": name, "partitions": parts})
    return {
        "error_code": 0,
        "error_message": None,
        "allow_replication_factor_change": allow_rf_change,
        "responses": responses,
    }


def _reassign(
    c: ClusterState, p: Partition, target: list[int] | None, allow_rf_change: bool
) -> None:
    if target is None:
        raise KafkaApiError(
            ErrorCode.NO_REASSIGNMENT_IN_PROGRESS,
            f"Partition {p.topic}-{p.index} has no ongoing reassignment.",
        )
    c.check_replica_assignment(target)
    if not allow_rf_change and len(target) != len(p.replicas):
        raise KafkaApiError(
            ErrorCode.INVALID_REPLICATION_FACTOR,
            f"The replication factor is changed from {len(p.replicas)} to {len(target)}",
        )
    if list(target) == p.replicas:
        return
    p.replicas = list(target)
    live = [b for b in target if c.brokers[b].running]
    p.isr = live or [target[0]]
    p.partition_epoch += 1
    if p.leader not in live:
        c.set_leader(p.topic, p.index, live[0] if live else -1)
    else:
        c.notify(("topics",))

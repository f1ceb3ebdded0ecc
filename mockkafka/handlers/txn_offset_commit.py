"""TxnOffsetCommit (key 28), versions 0-5.

Sent to the GROUP coordinator: stages offsets for the group under the producer's
transaction; they become the group's committed offsets when the transaction commits and are
discarded when it aborts (OffsetFetch with ``require_stable`` sees them as pending until
then). The group must have been added with AddOffsetsToTxn (INVALID_TXN_STATE otherwise).
v3+ carry the consumer's generation, member id and instance id (KIP-447), checked by the
group coordinator (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID). Other errors:
NOT_COORDINATOR, INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED (INVALID_PRODUCER_EPOCH before
v3), UNKNOWN_TOPIC_OR_PARTITION per partition. Not implemented: authorization,
OFFSET_METADATA_TOO_LARGE.
"""

from __future__ import annotations

from typing import Any

from mockkafka.cluster.transactions import PendingOffset, TopicPartition, fenced_error
from mockkafka.errors import ErrorCode
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import Message


@handler("TxnOffsetCommit", versions=(0, 5))
def handle(ctx: RequestContext, request: Message) -> Result:
    v = ctx.version
    offsets: dict[TopicPartition, PendingOffset] = {}
    order: list[tuple[str, list[int]]] = []
    for t in request.get("topics") or []:
        name = t.get("name") or ""
        idxs = []
        for p in t.get("partitions") or []:
            idx = p.get("partition_index", 0)
            offsets[(name, idx)] = PendingOffset(
                p.get("committed_offset", -1),
                p.get("committed_leader_epoch", -1) if v >= 2 else -1,
                p.get("committed_metadata"),
            )
            idxs.append(idx)
        order.append((name, idxs))
    results = ctx.cluster.transactions.txn_offset_commit(
        request.get("transactional_id") or "",
        request.get("group_id") or "",
        request.get("producer_id", -1),
        request.get("producer_epoch", -1),
        offsets,
        generation_id=request.get("generation_id_or_member_epoch", -1) if v >= 3 else -1,
        member_id=request.get("member_id") or "" if v >= 3 else "",
        group_instance_id=request.get("group_instance_id") if v >= 3 else None,
        validate_member=v >= 3,
        broker_id=ctx.broker_id,
    )
    topics: list[dict[str, Any]] = []
    for name, idxs in order:
        parts = []
        for idx in idxs:
            err = results.get((name, idx), ErrorCode.NONE)
            if err == ErrorCode.PRODUCER_FENCED:
                err = fenced_error(v, 3)
            parts.append({"partition_index": idx, "error_code": err})
        topics.append({"name": name, "partitions": parts})
    return {"topics": topics}

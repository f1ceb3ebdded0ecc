"""DescribeTransactions (key 65), version 0.

The coordinator's view of each requested transactional id: state (Kafka's names: Empty,
Ongoing, PrepareCommit, ...), timeout, start time of the ongoing transaction (-1 when none),
producer id and epoch, and the partitions in the transaction (a group's offsets appear as its
``__consumer_offsets`` partition). Errors per id: NOT_COORDINATOR when another broker
coordinates it, TRANSACTIONAL_ID_NOT_FOUND. Not implemented: authorization.
"""

from __future__ import annotations

from typing import Any

from mockkafka.errors import ErrorCode
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import Message


@handler("DescribeTransactions", versions=(0, 0))
def handle(ctx: RequestContext, request: Message) -> Result:
    c = ctx.cluster
    txns = c.transactions
    out: list[dict[str, Any]] = []
    for tid in request.get("transactional_ids") or []:
        entry: dict[str, Any] = {
            "error_code": 0,
            "transactional_id": tid,
            "transaction_state": "",
            "transaction_timeout_ms": 0,
            "transaction_start_time_ms": -1,
            "producer_id": -1,
            "producer_epoch": -1,
            "topics": [],
        }
        out.append(entry)
        if not txns.is_coordinator(ctx.broker_id, tid):
            entry["error_code"] = ErrorCode.NOT_COORDINATOR
            continue
        txn = txns.get(tid)
        if txn is None:
            # Kafka leaves the schema defaults (producer id and epoch 0) in such an entry.
            entry.update(
                error_code=ErrorCode.TRANSACTIONAL_ID_NOT_FOUND, producer_id=0, producer_epoch=0
            )
            continue
        by_topic: dict[str, list[int]] = {}
        for topic, idx in txn.topic_partitions(c.config.offsets_topic_partitions):
            by_topic.setdefault(topic, []).append(idx)
        entry.update(
            transaction_state=txn.state.value,
            transaction_timeout_ms=txn.timeout_ms,
            transaction_start_time_ms=txn.start_time_ms,
            producer_id=txn.producer_id,
            producer_epoch=txn.producer_epoch,
            topics=[{"topic": t, "partitions": ps} for t, ps in by_topic.items()],
        )
    return {"transaction_states": out}

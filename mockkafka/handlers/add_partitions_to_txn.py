"""AddPartitionsToTxn (key 24), versions 0-5.

Adds partitions to the producer's transaction at its coordinator (``cluster/transactions.py``),
starting the transaction (and its timeout) on the first add. v0-3 name one transaction; v4+
batch several and may be ``verify_only`` (KIP-890: answer whether each partition is already
in the transaction, adding nothing). Per-partition errors: NOT_COORDINATOR,
INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED (INVALID_PRODUCER_EPOCH before v2, KIP-588),
CONCURRENT_TRANSACTIONS while the previous transaction completes, INVALID_TXN_STATE,
UNKNOWN_TOPIC_OR_PARTITION with OPERATION_NOT_ATTEMPTED for the rest. Not implemented:
authorization (TRANSACTIONAL_ID_AUTHORIZATION_FAILED), the CLUSTER_ACTION check for v4+.
"""

from __future__ import annotations

from typing import Any

from mockkafka.cluster.transactions import TopicPartition, fenced_error
from mockkafka.errors import ErrorCode
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import Message


def _partitions(topics: list[dict[str, Any]]) -> list[TopicPartition]:
    out: list[TopicPartition] = []
    for t in topics or []:
        for idx in t.get("partitions") or []:
            tp = (t.get("name") or "", idx)
            if tp not in out:
                out.append(tp)
    return out


def _topic_results(results: dict[TopicPartition, ErrorCode], version: int) -> list[dict[str, Any]]:
    by_topic: dict[str, list[dict[str, Any]]] = {}
    for (topic, idx), err in results.items():
        if err == ErrorCode.PRODUCER_FENCED:
            err = fenced_error(version, 2)
        by_topic.setdefault(topic, []).append({"partition_index": idx, "partition_error_code": err})
    return [{"name": n, "results_by_partition": parts} for n, parts in by_topic.items()]


@handler("AddPartitionsToTxn", versions=(0, 5))
def handle(ctx: RequestContext, request: Message) -> Result:
    txns = ctx.cluster.transactions
    if ctx.version <= 3:
        results = txns.add_partitions(
            request.get("v3_and_below_transactional_id") or "",
            request.get("v3_and_below_producer_id", -1),
            request.get("v3_and_below_producer_epoch", -1),
            _partitions(request.get("v3_and_below_topics") or []),
            broker_id=ctx.broker_id,
        )
        return {"results_by_topic_v3_and_below": _topic_results(results, ctx.version)}
    out = []
    for t in request.get("transactions") or []:
        tid = t.get("transactional_id") or ""
        results = txns.add_partitions(
            tid,
            t.get("producer_id", -1),
            t.get("producer_epoch", -1),
            _partitions(t.get("topics") or []),
            verify_only=bool(t.get("verify_only")),
            broker_id=ctx.broker_id,
        )
        out.append({"transactional_id": tid, "topic_results": _topic_results(results, ctx.version)})
    return {"error_code": 0, "results_by_transaction": out}

"""DescribeProducers (key 61), version 0.

For each requested partition this broker leads: the active producers the leader remembers
(idempotent and transactional), with their epoch, last sequence, the timestamp of their last
batch, the coordinator epoch of their transaction and the first offset of their open
transaction (-1 when none). Errors per partition: UNKNOWN_TOPIC_OR_PARTITION,
NOT_LEADER_OR_FOLLOWER. Not implemented: producer expiry (``producer.id.expiration.ms``),
authorization.
"""

from __future__ import annotations

from typing import Any

from mockkafka.cluster.state import Partition
from mockkafka.errors import ErrorCode
from mockkafka.handlers._common import find_partition, leader_error
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import Message


def active_producers(ctx: RequestContext, p: Partition) -> list[dict[str, Any]]:
    """The ``active_producers`` entries of one partition."""
    log = p.log
    out = []
    for pid, st in sorted(p.producers.items()):
        last_ts = -1
        if st.batches:
            meta = st.batches[-1]
            if meta.log_append_time >= 0:
                last_ts = meta.log_append_time
            else:
                i = log.batch_index(meta.last_offset)
                if i < len(log.batches) and log.batches[i].base_offset <= meta.last_offset:
                    last_ts = log.batches[i].max_timestamp
        txn = ctx.cluster.transactions.for_producer_id(pid)
        out.append(
            {
                "producer_id": pid,
                "producer_epoch": st.epoch,
                "last_sequence": st.last_seq,
                "last_timestamp": last_ts,
                "coordinator_epoch": txn.coordinator_epoch if txn is not None else -1,
                "current_txn_start_offset": log.open_txn_first_offset.get(pid, -1),
            }
        )
    return out


@handler("DescribeProducers", versions=(0, 0))
def handle(ctx: RequestContext, request: Message) -> Result:
    topics = []
    for t in request.get("topics") or []:
        name = t.get("name") or ""
        topic = ctx.cluster.topics.get(name)
        parts = []
        for idx in t.get("partition_indexes") or []:
            out: dict[str, Any] = {"partition_index": idx, "error_code": 0, "active_producers": []}
            p = find_partition(topic, idx) if topic is not None else None
            if p is None:
                out["error_code"] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            else:
                err = leader_error(ctx, p)
                if err != ErrorCode.NONE:
                    out["error_code"] = err
                else:
                    out["active_producers"] = active_producers(ctx, p)
            parts.append(out)
        topics.append({"name": name, "partitions": parts})
    return {"topics": topics}

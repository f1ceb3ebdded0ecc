"""WriteTxnMarkers (key 27), versions 0-2.

Broker-to-broker in Kafka (the transaction coordinator writes markers to partition leaders);
also what ``Admin.abortTransaction`` sends to end a hanging transaction. Each marker is
appended as a control batch to the listed partitions this broker leads. Per-partition
errors: UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER, INVALID_PRODUCER_EPOCH for a
marker older than the producer's epoch on the partition. The transaction coordinator's own
state is not changed (as in Kafka). Not implemented: markers for ``__consumer_offsets``
partitions (offsets are committed by the coordinator itself), CLUSTER_ACTION authorization.
"""

from __future__ import annotations

from typing import Any

from mockkafka.cluster.transactions import write_marker
from mockkafka.errors import ErrorCode
from mockkafka.handlers._common import find_partition, leader_error
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import Message


@handler("WriteTxnMarkers", versions=(0, 2))
def handle(ctx: RequestContext, request: Message) -> Result:
    c = ctx.cluster
    markers = []
    for m in request.get("markers") or []:
        pid = m.get("producer_id", -1)
        topics: list[dict[str, Any]] = []
        for t in m.get("topics") or []:
            name = t.get("name") or ""
            topic = c.topics.get(name)
            parts = []
            for idx in t.get("partition_indexes") or []:
                p = find_partition(topic, idx) if topic is not None else None
                if p is None:
                    err = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                else:
                    err = leader_error(ctx, p)
                    if err == ErrorCode.NONE:
                        err = write_marker(
                            c,
                            p,
                            committed=bool(m.get("transaction_result")),
                            producer_id=pid,
                            producer_epoch=m.get("producer_epoch", -1),
                            coordinator_epoch=m.get("coordinator_epoch", 0),
                        )
                parts.append({"partition_index": idx, "error_code": err})
            topics.append({"name": name, "partitions": parts})
        markers.append({"producer_id": pid, "topics": topics})
    return {"markers": markers}

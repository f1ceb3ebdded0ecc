"""AddOffsetsToTxn (key 25), versions 0-4.

Makes a consumer group's offsets part of the producer's transaction (the group's
``__consumer_offsets`` partition joins it), so TxnOffsetCommit may stage offsets for the
group. Sent to the transaction coordinator. Errors: NOT_COORDINATOR,
INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED (INVALID_PRODUCER_EPOCH before v2, KIP-588),
CONCURRENT_TRANSACTIONS, INVALID_TXN_STATE. Not implemented: authorization.
"""

from __future__ import annotations

from mockkafka.cluster.transactions import fenced_error
from mockkafka.errors import ErrorCode
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import Message


@handler("AddOffsetsToTxn", versions=(0, 4))
def handle(ctx: RequestContext, request: Message) -> Result:
    if not request.get("transactional_id"):  # refused before any lookup, as in Kafka
        return {"error_code": ErrorCode.INVALID_REQUEST}
    err = ctx.cluster.transactions.add_offsets(
        request.get("transactional_id") or "",
        request.get("producer_id", -1),
        request.get("producer_epoch", -1),
        request.get("group_id") or "",
        broker_id=ctx.broker_id,
    )
    if err == ErrorCode.PRODUCER_FENCED:
        err = fenced_error(ctx.version, 2)
    return {"error_code": err}

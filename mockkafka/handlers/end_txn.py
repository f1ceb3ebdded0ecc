"""EndTxn (key 26), versions 0-5.

Commits or aborts the producer's ongoing transaction at its coordinator: transaction markers
(control batches) are written to every partition of the transaction, waking read_committed
fetchers, and offsets staged with TxnOffsetCommit are committed (or discarded). A retry after
completion with the same result answers NONE, the other result INVALID_TXN_STATE; a retry
while markers are still being written answers CONCURRENT_TRANSACTIONS. Other errors:
NOT_COORDINATOR, INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED (INVALID_PRODUCER_EPOCH before
v2, KIP-588). v5 echoes the producer id and epoch. Not implemented: the transaction.version 2
(KIP-890 part 2) epoch bump at every EndTxn; authorization.
"""

from __future__ import annotations

from mockkafka.cluster.transactions import fenced_error
from mockkafka.errors import ErrorCode
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import Message


@handler("EndTxn", versions=(0, 5))
def handle(ctx: RequestContext, request: Message) -> Result:
    txns = ctx.cluster.transactions
    tid = request.get("transactional_id") or ""
    if not tid:  # Kafka's transaction coordinator refuses it before looking anything up
        return {"error_code": ErrorCode.INVALID_REQUEST, "producer_id": -1, "producer_epoch": -1}
    err = txns.end_txn(
        tid,
        request.get("producer_id", -1),
        request.get("producer_epoch", -1),
        bool(request.get("committed")),
        broker_id=ctx.broker_id,
    )
    if err == ErrorCode.PRODUCER_FENCED:
        err = fenced_error(ctx.version, 2)
    txn = txns.get(tid)
    ok = err == ErrorCode.NONE and txn is not None
    return {
        "error_code": err,
        "producer_id": txn.producer_id if ok and txn else -1,
        "producer_epoch": txn.producer_epoch if ok and txn else -1,
    }

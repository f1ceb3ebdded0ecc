"""InitProducerId (key 22), versions 0-6.

Idempotent producers (no transactional id) get a fresh producer id at epoch 0; a producer
that names its current id and epoch (v3+, KIP-360) gets the epoch bumped, so it can reset
its sequence numbers after an error. Transactional ids are handed to the transaction
coordinator (``cluster.transactions``).

v6 (KIP-939, unstable in Kafka 4.4) adds two-phase commit: ``enable_2pc`` and
``keep_prepared_txn`` are refused with TRANSACTIONAL_ID_AUTHORIZATION_FAILED, as a broker
without ``transaction.two.phase.commit.enable`` does (2PC is not implemented); otherwise v6
answers as v5 with ``ongoing_txn_producer_id``/``ongoing_txn_producer_epoch`` -1 (no prepared
transaction is kept).
"""

from __future__ import annotations

from typing import Any

from mockkafka.cluster.producers import ProducerIdInfo
from mockkafka.cluster.transactions import fenced_error
from mockkafka.errors import ErrorCode
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import Message

MAX_EPOCH = 32767


@handler("InitProducerId", versions=(0, 6))
def handle(ctx: RequestContext, request: Message) -> Result:
    out = _init(ctx, request)
    if ctx.version >= 6:  # no prepared transaction kept (2PC is not implemented)
        out["ongoing_txn_producer_id"] = -1
        out["ongoing_txn_producer_epoch"] = -1
    return out


def _init(ctx: RequestContext, request: Message) -> dict[str, Any]:
    c = ctx.cluster
    txn_id = request.get("transactional_id")
    if ctx.version >= 6 and (request.get("enable2_pc") or request.get("keep_prepared_txn")):
        return {
            "error_code": ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
            "producer_id": -1,
            "producer_epoch": -1,
        }
    if txn_id is not None:
        v3 = ctx.version >= 3  # v3+ names the producer's current id and epoch (KIP-360)
        err, pid, epoch = c.transactions.init(
            txn_id,
            request.get("transaction_timeout_ms", 0),
            broker_id=ctx.broker_id,
            expected_producer_id=request.get("producer_id", -1) if v3 else -1,
            expected_epoch=request.get("producer_epoch", -1) if v3 else -1,
        )
        if err == ErrorCode.PRODUCER_FENCED:
            err = fenced_error(ctx.version, 4)
        return {"error_code": err, "producer_id": pid, "producer_epoch": epoch}
    pid = request.get("producer_id", -1)
    epoch = request.get("producer_epoch", -1)
    if pid >= 0 and epoch >= 0:
        info = c.producer_ids.get(pid)
        if info is None or info.epoch != epoch:
            return {
                "error_code": ErrorCode.INVALID_PRODUCER_EPOCH,
                "producer_id": -1,
                "producer_epoch": -1,
            }
        if info.epoch < MAX_EPOCH - 1:
            info.epoch += 1
            return {"error_code": 0, "producer_id": pid, "producer_epoch": info.epoch}
    new = c.allocate_producer_id()
    c.producer_ids[new] = ProducerIdInfo(new, 0)
    return {"error_code": 0, "producer_id": new, "producer_epoch": 0}

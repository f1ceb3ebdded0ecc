"""ListTransactions (key 66), versions 0-2.

The transactional ids this broker coordinates (``Admin.listTransactions`` asks every broker),
filtered by state names (unknown names are echoed in ``unknown_state_filters``), producer
ids, v1+ ``duration_filter`` (only transactions running at least that many ms) and v2+
``transactional_id_pattern`` (a regular expression matched against the whole id; an invalid
pattern answers INVALID_REQUEST). Not implemented: authorization.
"""

from __future__ import annotations

import re

from mockkafka.cluster.transactions import STATE_NAMES
from mockkafka.errors import ErrorCode
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import Message


@handler("ListTransactions", versions=(0, 2))
def handle(ctx: RequestContext, request: Message) -> Result:
    filters = list(request.get("state_filters") or [])
    unknown = [s for s in filters if s not in STATE_NAMES]
    pattern = request.get("transactional_id_pattern") if ctx.version >= 2 else None
    if pattern:
        try:
            re.compile(pattern)
        except re.error:
            return {
                "error_code": ErrorCode.INVALID_REQUEST,
                "unknown_state_filters": [],
                "transaction_states": [],
            }
    txns = ctx.cluster.transactions.matching(
        broker_id=ctx.broker_id,
        states={s for s in filters if s in STATE_NAMES} if filters else None,
        producer_ids=set(request.get("producer_id_filters") or []) or None,
        min_duration_ms=request.get("duration_filter", -1) if ctx.version >= 1 else -1,
        pattern=pattern or None,
    )
    if filters and not set(filters) - set(unknown):
        txns = []  # every filter was unknown: nothing can match
    return {
        "error_code": 0,
        "unknown_state_filters": unknown,
        "transaction_states": [
            {
                "transactional_id": t.transactional_id,
                "producer_id": t.producer_id,
                "transaction_state": t.state.value,
            }
            for t in txns
        ],
    }

"""The shared answer of RenewDelegationToken and ExpireDelegationToken."""

from __future__ import annotations

from collections.abc import Callable

from mockkafka.cluster import delegation_tokens as dt
from mockkafka.cluster.state import ClusterState
from mockkafka.handlers.base import RequestContext, Result
from mockkafka.protocol.codec import Message

Change = Callable[[ClusterState, dt.Principal, bytes, int], int]


def change_expiry(ctx: RequestContext, request: Message, change: Change, period: str) -> Result:
    """Refuse as Kafka would, else apply ``change`` with the request's ``period`` field."""
    refused = dt.refusal(ctx.cluster, ctx.listener)
    try:
        if refused is not None:
            raise dt.TokenError(refused)
        expiry = change(
            ctx.cluster,
            dt.parse_principal(ctx.principal),
            bytes(request.get("hmac") or b""),
            request.get(period, -1),
        )
    except dt.TokenError as exc:
        return {"error_code": int(exc.code), "expiry_timestamp_ms": -1, "throttle_time_ms": 0}
    return {"error_code": 0, "expiry_timestamp_ms": expiry, "throttle_time_ms": 0}

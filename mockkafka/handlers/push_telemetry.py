"""PushTelemetry (key 72), version 0 (KIP-714).

Accepts and discards metrics pushed under the subscription GetTelemetrySubscriptions handed
out; another ``subscription_id`` answers UNKNOWN_SUBSCRIPTION_ID (the client then asks for
its subscription again), a zero client instance id INVALID_REQUEST.

Not implemented: metrics are not decoded or stored.
"""

from __future__ import annotations

from mockkafka.errors import ErrorCode
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.handlers.get_telemetry_subscriptions import EMPTY_SUBSCRIPTION_ID
from mockkafka.protocol.codec import ZERO_UUID, Message


@handler("PushTelemetry", versions=(0, 0))
def handle(ctx: RequestContext, request: Message) -> Result:
    if (request.get("client_instance_id") or ZERO_UUID) == ZERO_UUID:
        return {"error_code": ErrorCode.INVALID_REQUEST}
    if request.get("subscription_id") != EMPTY_SUBSCRIPTION_ID:
        return {"error_code": ErrorCode.UNKNOWN_SUBSCRIPTION_ID}
    return {"error_code": 0}

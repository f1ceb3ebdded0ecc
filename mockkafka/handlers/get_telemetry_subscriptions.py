"""GetTelemetrySubscriptions (key 71), version 0 (KIP-714).

Answers as a broker whose metrics plugin has no subscription matching the client: no
requested metrics, so the client pushes nothing and asks again after ``push_interval_ms``
(5 minutes). A client that sends the zero uuid gets a fresh ``client_instance_id``; others
keep theirs. Subscriptions set through CLIENT_METRICS configs are not matched against
clients.

Not implemented: metric subscriptions (``requested_metrics`` is always empty).
"""

from __future__ import annotations

import uuid

from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import ZERO_UUID, Message

PUSH_INTERVAL_MS = 300_000
TELEMETRY_MAX_BYTES = 1_048_576
# The subscription id of "no metrics"; PushTelemetry accepts it.
EMPTY_SUBSCRIPTION_ID = 0x6D6B  # arbitrary but stable
# zstd, lz4, gzip, snappy: Kafka's preference order.
ACCEPTED_COMPRESSION_TYPES = [4, 3, 1, 2]


@handler("GetTelemetrySubscriptions", versions=(0, 0))
def handle(ctx: RequestContext, request: Message) -> Result:
    instance = request.get("client_instance_id") or ZERO_UUID
    if instance == ZERO_UUID:
        instance = uuid.uuid4()
    return {
        "error_code": 0,
        "client_instance_id": instance,
        "subscription_id": EMPTY_SUBSCRIPTION_ID,
        "accepted_compression_types": ACCEPTED_COMPRESSION_TYPES,
        "push_interval_ms": PUSH_INTERVAL_MS,
        "telemetry_max_bytes": TELEMETRY_MAX_BYTES,
        "delta_temporality": True,
        "requested_metrics": [],
    }

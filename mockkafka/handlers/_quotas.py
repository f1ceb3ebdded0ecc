"""Client quota enforcement at dispatch (see ``cluster/quotas.py``): Produce and Fetch
bytes are counted per (user, client-id); a response over quota carries Kafka's
``throttle_time_ms`` and the connection is not read again until that time has passed."""

from __future__ import annotations

from typing import Any

from mockkafka.cluster.quotas import client_quotas
from mockkafka.handlers.base import RequestContext

PRODUCE, FETCH = 0, 1
THROTTLED_UNTIL = "quota_throttled_until_ms"
"""``connection_state`` key: the cluster time before which the server reads nothing more."""


def _size(records: Any) -> int:
    if records is None:
        return 0
    if isinstance(records, (bytes, bytearray, memoryview)):
        return len(records)
    return sum(len(c) for c in records)


def apply_quotas(ctx: RequestContext, request: dict[str, Any], response: Any) -> None:
    """Count the request's bytes and throttle ``response`` (a dict) when over quota."""
    key = ctx.api.key
    if key not in (PRODUCE, FETCH) or not isinstance(response, dict):
        return
    quotas = ctx.cluster.extensions.get("client_quotas")
    if quotas is None or not quotas.values:
        return
    if key == PRODUCE:
        quota_key = "producer_byte_rate"
        nbytes = sum(
            _size(pd.get("records"))
            for td in request.get("topic_data") or []
            for pd in td.get("partition_data") or []
        )
    else:
        quota_key = "consumer_byte_rate"
        nbytes = sum(
            _size(p.get("records"))
            for t in response.get("responses") or []
            for p in t.get("partitions") or []
        )
    user = ctx.principal.split(":", 1)[-1]
    ms = client_quotas(ctx.cluster).record(
        ctx.cluster, quota_key, user, ctx.client_id or "", nbytes, ctx.now_ms
    )
    if ms > 0:
        response["throttle_time_ms"] = max(int(response.get("throttle_time_ms") or 0), ms)
        ctx.connection_state[THROTTLED_UNTIL] = ctx.now_ms + ms

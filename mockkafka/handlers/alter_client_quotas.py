"""AlterClientQuotas (key 49), versions 0-1.

Sets or removes quota values per entity (``user``, ``client-id``, ``ip``; a null name is the
default entity) in the cluster's quota store, which Produce and Fetch enforce (see
``cluster/quotas.py``). Each entry is answered on its own: an unknown entity type or quota
key, a non-positive value, ``ip`` combined with another type or a key given twice answers
INVALID_REQUEST for that entry. ``validate_only`` checks without storing.
"""

from __future__ import annotations

from typing import Any

from mockkafka.cluster.quotas import client_quotas, make_entity
from mockkafka.errors import ErrorCode, KafkaApiError
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import Message


@handler("AlterClientQuotas", versions=(0, 1))
def handle(ctx: RequestContext, request: Message) -> Result:
    store = client_quotas(ctx.cluster)
    apply = not request.get("validate_only", False)
    out: list[dict[str, Any]] = []
    for entry in request.get("entries") or []:
        raw = entry.get("entity") or []
        result: dict[str, Any] = {
            "error_code": 0,
            "error_message": None,
            "entity": [
                {"entity_type": e.get("entity_type"), "entity_name": e.get("entity_name")}
                for e in raw
            ],
        }
        out.append(result)
        try:
            pairs = {e.get("entity_type") or "": e.get("entity_name") for e in raw}
            if len(pairs) != len(raw):
                raise KafkaApiError(ErrorCode.INVALID_REQUEST, "Duplicate entity type")
            ops = [
                (o.get("key") or "", None if o.get("remove") else float(o.get("value", 0.0)))
                for o in entry.get("ops") or []
            ]
            store.alter(make_entity(pairs), ops, apply=apply)
        except KafkaApiError as exc:
            result["error_code"] = int(exc.error)
            result["error_message"] = exc.detail
    return {"throttle_time_ms": 0, "entries": out}

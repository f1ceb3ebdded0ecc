"""DescribeClientQuotas (key 48), versions 0-1.

The quotas stored by AlterClientQuotas / ``cluster.set_client_quotas`` whose entity matches
every component: match type 0 (exact name), 1 (the default entity), 2 (any entity of that
type); with ``strict`` an entity must have no other types. Filters are checked as Kafka
does: entity types ``user``, ``client-id`` and ``ip``; a type given twice, an unknown type
or match type, or an exact match without a name answers INVALID_REQUEST.
"""

from __future__ import annotations

from mockkafka.cluster.quotas import ENTITY_TYPES, client_quotas
from mockkafka.errors import ErrorCode
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import Message


@handler("DescribeClientQuotas", versions=(0, 1))
def handle(ctx: RequestContext, request: Message) -> Result:
    seen: set[str] = set()
    for comp in request.get("components") or []:
        etype = comp.get("entity_type") or ""
        match_type = comp.get("match_type", 0)
        problem = None
        if etype in seen:
            problem = f"Duplicate entity type in filter: {etype}"
        elif etype not in ENTITY_TYPES:
            problem = f"Custom entity type '{etype}' not supported"
        elif match_type not in (0, 1, 2):
            problem = f"Unexpected match type: {match_type}"
        elif match_type == 0 and comp.get("match") is None:
            problem = f"Exact match for entity type '{etype}' needs a name"
        if problem:
            return {
                "error_code": ErrorCode.INVALID_REQUEST,
                "error_message": problem,
                "entries": None,
            }
        seen.add(etype)
    components = [
        (c.get("entity_type") or "", c.get("match_type", 0), c.get("match"))
        for c in request.get("components") or []
    ]
    found = client_quotas(ctx.cluster).describe(components, bool(request.get("strict")))
    entries = [
        {
            "entity": [{"entity_type": t, "entity_name": n} for t, n in entity],
            "values": [{"key": k, "value": v} for k, v in sorted(values.items())],
        }
        for entity, values in found
    ]
    return {"error_code": 0, "error_message": None, "entries": entries}

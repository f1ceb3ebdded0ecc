"""DescribeClientQuotas (key 48), versions 0-1.

No client quotas are configured, so every valid filter matches no entity: ``entries`` is an
empty list. Filters are checked as Kafka does: entity types ``user``, ``client-id`` and
``ip``; match types 0 (exact, needs a name), 1 (default) and 2 (any); a type given twice
answers INVALID_REQUEST.

Not implemented: storing quotas (AlterClientQuotas) and enforcing them.
"""

from __future__ import annotations

from mockkafka.errors import ErrorCode
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import Message

ENTITY_TYPES = frozenset({"user", "client-id", "ip"})


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
    return {"error_code": 0, "error_message": None, "entries": []}

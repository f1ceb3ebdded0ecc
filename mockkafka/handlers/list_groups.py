"""ListGroups (key 16), versions 0-5.

Lists the groups this broker coordinates (clients ask every broker), with their protocol
type, state (v4+) and type (``classic`` or ``consumer``, v5+). ``states_filter`` (v4+) and
``types_filter`` (v5+) keep matching groups; both compare case-insensitively, as Kafka does.
"""

from __future__ import annotations

from mockkafka.cluster.groups_common import Message
from mockkafka.handlers.base import RequestContext, Result, handler


@handler("ListGroups", versions=(0, 5))
def handle(ctx: RequestContext, request: Message) -> Result:
    states = {s.lower() for s in request.get("states_filter") or []}
    types = {t.lower() for t in request.get("types_filter") or []}
    out = []
    for g in ctx.cluster.groups.coordinated_by(ctx.broker_id):
        state = g.state_name
        if state == "Dead":
            continue
        if states and state.lower() not in states:
            continue
        if types and g.kind not in types:
            continue
        out.append(
            {
                "group_id": g.group_id,
                "protocol_type": g.protocol_type_name,
                "group_state": state,
                "group_type": g.kind,
            }
        )
    return {"error_code": 0, "groups": out}

"""LeaveGroup (key 13), versions 0-5.

Removes members from a classic group, which then rebalances. v0-2 name one member; v3+ a
batch of members, each by member id and/or ``group_instance_id`` (an admin may remove a
static member by instance id alone), with a result per member. Per member:
UNKNOWN_MEMBER_ID (not in the group), FENCED_INSTANCE_ID (instance id held by another member
id). The v5 ``reason`` is accepted and ignored.
"""

from __future__ import annotations

from mockkafka.cluster.groups_common import Message
from mockkafka.errors import ErrorCode
from mockkafka.handlers._groups import classic_group_error
from mockkafka.handlers.base import RequestContext, Result, handler


@handler("LeaveGroup", versions=(0, 5))
def handle(ctx: RequestContext, request: Message) -> Result:
    v = ctx.version
    group_id: str = request.get("group_id") or ""
    if v >= 3:
        who = [
            (m.get("member_id") or "", m.get("group_instance_id"))
            for m in request.get("members") or []
        ]
    else:
        who = [(request.get("member_id") or "", None)]
    err = classic_group_error(ctx, group_id)
    g = ctx.cluster.groups.classic_group(group_id, create=False) if not err else None
    if err or isinstance(g, ErrorCode) or g is None:
        top = err or ErrorCode.UNKNOWN_MEMBER_ID
        return {"error_code": top, "members": []}
    results = [(mid, iid, g.leave(mid, iid)) for mid, iid in who]
    if v < 3:
        return {"error_code": results[0][2]}
    return {
        "error_code": ErrorCode.NONE,
        "members": [
            {"member_id": mid, "group_instance_id": iid, "error_code": e} for mid, iid, e in results
        ],
    }

"""DeleteGroups (key 42), versions 0-3.

Deletes groups (classic, consumer and share groups) with their committed offsets or share
state. Per group: GROUP_ID_NOT_FOUND when it does not exist, NON_EMPTY_GROUP while it has
members, NOT_COORDINATOR when another broker coordinates it; v3 adds ``error_message``,
saying why, to a failed group.
"""

from __future__ import annotations

from mockkafka.cluster.groups_common import Message
from mockkafka.errors import ErrorCode, error_code
from mockkafka.handlers._groups import coordinator_error
from mockkafka.handlers.base import RequestContext, Result, handler

_WHY = {
    ErrorCode.GROUP_ID_NOT_FOUND: "Group {} does not exist.",
    ErrorCode.NON_EMPTY_GROUP: "Group {} is not empty.",
}


@handler("DeleteGroups", versions=(0, 3))
def handle(ctx: RequestContext, request: Message) -> Result:
    results = []
    for gid in request.get("groups_names") or []:
        err = coordinator_error(ctx, gid) or ctx.cluster.groups.delete_group(gid)
        why = _WHY.get(error_code(err))
        results.append(
            {"group_id": gid, "error_code": err, "error_message": why.format(gid) if why else None}
        )
    return {"results": results}

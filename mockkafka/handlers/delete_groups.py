"""DeleteGroups (key 42), versions 0-2.

Deletes groups with their committed offsets. Per group: GROUP_ID_NOT_FOUND when it does not
exist, NON_EMPTY_GROUP while it has members, NOT_COORDINATOR when another broker
coordinates it.
"""

from __future__ import annotations

from mockkafka.cluster.groups_common import Message
from mockkafka.handlers._groups import coordinator_error
from mockkafka.handlers.base import RequestContext, Result, handler


@handler("DeleteGroups", versions=(0, 2))
def handle(ctx: RequestContext, request: Message) -> Result:
    results = []
    for gid in request.get("groups_names") or []:
        err = coordinator_error(ctx, gid) or ctx.cluster.groups.delete_group(gid)
        results.append({"group_id": gid, "error_code": err})
    return {"results": results}

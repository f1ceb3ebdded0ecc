"""Heartbeat (key 12), versions 0-4.

Keeps a classic group member alive (restarts its session timer) and tells it whether a
rebalance is under way: REBALANCE_IN_PROGRESS in the join phase, so the member rejoins.
UNKNOWN_MEMBER_ID for a member the group does not know (expired, or the group is gone),
ILLEGAL_GENERATION for an old generation, FENCED_INSTANCE_ID for a replaced static member.
While the coordinator loads the group Kafka answers NONE without looking at the member
(``GroupCoordinatorService.heartbeat``: "the group is still loading, so blindly respond"),
never COORDINATOR_LOAD_IN_PROGRESS.
"""

from __future__ import annotations

from mockkafka.cluster.groups_common import Message
from mockkafka.errors import ErrorCode
from mockkafka.handlers._groups import classic_group_error
from mockkafka.handlers.base import RequestContext, Result, handler


@handler("Heartbeat", versions=(0, 4))
def handle(ctx: RequestContext, request: Message) -> Result:
    group_id: str = request.get("group_id") or ""
    err = classic_group_error(ctx, group_id)
    if err == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
        return {"error_code": ErrorCode.NONE}
    if err:
        return {"error_code": err}
    g = ctx.cluster.groups.classic_group(group_id, create=False)
    if isinstance(g, ErrorCode):
        return {"error_code": ErrorCode.UNKNOWN_MEMBER_ID}
    return {
        "error_code": g.heartbeat(
            member_id=request.get("member_id") or "",
            group_instance_id=request.get("group_instance_id") if ctx.version >= 3 else None,
            generation_id=request.get("generation_id", -1),
        )
    }

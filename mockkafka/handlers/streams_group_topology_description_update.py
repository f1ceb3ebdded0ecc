"""StreamsGroupTopologyDescriptionUpdate (key 93), version 0 (KIP-1331).

A member of a streams group sends the human-readable description of its topology (nodes,
stores, successors) when a heartbeat answered ``topology_description_required``; the group
keeps it for StreamsGroupDescribe v1. Errors: NOT_COORDINATOR and friends,
GROUP_ID_NOT_FOUND (no such streams group), UNKNOWN_MEMBER_ID, STREAMS_INVALID_TOPOLOGY_EPOCH
(a description for another topology epoch than the group's).
"""

from __future__ import annotations

from mockkafka.cluster.groups_common import Message
from mockkafka.cluster.groups_streams import StreamsGroup
from mockkafka.errors import ErrorCode
from mockkafka.handlers._groups import coordinator_error
from mockkafka.handlers.base import RequestContext, Result, handler


@handler("StreamsGroupTopologyDescriptionUpdate", versions=(0, 0))
def handle(ctx: RequestContext, request: Message) -> Result:
    group_id: str = request.get("group_id") or ""
    err = coordinator_error(ctx, group_id)
    if err:
        return {"error_code": err}
    g = ctx.cluster.groups.get(group_id)
    if not isinstance(g, StreamsGroup):
        return {
            "error_code": ErrorCode.GROUP_ID_NOT_FOUND,
            "error_message": f"Group {group_id} is not a streams group.",
        }
    if request.get("member_id") not in g.members:
        return {
            "error_code": ErrorCode.UNKNOWN_MEMBER_ID,
            "error_message": f"member {request.get('member_id')} is unknown",
        }
    epoch = request.get("topology_epoch", 0)
    if g.topology is None or epoch != g.topology.epoch:
        return {
            "error_code": ErrorCode.STREAMS_INVALID_TOPOLOGY_EPOCH,
            "error_message": f"topology epoch {epoch} is not the group's",
        }
    g.topology_description = request.get("topology_description")
    return {"error_code": 0}

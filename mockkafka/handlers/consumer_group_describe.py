"""ConsumerGroupDescribe (key 69), version 0 (KIP-848).

Describes consumer (KIP-848) groups: state (Empty, Assigning, Reconciling, Stable), group
epoch, assignment epoch, assignor, and every member with its epoch, subscription, current
and target assignment (topic ids and names). GROUP_ID_NOT_FOUND for a group that does not
exist or is a classic group (use DescribeGroups).
"""

from __future__ import annotations

from typing import Any

from mockkafka.cluster.acls import ResourceType
from mockkafka.cluster.groups import ConsumerGroup
from mockkafka.cluster.groups_common import Message
from mockkafka.errors import ErrorCode
from mockkafka.handlers._groups import coordinator_error
from mockkafka.handlers.authz import AUTHORIZED_OPERATIONS_OMITTED, authorized_operations
from mockkafka.handlers.base import RequestContext, Result, handler


def describe(ctx: RequestContext, group_id: str, with_ops: bool) -> dict[str, Any]:
    base: dict[str, Any] = {
        "group_id": group_id,
        "authorized_operations": AUTHORIZED_OPERATIONS_OMITTED,
    }
    err = coordinator_error(ctx, group_id)
    if err:
        return {**base, "error_code": err}
    g = ctx.cluster.groups.get(group_id)
    if not isinstance(g, ConsumerGroup):
        what = "not found" if g is None else "is not a consumer group"
        return {
            **base,
            "error_code": ErrorCode.GROUP_ID_NOT_FOUND,
            "error_message": f"Group {group_id} {what}.",
        }
    return {
        **base,
        "error_code": 0,
        "authorized_operations": authorized_operations(ctx, ResourceType.GROUP, group_id)
        if with_ops
        else AUTHORIZED_OPERATIONS_OMITTED,
        "group_state": g.state_name,
        "group_epoch": g.group_epoch,
        "assignment_epoch": g.assignment_epoch,
        "assignor_name": g.assignor_name,
        "members": [g.describe_member(m) for m in g.members.values()],
    }


@handler("ConsumerGroupDescribe", versions=(0, 0))
def handle(ctx: RequestContext, request: Message) -> Result:
    with_ops = bool(request.get("include_authorized_operations"))
    return {"groups": [describe(ctx, gid, with_ops) for gid in request.get("group_ids") or []]}

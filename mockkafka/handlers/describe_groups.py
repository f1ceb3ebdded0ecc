"""DescribeGroups (key 15), versions 0-6.

Describes classic groups: state, protocol type, protocol (only when Stable), members with
client id and host and -- when Stable -- their metadata and assignment bytes, as Kafka does.
``authorized_operations`` (v3+, when asked): the principal's operations on a described group.
A group that does not exist is ``Dead`` with no error before v6 and GROUP_ID_NOT_FOUND from
v6; a KIP-848 group is not a classic group and is answered the same way (use
ConsumerGroupDescribe).
"""

from __future__ import annotations

from typing import Any

from mockkafka.cluster.acls import ResourceType
from mockkafka.cluster.groups import ClassicGroup
from mockkafka.cluster.groups_classic import ClassicGroupState
from mockkafka.cluster.groups_common import Message
from mockkafka.errors import ErrorCode
from mockkafka.handlers._groups import coordinator_error
from mockkafka.handlers.authz import AUTHORIZED_OPERATIONS_OMITTED, authorized_operations
from mockkafka.handlers.base import RequestContext, Result, handler


def describe(ctx: RequestContext, group_id: str, with_ops: bool) -> dict[str, Any]:
    v = ctx.version
    base: dict[str, Any] = {
        "group_id": group_id,
        "group_state": "",
        "protocol_type": "",
        "protocol_data": "",
        "members": [],
        "authorized_operations": AUTHORIZED_OPERATIONS_OMITTED,
    }
    err = coordinator_error(ctx, group_id)
    if err:
        return {**base, "error_code": err}
    g = ctx.cluster.groups.get(group_id)
    if not isinstance(g, ClassicGroup):
        missing = g is None
        return {
            **base,
            "group_state": "Dead",
            "error_code": ErrorCode.GROUP_ID_NOT_FOUND if v >= 6 else ErrorCode.NONE,
            "error_message": f"Group {group_id} not found."
            if missing
            else f"Group {group_id} is not a classic group.",
        }
    stable = g.state is ClassicGroupState.STABLE
    return {
        **base,
        "error_code": ErrorCode.NONE,
        "authorized_operations": authorized_operations(ctx, ResourceType.GROUP, group_id)
        if with_ops and v >= 3
        else AUTHORIZED_OPERATIONS_OMITTED,
        "group_state": g.state_name,
        "protocol_type": g.protocol_type or "",
        "protocol_data": (g.protocol_name or "") if stable else "",
        "members": [
            {
                "member_id": m.member_id,
                "group_instance_id": m.group_instance_id,
                "client_id": m.client_id,
                "client_host": m.client_host,
                "member_metadata": m.metadata(g.protocol_name) if stable else b"",
                "member_assignment": m.assignment if stable else b"",
            }
            for m in g.members.values()
        ],
    }


@handler("DescribeGroups", versions=(0, 6))
def handle(ctx: RequestContext, request: Message) -> Result:
    with_ops = bool(request.get("include_authorized_operations"))
    return {"groups": [describe(ctx, gid, with_ops) for gid in request.get("groups") or []]}

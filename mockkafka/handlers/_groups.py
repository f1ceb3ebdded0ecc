"""Helpers shared by the group handlers (JoinGroup, SyncGroup, OffsetCommit, ...)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mockkafka.cluster.acls import ResourceType
from mockkafka.cluster.groups_common import Message, Pending, group_key
from mockkafka.errors import ErrorCode
from mockkafka.handlers.authz import AUTHORIZED_OPERATIONS_OMITTED, authorized_operations
from mockkafka.handlers.base import Park, RequestContext, Result

# Slack on top of the group's own timeouts before a parked request gives up.
PARK_SLACK_MS = 60_000


def classic_group_error(ctx: RequestContext, group_id: str) -> ErrorCode:
    """INVALID_GROUP_ID for an empty group id (Kafka checks it before the coordinator, in
    SyncGroup, Heartbeat, LeaveGroup and OffsetDelete), else :func:`coordinator_error`."""
    if not group_id:
        return ErrorCode.INVALID_GROUP_ID
    return coordinator_error(ctx, group_id)


def coordinator_error(ctx: RequestContext, group_id: str) -> ErrorCode:
    """NONE when this broker serves ``group_id`` now; else NOT_COORDINATOR and friends."""
    return ctx.cluster.groups.coordinator_error(ctx.broker_id, group_id)


def client_host(ctx: RequestContext) -> str:
    """``/ip`` of the client, as Kafka shows it (DescribeGroups ``client_host``)."""
    if ctx.peer != "?":
        return "/" + ctx.peer.rsplit(":", 1)[0]
    return "/127.0.0.1"


def answer_when_done(
    ctx: RequestContext,
    group_id: str,
    result: Message | Pending,
    deadline_ms: int,
    finish: Callable[[Message], Message],
    on_timeout: Message,
) -> Result:
    """Answer ``result`` now, or park on the group until the pending answer is filled in."""
    if not isinstance(result, Pending):
        return finish(result)
    pending = result

    def resume(timed_out: bool) -> Result:
        if pending.result is not None:
            return finish(pending.result)
        if timed_out:
            return finish(on_timeout)
        return Park((group_key(group_id),), deadline_ms, resume)

    return Park((group_key(group_id),), deadline_ms, resume)


def describe_group_of_type(
    ctx: RequestContext, group_id: str, with_ops: bool, cls: type[Any], kind: str
) -> dict[str, Any]:
    """One group of ConsumerGroupDescribe / ShareGroupDescribe: a group of class ``cls``
    (``kind`` names it in the error for a group of another type) with its epochs, assignor
    and members (``describe_member``)."""
    base: dict[str, Any] = {
        "group_id": group_id,
        "authorized_operations": AUTHORIZED_OPERATIONS_OMITTED,
    }
    err = coordinator_error(ctx, group_id)
    if err:
        return {**base, "error_code": err}
    g = ctx.cluster.groups.get(group_id)
    # A streams group is a kind of consumer group here, not in Kafka: the exact class counts.
    if not isinstance(g, cls) or type(g) is not cls:
        what = "not found" if g is None else f"is not a {kind} group"
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

"""What the share-group offset admin APIs (DescribeShareGroupOffsets, AlterShareGroupOffsets,
DeleteShareGroupOffsets) share: finding the share group a request names, with Kafka's error
for each way it can fail."""

from __future__ import annotations

from typing import Any

from mockkafka.cluster.acls import AclOperation
from mockkafka.cluster.share_groups import ShareGroup
from mockkafka.errors import ErrorCode
from mockkafka.handlers._groups import coordinator_error
from mockkafka.handlers.authz import group_allowed
from mockkafka.handlers.base import RequestContext


def share_group_or_error(
    ctx: RequestContext, group_id: str, op: AclOperation, *, create: bool = False
) -> ShareGroup | tuple[ErrorCode, str | None]:
    """The share group ``group_id`` (created when ``create`` and absent), or the group-level
    (error, message): GROUP_AUTHORIZATION_FAILED without ``op`` on the group, NOT_COORDINATOR
    and friends, INVALID_GROUP_ID for an empty id, GROUP_ID_NOT_FOUND for an unknown group or
    one of another type."""
    if not group_allowed(ctx, op, group_id):
        return ErrorCode.GROUP_AUTHORIZATION_FAILED, None
    err = coordinator_error(ctx, group_id)
    if err:
        return err, None
    if not group_id:
        return ErrorCode.INVALID_GROUP_ID, "The group id must not be empty."
    g = ctx.cluster.groups.share_group(group_id, create=create)
    if isinstance(g, ErrorCode):
        other = ctx.cluster.groups.get(group_id)
        what = "does not exist" if other is None else "is not a share group"
        return ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} {what}."
    return g


def empty_share_group_or_refusal(
    ctx: RequestContext, group_id: str, op: AclOperation, *, create: bool = False
) -> ShareGroup | dict[str, Any]:
    """For AlterShareGroupOffsets / DeleteShareGroupOffsets: the share group (as
    :func:`share_group_or_error`) when it has no member, else the whole response refusing
    the request (NON_EMPTY_GROUP while members could hold its records)."""
    g = share_group_or_error(ctx, group_id, op, create=create)
    if isinstance(g, tuple):
        return {"error_code": g[0], "error_message": g[1], "responses": []}
    if g.members:
        message = f"Share group {g.group_id} is not empty: it has {len(g.members)} member(s)."
        return {"error_code": ErrorCode.NON_EMPTY_GROUP, "error_message": message, "responses": []}
    return g

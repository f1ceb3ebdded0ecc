"""What the share-group offset admin APIs (DescribeShareGroupOffsets, AlterShareGroupOffsets,
DeleteShareGroupOffsets) share: finding the share group a request names, with Kafka's error
for each way it can fail."""

from __future__ import annotations

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


def require_empty(g: ShareGroup) -> tuple[ErrorCode, str] | None:
    """NON_EMPTY_GROUP while the group has members (its offsets cannot change under them)."""
    if g.members:
        return (
            ErrorCode.NON_EMPTY_GROUP,
            f"Share group {g.group_id} is not empty: it has {len(g.members)} member(s).",
        )
    return None

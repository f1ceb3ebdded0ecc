"""ShareGroupHeartbeat (key 76), versions 0-1 (KIP-932: v0 as Kafka 4.0 and its early-access
share consumer speak it, v1 the GA version of Kafka 4.1+).

A member joins a share group with epoch 0 and its subscribed topic names; the server picks
its member id, computes the assignment with the ``simple`` assignor (several members may
share a partition) and answers it with the member epoch. Epoch -1 leaves (the member's
acquired records are released). The heartbeat interval is the broker config
``group.share.heartbeat.interval.ms`` (500 here, Kafka: 5000) and the session timeout
``group.share.session.timeout.ms`` (45000); the group configs ``share.heartbeat.interval.ms``
and ``share.session.timeout.ms`` override them per group. See ``cluster/share_groups.py``.

Errors: INVALID_REQUEST (missing group id, member id after the join, subscription on join,
an epoch below -1), UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH, GROUP_ID_NOT_FOUND (the id
belongs to a classic or consumer group), GROUP_AUTHORIZATION_FAILED, NOT_COORDINATOR and
friends, GROUP_MAX_SIZE_REACHED (``group.share.max.size``). v1: the client always sends its
own member id (INVALID_REQUEST without one, even to join), and subscribing to a topic the
principal may not DESCRIBE is TOPIC_AUTHORIZATION_FAILED. Not implemented: rack-aware
assignment.
"""

from __future__ import annotations

from mockkafka.cluster.acls import AclOperation
from mockkafka.cluster.groups_common import Message
from mockkafka.errors import ErrorCode
from mockkafka.handlers._groups import client_host, coordinator_error
from mockkafka.handlers.authz import group_allowed, topic_allowed
from mockkafka.handlers.base import RequestContext, Result, handler


def _error(code: ErrorCode, message: str | None = None) -> Message:
    # As Kafka's error answers: member epoch 0.
    return {"error_code": code, "error_message": message, "member_epoch": 0}


@handler("ShareGroupHeartbeat", versions=(0, 1))
def handle(ctx: RequestContext, request: Message) -> Result:
    group_id: str = request.get("group_id") or ""
    epoch: int = request.get("member_epoch", 0)
    if group_id and not group_allowed(ctx, AclOperation.READ, group_id):
        return _error(ErrorCode.GROUP_AUTHORIZATION_FAILED)
    err = coordinator_error(ctx, group_id)
    if err:
        return _error(err)
    if not group_id:
        return _error(ErrorCode.INVALID_REQUEST, "GroupId can't be empty.")
    if (epoch != 0 or ctx.version >= 1) and not request.get("member_id"):
        return _error(ErrorCode.INVALID_REQUEST, "MemberId can't be empty.")
    if epoch == 0 and not request.get("subscribed_topic_names"):
        return _error(
            ErrorCode.INVALID_REQUEST, "SubscribedTopicNames must be set in first request."
        )
    if epoch < -1:
        return _error(ErrorCode.INVALID_REQUEST, f"MemberEpoch {epoch} is invalid.")
    if ctx.version >= 1:
        denied = sorted(
            t
            for t in request.get("subscribed_topic_names") or []
            if not topic_allowed(ctx, AclOperation.DESCRIBE, t)
        )
        if denied:
            return _error(
                ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                f"Not authorized to describe topics {', '.join(denied)}.",
            )
    g = ctx.cluster.groups.share_group(group_id, create=epoch == 0)
    if isinstance(g, ErrorCode):
        if ctx.cluster.groups.get(group_id) is None:
            return _error(ErrorCode.UNKNOWN_MEMBER_ID, f"Group {group_id} has no member.")
        return _error(g, f"Group {group_id} is not a share group.")
    return g.heartbeat(request, ctx.client_id or "", client_host(ctx))

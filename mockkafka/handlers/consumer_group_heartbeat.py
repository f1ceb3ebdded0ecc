"""ConsumerGroupHeartbeat (key 68), versions 0-1 (KIP-848).

The consumer group protocol: a member joins with epoch 0 and its subscription, the server
computes the assignment (``uniform`` or ``range``) and hands each member its partitions with
its member epoch, revoking partitions from their old owner before giving them to the new one
(see ``cluster/groups_consumer.py``). Epoch -1 leaves, -2 leaves a static member (it keeps
its assignment for its next process). The heartbeat interval is the broker config
``group.consumer.heartbeat.interval.ms`` (500 here, Kafka: 5000;
``ClusterConfig.group_consumer_heartbeat_interval_ms``) and the session timeout
``group.consumer.session.timeout.ms`` (45000). v0 has the server pick the member id; v1 has
the client pick it and adds ``subscribed_topic_regex`` (Python ``re`` syntax, full match).

Errors: INVALID_REQUEST (missing group id, member id in v1, or subscription on join),
UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH, FENCED_INSTANCE_ID, UNRELEASED_INSTANCE_ID,
UNSUPPORTED_ASSIGNOR, GROUP_ID_NOT_FOUND (the group is a non-empty classic group, or
unknown with a non-zero epoch). Not implemented: rack-aware assignment, client-side
assignors, classic members inside a consumer group.
"""

from __future__ import annotations

from mockkafka.cluster.groups_common import Message
from mockkafka.errors import ErrorCode
from mockkafka.handlers._groups import client_host, coordinator_error
from mockkafka.handlers.base import RequestContext, Result, handler


def _error(code: ErrorCode, message: str | None = None) -> Message:
    return {"error_code": code, "error_message": message, "member_epoch": 0}  # as Kafka


@handler("ConsumerGroupHeartbeat", versions=(0, 1))
def handle(ctx: RequestContext, request: Message) -> Result:
    group_id: str = request.get("group_id") or ""
    epoch: int = request.get("member_epoch", 0)
    err = coordinator_error(ctx, group_id)
    if err:
        return _error(err)
    if not group_id:
        return _error(ErrorCode.INVALID_REQUEST, "GroupId can't be empty.")
    if ctx.version >= 1 and not request.get("member_id"):
        return _error(ErrorCode.INVALID_REQUEST, "MemberId can't be empty.")
    if epoch == 0 and (
        request.get("subscribed_topic_names") is None
        and request.get("subscribed_topic_regex") is None
    ):
        return _error(
            ErrorCode.INVALID_REQUEST, "SubscribedTopicNames must be set in first request."
        )
    if epoch == -2 and request.get("instance_id") is None:
        return _error(ErrorCode.INVALID_REQUEST, "InstanceId can't be null.")
    if epoch < -2:
        return _error(ErrorCode.INVALID_REQUEST, f"MemberEpoch {epoch} is invalid.")
    g = ctx.cluster.groups.consumer_group(group_id, create=epoch == 0)
    if isinstance(g, ErrorCode):
        exists = ctx.cluster.groups.get(group_id) is not None
        if not exists and epoch != 0:
            return _error(ErrorCode.UNKNOWN_MEMBER_ID, f"Group {group_id} has no member.")
        return _error(g, f"Group {group_id} is not a consumer group.")
    return g.heartbeat(request, ctx.client_id or "", client_host(ctx))

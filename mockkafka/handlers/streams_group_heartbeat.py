"""StreamsGroupHeartbeat (key 88), versions 0-1 (KIP-1071; v1 adds
``topology_description_required``, KIP-1331, always false here: no topology description is
asked for, so clients never send StreamsGroupTopologyDescriptionUpdate).

A Kafka Streams member (``group.protocol=streams``) joins with epoch 0 and the application's
topology; the coordinator creates the missing internal topics (repartition and changelog
topics), computes the tasks and deals the active tasks over the members, and each member
reconciles as KIP-848 members do (see ``cluster/streams_groups.py``). Epoch -1 (or -2, a
static member) leaves.

Errors: GROUP_AUTHORIZATION_FAILED, NOT_COORDINATOR and friends, INVALID_REQUEST (no group
id, no member id, no topology when joining, an epoch below -2), GROUP_ID_NOT_FOUND (the id
belongs to a group of another type with members), UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH,
STREAMS_INVALID_TOPOLOGY_EPOCH; statuses MISSING_SOURCE_TOPICS and SHUTDOWN_APPLICATION. Not
implemented: standby and warm-up tasks, source topic regexes, static membership
(``instance_id`` is recorded only), interactive-query endpoint maps
(``partitions_by_user_endpoint`` is null).
"""

from __future__ import annotations

from mockkafka.cluster.features import feature_level
from mockkafka.cluster.groups_common import Message
from mockkafka.errors import ErrorCode
from mockkafka.handlers._groups import client_host, coordinator_error
from mockkafka.handlers.base import RequestContext, Result, handler


def _error(code: ErrorCode, message: str | None = None) -> Message:
    # As Kafka's error answers: member epoch 0 and an empty (not null) status list.
    return {"error_code": code, "error_message": message, "member_epoch": 0, "status": []}


@handler("StreamsGroupHeartbeat", versions=(0, 1))
def handle(ctx: RequestContext, request: Message) -> Result:
    group_id: str = request.get("group_id") or ""
    epoch: int = request.get("member_epoch", 0)
    err = coordinator_error(ctx, group_id)
    if err:
        return _error(err)
    if feature_level(ctx.cluster, "streams.version") < 1:
        return _error(
            ErrorCode.UNSUPPORTED_VERSION,
            "The cluster does not support the streams group protocol (streams.version is 0).",
        )
    if not group_id:
        return _error(ErrorCode.INVALID_REQUEST, "GroupId can't be empty.")
    if not request.get("member_id"):
        return _error(ErrorCode.INVALID_REQUEST, "MemberId can't be empty.")
    if epoch < -2:
        return _error(ErrorCode.INVALID_REQUEST, f"MemberEpoch {epoch} is invalid.")
    g = ctx.cluster.groups.streams_group(group_id, create=epoch == 0)
    if isinstance(g, ErrorCode):
        if ctx.cluster.groups.get(group_id) is None:
            return _error(ErrorCode.UNKNOWN_MEMBER_ID, f"Group {group_id} has no member.")
        return _error(g, f"Group {group_id} is not a streams group.")
    return g.heartbeat(request, ctx.client_id or "", client_host(ctx))

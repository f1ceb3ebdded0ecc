"""StreamsGroupHeartbeat (key 88), versions 0-1 (KIP-1071).

The streams group protocol: a Kafka Streams member joins with epoch 0, its topology and its
process id; the broker derives the tasks, creates the internal topics (changelogs and
repartition topics) and assigns the active tasks, revoking a task from its old owner before
another member gets it (see ``cluster/groups_streams.py``). Epoch -1 leaves, -2 leaves a
static member. Status entries tell the member why it has no tasks yet
(MISSING_SOURCE_TOPICS, INCORRECTLY_PARTITIONED_TOPICS). The heartbeat interval is
``group.streams.heartbeat.interval.ms`` (default: the fake's consumer-group interval, 500 ms;
Kafka: 5000), the session timeout ``group.streams.session.timeout.ms`` (45000). The
``streams.version`` feature must be 1 (the default; UpdateFeatures can turn it off).

Errors: INVALID_REQUEST (missing group id or member id, a join without topology),
UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH, UNRELEASED_INSTANCE_ID, GROUP_ID_NOT_FOUND (the id
belongs to a non-empty group of another type), UNSUPPORTED_VERSION (streams.version 0).
Not implemented: standby and warm-up tasks, source topic regexes, copartition checks,
task offsets (accepted and ignored), rack-aware assignment.
"""

from __future__ import annotations

from mockkafka.cluster.features import feature_level
from mockkafka.cluster.groups_common import Message
from mockkafka.errors import ErrorCode
from mockkafka.handlers._groups import client_host, coordinator_error
from mockkafka.handlers.base import RequestContext, Result, handler


def _error(code: ErrorCode, message: str | None = None) -> Message:
    return {"error_code": code, "error_message": message}


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
    if epoch == -2 and request.get("instance_id") is None:
        return _error(ErrorCode.INVALID_REQUEST, "InstanceId can't be null.")
    if epoch < -2:
        return _error(ErrorCode.INVALID_REQUEST, f"MemberEpoch {epoch} is invalid.")
    g = ctx.cluster.groups.streams_group(group_id, create=epoch == 0)
    if isinstance(g, ErrorCode):
        if ctx.cluster.groups.get(group_id) is None:
            return _error(ErrorCode.UNKNOWN_MEMBER_ID, f"Group {group_id} has no member.")
        return _error(g, f"Group {group_id} is not a streams group.")
    resp = g.heartbeat(request, ctx.client_id or "", client_host(ctx))
    if ctx.version == 0 and "acceptable_recovery_lag" in resp:
        resp["acceptable_recovery_lag_legacy"] = resp.pop("acceptable_recovery_lag")
    return resp

"""ShareAcknowledge (key 79), versions 0-2 (KIP-932: v0 as Kafka 4.0's early access spoke it,
v1 the GA version, v2 adds RENEW acknowledgements and ``acquisition_lock_timeout_ms``).

Acknowledges records a member acquired with ShareFetch, without fetching: per partition,
batches of offsets with one acknowledge type each or one per offset (GAP=0, ACCEPT=1,
RELEASE=2, REJECT=3; see ``cluster/share_groups.py``). All batches of a partition apply or
none does: INVALID_RECORD_STATE when an offset is not acquired by this member,
INVALID_REQUEST for a malformed batch. The share session must exist on this broker
(SHARE_SESSION_NOT_FOUND) and the request carries its next epoch
(INVALID_SHARE_SESSION_EPOCH; 0 is never valid here); epoch -1 acknowledges, then closes
the session and releases what the member still holds here (what a closing share consumer
sends). Per partition: UNKNOWN_TOPIC_ID, UNKNOWN_TOPIC_OR_PARTITION,
TOPIC_AUTHORIZATION_FAILED, NOT_LEADER_OR_FOLLOWER with ``current_leader`` and
``node_endpoints``. v2 ``is_renew_ack``: RENEW (type 4) keeps records acquired and restarts
their lock; RENEW without it is INVALID_REQUEST per partition.
"""

from __future__ import annotations

import uuid
from typing import Any

from mockkafka.cluster.share_groups import FINAL_SESSION_EPOCH, INITIAL_SESSION_EPOCH
from mockkafka.errors import ErrorCode
from mockkafka.handlers._share import (
    acknowledge,
    group_and_session,
    leader_fields,
    share_response,
    top_error,
)
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import Message


@handler("ShareAcknowledge", versions=(0, 2))
def handle(ctx: RequestContext, request: Message) -> Result:
    renew = ctx.version >= 2 and bool(request.get("is_renew_ack"))
    if not request.get("group_id") or not request.get("member_id"):
        # Kafka checks the ids before the session (the oracle tier's sweep pins it).
        return top_error(ErrorCode.INVALID_REQUEST, "GroupId and MemberId can't be empty.")
    if request.get("share_session_epoch", 0) == INITIAL_SESSION_EPOCH:
        return top_error(
            ErrorCode.INVALID_SHARE_SESSION_EPOCH, "ShareAcknowledge cannot open a session."
        )
    found = group_and_session(ctx, request)
    if isinstance(found, dict):
        return found
    g, _, member_id, epoch = found
    parts: dict[tuple[uuid.UUID, int], dict[str, Any]] = {}
    leaders: set[int] = set()
    for t in request.get("topics") or []:
        for p in t.get("partitions") or []:
            idx = p["partition_index"]
            target, err, msg = acknowledge(
                ctx,
                g,
                member_id,
                t["topic_id"],
                idx,
                p.get("acknowledgement_batches") or [],
                renew=renew,
            )
            parts[(t["topic_id"], idx)] = {
                "partition_index": idx,
                "error_code": err,
                "error_message": msg,
                **leader_fields(target, leaders),
            }
    if epoch == FINAL_SESSION_EPOCH:
        g.close_session(ctx.broker_id, member_id)
    resp = share_response(ctx, parts, leaders)
    if ctx.version >= 2:
        resp["acquisition_lock_timeout_ms"] = g.lock_duration_ms
    return resp

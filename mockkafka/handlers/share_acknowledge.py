"""ShareAcknowledge (key 79), version 0 (KIP-932, as Kafka 4.0 speaks it).

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
``node_endpoints``.
"""

from __future__ import annotations

import uuid
from typing import Any

from mockkafka.cluster.share_groups import FINAL_SESSION_EPOCH, INITIAL_SESSION_EPOCH
from mockkafka.errors import ErrorCode
from mockkafka.handlers._common import node_endpoints
from mockkafka.handlers._share import acknowledge, leader_fields, session_step, share_group_for
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import Message


def _top_error(code: ErrorCode, message: str | None) -> Message:
    return {"error_code": code, "error_message": message, "responses": []}


@handler("ShareAcknowledge", versions=(0, 0))
def handle(ctx: RequestContext, request: Message) -> Result:
    member_id = request.get("member_id") or ""
    found = share_group_for(ctx, request.get("group_id"), member_id)
    if isinstance(found, tuple):
        return _top_error(*found)
    g = found
    epoch: int = request.get("share_session_epoch", 0)
    if epoch == INITIAL_SESSION_EPOCH:
        return _top_error(
            ErrorCode.INVALID_SHARE_SESSION_EPOCH, "ShareAcknowledge cannot open a session."
        )
    session = session_step(ctx, g, member_id, epoch)
    if isinstance(session, tuple):
        return _top_error(*session)
    by_topic: dict[uuid.UUID, list[dict[str, Any]]] = {}
    leaders: set[int] = set()
    for t in request.get("topics") or []:
        for p in t.get("partitions") or []:
            idx = p["partition_index"]
            target, err, msg = acknowledge(
                ctx, g, member_id, t["topic_id"], idx, p.get("acknowledgement_batches") or []
            )
            by_topic.setdefault(t["topic_id"], []).append(
                {
                    "partition_index": idx,
                    "error_code": err,
                    "error_message": msg,
                    **leader_fields(target, leaders),
                }
            )
    if epoch == FINAL_SESSION_EPOCH:
        g.close_session(ctx.broker_id, member_id)
    resp: dict[str, Any] = {
        "error_code": 0,
        "responses": [{"topic_id": tid, "partitions": ps} for tid, ps in by_topic.items()],
    }
    if leaders:
        resp["node_endpoints"] = node_endpoints(ctx, leaders)
    return resp

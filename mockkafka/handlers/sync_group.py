"""SyncGroup (key 14), versions 0-5.

The second phase of a classic rebalance: the leader sends every member's assignment, the
followers' requests park until it arrives, then each member gets its own assignment. In a
Stable group the current assignment is answered at once (a lost response). Errors as Kafka:
UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, REBALANCE_IN_PROGRESS (a new join phase started),
FENCED_INSTANCE_ID, INCONSISTENT_GROUP_PROTOCOL (v5 ``protocol_type``/``protocol_name``
mismatch). Not implemented: nothing known.
"""

from __future__ import annotations

from mockkafka.cluster.groups_common import Message
from mockkafka.errors import ErrorCode
from mockkafka.handlers._groups import PARK_SLACK_MS, answer_when_done, classic_group_error
from mockkafka.handlers.base import RequestContext, Result, handler


@handler("SyncGroup", versions=(0, 5))
def handle(ctx: RequestContext, request: Message) -> Result:
    v = ctx.version
    group_id: str = request.get("group_id") or ""

    def finish(resp: Message) -> Message:
        out = {"assignment": b"", "protocol_type": None, "protocol_name": None, **resp}
        if out["error_code"]:
            out["assignment"] = b""
        return out

    if v >= 5 and (request.get("protocol_type") is None or request.get("protocol_name") is None):
        # Kafka checks that v5+ names both before anything else.
        return finish({"error_code": ErrorCode.INCONSISTENT_GROUP_PROTOCOL})
    err = classic_group_error(ctx, group_id)
    if err:
        return finish({"error_code": err})
    g = ctx.cluster.groups.classic_group(group_id, create=False)
    if isinstance(g, ErrorCode):
        return finish({"error_code": ErrorCode.UNKNOWN_MEMBER_ID})
    result = g.sync(
        member_id=request.get("member_id") or "",
        group_instance_id=request.get("group_instance_id") if v >= 3 else None,
        generation_id=request.get("generation_id", -1),
        protocol_type=request.get("protocol_type") if v >= 5 else None,
        protocol_name=request.get("protocol_name") if v >= 5 else None,
        assignments=[
            (a["member_id"], bytes(a["assignment"] or b""))
            for a in request.get("assignments") or []
        ],
    )
    deadline = ctx.now_ms + g.max_rebalance_timeout_ms + PARK_SLACK_MS
    return answer_when_done(
        ctx, group_id, result, deadline, finish, {"error_code": ErrorCode.REBALANCE_IN_PROGRESS}
    )

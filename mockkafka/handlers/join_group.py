"""JoinGroup (key 11), versions 0-9.

Joins a classic group: the first phase of a rebalance. The request parks until the join
phase ends (every member rejoined, the rebalance timeout, or the initial rebalance delay;
see ``cluster/groups_classic.py``); the leader's answer lists every member's metadata for
the chosen protocol. MEMBER_ID_REQUIRED from v4 (the member id comes back in the error
response and the client joins again with it), static membership (``group_instance_id``)
from v5, ``skip_assignment`` for a static leader rejoining a stable group from v9.
Session timeouts outside ``group.min/max.session.timeout.ms`` get INVALID_SESSION_TIMEOUT.

Not implemented: ``group.max.size`` (GROUP_MAX_SIZE_REACHED), KIP-394's new-member join
timeout, classic members inside a KIP-848 group (online protocol upgrade): a non-empty
consumer group answers INCONSISTENT_GROUP_PROTOCOL.
"""

from __future__ import annotations

from mockkafka.cluster.configs import BROKER_DEFAULTS
from mockkafka.cluster.groups import join_protocols
from mockkafka.cluster.groups_common import Message
from mockkafka.errors import ErrorCode
from mockkafka.handlers._groups import (
    PARK_SLACK_MS,
    answer_when_done,
    client_host,
    coordinator_error,
)
from mockkafka.handlers.base import RequestContext, Result, handler


def session_timeout_bounds(ctx: RequestContext) -> tuple[int, int]:
    """(min, max) session timeout: a changed broker config wins over the cluster option."""
    c = ctx.cluster

    def get(key: str, option: int) -> int:
        v = c.broker_configs.get(key)
        return int(v) if v is not None and v != BROKER_DEFAULTS.get(key) else option

    return (
        get("group.min.session.timeout.ms", c.config.group_min_session_timeout_ms),
        get("group.max.session.timeout.ms", c.config.group_max_session_timeout_ms),
    )


@handler("JoinGroup", versions=(0, 9))
def handle(ctx: RequestContext, request: Message) -> Result:
    v = ctx.version
    group_id: str = request.get("group_id") or ""
    member_id: str = request.get("member_id") or ""

    def finish(resp: Message) -> Message:
        out = {
            "generation_id": -1,
            "protocol_name": None,
            "leader": "",
            "member_id": member_id,
            "members": [],
            **resp,
        }
        if v < 7 and out["protocol_name"] is None:
            out["protocol_name"] = ""
        if out["error_code"]:
            out["members"] = []
        return out

    err = coordinator_error(ctx, group_id)
    if err:
        return finish({"error_code": err})
    if not group_id:
        return finish({"error_code": ErrorCode.INVALID_GROUP_ID})
    session_timeout: int = request.get("session_timeout_ms", 0)
    lo, hi = session_timeout_bounds(ctx)
    if not lo <= session_timeout <= hi:
        return finish({"error_code": ErrorCode.INVALID_SESSION_TIMEOUT})
    rebalance_timeout: int = request.get("rebalance_timeout_ms", -1)
    if v == 0 or rebalance_timeout <= 0:
        rebalance_timeout = session_timeout
    g = ctx.cluster.groups.classic_group(group_id, create=True)
    if isinstance(g, ErrorCode):
        return finish({"error_code": g})
    result = g.join(
        member_id=member_id,
        group_instance_id=request.get("group_instance_id") if v >= 5 else None,
        client_id=ctx.client_id or "",
        client_host=client_host(ctx),
        session_timeout_ms=session_timeout,
        rebalance_timeout_ms=rebalance_timeout,
        protocol_type=request.get("protocol_type") or "",
        protocols=join_protocols(request.get("protocols") or []),
        require_known_member_id=v >= 4,
    )
    deadline = ctx.now_ms + max(g.max_rebalance_timeout_ms, rebalance_timeout) + PARK_SLACK_MS
    return answer_when_done(
        ctx,
        group_id,
        result,
        deadline,
        finish,
        {"error_code": ErrorCode.REBALANCE_IN_PROGRESS},
    )

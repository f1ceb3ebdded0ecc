"""DeleteShareGroupOffsets (key 92), version 0 (KIP-932).

Forgets a share group's state for whole topics (``Admin.deleteShareGroupOffsets``): the next
ShareFetch of such a partition starts again at ``share.auto.offset.reset``. The group must be
empty (NON_EMPTY_GROUP otherwise).

Errors: top level GROUP_AUTHORIZATION_FAILED (DELETE on the group), NOT_COORDINATOR and
friends, GROUP_ID_NOT_FOUND (unknown, or not a share group), NON_EMPTY_GROUP; per topic
TOPIC_AUTHORIZATION_FAILED (READ on the topic), UNKNOWN_TOPIC_OR_PARTITION.
"""

from __future__ import annotations

from typing import Any

from mockkafka.cluster.acls import AclOperation
from mockkafka.cluster.groups_common import Message
from mockkafka.errors import ErrorCode
from mockkafka.handlers._share_admin import empty_share_group_or_refusal
from mockkafka.handlers.authz import topic_allowed
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import ZERO_UUID


@handler("DeleteShareGroupOffsets", versions=(0, 0))
def handle(ctx: RequestContext, request: Message) -> Result:
    group_id: str = request.get("group_id") or ""
    g = empty_share_group_or_refusal(ctx, group_id, AclOperation.DELETE)
    if isinstance(g, dict):
        return g
    responses: list[dict[str, Any]] = []
    for asked in request.get("topics") or []:
        name: str = asked.get("topic_name") or ""
        t = ctx.cluster.topics.get(name)
        out: dict[str, Any] = {"topic_name": name, "topic_id": ZERO_UUID, "error_code": 0}
        if not topic_allowed(ctx, AclOperation.READ, name):
            out["error_code"] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
        elif t is None:
            out["error_code"] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        else:
            out["topic_id"] = t.topic_id
            g.delete_offsets(name)
        responses.append(out)
    return {"error_code": 0, "responses": responses}

"""ShareGroupDescribe (key 77), versions 0-1 (KIP-932; v1 is the GA version, same fields).

Describes share groups: state (Empty, Stable), group epoch, assignment epoch, the assignor
(``simple``) and every member with its epoch, client id and host, subscribed topics and
assignment (topic ids and names). GROUP_ID_NOT_FOUND for a group that does not exist or is
a classic or consumer group.
"""

from __future__ import annotations

from mockkafka.cluster.groups_common import Message
from mockkafka.cluster.share_groups import ShareGroup
from mockkafka.handlers._groups import describe_group_of_type
from mockkafka.handlers.base import RequestContext, Result, handler


@handler("ShareGroupDescribe", versions=(0, 1))
def handle(ctx: RequestContext, request: Message) -> Result:
    with_ops = bool(request.get("include_authorized_operations"))
    return {
        "groups": [
            describe_group_of_type(ctx, gid, with_ops, ShareGroup, "share")
            for gid in request.get("group_ids") or []
        ]
    }

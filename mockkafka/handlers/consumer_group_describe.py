"""ConsumerGroupDescribe (key 69), versions 0-1 (KIP-848; v1 adds each member's ``member_type``,
KIP-1099: 1, a consumer-protocol member).

Describes consumer (KIP-848) groups: state (Empty, Assigning, Reconciling, Stable), group
epoch, assignment epoch, assignor, and every member with its epoch, subscription, current
and target assignment (topic ids and names). GROUP_ID_NOT_FOUND for a group that does not
exist or is a classic group (use DescribeGroups).
"""

from __future__ import annotations

from mockkafka.cluster.groups import ConsumerGroup
from mockkafka.cluster.groups_common import Message
from mockkafka.handlers._groups import describe_group_of_type
from mockkafka.handlers.base import RequestContext, Result, handler


@handler("ConsumerGroupDescribe", versions=(0, 1))
def handle(ctx: RequestContext, request: Message) -> Result:
    with_ops = bool(request.get("include_authorized_operations"))
    return {
        "groups": [
            describe_group_of_type(ctx, gid, with_ops, ConsumerGroup, "consumer")
            for gid in request.get("group_ids") or []
        ]
    }

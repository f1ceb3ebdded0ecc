"""StreamsGroupDescribe (key 89), versions 0-1 (KIP-1071).

Describes streams groups: state (Empty, NotReady while a source topic is missing,
Reconciling, Stable), group and assignment epochs, the topology the group runs, and every
member with its process id, endpoint, client tags and current and target active tasks.
GROUP_ID_NOT_FOUND for a group that does not exist or is of another type. v1's
``topology_description`` is null: Kafka 4.4 does not serve StreamsGroupTopologyDescriptionUpdate
(key 93; its ApiVersions leaves it out), so no member ever sends one.
"""

from __future__ import annotations

from typing import Any

from mockkafka.cluster.groups_common import Message
from mockkafka.cluster.streams_groups import StreamsGroup
from mockkafka.handlers._groups import describe_group_of_type
from mockkafka.handlers.base import RequestContext, Result, handler


@handler("StreamsGroupDescribe", versions=(0, 1))
def handle(ctx: RequestContext, request: Message) -> Result:
    with_ops = bool(request.get("include_authorized_operations"))
    groups: list[dict[str, Any]] = []
    for gid in request.get("group_ids") or []:
        out = describe_group_of_type(ctx, gid, with_ops, StreamsGroup, "streams")
        g = ctx.cluster.groups.get(gid)
        if out.get("error_code") == 0 and isinstance(g, StreamsGroup):
            out["topology"] = g.describe_topology()
        groups.append(out)
    return {"groups": groups}

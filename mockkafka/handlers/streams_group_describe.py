"""StreamsGroupDescribe (key 89), versions 0-1 (KIP-1071).

Describes streams groups: state (Empty, NotReady, Assigning, Reconciling, Stable), group and
assignment epochs, the topology the members run (subtopologies with their source,
repartition and changelog topics) and every member with its process id, endpoint, client
tags and active tasks (current and target). v1 adds the assignor name and, with
``include_topology_description``, the description a member sent with
StreamsGroupTopologyDescriptionUpdate. GROUP_ID_NOT_FOUND for a group that does not exist or
is of another type.
"""

from __future__ import annotations

from mockkafka.cluster.groups_common import Message
from mockkafka.cluster.groups_streams import StreamsGroup
from mockkafka.handlers._groups import describe_group_of_type
from mockkafka.handlers.base import RequestContext, Result, handler


@handler("StreamsGroupDescribe", versions=(0, 1))
def handle(ctx: RequestContext, request: Message) -> Result:
    with_ops = bool(request.get("include_authorized_operations"))
    with_description = bool(request.get("include_topology_description"))
    groups = []
    for gid in request.get("group_ids") or []:
        out = describe_group_of_type(ctx, gid, with_ops, StreamsGroup, "streams")
        g = ctx.cluster.groups.get(gid)
        if out["error_code"] == 0 and isinstance(g, StreamsGroup):
            out["topology"] = g.describe()["topology"]
            if ctx.version >= 1:
                out["assignor_name"] = "sticky"
                if with_description and g.topology_description is not None:
                    out["topology_description"] = g.topology_description
                    out["topology_description_status"] = 1
            else:
                out.pop("assignor_name", None)
        groups.append(out)
    return {"groups": groups}

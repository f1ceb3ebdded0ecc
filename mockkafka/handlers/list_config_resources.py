"""ListConfigResources (key 74), versions 0-1 (KIP-1000 / KIP-1142).

v0 lists the CLIENT_METRICS resources that have configs. v1 lists resources of the requested
types (every supported type for an empty list): TOPIC (every topic), BROKER and
BROKER_LOGGER (every broker id), GROUP (groups with configs set) and CLIENT_METRICS. Another
type answers UNSUPPORTED_VERSION, as Kafka does.

Not implemented: GROUP lists only groups with configs, not every group the coordinator has.
"""

from __future__ import annotations

from typing import Any

from mockkafka.cluster.configs import ResourceType, configured_resources
from mockkafka.errors import ErrorCode
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import Message

SUPPORTED = (
    ResourceType.TOPIC,
    ResourceType.BROKER,
    ResourceType.BROKER_LOGGER,
    ResourceType.CLIENT_METRICS,
    ResourceType.GROUP,
)


@handler("ListConfigResources", versions=(0, 1))
def handle(ctx: RequestContext, request: Message) -> Result:
    c = ctx.cluster
    if ctx.version == 0:
        types = [ResourceType.CLIENT_METRICS]
    else:
        raw = request.get("resource_types") or []
        if any(t not in {int(s) for s in SUPPORTED} for t in raw):
            return {"error_code": ErrorCode.UNSUPPORTED_VERSION, "config_resources": []}
        types = [ResourceType(t) for t in raw] if raw else list(SUPPORTED)
    out: list[dict[str, Any]] = []
    for t in dict.fromkeys(types):
        if t == ResourceType.TOPIC:
            names = sorted(c.topics)
        elif t in (ResourceType.BROKER, ResourceType.BROKER_LOGGER):
            names = [str(b) for b in sorted(c.brokers)]
        else:
            names = configured_resources(c, t)
        out.extend({"resource_name": n, "resource_type": int(t)} for n in names)
    return {"error_code": 0, "config_resources": out}

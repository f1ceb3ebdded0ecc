"""DescribeConfigs (key 32), versions 0-4.

Resources: TOPIC (2) -- every topic config, or only ``configuration_keys``, with its
effective value and source (DYNAMIC_TOPIC_CONFIG when set on the topic, else the layer of
the broker config that supplies the default: DYNAMIC_BROKER_CONFIG,
DYNAMIC_DEFAULT_BROKER_CONFIG, STATIC_BROKER_CONFIG or DEFAULT_CONFIG); BROKER (4) -- named
by broker id: every config of *this* broker (another id is INVALID_REQUEST, as in Kafka;
clients send broker resources to that broker), or ``""``: the cluster-wide dynamic defaults;
BROKER_LOGGER (8) -- this broker's logger levels; GROUP (32) -- KIP-848 group configs;
CLIENT_METRICS (16) -- KIP-714 subscriptions that were set. Sensitive configs (passwords)
have a null value. ``is_default`` in v0, ``config_source`` and synonyms (all layers,
highest first, when ``include_synonyms``) from v1, ``config_type`` from v3; documentation is
always null. Unknown topics answer UNKNOWN_TOPIC_OR_PARTITION, unknown resource types
INVALID_REQUEST.

A release preset (``kafka_version``) reports that release's config set: for 0.11-3.9 every
broker and topic config its reference lists, with its defaults, types and update modes
(``read_only``), see :mod:`mockkafka.cluster.release_configs`.

Not implemented: without a preset (and for 4.x presets) the full list of several hundred
broker configs (a few dozen that clients and tests look at are reported); ``documentation``
(``include_documentation``) is null: Kafka's prose is not copied; authorization.
"""

from __future__ import annotations

from typing import Any

from mockkafka.cluster.configs import (
    ConfigEntry,
    ResourceType,
    describe_broker,
    describe_broker_logger,
    describe_resource,
    describe_topic,
    parse_broker_id,
)
from mockkafka.errors import ErrorCode, KafkaApiError
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import Message


@handler("DescribeConfigs", versions=(0, 4))
def handle(ctx: RequestContext, request: Message) -> Result:
    synonyms = bool(request.get("include_synonyms")) and ctx.version >= 1
    results: list[dict[str, Any]] = []
    for r in request.get("resources") or []:
        rtype = r.get("resource_type", 0)
        name = r.get("resource_name") or ""
        keys = r.get("configuration_keys")
        result: dict[str, Any] = {
            "error_code": 0,
            "error_message": None,
            "resource_type": rtype,
            "resource_name": name,
            "configs": [],
        }
        results.append(result)
        try:
            entries = _describe(ctx, rtype, name, keys)
        except KafkaApiError as exc:
            result["error_code"] = exc.error
            result["error_message"] = exc.detail or None
            continue
        result["configs"] = [_wire(e, synonyms) for e in entries]
    return {"results": results}


def _describe(
    ctx: RequestContext, rtype: int, name: str, keys: list[str] | None
) -> list[ConfigEntry]:
    c = ctx.cluster
    if rtype == ResourceType.TOPIC:
        topic = c.topics.get(name)
        if topic is None:
            raise KafkaApiError(
                ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"Topic {name} does not exist."
            )
        return describe_topic(c, topic, ctx.broker_id, keys)
    if rtype in (ResourceType.BROKER, ResourceType.BROKER_LOGGER):
        bid = parse_broker_id(name)
        if bid is None and rtype == ResourceType.BROKER:
            return describe_broker(c, None, keys)
        if bid != ctx.broker_id:
            raise KafkaApiError(
                ErrorCode.INVALID_REQUEST,
                f"Unexpected broker id, expected {ctx.broker_id} or empty string, but "
                f"received {name}",
            )
        if rtype == ResourceType.BROKER:
            return describe_broker(c, bid, keys)
        return describe_broker_logger(c, ctx.broker_id, keys)
    if rtype in (ResourceType.GROUP, ResourceType.CLIENT_METRICS):
        if not name:
            raise KafkaApiError(ErrorCode.INVALID_REQUEST, "Resource name must not be empty")
        return describe_resource(c, ResourceType(rtype), name, keys)
    raise KafkaApiError(ErrorCode.INVALID_REQUEST, f"Unsupported resource type: {rtype}")


def _wire(e: ConfigEntry, synonyms: bool) -> dict[str, Any]:
    return {
        "name": e.name,
        "value": e.value,
        "read_only": e.read_only,
        "is_default": e.is_default,
        "config_source": e.source,
        "is_sensitive": e.is_sensitive,
        "synonyms": [{"name": n, "value": v, "source": s} for n, v, s in e.synonyms]
        if synonyms
        else [],
        "config_type": e.config_type,
        "documentation": None,
    }

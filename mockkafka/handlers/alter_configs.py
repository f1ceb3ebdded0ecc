"""AlterConfigs (key 33), versions 0-2.

The legacy, whole-resource alteration: the configs in the request *replace* every dynamic
config of the resource (keys left out revert to their defaults; a null value removes a key).
Resources: TOPIC, BROKER (by id, or ``""`` for the cluster-wide dynamic default), GROUP and
CLIENT_METRICS. Values are validated as Kafka does (type, range, allowed values); unknown
topic keys and bad values answer INVALID_CONFIG, broker configs that cannot change at run
time INVALID_REQUEST, BROKER_LOGGER INVALID_REQUEST (IncrementalAlterConfigs only), a
resource named twice INVALID_REQUEST, an unknown topic UNKNOWN_TOPIC_OR_PARTITION.
``validate_only`` checks and changes nothing. Topic changes take effect at once
(``max.message.bytes``, ``message.timestamp.type``, ``min.insync.replicas`` ...).

Not implemented: AlterConfigPolicy, authorization.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from mockkafka.cluster.configs import (
    ResourceType,
    apply_dynamic,
    current_dynamic,
    validate_configs,
)
from mockkafka.errors import ErrorCode, KafkaApiError
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import Message

# (context, resource type, resource name, request entry) -> the resource's new dynamic configs
Planner = Callable[[RequestContext, ResourceType, str, Message], dict[str, str]]


@handler("AlterConfigs", versions=(0, 2))
def handle(ctx: RequestContext, request: Message) -> Result:
    return alter_resources(ctx, request, _replace)


def _replace(ctx: RequestContext, rtype: ResourceType, name: str, r: Message) -> dict[str, str]:
    if rtype == ResourceType.BROKER_LOGGER:
        raise KafkaApiError(
            ErrorCode.INVALID_REQUEST,
            "AlterConfigs is deprecated and does not support the resource type BROKER_LOGGER",
        )
    current_dynamic(ctx.cluster, rtype, name)  # the resource must exist
    new: dict[str, str | None] = {}
    for cfg in r.get("configs") or []:
        key = cfg.get("name") or ""
        if key in new:
            raise KafkaApiError(ErrorCode.INVALID_REQUEST, "Error due to duplicate config keys")
        new[key] = cfg.get("value")
    return {k: v for k, v in new.items() if v is not None}


def alter_resources(ctx: RequestContext, request: Message, plan: Planner) -> Message:
    """Shared body of AlterConfigs and IncrementalAlterConfigs: per resource, plan the new
    dynamic configs, validate them, and apply them unless ``validate_only``."""
    resources = request.get("resources") or []
    validate_only = bool(request.get("validate_only"))
    counts = Counter((r.get("resource_type", 0), r.get("resource_name") or "") for r in resources)
    responses: list[dict[str, Any]] = []
    for r in resources:
        raw_type = r.get("resource_type", 0)
        name = r.get("resource_name") or ""
        out: dict[str, Any] = {
            "error_code": 0,
            "error_message": None,
            "resource_type": raw_type,
            "resource_name": name,
        }
        responses.append(out)
        try:
            if counts[(raw_type, name)] > 1:
                raise KafkaApiError(ErrorCode.INVALID_REQUEST, "Duplicate resource in request.")
            try:
                rtype = ResourceType(raw_type)
            except ValueError:
                raise KafkaApiError(
                    ErrorCode.INVALID_REQUEST, f"Unsupported resource type: {raw_type}"
                ) from None
            if rtype == ResourceType.UNKNOWN:
                raise KafkaApiError(
                    ErrorCode.INVALID_REQUEST, f"Unsupported resource type: {raw_type}"
                )
            new = plan(ctx, rtype, name, r)
            before = current_dynamic(ctx.cluster, rtype, name)
            changed = {k: v for k, v in new.items() if before.get(k) != v}
            validate_configs(ctx.cluster, rtype, name, changed)
            if not validate_only:
                apply_dynamic(ctx.cluster, rtype, name, new)
        except KafkaApiError as exc:
            out["error_code"] = exc.error
            out["error_message"] = exc.detail or None
    return {"responses": responses}

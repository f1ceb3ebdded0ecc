"""IncrementalAlterConfigs (key 44), versions 0-1.

Changes individual configs of a resource: SET (0) a value, DELETE (1) a key (it reverts to
its default), APPEND (2) / SUBTRACT (3) elements of a LIST config (``cleanup.policy``,
``*.throttled.replicas`` ...), starting from the current or default value. Resources: TOPIC,
BROKER (by id, or ``""`` for every broker), BROKER_LOGGER (logger levels; deleting a logger
restores its default level, deleting ``root`` is refused), GROUP and CLIENT_METRICS.
Errors as Kafka gives them: INVALID_CONFIG for unknown topic keys, bad values and
APPEND/SUBTRACT on a non-list; INVALID_REQUEST for an unknown operation, a key named twice,
a resource named twice, or a broker config that cannot change at run time;
UNKNOWN_TOPIC_OR_PARTITION for an unknown topic. ``validate_only`` changes nothing. Changes
take effect at once.

Not implemented: AlterConfigPolicy, authorization.
"""

from __future__ import annotations

from mockkafka.cluster.configs import (
    AlterOp,
    ConfigType,
    ResourceType,
    config_def,
    current_dynamic,
    default_value,
    split_list,
    unknown_config_message,
)
from mockkafka.cluster.release_configs import config_set
from mockkafka.errors import ErrorCode, KafkaApiError
from mockkafka.handlers.alter_configs import alter_resources
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import Message


@handler("IncrementalAlterConfigs", versions=(0, 1))
def handle(ctx: RequestContext, request: Message) -> Result:
    return alter_resources(ctx, request, _incremental)


def _incremental(ctx: RequestContext, rtype: ResourceType, name: str, r: Message) -> dict[str, str]:
    c = ctx.cluster
    configs = current_dynamic(c, rtype, name)
    entries = r.get("configs") or []
    keys = [e.get("name") or "" for e in entries]
    if len(set(keys)) != len(keys):
        raise KafkaApiError(ErrorCode.INVALID_REQUEST, "Error due to duplicate config keys")
    for e in entries:
        key = e.get("name") or ""
        value = e.get("value")
        try:
            op = AlterOp(e.get("config_operation", 0))
        except ValueError:
            raise KafkaApiError(
                ErrorCode.INVALID_REQUEST,
                f"Unknown operation type {e.get('config_operation')} for config {key}",
            ) from None
        d = config_def(rtype, key, c.config.kafka_version)
        if d is None and rtype in (ResourceType.TOPIC, ResourceType.GROUP):
            message = unknown_config_message(
                rtype.name.lower(), key, config_set(c.config.kafka_version)
            )
            raise KafkaApiError(ErrorCode.INVALID_CONFIG, message)
        if op != AlterOp.DELETE and value is None:
            raise KafkaApiError(ErrorCode.INVALID_REQUEST, f"Null value not supported for : {key}")
        if rtype == ResourceType.BROKER_LOGGER:
            if op in (AlterOp.APPEND, AlterOp.SUBTRACT):
                raise KafkaApiError(
                    ErrorCode.INVALID_REQUEST,
                    f"{op.name} operation is not allowed for the BROKER_LOGGER resource",
                )
            if op == AlterOp.DELETE and key == "root":
                raise KafkaApiError(
                    ErrorCode.INVALID_CONFIG,
                    "Removing the log level of the root logger is not allowed",
                )
        if op == AlterOp.SET:
            assert value is not None
            configs[key] = value
        elif op == AlterOp.DELETE:
            configs.pop(key, None)
        else:
            if d is None or d.type != ConfigType.LIST:
                raise KafkaApiError(
                    ErrorCode.INVALID_CONFIG,
                    f"Can't {op.name} to key {key} because its type is not LIST.",
                )
            old = configs.get(key, default_value(c, rtype, key))
            items = split_list(old)
            change = split_list(value)
            if op == AlterOp.APPEND:
                items += [x for x in change if x not in items]
            else:
                items = [x for x in items if x not in change]
            configs[key] = ",".join(items)
    return configs

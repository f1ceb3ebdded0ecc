"""Topic and broker configuration: the keys clients read and write, with Kafka's defaults.

Configs are strings on the wire (DescribeConfigs / AlterConfigs), so they are stored as
strings; :func:`topic_config_int` reads one as an int. ``TOPIC_DEFAULTS`` lists every topic
config that DescribeConfigs reports (with source DEFAULT_CONFIG unless set on the topic).
"""

from __future__ import annotations

from dataclasses import dataclass

# Kafka 4.x defaults for the topic configs that matter to clients.
TOPIC_DEFAULTS: dict[str, str] = {
    "cleanup.policy": "delete",
    "compression.type": "producer",
    "delete.retention.ms": "86400000",
    "file.delete.delay.ms": "60000",
    "flush.messages": "9223372036854775807",
    "flush.ms": "9223372036854775807",
    "index.interval.bytes": "4096",
    "local.retention.bytes": "-2",
    "local.retention.ms": "-2",
    "max.compaction.lag.ms": "9223372036854775807",
    "max.message.bytes": "1048588",
    "message.timestamp.after.max.ms": "9223372036854775807",
    "message.timestamp.before.max.ms": "9223372036854775807",
    "message.timestamp.type": "CreateTime",
    "min.cleanable.dirty.ratio": "0.5",
    "min.compaction.lag.ms": "0",
    "min.insync.replicas": "1",
    "preallocate": "false",
    "remote.storage.enable": "false",
    "retention.bytes": "-1",
    "retention.ms": "604800000",
    "segment.bytes": "1073741824",
    "segment.index.bytes": "10485760",
    "segment.jitter.ms": "0",
    "segment.ms": "604800000",
    "unclean.leader.election.enable": "false",
}

# Topic config -> the broker config that supplies its default (DescribeConfigs synonyms).
TOPIC_TO_BROKER: dict[str, str] = {
    "cleanup.policy": "log.cleanup.policy",
    "compression.type": "compression.type",
    "max.message.bytes": "message.max.bytes",
    "message.timestamp.type": "log.message.timestamp.type",
    "min.insync.replicas": "min.insync.replicas",
    "retention.bytes": "log.retention.bytes",
    "retention.ms": "log.retention.ms",
    "segment.bytes": "log.segment.bytes",
    "unclean.leader.election.enable": "unclean.leader.election.enable",
}

BROKER_DEFAULTS: dict[str, str] = {
    "auto.create.topics.enable": "false",
    "compression.type": "producer",
    "default.replication.factor": "1",
    "delete.topic.enable": "true",
    "group.initial.rebalance.delay.ms": "0",
    "group.max.session.timeout.ms": "1800000",
    "group.min.session.timeout.ms": "6000",
    "log.cleanup.policy": "delete",
    "log.message.timestamp.type": "CreateTime",
    "log.retention.bytes": "-1",
    "log.retention.ms": "604800000",
    "log.segment.bytes": "1073741824",
    "message.max.bytes": "1048588",
    "min.insync.replicas": "1",
    "num.partitions": "1",
    "offsets.topic.num.partitions": "50",
    "offsets.topic.replication.factor": "1",
    "socket.request.max.bytes": "104857600",
    "transaction.max.timeout.ms": "900000",
    "transaction.state.log.num.partitions": "50",
    "unclean.leader.election.enable": "false",
}

# Values of these topic configs must parse as integers (INVALID_CONFIG otherwise).
INT_TOPIC_CONFIGS = frozenset(
    k
    for k, v in TOPIC_DEFAULTS.items()
    if v.lstrip("-").isdigit() and k not in ("min.cleanable.dirty.ratio",)
)

ENUM_TOPIC_CONFIGS: dict[str, frozenset[str]] = {
    "cleanup.policy": frozenset({"delete", "compact", "compact,delete", "delete,compact"}),
    "compression.type": frozenset({"producer", "uncompressed", "gzip", "snappy", "lz4", "zstd"}),
    "message.timestamp.type": frozenset({"CreateTime", "LogAppendTime"}),
}


@dataclass(frozen=True, slots=True)
class ConfigProblem:
    """Why a config cannot be set: the key and a message for the client."""

    key: str
    message: str


def validate_topic_config(key: str, value: str | None) -> ConfigProblem | None:
    """None when ``key=value`` is a valid topic config; a problem otherwise."""
    if key not in TOPIC_DEFAULTS:
        return ConfigProblem(key, f"Unknown topic config name: {key}")
    if value is None:
        return None
    if key in INT_TOPIC_CONFIGS:
        try:
            int(value)
        except ValueError:
            return ConfigProblem(key, f"Invalid value {value} for configuration {key}")
    allowed = ENUM_TOPIC_CONFIGS.get(key)
    if allowed is not None and value not in allowed:
        return ConfigProblem(
            key, f"Invalid value {value} for configuration {key}: must be one of {sorted(allowed)}"
        )
    return None

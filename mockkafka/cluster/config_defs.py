"""The definitions of Kafka's configs: one :class:`ConfigDef` per topic, broker, group and
client-metrics config (type, Kafka's default, allowed values, whether it can change at run
time, whether it is secret), the defaults mockkafka starts with, and which broker config each
:class:`~mockkafka.cluster.config.ClusterConfig` option stands for.

Pure data, at the bottom of the config modules: :mod:`~mockkafka.cluster.release_configs`
builds each Kafka release's tables from these, :mod:`~mockkafka.cluster.configs` validates
and layers values with them (and re-exports every name here), and
:mod:`~mockkafka.cluster.config` checks a ClusterConfig's options against them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

TEST_GROUP_MIN_SESSION_TIMEOUT_MS = 1000
"""mockkafka's ``group.min.session.timeout.ms`` (Kafka's is 6000): test suites lower it so a
consumer with ``session.timeout.ms=3000`` joins. ``config={"group.min.session.timeout.ms":
"6000"}`` restores Kafka's."""


class ConfigType(IntEnum):
    """``config_type`` of DescribeConfigs v3+."""

    UNKNOWN = 0
    BOOLEAN = 1
    STRING = 2
    INT = 3
    SHORT = 4
    LONG = 5
    DOUBLE = 6
    LIST = 7
    CLASS = 8
    PASSWORD = 9


class ConfigSource(IntEnum):
    """``config_source`` of DescribeConfigs v1+ (and CreateTopics v5+)."""

    UNKNOWN = 0
    DYNAMIC_TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5
    DYNAMIC_BROKER_LOGGER_CONFIG = 6
    CLIENT_METRICS_CONFIG = 7
    GROUP_CONFIG = 8


class ResourceType(IntEnum):
    """Config resource types (``ConfigResource.Type`` in the Java client)."""

    UNKNOWN = 0
    TOPIC = 2
    BROKER = 4
    BROKER_LOGGER = 8
    CLIENT_METRICS = 16
    GROUP = 32


class AlterOp(IntEnum):
    """IncrementalAlterConfigs ``config_operation``."""

    SET = 0
    DELETE = 1
    APPEND = 2
    SUBTRACT = 3


LONG_MAX = "9223372036854775807"
INT_MAX = 2147483647


@dataclass(frozen=True, slots=True)
class ConfigDef:
    """One config key: type, Kafka's default and what values it accepts."""

    name: str
    type: ConfigType
    default: str | None
    valid: frozenset[str] | None = None  # allowed values (each element of a LIST)
    min: float | None = None
    max: float | None = None
    dynamic: bool = True  # a broker accepts it at run time (read_only = not dynamic)
    sensitive: bool = False


def _d(
    name: str,
    type_: ConfigType,
    default: str | None,
    *,
    valid: tuple[str, ...] | None = None,
    min: float | None = None,
    max: float | None = None,
    dynamic: bool = True,
    sensitive: bool = False,
) -> ConfigDef:
    return ConfigDef(
        name,
        type_,
        default,
        frozenset(valid) if valid is not None else None,
        min,
        max,
        dynamic,
        sensitive,
    )


B, S, INT, L, LI, D, P, SH = (
    ConfigType.BOOLEAN,
    ConfigType.STRING,
    ConfigType.INT,
    ConfigType.LONG,
    ConfigType.LIST,
    ConfigType.DOUBLE,
    ConfigType.PASSWORD,
    ConfigType.SHORT,
)
_COMPRESSION = ("producer", "uncompressed", "gzip", "snappy", "lz4", "zstd")
_TIMESTAMP_TYPES = ("CreateTime", "LogAppendTime")

# Kafka 4.x topic configs (LogConfig), with Kafka's defaults: those Kafka 4.4 reports
# (tests/configs/test_recorded_configs.py checks them against brokers' recorded answers).
TOPIC_CONFIG_DEFS: dict[str, ConfigDef] = {
    d.name: d
    for d in (
        _d("cleanup.policy", LI, "delete", valid=("delete", "compact")),
        _d("compression.gzip.level", INT, "-1", min=-1, max=9),
        _d("compression.lz4.level", INT, "9", min=1, max=17),
        _d("compression.type", S, "producer", valid=_COMPRESSION),
        _d("compression.zstd.level", INT, "3", min=-131072, max=22),
        _d("delete.retention.ms", L, "86400000", min=0),
        _d("errors.deadletterqueue.group.enable", B, "false"),
        _d("file.delete.delay.ms", L, "60000", min=0),
        _d("flush.messages", L, LONG_MAX, min=1),
        _d("flush.ms", L, LONG_MAX, min=0),
        _d("follower.replication.throttled.replicas", LI, ""),
        _d("index.interval.bytes", INT, "4096", min=0),
        _d("leader.replication.throttled.replicas", LI, ""),
        _d("local.retention.bytes", L, "-2", min=-2),
        _d("local.retention.ms", L, "-2", min=-2),
        _d("max.compaction.lag.ms", L, LONG_MAX, min=1),
        _d("max.decompressed.message.bytes", INT, "2147483639", min=0),
        _d("max.message.bytes", INT, "1048588", min=0),
        _d("message.timestamp.after.max.ms", L, "3600000", min=0),
        _d("message.timestamp.before.max.ms", L, LONG_MAX, min=0),
        _d("message.timestamp.type", S, "CreateTime", valid=_TIMESTAMP_TYPES),
        _d("min.cleanable.dirty.ratio", D, "0.5", min=0, max=1),
        _d("min.compaction.lag.ms", L, "0", min=0),
        _d("min.insync.replicas", INT, "1", min=1),
        _d("preallocate", B, "false"),
        _d("remote.copy.lag.bytes", L, "-1", min=-1),
        _d("remote.copy.lag.ms", L, "0", min=0),
        _d("remote.log.copy.disable", B, "false"),
        _d("remote.log.delete.on.disable", B, "false"),
        _d("remote.storage.enable", B, "false"),
        _d("retention.bytes", L, "-1"),
        _d("retention.ms", L, "604800000", min=-1),
        _d("segment.bytes", INT, "1073741824", min=14),
        _d("segment.index.bytes", INT, "10485760", min=4),
        _d("segment.jitter.ms", L, "0", min=0),
        _d("segment.ms", L, "604800000", min=1),
        _d("unclean.leader.election.enable", B, "false"),
    )
}

# Kafka 4.x broker configs that clients and tests look at, with Kafka's own defaults
# (``dynamic=False``: read-only at run time, as in Kafka).
BROKER_CONFIG_DEFS: dict[str, ConfigDef] = {
    d.name: d
    for d in (
        _d("advertised.listeners", LI, None, dynamic=False),
        _d("auto.create.topics.enable", B, "true", dynamic=False),
        _d("auto.leader.rebalance.enable", B, "true", dynamic=False),
        _d("background.threads", INT, "10", min=1),
        _d("broker.id", INT, "-1", dynamic=False),
        _d("broker.rack", S, None, dynamic=False),
        _d("compression.type", S, "producer", valid=_COMPRESSION),
        _d("connections.max.idle.ms", L, "600000", dynamic=False),
        _d("default.replication.factor", INT, "1", dynamic=False),
        _d("delegation.token.expiry.time.ms", L, "86400000", min=1, dynamic=False),
        _d("delegation.token.max.lifetime.ms", L, "604800000", min=1, dynamic=False),
        _d("delegation.token.secret.key", P, None, sensitive=True, dynamic=False),
        _d("delete.topic.enable", B, "true", dynamic=False),
        _d("fetch.max.bytes", INT, "57671680", min=0, dynamic=False),
        _d(
            "group.coordinator.rebalance.protocols",
            LI,
            "classic,consumer,streams",
            valid=("classic", "consumer", "share", "streams"),
            dynamic=False,
        ),
        _d("group.initial.rebalance.delay.ms", INT, "3000", dynamic=False),
        _d("group.consumer.heartbeat.interval.ms", INT, "5000", min=1, dynamic=False),
        _d("group.consumer.session.timeout.ms", INT, "45000", min=1, dynamic=False),
        _d("group.max.session.timeout.ms", INT, "1800000", dynamic=False),
        _d("group.min.session.timeout.ms", INT, "6000", dynamic=False),
        _d("group.share.delivery.count.limit", INT, "5", min=2, max=10, dynamic=False),
        _d("group.share.enable", B, "false", dynamic=False),
        _d("group.share.heartbeat.interval.ms", INT, "5000", min=1, dynamic=False),
        _d("group.share.max.size", INT, "200", min=10, max=1000, dynamic=False),
        _d("group.share.partition.max.record.locks", INT, "200", min=100, dynamic=False),
        _d("group.share.record.lock.duration.ms", INT, "30000", min=1000, dynamic=False),
        _d("group.share.session.timeout.ms", INT, "45000", min=1, dynamic=False),
        _d("listeners", LI, "PLAINTEXT://:9092", dynamic=False),
        _d("log.cleanup.policy", LI, "delete", valid=("delete", "compact")),
        _d("log.dirs", LI, None, dynamic=False),
        _d("log.flush.interval.messages", L, LONG_MAX, min=1),
        _d("log.message.timestamp.type", S, "CreateTime", valid=_TIMESTAMP_TYPES),
        _d("log.retention.bytes", L, "-1"),
        _d("log.retention.check.interval.ms", L, "300000", min=1, dynamic=False),
        _d("log.retention.hours", INT, "168", dynamic=False),
        _d("log.retention.minutes", INT, None, dynamic=False),
        _d("log.retention.ms", L, "604800000", min=-1),
        _d("log.segment.bytes", INT, "1073741824", min=1048576),
        _d("max.connections", INT, str(INT_MAX), min=0),
        _d("message.max.bytes", INT, "1048588", min=0),
        _d("min.insync.replicas", INT, "1", min=1),
        _d("node.id", INT, "-1", dynamic=False),
        _d("num.io.threads", INT, "8", min=1),
        _d("num.network.threads", INT, "3", min=1),
        _d("num.partitions", INT, "1", min=1, dynamic=False),
        _d("num.replica.fetchers", INT, "1"),
        _d("offsets.retention.minutes", INT, "10080", min=1, dynamic=False),
        _d("offsets.topic.num.partitions", INT, "50", min=1, dynamic=False),
        _d("offsets.topic.replication.factor", SH, "3", min=1, dynamic=False),
        _d("process.roles", LI, "", dynamic=False),
        _d("queued.max.request.bytes", L, "-1", dynamic=False),
        _d("quota.window.num", INT, "11", min=1, dynamic=False),
        _d("quota.window.size.seconds", INT, "1", min=1, dynamic=False),
        _d("sasl.jaas.config", P, None, sensitive=True),
        _d("socket.request.max.bytes", INT, "104857600", min=1, dynamic=False),
        _d("ssl.keystore.password", P, None, sensitive=True),
        _d("transaction.max.timeout.ms", INT, "900000", min=1, dynamic=False),
        _d("transaction.state.log.min.isr", INT, "2", min=1, dynamic=False),
        _d("transaction.state.log.num.partitions", INT, "50", min=1, dynamic=False),
        _d("transaction.state.log.replication.factor", SH, "3", min=1, dynamic=False),
        _d("transaction.state.log.segment.bytes", INT, "104857600", min=1, dynamic=False),
        _d("unclean.leader.election.enable", B, "false"),
    )
}

# mockkafka's own limits (cluster/limits.py): not Kafka configs, so not described, but their
# values are checked as a Kafka config's are (a value <= 0 means unlimited).
MOCKKAFKA_LIMIT_DEFS: dict[str, ConfigDef] = {
    d.name: d
    for d in (
        _d("mockkafka.max.wait.ms", L, "60000", min=-1),
        _d("mockkafka.max.records.per.user.op", INT, "10000", min=-1),
        _d("mockkafka.max.decompressed.batch.bytes", L, str(64 * 1024 * 1024), min=-1),
    )
}

# KIP-848 group configs (resource type GROUP), Kafka 4.x defaults.
GROUP_CONFIG_DEFS: dict[str, ConfigDef] = {
    d.name: d
    for d in (
        _d("consumer.heartbeat.interval.ms", INT, "5000", min=1),
        _d("consumer.session.timeout.ms", INT, "45000", min=1),
        _d("share.auto.offset.reset", S, "latest", valid=("latest", "earliest", "by_duration")),
        _d("share.heartbeat.interval.ms", INT, "5000", min=1),
        _d("share.isolation.level", S, "read_uncommitted"),
        _d("share.record.lock.duration.ms", INT, "30000", min=1),
        _d("share.session.timeout.ms", INT, "45000", min=1),
        _d("streams.heartbeat.interval.ms", INT, "5000", min=1),
        _d("streams.num.standby.replicas", INT, "0", min=0),
        _d("streams.session.timeout.ms", INT, "45000", min=1),
    )
}

# KIP-714 client-metrics subscriptions (resource type CLIENT_METRICS).
CLIENT_METRICS_CONFIG_DEFS: dict[str, ConfigDef] = {
    d.name: d
    for d in (
        _d("interval.ms", INT, "300000", min=100, max=3600000),
        _d("match", LI, ""),
        _d("metrics", LI, ""),
    )
}

LOGGER_LEVELS = frozenset({"OFF", "FATAL", "ERROR", "WARN", "INFO", "DEBUG", "TRACE", "ALL"})
DEFAULT_LOGGERS: dict[str, str] = {
    "root": "INFO",
    "kafka": "INFO",
    "kafka.controller": "INFO",
    "kafka.request.logger": "WARN",
    "org.apache.kafka": "INFO",
}

TOPIC_DEFAULTS: dict[str, str] = {
    k: d.default for k, d in TOPIC_CONFIG_DEFS.items() if d.default is not None
}
"""Kafka's default of every topic config (source DEFAULT_CONFIG unless set on the topic)."""

# Topic config -> the broker config that supplies its default (DescribeConfigs synonyms).
TOPIC_TO_BROKER: dict[str, str] = {
    "cleanup.policy": "log.cleanup.policy",
    "compression.type": "compression.type",
    "flush.messages": "log.flush.interval.messages",
    "max.message.bytes": "message.max.bytes",
    "message.timestamp.type": "log.message.timestamp.type",
    "min.insync.replicas": "min.insync.replicas",
    "retention.bytes": "log.retention.bytes",
    "retention.ms": "log.retention.ms",
    "segment.bytes": "log.segment.bytes",
    "unclean.leader.election.enable": "unclean.leader.election.enable",
}

# The broker configs a fresh mockkafka cluster starts with (test-friendly where they differ
# from Kafka: no auto-creation, no initial rebalance delay, single-replica internal topics).
BROKER_DEFAULTS: dict[str, str] = {
    "auto.create.topics.enable": "false",
    "compression.type": "producer",
    "default.replication.factor": "1",
    "connections.max.idle.ms": "600000",
    "delete.topic.enable": "true",
    "fetch.max.bytes": "57671680",
    "group.initial.rebalance.delay.ms": "0",
    "group.max.session.timeout.ms": "1800000",
    "group.min.session.timeout.ms": str(TEST_GROUP_MIN_SESSION_TIMEOUT_MS),
    # Share groups (KIP-932) are on, with a test-friendly heartbeat (Kafka 4.0: off, 5000).
    "group.share.enable": "true",
    "group.share.heartbeat.interval.ms": "500",
    "log.cleanup.policy": "delete",
    "log.message.timestamp.type": "CreateTime",
    "log.retention.bytes": "-1",
    "log.retention.ms": "604800000",
    "log.segment.bytes": "1073741824",
    # mockkafka bounds what one client may cost (cluster/limits.py); Kafka: unlimited.
    "max.connections": "4096",
    "message.max.bytes": "1048588",
    "min.insync.replicas": "1",
    "num.partitions": "1",
    "offsets.topic.num.partitions": "50",
    "offsets.topic.replication.factor": "1",
    "queued.max.request.bytes": "268435456",
    "socket.request.max.bytes": "104857600",
    "transaction.max.timeout.ms": "900000",
    "transaction.state.log.min.isr": "1",
    "transaction.state.log.num.partitions": "50",
    "transaction.state.log.replication.factor": "1",
    "unclean.leader.election.enable": "false",
}

# Values of these topic configs must parse as integers (INVALID_CONFIG otherwise).
INT_TOPIC_CONFIGS = frozenset(
    k
    for k, d in TOPIC_CONFIG_DEFS.items()
    if d.type in (ConfigType.INT, ConfigType.LONG, ConfigType.SHORT)
)

ENUM_TOPIC_CONFIGS: dict[str, frozenset[str]] = {
    k: d.valid for k, d in TOPIC_CONFIG_DEFS.items() if d.valid is not None
}


# -- broker configs given by name when a cluster is built --------------------------------------

CONFIG_OPTIONS: dict[str, str] = {
    "auto.create.topics.enable": "auto_create_topics",
    "default.replication.factor": "default_replication_factor",
    "group.consumer.heartbeat.interval.ms": "group_consumer_heartbeat_interval_ms",
    "group.initial.rebalance.delay.ms": "group_initial_rebalance_delay_ms",
    "group.max.session.timeout.ms": "group_max_session_timeout_ms",
    "group.min.session.timeout.ms": "group_min_session_timeout_ms",
    "num.partitions": "default_partitions",
    "offsets.topic.num.partitions": "offsets_topic_partitions",
    "socket.request.max.bytes": "max_request_size",
    "transaction.max.timeout.ms": "transaction_max_timeout_ms",
}
"""Broker configs that a :class:`~mockkafka.cluster.config.ClusterConfig` option stands for."""

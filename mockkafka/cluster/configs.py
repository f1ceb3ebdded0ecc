"""Topic, broker, logger and group configuration: definitions, validation and layering.

Theory of operation
-------------------
Configs are strings on the wire (DescribeConfigs / AlterConfigs), so they are stored as
strings. Each known key has a :class:`ConfigDef` (type, Kafka's default, allowed values,
whether a broker can change it at run time, whether it is a secret).

Where a value comes from is layered as in Kafka, highest first; DescribeConfigs reports the
winning layer as the config's ``config_source`` and, when asked, every layer as a synonym:

* topic configs: set on the topic (``Topic.configs``, DYNAMIC_TOPIC_CONFIG), else the broker
  config that supplies the topic default (``TOPIC_TO_BROKER``), through the broker layers;
* broker configs: set on one broker (``Broker.configs``, DYNAMIC_BROKER_CONFIG), set for all
  brokers at run time (resource name ``""``, DYNAMIC_DEFAULT_BROKER_CONFIG), given when the
  cluster was built (``ClusterConfig.broker_configs`` and its options, STATIC_BROKER_CONFIG),
  else Kafka's default (DEFAULT_CONFIG).

``ClusterState.broker_configs`` holds the cluster-wide effective values (static, overlaid by
dynamic defaults), so other subsystems read one dict. The dynamic-default layer and the
static values it shadows live in ``ClusterState.dynamic_configs`` (a :class:`DynamicConfigs`),
as do broker logger levels and group / client-metrics configs.

Definitions are per release: every lookup goes through
:func:`~mockkafka.cluster.release_configs.config_set` of the cluster's ``kafka_version``
(Kafka 4's tables below without a preset; a 0.11-3.9 release's own table with one).

Everything here is sans-IO; alterations raise :class:`~mockkafka.errors.KafkaApiError` with
the code and message a broker would answer, and handlers turn that into the response.
"""

from __future__ import annotations

import functools
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field, fields
from enum import IntEnum
from typing import TYPE_CHECKING, Any, Protocol

from mockkafka.cluster.config import TEST_GROUP_MIN_SESSION_TIMEOUT_MS, ClusterConfig
from mockkafka.cluster.release_configs import ConfigSet, config_set
from mockkafka.errors import ErrorCode, KafkaApiError
from mockkafka.protocol.releases import release_tuple

if TYPE_CHECKING:
    from mockkafka.cluster.base import Broker


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


@dataclass(frozen=True, slots=True)
class ConfigProblem:
    """Why a config cannot be set: the key and a message for the client."""

    key: str
    message: str


def split_list(value: str | None) -> list[str]:
    """The elements of a LIST config value (comma separated, blanks dropped)."""
    if not value:
        return []
    return [p.strip() for p in value.split(",") if p.strip()]


def unknown_config_message(kind: str, key: str, sets: ConfigSet) -> str:
    """Kafka's ``Unknown topic config name: KEY``; under a release preset it names the
    release and the closest names it has."""
    message = f"Unknown {kind} config name: {key}"
    if sets.release is None:
        return message
    names = sets.topic if kind == "topic" else sets.broker_names
    return f"{message} ({sets.label} has no such {kind} config{did_you_mean(key, names)})"


def did_you_mean(key: str, names: Iterable[str]) -> str:
    """``"; did you mean a, b?"`` for the names closest to ``key`` (empty when none is)."""
    import difflib

    close = difflib.get_close_matches(key, sorted(names), n=3)
    return f"; did you mean {', '.join(close)}?" if close else ""


def validate_value(d: ConfigDef, value: str) -> ConfigProblem | None:
    """None when ``value`` is acceptable for ``d``; else why not (Kafka's wording)."""
    key = d.name

    def bad(why: str = "") -> ConfigProblem:
        return ConfigProblem(key, f"Invalid value {value} for configuration {key}{why}")

    v = value.strip()
    if d.type in (ConfigType.INT, ConfigType.LONG, ConfigType.SHORT):
        try:
            n: float = int(v)
        except ValueError:
            kind = {ConfigType.INT: "int", ConfigType.LONG: "long"}.get(d.type, "short")
            return bad(f": Not a number of type {kind.upper()}")
        limits = {ConfigType.INT: 2**31, ConfigType.LONG: 2**63, ConfigType.SHORT: 2**15}[d.type]
        if not -limits <= n < limits:
            return bad(f": Not a number of type {d.type.name}")
    elif d.type == ConfigType.DOUBLE:
        try:
            n = float(v)
        except ValueError:
            return bad(": Not a number of type DOUBLE")
    elif d.type == ConfigType.BOOLEAN:
        if v.lower() not in ("true", "false"):
            return bad(": Expected value to be either true or false")
        return None
    elif d.type == ConfigType.LIST:
        if d.valid is not None:
            parts = split_list(v)
            if not parts and key in ("cleanup.policy", "log.cleanup.policy"):
                return None  # Kafka 4.1+: an empty cleanup policy keeps everything
            unknown = [p for p in parts if p not in d.valid]
            if unknown:
                return bad(f": String must be one of: {', '.join(sorted(d.valid))}")
        return None
    else:
        if d.valid is not None and v not in d.valid:
            return bad(f": String must be one of: {', '.join(sorted(d.valid))}")
        return None
    if d.min is not None and n < d.min:
        return bad(f": Value must be at least {_num(d.min)}")
    if d.max is not None and n > d.max:
        return bad(f": Value must be no more than {_num(d.max)}")
    return None


def _num(x: float) -> str:
    return str(int(x)) if x == int(x) else str(x)


def validate_topic_config(
    key: str, value: str | None, kafka_version: str | None = None
) -> ConfigProblem | None:
    """None when ``key=value`` is a valid topic config (of release ``kafka_version``, None:
    Kafka 4.x); a problem otherwise."""
    sets = config_set(kafka_version)
    d = sets.topic.get(key)
    if d is None:
        return ConfigProblem(key, unknown_config_message("topic", key, sets))
    if value is None:
        return None
    return validate_value(d, value)


# -- describing -------------------------------------------------------------------------------


@dataclass(slots=True)
class ConfigEntry:
    """One config as DescribeConfigs reports it; ``synonyms`` are (name, value, source)."""

    name: str
    value: str | None
    source: ConfigSource
    read_only: bool = False
    is_sensitive: bool = False
    config_type: ConfigType = ConfigType.UNKNOWN
    synonyms: list[tuple[str, str | None, ConfigSource]] = field(default_factory=list)

    @property
    def is_default(self) -> bool:
        return self.source == ConfigSource.DEFAULT_CONFIG


@dataclass(slots=True)
class DynamicConfigs:
    """Configs changed at run time that ``ClusterState.broker_configs`` does not hold.

    ``default_broker``: broker configs set for every broker (resource name ``""``);
    ``static_shadow``: the static values those shadow (None: Kafka's default);
    ``broker_loggers``: logger levels by broker id; ``resources``: GROUP and CLIENT_METRICS
    configs by (resource type, name).
    """

    default_broker: dict[str, str] = field(default_factory=dict)
    static_shadow: dict[str, str | None] = field(default_factory=dict)
    broker_loggers: dict[int, dict[str, str]] = field(default_factory=dict)
    resources: dict[tuple[int, str], dict[str, str]] = field(default_factory=dict)


class TopicConfigs(Protocol):
    """What the config functions read of a topic (``cluster.topics.Topic`` is one)."""

    @property
    def name(self) -> str: ...
    @property
    def configs(self) -> dict[str, str]: ...


class ConfigHost(Protocol):
    """What the config functions read and change of the cluster state (ClusterState is one).

    Typed here, not by ``ClusterState``: this module sits below the state (and below the
    topics, whose defaults it defines), so it must not import them.
    """

    @property
    def config(self) -> ClusterConfig: ...
    @property
    def brokers(self) -> Mapping[int, Broker]: ...
    @property
    def broker_configs(self) -> dict[str, str]: ...
    @property
    def dynamic_configs(self) -> DynamicConfigs: ...
    @property
    def topics(self) -> Mapping[str, TopicConfigs]: ...
    @property
    def controller_id(self) -> int: ...
    @property
    def extensions(self) -> dict[str, Any]: ...

    def broker(self, node_id: int) -> Broker: ...
    def topic(self, name: str) -> TopicConfigs: ...
    def notify(self, key: Hashable) -> None: ...


def dynamic_default_broker_configs(state: ConfigHost) -> dict[str, str]:
    """Broker configs set at run time for every broker (resource name ``""``)."""
    return state.dynamic_configs.default_broker


def _static_shadow(state: ConfigHost) -> dict[str, str | None]:
    return state.dynamic_configs.static_shadow


def log_dir(broker_id: int) -> str:
    """The (only) log directory of broker ``broker_id``, as DescribeLogDirs reports it."""
    return f"/var/lib/mockkafka/{broker_id}"


def _per_broker_static(state: ConfigHost, broker_id: int) -> dict[str, str | None]:
    b = state.brokers.get(broker_id)
    if b is None:
        return {}
    listener = f"{state.config.security_protocol}://{b.host}:{b.port}"
    out: dict[str, str | None] = {
        "advertised.listeners": listener,
        "broker.id": str(broker_id),
        "broker.rack": b.rack,
        "listeners": listener,
        "log.dirs": log_dir(broker_id),
        "node.id": str(broker_id),
        "process.roles": "broker,controller" if broker_id == state.controller_id else "broker",
    }
    release = state.config.kafka_version
    if release is not None and release_tuple(release) < (3, 3):
        del out["process.roles"]  # a ZooKeeper-era preset (KRaft is reported from 3.3)
    return out


def _cluster_static(state: ConfigHost) -> dict[str, str]:
    """Static broker values that come from ClusterConfig options rather than a dict.

    Under a release preset an option left at its default stands for nothing: the release's
    default (in ``state.broker_configs``) shows instead."""
    c = state.config
    out = {
        "default.replication.factor": str(c.default_replication_factor),
        "group.max.session.timeout.ms": str(c.group_max_session_timeout_ms),
        "group.min.session.timeout.ms": str(c.group_min_session_timeout_ms),
        "num.partitions": str(c.default_partitions),
        "offsets.topic.num.partitions": str(c.offsets_topic_partitions),
        "socket.request.max.bytes": str(c.max_request_size),
        "transaction.max.timeout.ms": str(c.transaction_max_timeout_ms),
    }
    if c.kafka_version is not None:
        for key in options_at_default(c):
            out.pop(key, None)
    return out


@functools.lru_cache(maxsize=64)
def options_at_default(config: ClusterConfig) -> frozenset[str]:
    """Broker configs whose ClusterConfig option (:data:`CONFIG_OPTIONS`) was not changed."""
    defaults = {f.name: f.default for f in fields(ClusterConfig)}
    return frozenset(
        key for key, option in CONFIG_OPTIONS.items() if getattr(config, option) == defaults[option]
    )


def _static_value(state: ConfigHost, key: str) -> str | None:
    explicit = dict(state.config.broker_configs)
    if key in explicit:
        return explicit[key]
    shadow = _static_shadow(state)
    if key in shadow:
        return shadow[key]
    derived = _cluster_static(state)
    if key in derived:
        return derived[key]
    return state.broker_configs.get(key)


def broker_layers(
    state: ConfigHost, key: str, broker_id: int | None
) -> list[tuple[str | None, ConfigSource]]:
    """Every layer that defines broker config ``key``, highest first (value, source)."""
    out: list[tuple[str | None, ConfigSource]] = []
    if broker_id is not None:
        b = state.brokers.get(broker_id)
        if b is not None and key in b.configs:
            out.append((b.configs[key], ConfigSource.DYNAMIC_BROKER_CONFIG))
    dyn = dynamic_default_broker_configs(state)
    if key in dyn:
        out.append((dyn[key], ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG))
    d = config_set(state.config.kafka_version).broker.get(key)
    per_broker = _per_broker_static(state, broker_id) if broker_id is not None else {}
    if key in per_broker:
        out.append((per_broker[key], ConfigSource.STATIC_BROKER_CONFIG))
    else:
        static = _static_value(state, key)
        explicit = key in dict(state.config.broker_configs)
        if static is not None and (explicit or d is None or static != d.default):
            out.append((static, ConfigSource.STATIC_BROKER_CONFIG))
    if d is not None:
        out.append((d.default, ConfigSource.DEFAULT_CONFIG))
    return out


def describe_broker(
    state: ConfigHost, broker_id: int | None, keys: list[str] | None = None
) -> list[ConfigEntry]:
    """Broker configs: every config of ``broker_id``, or (None) the dynamic defaults only."""
    sets = config_set(state.config.kafka_version)
    if broker_id is None:
        names = sorted(dynamic_default_broker_configs(state))
    else:
        b = state.brokers.get(broker_id)
        # A preset reports its release's configs and what was set, not mockkafka's own
        # starting values for configs that release did not have.
        started = (
            state.broker_configs if sets.release is None else dict(state.config.broker_configs)
        )
        names = sorted(
            set(sets.broker)
            | set(started)
            | set(dynamic_default_broker_configs(state))
            | set(b.configs if b else ())
        )
    out = []
    for name in names:
        if keys is not None and name not in keys:
            continue
        d = sets.broker.get(name)
        layers = broker_layers(state, name, broker_id)
        if broker_id is None:
            layers = [x for x in layers if x[1] == ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG]
        if not layers:
            continue
        value, source = layers[0]
        sensitive = d.sensitive if d else _looks_sensitive(name)
        out.append(
            ConfigEntry(
                name=name,
                value=None if sensitive else value,
                source=source,
                read_only=not d.dynamic if d else False,
                is_sensitive=sensitive,
                config_type=d.type if d else ConfigType.UNKNOWN,
                synonyms=[(name, None if sensitive else v, s) for v, s in layers],
            )
        )
    return out


def _looks_sensitive(name: str) -> bool:
    return name.endswith((".password", ".jaas.config", ".secret"))


def topic_config_layers(
    state: ConfigHost, topic: TopicConfigs, key: str, broker_id: int | None
) -> list[tuple[str, str | None, ConfigSource]]:
    """Every layer that defines topic config ``key``, highest first (name, value, source)."""
    out: list[tuple[str, str | None, ConfigSource]] = []
    if key in topic.configs:
        out.append((key, topic.configs[key], ConfigSource.DYNAMIC_TOPIC_CONFIG))
    sets = config_set(state.config.kafka_version)
    broker_key = sets.topic_to_broker.get(key)
    if broker_key is not None:
        layers = broker_layers(state, broker_key, broker_id)
        if layers and layers[-1][1] == ConfigSource.DEFAULT_CONFIG:
            if layers[-1][0] is not None:
                out.extend((broker_key, v, s) for v, s in layers)
                return out  # the broker default is the topic default
            layers.pop()  # no broker default (log.retention.ms): the topic's own one
        out.extend((broker_key, v, s) for v, s in layers)
    d = sets.topic.get(key)
    if d is not None:
        out.append((key, d.default, ConfigSource.DEFAULT_CONFIG))
    return out


def describe_topic(
    state: ConfigHost, topic: TopicConfigs, broker_id: int | None, keys: list[str] | None = None
) -> list[ConfigEntry]:
    """Every config of ``topic`` (or only ``keys``) with its effective value and source."""
    out = []
    defs = config_set(state.config.kafka_version).topic
    for name in sorted(set(defs) | set(topic.configs)):
        if keys is not None and name not in keys:
            continue
        layers = topic_config_layers(state, topic, name, broker_id)
        if not layers:
            continue
        d = defs.get(name)
        _n, value, source = layers[0]
        out.append(
            ConfigEntry(
                name=name,
                value=value,
                source=source,
                read_only=False,
                is_sensitive=False,
                config_type=d.type if d else ConfigType.UNKNOWN,
                synonyms=layers,
            )
        )
    return out


def broker_loggers(state: ConfigHost, broker_id: int) -> dict[str, str]:
    """Logger levels of a broker (BROKER_LOGGER resources), changeable at run time."""
    return state.dynamic_configs.broker_loggers.setdefault(broker_id, dict(DEFAULT_LOGGERS))


def describe_broker_logger(
    state: ConfigHost, broker_id: int, keys: list[str] | None = None
) -> list[ConfigEntry]:
    levels = broker_loggers(state, broker_id)
    return [
        ConfigEntry(
            name,
            level,
            ConfigSource.DYNAMIC_BROKER_LOGGER_CONFIG,
            config_type=ConfigType.STRING,
            synonyms=[(name, level, ConfigSource.DYNAMIC_BROKER_LOGGER_CONFIG)],
        )
        for name, level in sorted(levels.items())
        if keys is None or name in keys
    ]


def apply_changes(stored: dict[str, str], changes: Mapping[str, object | None]) -> None:
    """Set each key of ``changes`` in ``stored`` (as text), or remove it where the value is
    None (back to its default): what every "set configs" verb does once values are valid."""
    for key, value in changes.items():
        if value is None:
            stored.pop(key, None)
        else:
            stored[key] = str(value)


def resource_configs(state: ConfigHost, rtype: ResourceType, name: str) -> dict[str, str]:
    """The stored configs of a GROUP or CLIENT_METRICS resource (created on first use)."""
    return state.dynamic_configs.resources.setdefault((int(rtype), name), {})


def configured_resources(state: ConfigHost, rtype: ResourceType) -> list[str]:
    """Names of GROUP / CLIENT_METRICS resources that have configs set."""
    all_ = state.dynamic_configs.resources
    return sorted(n for (t, n), cfg in all_.items() if t == rtype and cfg)


def describe_resource(
    state: ConfigHost, rtype: ResourceType, name: str, keys: list[str] | None = None
) -> list[ConfigEntry]:
    """GROUP (set or default) and CLIENT_METRICS (set only) configs."""
    defs = GROUP_CONFIG_DEFS if rtype == ResourceType.GROUP else CLIENT_METRICS_CONFIG_DEFS
    stored = resource_configs(state, rtype, name)
    set_source = (
        ConfigSource.GROUP_CONFIG
        if rtype == ResourceType.GROUP
        else ConfigSource.CLIENT_METRICS_CONFIG
    )
    out = []
    for key in sorted(set(defs) | set(stored)):
        if keys is not None and key not in keys:
            continue
        d = defs.get(key)
        value: str | None
        if key in stored:
            value, source = stored[key], set_source
        elif rtype == ResourceType.GROUP and d is not None:
            value, source = d.default, ConfigSource.DEFAULT_CONFIG
        else:
            continue
        out.append(
            ConfigEntry(
                key,
                value,
                source,
                config_type=d.type if d else ConfigType.UNKNOWN,
                synonyms=[(key, value, source)],
            )
        )
    return out


# -- resolving resources and altering -----------------------------------------------------------


def parse_broker_id(name: str) -> int | None:
    """The broker id a BROKER / BROKER_LOGGER resource names (None for ``""``)."""
    if name == "":
        return None
    try:
        return int(name)
    except ValueError:
        raise KafkaApiError(
            ErrorCode.INVALID_REQUEST, f"Broker id must be an integer, but it is: {name}"
        ) from None


def current_dynamic(state: ConfigHost, rtype: ResourceType, name: str) -> dict[str, str]:
    """The dynamic configs of a resource as a dict (a copy), for AlterConfigs to edit.

    Raises KafkaApiError for a resource that does not exist or cannot be altered.
    """
    if rtype == ResourceType.TOPIC:
        t = state.topics.get(name)
        if t is None:
            raise KafkaApiError(
                ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"Topic {name} does not exist."
            )
        return dict(t.configs)
    if rtype == ResourceType.BROKER:
        bid = parse_broker_id(name)
        if bid is None:
            return dict(dynamic_default_broker_configs(state))
        if bid not in state.brokers:
            raise KafkaApiError(ErrorCode.INVALID_REQUEST, f"Unknown broker id {bid}")
        return dict(state.brokers[bid].configs)
    if rtype == ResourceType.BROKER_LOGGER:
        bid = parse_broker_id(name)
        if bid is None or bid not in state.brokers:
            raise KafkaApiError(ErrorCode.INVALID_REQUEST, f"Unknown broker id {name!r}")
        return dict(broker_loggers(state, bid))
    if rtype in (ResourceType.GROUP, ResourceType.CLIENT_METRICS):
        if not name:
            raise KafkaApiError(
                ErrorCode.INVALID_REQUEST, f"{rtype.name} resource name must not be empty"
            )
        return dict(resource_configs(state, rtype, name))
    raise KafkaApiError(
        ErrorCode.INVALID_REQUEST, f"Unsupported resource type {int(rtype)} for config change"
    )


def config_def(rtype: ResourceType, key: str, kafka_version: str | None = None) -> ConfigDef | None:
    """The definition of config ``key`` of a resource type, in release ``kafka_version``
    (None: Kafka 4.x); None when that release has no such (modelled) config."""
    if rtype == ResourceType.TOPIC:
        return config_set(kafka_version).topic.get(key)
    if rtype == ResourceType.BROKER:
        return config_set(kafka_version).broker.get(key) or MOCKKAFKA_LIMIT_DEFS.get(key)
    if rtype == ResourceType.GROUP:
        return GROUP_CONFIG_DEFS.get(key)
    if rtype == ResourceType.CLIENT_METRICS:
        return CLIENT_METRICS_CONFIG_DEFS.get(key)
    return None


def default_value(state: ConfigHost, rtype: ResourceType, key: str) -> str | None:
    """The value a config has when not set on the resource (APPEND/SUBTRACT start from it)."""
    release = state.config.kafka_version
    broker_key = config_set(release).topic_to_broker.get(key)
    if rtype == ResourceType.TOPIC and broker_key is not None:
        layers = broker_layers(state, broker_key, None)
        if layers and layers[0][0] is not None:
            return layers[0][0]
    d = config_def(rtype, key, release)
    return d.default if d else None


def validate_configs(
    state: ConfigHost, rtype: ResourceType, name: str, configs: Mapping[str, str | None]
) -> None:
    """Raise KafkaApiError INVALID_CONFIG / INVALID_REQUEST for the first bad entry."""
    nulls = sorted(k for k, v in configs.items() if v is None)
    if nulls:
        what = {ResourceType.TOPIC: "topic"}.get(rtype, rtype.name.lower())
        raise KafkaApiError(
            ErrorCode.INVALID_CONFIG,
            f"Null value not supported for {what} configs: {','.join(nulls)}",
        )
    for key, value in configs.items():
        assert value is not None
        if rtype == ResourceType.BROKER_LOGGER:
            if value.upper() not in LOGGER_LEVELS:
                raise KafkaApiError(
                    ErrorCode.INVALID_CONFIG,
                    f"Cannot set the log level of {key} to {value} as it is not a supported "
                    f"log level. Valid log levels are {', '.join(sorted(LOGGER_LEVELS))}",
                )
            continue
        d = config_def(rtype, key, state.config.kafka_version)
        if d is None:
            if rtype == ResourceType.BROKER:
                continue  # Kafka keeps unknown broker configs (plugins may read them)
            kind = {
                ResourceType.TOPIC: "topic",
                ResourceType.GROUP: "group",
                ResourceType.CLIENT_METRICS: "client metrics",
            }.get(rtype, "")
            sets = config_set(state.config.kafka_version)
            raise KafkaApiError(ErrorCode.INVALID_CONFIG, unknown_config_message(kind, key, sets))
        if rtype == ResourceType.BROKER and not d.dynamic:
            raise KafkaApiError(
                ErrorCode.INVALID_REQUEST,
                f"Cannot update these configs dynamically: Set({key})",
            )
        p = validate_value(d, value)
        if p is not None:
            raise KafkaApiError(ErrorCode.INVALID_CONFIG, p.message)


def apply_dynamic(
    state: ConfigHost, rtype: ResourceType, name: str, configs: Mapping[str, str]
) -> None:
    """Replace the dynamic configs of a resource (already validated); effective at once."""
    new = dict(configs)
    if rtype == ResourceType.TOPIC:
        t = state.topic(name)
        t.configs.clear()
        t.configs.update(new)
        state.notify(("configs", "topic", name))
        return
    if rtype == ResourceType.BROKER:
        bid = parse_broker_id(name)
        if bid is not None:
            b = state.broker(bid)
            b.configs.clear()
            b.configs.update(new)
        else:
            dyn = dynamic_default_broker_configs(state)
            shadow = _static_shadow(state)
            for key in set(dyn) - set(new):  # deleted: the static value shows again
                old = shadow.pop(key, None)
                if old is None:
                    state.broker_configs.pop(key, None)
                else:
                    state.broker_configs[key] = old
            for key, value in new.items():
                if key not in dyn:
                    shadow[key] = state.broker_configs.get(key)
                state.broker_configs[key] = value
            dyn.clear()
            dyn.update(new)
        state.notify(("configs", "broker", name))
        return
    if rtype == ResourceType.BROKER_LOGGER:
        bid = parse_broker_id(name)
        assert bid is not None
        levels = broker_loggers(state, bid)
        levels.clear()
        levels.update(DEFAULT_LOGGERS)  # a deleted logger falls back to its default level
        levels.update({k: v.upper() for k, v in new.items()})
        return
    stored = resource_configs(state, rtype, name)
    stored.clear()
    stored.update(new)
    state.notify(("configs", rtype.name.lower(), name))


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


def config_text(value: object) -> str:
    """A config value as Kafka spells it (``True`` -> ``"true"``)."""
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def set_group_configs(
    state: ConfigHost, group: str, configs: Mapping[str, object], *, where: str
) -> None:
    """Set (None: reset) GROUP resource configs of ``group``, as IncrementalAlterConfigs on
    the GROUP resource does. ConfigError names an unknown key (did-you-mean) or bad value."""
    import difflib

    from mockkafka.errors import ConfigError

    if not isinstance(group, str) or not group:
        raise ConfigError(f"{where}: group must be a non-empty string, got {group!r}")
    changes: dict[str, str | None] = {}
    for key, raw in configs.items():
        d = GROUP_CONFIG_DEFS.get(key) if isinstance(key, str) else None
        if d is None:
            close = difflib.get_close_matches(str(key), sorted(GROUP_CONFIG_DEFS), n=3)
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            raise ConfigError(
                f"{where}: {key!r} is not a Kafka group config{hint}; group configs are "
                f"{sorted(GROUP_CONFIG_DEFS)}"
            )
        value = None if raw is None else config_text(raw)
        if value is not None:
            problem = validate_value(d, value)
            if problem is not None:
                raise ConfigError(f"{where}[{key!r}]: {problem.message}")
        changes[key] = value
    apply_changes(resource_configs(state, ResourceType.GROUP, group), changes)
    state.notify(("configs", "group", group))


def check_broker_configs(
    config: Mapping[str, object], *, where: str = "config", kafka_version: str | None = None
) -> dict[str, str]:
    """``config`` as broker config strings, checked against the names Kafka 4.x knows (with
    ``kafka_version``, a release preset: the names that release had).

    Raises :class:`~mockkafka.errors.ConfigError` naming the key, with a did-you-mean, for a
    name Kafka (that release) does not know, and with Kafka's message for a value it would
    refuse. A topic config given here is refused with the broker config that sets its default.
    """
    from mockkafka.cluster.config_names import KAFKA_BROKER_CONFIG_PREFIXES
    from mockkafka.cluster.limits import LIMIT_DEFAULTS
    from mockkafka.errors import ConfigError
    from mockkafka.protocol.releases import normalize_release

    try:
        release = None if kafka_version is None else normalize_release(kafka_version)
    except ValueError:
        release = None  # ClusterConfig reports the unknown release
    sets = config_set(release)
    # mockkafka's own limits (``mockkafka.max.*``) are broker configs here too.
    known = sets.broker_names | set(LIMIT_DEFAULTS)
    what = "a Kafka broker config" if sets.release is None else f"a {sets.label} broker config"
    out: dict[str, str] = {}
    for key, raw in config.items():
        if not isinstance(key, str):
            raise ConfigError(f"{where}: config names are strings, got {key!r}")
        if raw is None:
            raise ConfigError(f"{where}[{key!r}]: a value is required (got None)")
        if key not in known and not key.startswith(KAFKA_BROKER_CONFIG_PREFIXES):
            if key in sets.topic_to_broker:
                broker_key = sets.topic_to_broker[key]
                hint = f"; {key} is a topic config: its broker default is {broker_key}"
            else:
                close = did_you_mean(key, known)
                hint = f" ({close[2:]})" if close else ""
            raise ConfigError(f"{where}: {key!r} is not {what}{hint}")
        value = config_text(raw)
        d = sets.broker.get(key) or MOCKKAFKA_LIMIT_DEFS.get(key)
        problem = validate_value(d, value) if d is not None else None
        if problem is not None:
            raise ConfigError(f"{where}[{key!r}]: {problem.message}")
        out[key] = value
    return out


def split_config_options(
    config: Mapping[str, object], kafka_version: str | None = None
) -> tuple[dict[str, object], dict[str, str]]:
    """``config`` split into ClusterConfig options (CONFIG_OPTIONS) and the other configs,
    checked against release ``kafka_version``'s names (None: Kafka 4.x)."""
    checked = check_broker_configs(config, kafka_version=kafka_version)
    options: dict[str, object] = {}
    rest: dict[str, str] = {}
    for key, value in checked.items():
        option = CONFIG_OPTIONS.get(key)
        if option is None:
            rest[key] = value
        elif option == "auto_create_topics":
            options[option] = value.lower() == "true"
        else:
            options[option] = int(value)
    return options, rest


def derived_broker_configs(explicit: Mapping[str, str]) -> dict[str, str]:
    """Configs Kafka derives from others: ``log.retention.ms`` from minutes or hours."""
    out: dict[str, str] = {}
    if "log.retention.ms" not in explicit:
        if "log.retention.minutes" in explicit:
            out["log.retention.ms"] = str(int(explicit["log.retention.minutes"]) * 60_000)
        elif "log.retention.hours" in explicit:
            out["log.retention.ms"] = str(int(explicit["log.retention.hours"]) * 3_600_000)
    return out

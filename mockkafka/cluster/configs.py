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

from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from mockkafka.cluster.config_defs import (
    BROKER_CONFIG_DEFS as BROKER_CONFIG_DEFS,
)
from mockkafka.cluster.config_defs import (
    BROKER_DEFAULTS as BROKER_DEFAULTS,
)
from mockkafka.cluster.config_defs import (
    CLIENT_METRICS_CONFIG_DEFS as CLIENT_METRICS_CONFIG_DEFS,
)
from mockkafka.cluster.config_defs import (
    CONFIG_OPTIONS as CONFIG_OPTIONS,
)
from mockkafka.cluster.config_defs import (
    DEFAULT_LOGGERS as DEFAULT_LOGGERS,
)
from mockkafka.cluster.config_defs import (
    ENUM_TOPIC_CONFIGS as ENUM_TOPIC_CONFIGS,
)
from mockkafka.cluster.config_defs import (
    GROUP_CONFIG_DEFS as GROUP_CONFIG_DEFS,
)
from mockkafka.cluster.config_defs import (
    INT_MAX as INT_MAX,
)
from mockkafka.cluster.config_defs import (
    INT_TOPIC_CONFIGS as INT_TOPIC_CONFIGS,
)
from mockkafka.cluster.config_defs import (
    LOGGER_LEVELS as LOGGER_LEVELS,
)
from mockkafka.cluster.config_defs import (
    LONG_MAX as LONG_MAX,
)
from mockkafka.cluster.config_defs import (
    MOCKKAFKA_LIMIT_DEFS as MOCKKAFKA_LIMIT_DEFS,
)
from mockkafka.cluster.config_defs import (
    TEST_GROUP_MIN_SESSION_TIMEOUT_MS as TEST_GROUP_MIN_SESSION_TIMEOUT_MS,
)
from mockkafka.cluster.config_defs import (
    TOPIC_CONFIG_DEFS as TOPIC_CONFIG_DEFS,
)
from mockkafka.cluster.config_defs import (
    TOPIC_DEFAULTS as TOPIC_DEFAULTS,
)
from mockkafka.cluster.config_defs import (
    TOPIC_TO_BROKER as TOPIC_TO_BROKER,
)
from mockkafka.cluster.config_defs import (
    AlterOp as AlterOp,
)
from mockkafka.cluster.config_defs import (
    ConfigDef as ConfigDef,
)
from mockkafka.cluster.config_defs import (
    ConfigSource as ConfigSource,
)
from mockkafka.cluster.config_defs import (
    ConfigType as ConfigType,
)
from mockkafka.cluster.config_defs import (
    ResourceType as ResourceType,
)
from mockkafka.cluster.release_configs import ConfigSet, config_set
from mockkafka.errors import ErrorCode, KafkaApiError
from mockkafka.protocol.releases import release_tuple

if TYPE_CHECKING:
    from mockkafka.cluster.base import Broker


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


class ClusterOptions(Protocol):
    """What the config functions read of the cluster's options (``ClusterConfig`` is one)."""

    @property
    def kafka_version(self) -> str | None: ...
    @property
    def broker_configs(self) -> tuple[tuple[str, str], ...]: ...
    @property
    def security_protocol(self) -> str: ...
    @property
    def default_partitions(self) -> int: ...
    @property
    def default_replication_factor(self) -> int: ...
    @property
    def group_min_session_timeout_ms(self) -> int: ...
    @property
    def group_max_session_timeout_ms(self) -> int: ...
    @property
    def transaction_max_timeout_ms(self) -> int: ...
    @property
    def offsets_topic_partitions(self) -> int: ...
    @property
    def max_request_size(self) -> int: ...

    def options_at_default(self) -> frozenset[str]: ...


class ConfigHost(Protocol):
    """What the config functions read and change of the cluster state (ClusterState is one).

    Typed here, not by ``ClusterState``: this module sits below the state (and below the
    topics, whose defaults it defines), so it must not import them.
    """

    @property
    def config(self) -> ClusterOptions: ...
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
        for key in c.options_at_default():
            out.pop(key, None)
    return out


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

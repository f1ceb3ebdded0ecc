"""Cluster options for the fixtures: ini defaults, the config fixture, the marker.

Options are merged in layers, later layers winning key by key:

1. ini options (``kafka_brokers = 3`` in pytest.ini / pyproject.toml / tox.ini);
2. the ``kafka_cluster_options`` fixture (override it in a conftest.py);
3. ``@pytest.mark.kafka_cluster(...)`` markers, from the farthest (module ``pytestmark``,
   class) to the closest (the test function);
4. for ``kafka_cluster_factory``, the keyword arguments of the call.

Valid keys are ``brokers``, ``topics``, ``port``, ``record_traffic``, ``strict_faults``
and every field of :class:`~mockkafka.ClusterConfig`. Each key remembers which layer set it, so a
bad value is reported with where it came from. Nothing here imports pytest: errors are
:class:`OptionsError`, which the plugin turns into a usage error of the test.
"""

from __future__ import annotations

import dataclasses
import difflib
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mockkafka.cluster.config import ClusterConfig

# Keys that are not ClusterConfig fields.
EXTRA_KEYS: dict[str, str] = {
    "topics": "topics to create before the test: {name: partitions} or "
    "{name: {partitions, replication_factor, config}}",
    "record_traffic": "record every request and response (needed for the failure report)",
    "port": "fixed port of broker 1 (broker n listens on port+n-1; 0: free ports)",
    "strict_faults": "fail the test when a fault rule it added never fired",
    "config": "Kafka broker configs by name, {key: value}; layers merge key by key",
}


def config_fields() -> dict[str, dataclasses.Field[Any]]:
    """ClusterConfig's fields by name (read each time: other subsystems add fields)."""
    return {f.name: f for f in dataclasses.fields(ClusterConfig)}


def option_keys() -> list[str]:
    return sorted([*config_fields(), *EXTRA_KEYS])


class OptionsError(ValueError):
    """A bad cluster option; the message names the key and where it was set."""


@dataclass(frozen=True, slots=True)
class TopicSpec:
    """A topic the fixture creates before the test (-1 takes the cluster default)."""

    partitions: int = -1
    replication_factor: int = -1
    config: Mapping[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class ClusterOptions:
    """Merged options: what to pass to ``mockkafka.Cluster`` and which topics to create."""

    brokers: int = 1
    topics: dict[str, TopicSpec] = field(default_factory=dict)
    record_traffic: bool = True
    port: int = 0
    strict_faults: bool = False
    config: dict[str, Any] = field(default_factory=dict)
    broker_config: dict[str, str] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)

    def cluster_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``mockkafka.Cluster`` / ``mockkafka.open_cluster``."""
        extra = {"config": dict(self.broker_config)} if self.broker_config else {}
        return {
            "brokers": self.brokers,
            "port": self.port,
            "record_traffic": self.record_traffic,
            **self.config,
            **extra,
        }

    def source_of(self, text: str) -> str:
        """Where the options named in ``text`` (an error message) were set, for a hint."""
        named = [k for k in self.sources if k in text]
        if not named:
            return ""
        return " (" + "; ".join(f"{k} set by {self.sources[k]}" for k in named) + ")"


def _unknown_key(key: str, source: str) -> OptionsError:
    keys = option_keys()
    close = difflib.get_close_matches(key, keys, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return OptionsError(
        f"{source}: unknown option {key!r}{hint}; valid options are: {', '.join(keys)}"
    )


def _parse_topics(value: Any, source: str) -> dict[str, TopicSpec]:
    # the same forms and messages as mockkafka.Cluster(topics=...)
    from mockkafka._api.options import parse_topics
    from mockkafka.errors import ConfigError

    try:
        parsed = parse_topics(value)
    except ConfigError as exc:
        raise OptionsError(f"{source}: {exc}") from None
    return {name: TopicSpec(p, rf, cfg) for name, (p, rf, cfg) in parsed.items()}


def _check_type(key: str, value: Any, source: str) -> Any:
    """Coerce/validate a ClusterConfig value by the field's declared type."""
    hints = typing.get_type_hints(ClusterConfig)
    expected = hints.get(key)
    if expected is bool:
        if not isinstance(value, bool):
            raise OptionsError(f"{source}: {key} must be True or False, got {value!r}")
    elif expected is int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise OptionsError(f"{source}: {key} must be an int, got {value!r}")
    elif typing.get_origin(expected) is tuple and isinstance(value, list):
        value = tuple(tuple(v) if isinstance(v, list) else v for v in value)
    return value


def merge(layers: Iterable[tuple[str, Mapping[str, Any]]]) -> ClusterOptions:
    """Merge ``(source, options)`` layers, later ones winning; validates every key."""
    fields = config_fields()
    out = ClusterOptions()
    configs: list[tuple[str, Mapping[str, Any]]] = []
    for source, options in layers:
        if not isinstance(options, Mapping):
            raise OptionsError(f"{source}: expected a dict of options, got {options!r}")
        for key, value in options.items():
            if key == "topics":
                out.topics = _parse_topics(value, source)
            elif key in ("record_traffic", "strict_faults"):
                if not isinstance(value, bool):
                    raise OptionsError(f"{source}: {key} must be True or False, got {value!r}")
                setattr(out, key, value)
            elif key == "port":
                if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 65535:
                    raise OptionsError(f"{source}: port must be an int in 0-65535, got {value!r}")
                out.port = value
            elif key == "brokers":
                out.brokers = _check_type(key, value, source)
            elif key == "config":
                if not isinstance(value, Mapping):
                    raise OptionsError(f"{source}: config must be a dict, got {value!r}")
                configs.append((source, value))
            elif key in fields:
                out.config[key] = _check_type(key, value, source)
            else:
                raise _unknown_key(str(key), source)
            out.sources[str(key)] = source
    if configs:
        # Checked once every layer is in: the names depend on the kafka_version preset.
        # Imported on first use: the plugin stays cheap to load.
        from mockkafka.cluster.configs import check_broker_configs
        from mockkafka.errors import ConfigError

        release = out.config.get("kafka_version")
        for source, value in configs:
            try:
                out.broker_config.update(
                    check_broker_configs(
                        value,
                        where=source,
                        kafka_version=release if isinstance(release, str) else None,
                    )
                )
            except ConfigError as exc:
                raise OptionsError(str(exc)) from None
    return out


# -- ini options ----------------------------------------------------------------------------


def _parse_bool(text: str) -> bool:
    low = text.strip().lower()
    if low in ("1", "true", "yes", "on"):
        return True
    if low in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"expected true or false, got {text!r}")


def _parse_topic_line(line: str) -> tuple[str, dict[str, int]]:
    parts = line.strip().split(":")
    if not parts[0] or len(parts) > 3:
        raise ValueError(f"expected NAME[:PARTITIONS[:REPLICATION_FACTOR]], got {line!r}")
    spec: dict[str, int] = {}
    if len(parts) > 1:
        spec["partitions"] = int(parts[1])
    if len(parts) > 2:
        spec["replication_factor"] = int(parts[2])
    return parts[0], spec


@dataclass(frozen=True, slots=True)
class IniOption:
    """One ``kafka_*`` ini option: its pytest type and how to turn it into an option value."""

    name: str
    key: str
    help: str
    type: str  # "string" or "linelist"
    parse: Callable[[Any], Any]


def _parse_users(lines: list[str]) -> tuple[tuple[str, str], ...]:
    bad = [x for x in lines if ":" not in x]
    if bad:
        raise ValueError(f"expected NAME:PASSWORD lines, got {bad!r}")
    return tuple((name, pw) for name, _, pw in (x.partition(":") for x in lines))


def ini_options() -> list[IniOption]:
    """The ini options, one per cluster option (ClusterConfig fields included)."""
    hints = typing.get_type_hints(ClusterConfig)
    out = [
        IniOption(
            "kafka_topics",
            "topics",
            "mockkafka: topics every kafka_cluster starts with, one per line as "
            "NAME[:PARTITIONS[:REPLICATION_FACTOR]]",
            "linelist",
            lambda lines: dict(_parse_topic_line(x) for x in lines),
        ),
        IniOption(
            "kafka_record_traffic",
            "record_traffic",
            "mockkafka: record protocol traffic for the failure report (default true)",
            "string",
            _parse_bool,
        ),
        IniOption(
            "kafka_port",
            "port",
            "mockkafka: fixed port of broker 1 of kafka_cluster (broker n: port+n-1; "
            "default 0, free ports)",
            "string",
            int,
        ),
        IniOption(
            "kafka_strict_faults",
            "strict_faults",
            "mockkafka: fail a test whose fault rules never fired (default false; "
            "otherwise they are reported as a warning)",
            "string",
            _parse_bool,
        ),
    ]
    out.append(
        IniOption(
            "kafka_config",
            "config",
            "mockkafka: Kafka broker configs of kafka_cluster, one KEY=VALUE per line",
            "linelist",
            lambda lines: dict(x.split("=", 1) for x in lines),
        )
    )
    for name, f in config_fields().items():
        hint = hints.get(name)
        default = f.default if f.default is not dataclasses.MISSING else None
        help_ = f"mockkafka: default {name} of kafka_cluster (default {default!r})"
        parse: Callable[[Any], Any]
        kind = "string"
        if hint is bool:
            parse = _parse_bool
        elif hint is int:
            parse = int
        elif name == "broker_configs":
            kind = "linelist"
            parse = lambda lines: tuple(tuple(x.split("=", 1)) for x in lines)  # noqa: E731
            help_ = "mockkafka: broker configs of kafka_cluster, one KEY=VALUE per line"
        elif name == "users":
            kind = "linelist"
            parse = _parse_users
            help_ = "mockkafka: SASL users of kafka_cluster, one NAME:PASSWORD per line"
        elif typing.get_origin(hint) is tuple:
            kind = "linelist"
            parse = lambda lines: tuple(None if x in ("", "-", "None") else x for x in lines)  # noqa: E731
        else:
            parse = str
        out.append(IniOption(f"kafka_{name}", name, help_, kind, parse))
    return out


def ini_layer(getini: Callable[[str], Any]) -> dict[str, Any]:
    """The options set in the ini file (unset options are left out)."""
    out: dict[str, Any] = {}
    for opt in ini_options():
        raw = getini(opt.name)
        if raw is None or raw == [] or raw == "":
            continue
        if opt.key in ("broker_configs", "config") and any("=" not in x for x in raw):
            raise OptionsError(f"ini option {opt.name}: expected KEY=VALUE lines, got {raw!r}")
        try:
            out[opt.key] = opt.parse(raw)
        except ValueError as exc:
            raise OptionsError(f"ini option {opt.name}: {exc}") from None
    return out

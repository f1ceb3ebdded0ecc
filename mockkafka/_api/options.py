"""Checks of ``Cluster(...)`` / ``open_cluster(...)`` arguments: did-you-mean for names,
types, port ranges. Field-level checks live in :class:`~mockkafka.cluster.config.ClusterConfig`."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import fields
from typing import Any

from mockkafka.cluster.config import ClusterConfig
from mockkafka.cluster.configs import split_config_options
from mockkafka.errors import ConfigError

#: Arguments of Cluster(...) that are not ClusterConfig fields.
CLUSTER_ARGS = ("brokers", "port", "host", "record_traffic", "strict_faults", "topics")

#: A topic to create when the cluster starts: (partitions, replication_factor, config);
#: -1 takes the cluster's default.
TopicArgs = tuple[int, int, dict[str, str]]


def option_names() -> list[str]:
    """Every name ``Cluster(...)`` accepts."""
    return sorted({*CLUSTER_ARGS, "config", *(f.name for f in fields(ClusterConfig))})


def make_config(brokers: Any, options: dict[str, Any]) -> ClusterConfig:
    """A ClusterConfig from ``Cluster(brokers, **options)``; ConfigError names a bad one.

    ``config={"num.partitions": 3, ...}`` gives Kafka broker configs by name: each is checked
    against the configs Kafka knows (did-you-mean), those a ClusterConfig option stands for
    fill that option, the rest become ``broker_configs``.
    """
    options = dict(options)
    config = options.pop("config", None)
    if config is not None:
        if not isinstance(config, Mapping):
            raise ConfigError(f"config must be a dict of broker configs, got {config!r}")
        release = options.get("kafka_version")
        named, rest = split_config_options(config, release if isinstance(release, str) else None)
        twice = sorted(set(named) & set(options))
        if twice:
            raise ConfigError(
                f"config gives what the option(s) {', '.join(twice)} already give; use one"
            )
        options.update(named)
        given = options.get("broker_configs", ())
        if isinstance(given, Mapping):
            given = tuple(given.items())
        options["broker_configs"] = tuple(given) + tuple(rest.items())
    names = option_names()
    for key in options:
        if key not in names or key in CLUSTER_ARGS:
            close = difflib.get_close_matches(key, names, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(
                f"unknown cluster option {key!r}{hint}; options are: {', '.join(names)}"
            )
    return ClusterConfig(brokers=brokers, **options)


def check_endpoint(
    config: ClusterConfig, port: Any, host: Any, record_traffic: Any, strict_faults: Any
) -> dict[int, int] | None:
    """Check the listener arguments; returns the fixed ports {broker: port} (None: any)."""
    if not isinstance(host, str) or not host:
        raise ConfigError(f"host must be a non-empty str, got {host!r}")
    for arg, value in (("record_traffic", record_traffic), ("strict_faults", strict_faults)):
        if not isinstance(value, bool):
            raise ConfigError(f"{arg} must be True or False, got {value!r}")
    if isinstance(port, bool) or not isinstance(port, int):
        raise ConfigError(f"port must be an int (0: pick free ports), got {port!r}")
    if port == 0:
        return None
    last = port + config.brokers - 1
    if not port >= 1 or last > 65535:
        raise ConfigError(
            f"port={port} with {config.brokers} brokers needs ports {port}..{last}; "
            "ports must be in 1..65535 (0 picks free ports)"
        )
    first = config.first_node_id
    return {first + n: port + n for n in range(config.brokers)}


def parse_topics(value: Any) -> dict[str, TopicArgs]:
    """``topics=`` of ``Cluster(...)``, ``open_cluster(...)`` and the pytest markers: a list
    of names, ``{name: partitions}`` or ``{name: {partitions, replication_factor, config}}``
    (None: defaults). Raises ConfigError naming the topic and what is allowed."""
    if isinstance(value, str) or not isinstance(value, Mapping | list | tuple | set):
        raise ConfigError(
            f"topics must be a dict {{name: partitions}} or a list of names, got {value!r}"
        )
    items: Iterable[tuple[Any, Any]] = (
        value.items() if isinstance(value, Mapping) else ((name, -1) for name in value)
    )
    out: dict[str, TopicArgs] = {}
    for name, spec in items:
        if not isinstance(name, str) or not name:
            raise ConfigError(f"topic names must be non-empty strings, got {name!r}")
        where = f"topic {name!r}"
        if spec is None:
            out[name] = (-1, -1, {})
        elif isinstance(spec, int) and not isinstance(spec, bool):
            out[name] = (spec, -1, {})
        elif isinstance(spec, Mapping):
            keys = ("partitions", "replication_factor", "config")
            extra = sorted(map(str, set(spec) - set(keys)))
            if extra:
                close = difflib.get_close_matches(extra[0], keys, n=1)
                hint = f" (did you mean {close[0]}?)" if close else ""
                raise ConfigError(
                    f"{where}: unknown key(s) {', '.join(extra)}{hint}; "
                    "use partitions, replication_factor, config"
                )
            partitions = spec.get("partitions", -1)
            rf = spec.get("replication_factor", -1)
            config = spec.get("config") or {}
            for label, n in (("partitions", partitions), ("replication_factor", rf)):
                if not isinstance(n, int) or isinstance(n, bool):
                    raise ConfigError(f"{where}: {label} must be an int, got {n!r}")
            if not isinstance(config, Mapping):
                raise ConfigError(f"{where}: config must be a dict, got {config!r}")
            out[name] = (partitions, rf, {str(k): str(v) for k, v in config.items()})
        else:
            raise ConfigError(
                f"{where}: expected a partition count or a dict with partitions, "
                f"replication_factor, config; got {spec!r}"
            )
    return out

"""The options of a cluster (:class:`ClusterConfig`).

Near the bottom of the import graph on purpose: the pytest plugin reads these fields (one ini
option per field) in every pytest session, so importing it must not import the broker. At
module level it imports only the config definitions (pure data, ``config_defs.py``); the
checks that need the config functions import them when a ClusterConfig is made.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any

# Pure data (no broker): defined below this module so that the config functions, which this
# module's checks call, need not import it back.
from mockkafka.cluster.config_defs import CONFIG_OPTIONS, TEST_GROUP_MIN_SESSION_TIMEOUT_MS

_SIZE_UNITS = {"": 1, "b": 1, "k": 1024, "kb": 1024, "kib": 1024, "m": 1024**2, "mb": 1024**2,
               "mib": 1024**2, "g": 1024**3, "gb": 1024**3, "gib": 1024**3}  # fmt: skip

#: The most brokers a cluster may have: each is a listening socket, a task and its state, and
#: a test that wants more than a handful is almost always a typo (``--brokers 100000`` spent
#: 25 s opening 16,000 file descriptors before this bound).
MAX_BROKERS = 64


def check_cluster_id(value: str) -> None:
    """Refuse what Kafka's ``Uuid.fromString`` refuses: a cluster id is the URL-safe base64
    of 16 bytes (22 characters, as ``kafka-storage random-uuid`` prints), e.g.
    ``MkU3OEVBNTcwNTJENDM2Qg``. Raises ConfigError."""
    import base64
    import binascii

    from mockkafka.errors import ConfigError

    example = "e.g. MkU3OEVBNTcwNTJENDM2Qg (kafka-storage random-uuid), or None for a random one"
    if len(value) > 24:
        raise ConfigError(
            f"cluster_id {value[:24]!r}... is too long to be a base64 UUID (22 characters, "
            f"{example})"
        )
    try:
        raw = base64.b64decode(value + "=" * (-len(value) % 4), altchars=b"-_", validate=True)
    except (binascii.Error, ValueError):
        raw = None
    if raw is None or len(raw) != 16:
        got = "not base64url" if raw is None else f"{len(raw)} bytes"
        raise ConfigError(
            f"cluster_id {value!r} is not a base64 UUID (22 URL-safe base64 characters "
            f"decoding to 16 bytes; got {got}): {example}"
        )


#: The traffic log's default size: what a ``serve`` process holds for it at most.
DEFAULT_TRAFFIC_LIMIT = 64 * 1024 * 1024


def parse_size(value: Any, what: str) -> int:
    """Bytes from an int or a string such as ``"64MiB"``, ``"512k"``, ``"2GB"`` (K, M, G
    are powers of 1024 whatever the spelling); raises ConfigError naming ``what``."""
    from mockkafka.errors import ConfigError

    if _is_int(value):
        n = int(value)
    elif isinstance(value, str):
        text = value.strip().lower().replace(" ", "")
        digits = text.rstrip("kmgib")
        unit = text[len(digits) :]
        if not digits.isdigit() or unit not in _SIZE_UNITS:
            raise ConfigError(
                f"{what} must be a size in bytes such as 64MiB, 512KiB or 1048576, got {value!r}"
            )
        n = int(digits) * _SIZE_UNITS[unit]
    else:
        raise ConfigError(f"{what} must be a size in bytes (an int or '64MiB'), got {value!r}")
    if n < 1:
        raise ConfigError(f"{what} must be at least 1 byte, got {value!r}")
    return n


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_racks(v: Any) -> bool:
    return isinstance(v, tuple | list) and all(r is None or isinstance(r, str) for r in v)


def _is_broker_configs(v: Any) -> bool:
    if isinstance(v, Mapping):
        return all(isinstance(k, str) for k in v)
    return isinstance(v, tuple | list) and all(
        isinstance(kv, tuple | list) and len(kv) == 2 and isinstance(kv[0], str) for kv in v
    )


# ClusterConfig field type (as written) -> (check, what to say when it fails).
_CONFIG_KINDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "int": (_is_int, "an int"),
    "bool": (lambda v: isinstance(v, bool), "True or False"),
    "str | None": (lambda v: v is None or isinstance(v, str), "a str or None"),
    "tuple[str | None, ...]": (_is_racks, "a list of rack names (str or None), one per broker"),
    "tuple[tuple[str, str], ...]": (_is_broker_configs, "a dict {config: value}"),
}


@dataclass(frozen=True, slots=True)
class ClusterConfig:
    """Options of a cluster; each has the default a test usually wants.

    Where a default changes what a client sees, it is Apache Kafka's own broker default:
    ``auto_create_topics`` mirrors ``auto.create.topics.enable`` (true, as in Kafka; pass
    False to get UNKNOWN_TOPIC_OR_PARTITION for unknown topics). Where Kafka's default only
    makes a test slow, the default is small and Kafka's value is one option away:
    ``group_initial_rebalance_delay_ms`` is 0 (Kafka: 3000) so a classic group forms at once;
    ``group_consumer_heartbeat_interval_ms`` is 500 (Kafka: 5000) so a KIP-848
    ``group.protocol=consumer`` group settles in well under a second. ``telemetry`` advertises
    the KIP-714 client telemetry APIs, as a broker with a client-metrics plugin does (off, as
    in a default Kafka, so clients do not log telemetry lines).

    Security: ``security_protocol`` (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL),
    ``ssl_client_auth`` (``ssl.client.auth``), ``users`` (SASL users, ``{name: password}``).
    ``authorizer=True`` turns ACLs on, as a broker with ``authorizer.class.name`` set:
    every request is checked against the ACLs (CreateAcls / DescribeAcls / DeleteAcls);
    ``super_users`` (Kafka's ``super.users``, e.g. ``["User:admin"]``) may do anything and
    ``allow_everyone_if_no_acl_found`` is Kafka's ``allow.everyone.if.no.acl.found``.

    ``kafka_version`` (``"3.9"``, ``"2.8"``, ... ``"0.8.0"``) makes the cluster that release:
    it advertises that release's API versions and features, and from 0.11 reports that
    release's broker and topic configs (names, defaults, update modes); ``broker_configs``
    are checked against that release's names. None (the default): the newest.

    ``traffic_limit`` bounds the memory the traffic log holds (bytes, or ``"64MiB"``); the
    oldest exchanges go first. ``record_traffic=False`` (``Cluster``) keeps none.
    """

    brokers: int = 1
    auto_create_topics: bool = True
    default_partitions: int = 1
    default_replication_factor: int = 1
    group_initial_rebalance_delay_ms: int = 0
    group_consumer_heartbeat_interval_ms: int = 500
    group_min_session_timeout_ms: int = TEST_GROUP_MIN_SESSION_TIMEOUT_MS
    group_max_session_timeout_ms: int = 1_800_000
    transaction_max_timeout_ms: int = 900_000
    offsets_topic_partitions: int = 50
    max_request_size: int = 104_857_600
    telemetry: bool = False
    cluster_id: str | None = None
    racks: tuple[str | None, ...] = ()
    broker_configs: tuple[tuple[str, str], ...] = ()
    security_protocol: str = "PLAINTEXT"
    ssl_client_auth: str = "none"
    users: tuple[tuple[str, str], ...] = ()
    authorizer: bool = False
    super_users: tuple[str, ...] = ()
    allow_everyone_if_no_acl_found: bool = False
    first_node_id: int = 1
    kafka_version: str | None = None
    traffic_limit: int | str = DEFAULT_TRAFFIC_LIMIT

    def options_at_default(self) -> frozenset[str]:
        """The broker configs whose option (:data:`~mockkafka.cluster.config_defs.
        CONFIG_OPTIONS`) was left at its default: under a release preset they take the
        release's default instead."""
        return _options_at_default(self)

    def __post_init__(self) -> None:
        # Imported here, not at module level: the plugin imports this module at load.
        from mockkafka.cluster.configs import check_broker_configs
        from mockkafka.cluster.security import check_security, check_users
        from mockkafka.errors import ConfigError
        from mockkafka.protocol.releases import normalize_release

        check_security(self.security_protocol, self.ssl_client_auth)
        object.__setattr__(self, "traffic_limit", parse_size(self.traffic_limit, "traffic_limit"))

        for f in fields(self):
            value = getattr(self, f.name)
            kind = _CONFIG_KINDS.get(str(f.type))
            if kind is not None and not kind[0](value):
                raise ConfigError(
                    f"cluster option {f.name} must be {kind[1]}, got {value!r} "
                    f"({type(value).__name__})"
                )
        if isinstance(self.racks, list):
            object.__setattr__(self, "racks", tuple(self.racks))
        if isinstance(self.broker_configs, Mapping):
            object.__setattr__(
                self,
                "broker_configs",
                tuple((str(k), str(v)) for k, v in self.broker_configs.items()),
            )
        if isinstance(self.super_users, str) or not all(
            isinstance(u, str) and ":" in u for u in self.super_users
        ):
            raise ConfigError(
                f"cluster option super_users must be a list of principals like "
                f"['User:admin'], got {self.super_users!r}"
            )
        object.__setattr__(self, "super_users", tuple(self.super_users))
        if isinstance(self.users, Mapping):
            object.__setattr__(self, "users", tuple(self.users.items()))
        check_users(self.security_protocol, self.users)
        if self.racks and len(self.racks) != self.brokers:
            raise ConfigError(
                f"racks must name one rack (or None) per broker: {self.brokers} brokers, "
                f"got {len(self.racks)} racks {list(self.racks)!r}"
            )
        if self.kafka_version is not None:
            try:
                object.__setattr__(self, "kafka_version", normalize_release(self.kafka_version))
            except ValueError as exc:
                raise ConfigError(f"kafka_version: {exc}") from None
        check_broker_configs(
            dict(self.broker_configs), where="broker_configs", kafka_version=self.kafka_version
        )
        if self.first_node_id < 0:
            raise ConfigError(f"first_node_id must be >= 0, got {self.first_node_id}")
        if not 1 <= self.brokers <= MAX_BROKERS:
            raise ConfigError(
                f"brokers must be between 1 and {MAX_BROKERS}, got {self.brokers} (each broker "
                "is a listening socket; a test cluster rarely needs more than 5)"
            )
        if self.cluster_id is not None:
            check_cluster_id(self.cluster_id)
        check_option_configs(self)
        if self.default_partitions < 1:
            raise ConfigError(
                f"default_partitions must be at least 1, got {self.default_partitions}"
            )
        if not 1 <= self.default_replication_factor <= self.brokers:
            raise ConfigError(
                f"default_replication_factor must be between 1 and brokers={self.brokers}, "
                f"got {self.default_replication_factor}"
            )
        if self.group_initial_rebalance_delay_ms < 0:
            raise ConfigError("group_initial_rebalance_delay_ms must be >= 0")
        if self.group_consumer_heartbeat_interval_ms < 1:
            raise ConfigError("group_consumer_heartbeat_interval_ms must be >= 1")


@functools.lru_cache(maxsize=64)
def _options_at_default(config: ClusterConfig) -> frozenset[str]:
    defaults = {f.name: f.default for f in fields(ClusterConfig)}
    return frozenset(
        key for key, option in CONFIG_OPTIONS.items() if getattr(config, option) == defaults[option]
    )


def check_option_configs(config: ClusterConfig) -> None:
    """Check each option that stands for a Kafka broker config (``offsets_topic_partitions``
    is ``offsets.topic.num.partitions``, ...) with that config's validator, the one
    ``--config``, ``broker_configs`` and AlterConfigs use; raises ConfigError with Kafka's
    message, naming the option."""
    from mockkafka.cluster.configs import BROKER_CONFIG_DEFS, config_text, validate_value
    from mockkafka.errors import ConfigError

    for key, option in CONFIG_OPTIONS.items():
        d = BROKER_CONFIG_DEFS.get(key)
        if d is None:
            continue
        problem = validate_value(d, config_text(getattr(config, option)))
        if problem is not None:
            raise ConfigError(f"cluster option {option} ({key}): {problem.message}")

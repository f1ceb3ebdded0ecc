"""The broker's resource limits: what one client may cost the cluster.

Theory of operation
-------------------
Every limit a misbehaving client could otherwise exceed has a Kafka broker config name and a
default suited to tests, read from the cluster-wide broker configs (so ``broker_configs=`` of
the cluster, or IncrementalAlterConfigs at run time, change them):

``max.connections``
    open connections per broker listener; a connection beyond it is closed at once (Kafka's
    default is unlimited; here 4096, well above what a test opens, below the usual fd limit
    of a raised ``ulimit -n``).
``connections.max.idle.ms``
    a connection on which no bytes move for this long is closed (Kafka: 10 minutes): one
    waiting for a request, or one whose answer waits for a client that does not read (as
    Kafka's idle expiry, which sees no socket event for it). A value <= 0 turns expiry off
    (Kafka: a negative value does; it has no validator for this config).
``queued.max.request.bytes``
    bytes of partly received requests buffered across all connections of the cluster; the
    connection whose bytes cross it is closed (Kafka: unlimited; here 256 MiB).
``fetch.max.bytes``
    the most record bytes one Fetch response carries, whatever the request asks
    (Kafka's default, 55 MiB).
``mockkafka.max.wait.ms``
    the longest a Fetch may be parked waiting for data (not a Kafka config; 60 s).
``mockkafka.max.records.per.user.op``
    partitions (and topics) one CreateTopics / CreatePartitions request may create; over it
    the request answers POLICY_VIOLATION "Unable to perform excessively large batch
    operation.", as Kafka's KRaft controller does (its bound is 10,000 records).
``mockkafka.max.decompressed.batch.bytes``
    the decompressed size of one produced batch; a bigger one (a decompression bomb) answers
    CORRUPT_MESSAGE before anything is stored (not a Kafka config; 64 MiB).

Everything here is sans-IO: it reads only the broker configs of the cluster state
(:class:`LimitsHost`; :class:`~mockkafka.cluster.state.ClusterState` is one).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Protocol

from mockkafka.errors import ErrorCode, KafkaApiError


class LimitsHost(Protocol):
    """What the limits read of the cluster state: its broker configs (ClusterState is one)."""

    @property
    def broker_configs(self) -> dict[str, str]: ...


#: mockkafka's defaults where they differ from Kafka's (or where Kafka has no such config).
#: The Kafka-named ones are also in ``BROKER_DEFAULTS`` (so DescribeConfigs reports them).
LIMIT_DEFAULTS: Final[dict[str, str]] = {
    "max.connections": "4096",
    "connections.max.idle.ms": "600000",
    "queued.max.request.bytes": str(256 * 1024 * 1024),
    "fetch.max.bytes": "57671680",
    "mockkafka.max.wait.ms": "60000",
    "mockkafka.max.records.per.user.op": "10000",
    "mockkafka.max.decompressed.batch.bytes": str(64 * 1024 * 1024),
}

EXCESSIVE_BATCH: Final = "Unable to perform excessively large batch operation."


@dataclass(frozen=True, slots=True)
class Limits:
    """The effective limits of a cluster (see the module docstring for each)."""

    max_connections: int
    connections_max_idle_ms: int
    queued_max_request_bytes: int
    fetch_max_bytes: int
    max_wait_ms: int
    max_records_per_user_op: int
    max_decompressed_batch_bytes: int


def _int(state: LimitsHost, key: str) -> int:
    raw = state.broker_configs.get(key, LIMIT_DEFAULTS[key])
    try:
        return int(raw)
    except ValueError:
        return int(LIMIT_DEFAULTS[key])


_KEYS: Final = tuple(LIMIT_DEFAULTS)
# Limits by the raw config values they were read from: limits() runs on every request.
_BY_VALUES: dict[tuple[str | None, ...], Limits] = {}


def limits(state: LimitsHost) -> Limits:
    """The limits in force now (a value <= 0 means unlimited, as -1 does in Kafka)."""
    values = tuple(map(state.broker_configs.get, _KEYS))
    found = _BY_VALUES.get(values)
    if found is None:
        if len(_BY_VALUES) > 64:
            _BY_VALUES.clear()
        found = _BY_VALUES[values] = _read_limits(state)
    return found


def _read_limits(state: LimitsHost) -> Limits:
    unlimited = 2**62

    def pos(key: str) -> int:
        v = _int(state, key)
        return v if v > 0 else unlimited

    return Limits(
        max_connections=pos("max.connections"),
        connections_max_idle_ms=pos("connections.max.idle.ms"),
        queued_max_request_bytes=pos("queued.max.request.bytes"),
        fetch_max_bytes=pos("fetch.max.bytes"),
        max_wait_ms=pos("mockkafka.max.wait.ms"),
        max_records_per_user_op=pos("mockkafka.max.records.per.user.op"),
        max_decompressed_batch_bytes=pos("mockkafka.max.decompressed.batch.bytes"),
    )


def check_partitions_per_op(state: LimitsHost, count: int) -> None:
    """Raise POLICY_VIOLATION when one request would create more than the controller's
    bound of partitions (``count`` is the request's running total)."""
    if count > limits(state).max_records_per_user_op:
        raise KafkaApiError(ErrorCode.POLICY_VIOLATION, EXCESSIVE_BATCH)

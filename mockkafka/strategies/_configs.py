"""Strategies for client configurations and error codes."""

from __future__ import annotations

from typing import Any

import hypothesis.strategies as st
from hypothesis.errors import InvalidArgument

from mockkafka.errors import ErrorCode
from mockkafka.faults.error_facts import ERRORS_BY_API, possible_errors
from mockkafka.protocol.apis import API_BY_NAME
from mockkafka.strategies._common import check_choices, did_you_mean, named

CLIENTS = ("confluent-kafka", "kafka-python", "aiokafka")
ROLES = ("producer", "consumer")

# Each entry: config key per client (None: the client has no such setting) and the values
# worth drawing. Every value keeps a test fast: timeouts and backoffs are short, but long
# enough for a loaded 2-core machine.
_PRODUCER: tuple[tuple[tuple[str | None, str | None, str | None], st.SearchStrategy[Any]], ...] = (
    (("acks", "acks", "acks"), st.sampled_from(["all", 1])),
    (("enable.idempotence", None, "enable_idempotence"), st.booleans()),
    (
        ("compression.type", "compression_type", "compression_type"),
        st.sampled_from(["none", "gzip", "snappy", "lz4", "zstd"]),
    ),
    (("linger.ms", "linger_ms", "linger_ms"), st.integers(0, 20)),
    (("batch.size", "batch_size", "max_batch_size"), st.sampled_from([1024, 16384, 65536])),
    (("retry.backoff.ms", "retry_backoff_ms", "retry_backoff_ms"), st.integers(10, 100)),
    (("request.timeout.ms", "request_timeout_ms", "request_timeout_ms"), st.just(5000)),
    (("message.timeout.ms", None, None), st.just(15000)),
    (("max.in.flight.requests.per.connection", "max_in_flight_requests_per_connection", None),
     st.integers(1, 5)),
)  # fmt: skip
_CONSUMER: tuple[tuple[tuple[str | None, str | None, str | None], st.SearchStrategy[Any]], ...] = (
    (
        ("auto.offset.reset", "auto_offset_reset", "auto_offset_reset"),
        st.just("earliest"),
    ),
    (("enable.auto.commit", "enable_auto_commit", "enable_auto_commit"), st.booleans()),
    (
        ("isolation.level", "isolation_level", "isolation_level"),
        st.sampled_from(["read_committed", "read_uncommitted"]),
    ),
    (("fetch.wait.max.ms", "fetch_max_wait_ms", "fetch_max_wait_ms"), st.integers(10, 200)),
    (
        ("max.partition.fetch.bytes", "max_partition_fetch_bytes", "max_partition_fetch_bytes"),
        st.sampled_from([1024, 65536, 1048576]),
    ),
    (("session.timeout.ms", "session_timeout_ms", "session_timeout_ms"), st.integers(6000, 10000)),
    (("heartbeat.interval.ms", "heartbeat_interval_ms", "heartbeat_interval_ms"),
     st.integers(100, 1000)),
    (("retry.backoff.ms", "retry_backoff_ms", "retry_backoff_ms"), st.integers(10, 100)),
    (("request.timeout.ms", "request_timeout_ms", "request_timeout_ms"), st.just(11000)),
    (("partition.assignment.strategy", None, None),
     st.sampled_from(["range", "roundrobin", "cooperative-sticky"])),
)  # fmt: skip


def client_configs(
    *,
    client: str = "confluent-kafka",
    role: str = "producer",
    bootstrap_servers: str | None = None,
    group: str | None = None,
) -> st.SearchStrategy[dict[str, Any]]:
    """Configurations for a real client that keep a test fast and safe: short backoffs and
    timeouts, every codec, idempotence on and off, both isolation levels, ...

    ``client``: ``"confluent-kafka"`` (dotted keys, for ``Producer(conf)``), ``"kafka-python"``
    or ``"aiokafka"`` (keyword arguments, for ``KafkaProducer(**conf)``). ``role``:
    ``"producer"`` or ``"consumer"``. ``bootstrap_servers`` and ``group`` (consumers) are
    added when given. kafka-python's producer is never drawn with zstd off-v2 combinations it
    cannot send: every value drawn is one the client accepts.
    """
    check_choices(client, "client", CLIENTS)
    check_choices(role, "role", ROLES)
    if bootstrap_servers is not None and not isinstance(bootstrap_servers, str):
        raise InvalidArgument(f"bootstrap_servers must be a string, got {bootstrap_servers!r}")
    if group is not None and (role != "consumer" or not isinstance(group, str)):
        raise InvalidArgument(f"group must be a string, for role='consumer'; got {group!r}")
    return _client_configs(
        client=client, role=role, bootstrap_servers=bootstrap_servers, group=group
    )


@st.composite
@named("client_configs")
def _client_configs(
    draw: st.DrawFn, *, client: str, role: str, bootstrap_servers: str | None, group: str | None
) -> dict[str, Any]:
    col = CLIENTS.index(client)
    conf: dict[str, Any] = {}
    for keys, values in _PRODUCER if role == "producer" else _CONSUMER:
        key = keys[col]
        if key is not None:
            conf[key] = draw(values)
    if client == "confluent-kafka":
        conf = {k: (str(v).lower() if isinstance(v, bool) else v) for k, v in conf.items()}
        if conf.get("enable.idempotence") == "true":
            conf["acks"] = "all"
            conf["max.in.flight.requests.per.connection"] = min(
                5, int(conf["max.in.flight.requests.per.connection"])
            )
    elif client == "aiokafka" and conf.get("enable_idempotence"):
        conf["acks"] = "all"
    elif client == "kafka-python" and role == "producer":
        conf["acks"] = -1 if conf["acks"] == "all" else conf["acks"]
    if client == "aiokafka" and role == "producer":
        conf["acks"] = -1 if conf["acks"] == "all" else conf["acks"]
    if col != 0 and conf.get("compression_type") == "none":
        conf["compression_type"] = None  # the Python clients spell "no codec" None
    if bootstrap_servers is not None:
        conf["bootstrap.servers" if col == 0 else "bootstrap_servers"] = bootstrap_servers
    if group is not None:
        conf["group.id" if col == 0 else "group_id"] = group
    return conf


def error_codes(
    *, api: str | None = None, version: int | None = None, retriable: bool | None = None
) -> st.SearchStrategy[ErrorCode]:
    """Error codes a broker may really answer: for ``api`` (at ``version``, when given) the
    codes Kafka documents for it, from the version each became possible (see
    ``mockkafka/faults/error_facts.py`` for how the table is derived); with no ``api``,
    every code of any API. ``retriable`` keeps only retriable (True) or fatal (False) codes.
    """
    if api is None:
        if version is not None:
            raise InvalidArgument("version needs api (versions are per API)")
    elif api not in ERRORS_BY_API:
        known = sorted(ERRORS_BY_API)
        raise InvalidArgument(
            f"api={api!r}: no error facts for it{did_you_mean(api, known)}; "
            f"known: {', '.join(known)}"
        )
    elif version is not None:
        a = API_BY_NAME[api]
        if (
            isinstance(version, bool)
            or not isinstance(version, int)
            or not a.min_version <= version <= a.max_version
        ):
            raise InvalidArgument(
                f"version={version!r}: {api} has versions {a.min_version}-{a.max_version}"
            )
    if retriable is not None:
        if not isinstance(retriable, bool):
            raise InvalidArgument(f"retriable must be True, False or None, got {retriable!r}")
        if not error_names(api, version, retriable):
            raise InvalidArgument(f"no {'retriable' if retriable else 'fatal'} codes for {api}")
    return _error_codes(api=api, version=version, retriable=retriable)


def error_names(api: str | None, version: int | None, retriable: bool | None) -> list[str]:
    """The names :func:`error_codes` draws from (arguments already checked)."""
    if api is None:
        names = sorted({n for a in ERRORS_BY_API for n in possible_errors(a, None)})
    else:
        names = list(possible_errors(api, version))
    if retriable is not None:
        names = [n for n in names if ErrorCode[n].retriable is retriable]
    return names


@st.composite
@named("error_codes")
def _error_codes(
    draw: st.DrawFn, *, api: str | None, version: int | None, retriable: bool | None
) -> ErrorCode:
    return ErrorCode[draw(st.sampled_from(error_names(api, version, retriable)))]

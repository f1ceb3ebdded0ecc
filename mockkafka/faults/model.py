"""The fault model as data: what a rule matches, when it fires, and what it does.

Theory of operation
-------------------
A rule is a :class:`Match` (which requests), a :class:`Trigger` (on which of those it
fires) and a tuple of actions (what happens to a request it fires on). All three are frozen
dataclasses whose ``repr`` is valid Python (``from mockkafka.faults import *`` brings every
name into scope), so a rule printed by a failing test can be pasted back into it.

Nothing here does I/O: the server's executor (``server/faults.py``) applies actions, the
:class:`~mockkafka.faults.engine.FaultEngine` decides which rules fire. Every constructor
validates its arguments at once and raises :class:`~mockkafka.errors.ConfigError` naming
the argument and the valid choices.
"""

from __future__ import annotations

import difflib
import fnmatch
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Literal

from mockkafka.errors import ConfigError, ErrorCode, error_code
from mockkafka.protocol.apis import API_BY_NAME

#: Cluster events a trigger can wait for with ``after_event``.
EVENTS = (
    "broker_stopped",
    "broker_started",
    "leader_moved",
    "isr_changed",
    "log_truncated",
    "records_deleted",
    "topic_created",
    "topic_deleted",
    "partitions_added",
    "config_changed",
    "api_versions_capped",
    "rebalance_triggered",
    "member_expired",
    "coordinator_moved",
    "transaction_aborted",
    "transaction_expired",
    "producer_fenced",
)


def _nondefault_repr(obj: Any) -> str:
    parts = []
    for f in fields(obj):
        if not f.repr:
            continue
        v = getattr(obj, f.name)
        if v != f.default:
            parts.append(f"{f.name}={v!r}")
    return f"{type(obj).__name__}({', '.join(parts)})"


# -- argument checking --------------------------------------------------------------------


def check_api_names(value: str | Iterable[str], arg: str = "api") -> tuple[str, ...]:
    """``"Produce"``, ``["Fetch", "Produce"]`` or ``"*"`` -> a tuple of checked names."""
    names = (value,) if isinstance(value, str) else tuple(value)
    if not names:
        raise ConfigError(f"{arg} must name at least one API (or '*' for every API)")
    for n in names:
        if not isinstance(n, str):
            raise ConfigError(f"{arg} must be API names, got {n!r}")
        if n != "*" and n not in API_BY_NAME:
            close = difflib.get_close_matches(n, list(API_BY_NAME), n=3)
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            raise ConfigError(
                f"{arg}={n!r} is not a Kafka API{hint}; valid: '*', "
                + ", ".join(sorted(API_BY_NAME))
            )
    return names


def check_error(value: ErrorCode | int | str, arg: str = "error") -> str:
    """An error code by name or number -> its name (raises ConfigError listing names)."""
    try:
        return error_code(value).name
    except ValueError as exc:
        raise ConfigError(
            f"{arg}={value!r}: {exc}; valid names are those of mockkafka.errors.ErrorCode, "
            f"e.g. NOT_LEADER_OR_FOLLOWER, REBALANCE_IN_PROGRESS, REQUEST_TIMED_OUT"
        ) from None


def check_count(value: Any, arg: str, *, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(f"{arg} must be an integer >= {minimum}, got {value!r}")
    return value


def check_ms(value: Any, arg: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ConfigError(f"{arg} must be a number of milliseconds >= 0, got {value!r}")
    return int(value)


def _ints(value: int | Iterable[int] | None, arg: str) -> tuple[int, ...] | None:
    if value is None:
        return None
    vals = (value,) if isinstance(value, int) else tuple(value)
    for v in vals:
        if isinstance(v, bool) or not isinstance(v, int):
            raise ConfigError(f"{arg} must be an int or a list of ints, got {value!r}")
    return vals


def _glob(value: Any, arg: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise ConfigError(f"{arg} must be a string (shell wildcards allowed), got {value!r}")
    return value


# -- what a request looks like to the engine -----------------------------------------------


@dataclass(frozen=True, slots=True)
class RequestInfo:
    """The facts of one request a rule can match on (see ``faults/inspect.py``)."""

    api: str
    version: int = 0
    broker_id: int = 1
    connection_id: int = 0
    client_id: str | None = None
    topics: frozenset[str] = frozenset()
    partitions: frozenset[tuple[str, int]] = frozenset()
    all_topics: bool = False  # Metadata for every topic
    groups: frozenset[str] = frozenset()
    transactional_id: str | None = None


@dataclass(frozen=True, slots=True, repr=False)
class Match:
    """Which requests a rule looks at. Every given field must match; strings take shell
    wildcards (``"svc-*"``); ints may be lists (``partition=[0, 1]``)."""

    api: tuple[str, ...] = ("*",)
    versions: tuple[int, int] | None = None
    broker: tuple[int, ...] | None = None
    topic: str | None = None
    partition: tuple[int, ...] | None = None
    group: str | None = None
    transactional_id: str | None = None
    client_id: str | None = None
    connection: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "api", check_api_names(self.api))
        if self.versions is not None:
            raw: Any = self.versions
            vs = (raw, raw) if isinstance(raw, int) else tuple(raw)
            if len(vs) != 2 or not all(isinstance(v, int) and v >= 0 for v in vs):
                raise ConfigError(f"versions must be a version or (lowest, highest), got {raw!r}")
            object.__setattr__(self, "versions", vs)
        object.__setattr__(self, "broker", _ints(self.broker, "broker"))
        object.__setattr__(self, "partition", _ints(self.partition, "partition"))
        for name in ("topic", "group", "transactional_id", "client_id"):
            _glob(getattr(self, name), name)
        if self.connection is not None:
            check_count(self.connection, "connection")

    def __repr__(self) -> str:
        return _nondefault_repr(self)

    @property
    def targets_partitions(self) -> bool:
        """Whether the rule names topics or partitions (errors then go per partition)."""
        return self.topic is not None or self.partition is not None

    def partition_matches(self, topic: str, index: int) -> bool:
        if self.topic is not None and not fnmatch.fnmatchcase(topic, self.topic):
            return False
        return self.partition is None or index in self.partition

    def matches(self, info: RequestInfo) -> bool:
        if "*" not in self.api and info.api not in self.api:
            return False
        if self.versions is not None and not self.versions[0] <= info.version <= self.versions[1]:
            return False
        if self.broker is not None and info.broker_id not in self.broker:
            return False
        if self.connection is not None and info.connection_id != self.connection:
            return False
        if self.client_id is not None and not fnmatch.fnmatchcase(
            info.client_id or "", self.client_id
        ):
            return False
        if self.partition is not None:
            if not any(self.partition_matches(t, i) for t, i in info.partitions) and not (
                info.all_topics
            ):
                return False
        elif (
            self.topic is not None
            and not info.all_topics
            and not any(fnmatch.fnmatchcase(t, self.topic) for t in info.topics)
        ):
            return False
        if self.group is not None and not any(
            fnmatch.fnmatchcase(g, self.group) for g in info.groups
        ):
            return False
        return not (
            self.transactional_id is not None
            and not fnmatch.fnmatchcase(info.transactional_id or "", self.transactional_id)
        )


@dataclass(frozen=True, slots=True, repr=False)
class Trigger:
    """On which matching requests a rule fires.

    ``times``: fire on the first n matches (None: every match). ``nth``: fire only on the
    nth match. ``probability``/``seed``: fire on each match with this probability, drawn
    from ``random.Random(seed)`` so a run is reproducible. ``start_ms``/``end_ms``: only
    between these times, in ms after the rule was added. ``after_rule``: only once the rule
    with that name has fired. ``after_event`` (+ ``event_filter``): only after that cluster
    event happened (once the rule exists).
    """

    times: int | None = 1
    nth: int | None = None
    probability: float | None = None
    seed: int | None = None
    start_ms: int | None = None
    end_ms: int | None = None
    after_rule: str | None = None
    after_event: str | None = None
    event_filter: tuple[tuple[str, Any], ...] = ()

    def __post_init__(self) -> None:
        if self.times is not None:
            check_count(self.times, "times")
        if self.nth is not None:
            check_count(self.nth, "nth")
        if self.probability is not None:
            p = self.probability
            if isinstance(p, bool) or not isinstance(p, int | float) or not 0.0 <= p <= 1.0:
                raise ConfigError(f"probability must be a number in [0, 1], got {p!r}")
        if self.start_ms is not None:
            check_ms(self.start_ms, "start_ms")
        if self.end_ms is not None:
            check_ms(self.end_ms, "end_ms")
            if self.start_ms is not None and self.end_ms < self.start_ms:
                raise ConfigError(
                    f"end_ms ({self.end_ms}) must not be before start_ms ({self.start_ms})"
                )
        if self.after_event is not None and self.after_event not in EVENTS:
            raise ConfigError(
                f"after_event={self.after_event!r} is not a cluster event; valid: "
                + ", ".join(EVENTS)
            )

    def __repr__(self) -> str:
        return _nondefault_repr(self)


# -- actions ----------------------------------------------------------------------------------

ErrorLevel = Literal["auto", "request", "partition"]


@dataclass(frozen=True, slots=True, repr=False)
class Action:
    """Base class of actions. ``replaces_response``: the request is not processed normally.
    ``needs_data``: the action edits record data, so the rule only counts requests whose
    response carries data it can edit (``edits_empty``: also a partition answered with no
    records). ``apis``: the only APIs the action can act on (None: any); a rule on others
    is refused, and a rule on ``"*"`` is consulted only for these."""

    replaces_response = False
    needs_data = False
    edits_empty: ClassVar[bool] = False
    apis: ClassVar[tuple[str, ...] | None] = None

    def __repr__(self) -> str:
        return _nondefault_repr(self)


@dataclass(frozen=True, slots=True, repr=False)
class Error(Action):
    """Answer with ``code``. ``level="request"``: every error field of the response (the
    request is not processed); ``"partition"``: only the partitions the rule matches (the
    others are processed normally); ``"auto"``: per partition when the rule names a topic or
    partition, else the whole request."""

    code: str
    level: ErrorLevel = "auto"

    def __post_init__(self) -> None:
        object.__setattr__(self, "code", check_error(self.code, "code"))
        if self.level not in ("auto", "request", "partition"):
            raise ConfigError(f"level must be 'auto', 'request' or 'partition', got {self.level!r}")

    @property
    def error_code(self) -> ErrorCode:
        return ErrorCode[self.code]

    @property
    def replaces_response(self) -> bool:  # type: ignore[override]
        return self.level != "partition"


@dataclass(frozen=True, slots=True, repr=False)
class Delay(Action):
    """Hold the response back ``ms`` (or the request, with ``before_processing``)."""

    ms: int
    before_processing: bool = False

    def __post_init__(self) -> None:
        check_ms(self.ms, "ms")


@dataclass(frozen=True, slots=True, repr=False)
class Throttle(Action):
    """Answer with ``throttle_time_ms=ms`` and, as KIP-219 brokers do, read nothing more
    from that connection until the throttle time has passed."""

    ms: int

    def __post_init__(self) -> None:
        check_ms(self.ms, "ms")


@dataclass(frozen=True, slots=True, repr=False)
class DropConnection(Action):
    """Close the connection: before processing (the request is lost), or after processing
    (the request is applied, the response is lost)."""

    after_processing: bool = False

    @property
    def replaces_response(self) -> bool:  # type: ignore[override]
        return not self.after_processing


@dataclass(frozen=True, slots=True, repr=False)
class NeverRespond(Action):
    """Never answer; the request is not processed. The connection stays open (and answers
    nothing more, as requests are handled in order) until the client closes it."""

    replaces_response = True


#: APIs whose responses carry record data (what ``needs_data`` actions edit).
RECORD_RESPONSE_APIS = ("Fetch", "ShareFetch")


def check_action_fits(apis: tuple[str, ...], action: Action) -> None:
    """Refuse ``action`` on a rule matching ``apis`` when it could never fire there
    (ConfigError naming the APIs it acts on)."""
    if "*" in apis:
        return
    if action.apis is not None and not set(apis) & set(action.apis):
        raise ConfigError(
            f"{type(action).__name__} acts only on {' and '.join(action.apis)}; this rule "
            f"is on {', '.join(apis)}, so it could never fire"
        )
    if action.needs_data and not set(apis) & set(RECORD_RESPONSE_APIS):
        raise ConfigError(
            f"{type(action).__name__} edits record data, which only "
            f"{' and '.join(RECORD_RESPONSE_APIS)} responses carry; this rule is on "
            f"{', '.join(apis)}, so it could never fire"
        )


@dataclass(frozen=True, slots=True, repr=False)
class PartialTrailingBatch(Action):
    """Fetch: end a matching partition's records with a batch cut mid-record (as a broker
    does when ``max_bytes`` runs out). Fires only on responses with records to cut."""

    needs_data = True


@dataclass(frozen=True, slots=True, repr=False)
class CorruptBatch(Action):
    """Fetch: flip a byte in the CRC-covered part of a matching partition's first batch."""

    needs_data = True


@dataclass(frozen=True, slots=True, repr=False)
class Duplicate(Action):
    """Fetch: a matching partition's answer starts with the batch the consumer read last
    (the one before its fetch offset, from the log, at its original offsets), as a new
    leader's answer can after a leader change. Clients drop records below their fetch
    position, so a correct consumer delivers nothing twice. Fires only on a partition
    with a batch before the fetch offset."""

    needs_data = True
    edits_empty = True  # the repeated batch is the data
    apis = ("Fetch",)


@dataclass(frozen=True, slots=True, repr=False)
class CorruptPayload(Action):
    """Fetch: every record's value (``part="key"``: key; ``"headers"``: header values) of a
    matching partition's answer garbled byte by byte, the batches re-checksummed, so the
    client library accepts them and the application's deserializer meets the garbage.
    ``seed``: the same garbage on every run (None: fresh each time)."""

    part: Literal["value", "key", "headers"] = "value"
    seed: int | None = None

    needs_data = True

    def __post_init__(self) -> None:
        if self.part not in ("value", "key", "headers"):
            raise ConfigError(f"part must be 'value', 'key' or 'headers', got {self.part!r}")
        if self.seed is not None and (
            isinstance(self.seed, bool) or not isinstance(self.seed, int)
        ):
            raise ConfigError(f"seed must be an int or None, got {self.seed!r}")


@dataclass(frozen=True, slots=True, repr=False)
class SchemaId(Action):
    """Fetch: each value in the Confluent schema-registry wire format (magic byte 0, 4-byte
    big-endian schema id) gets schema id ``id`` (an id the registry does not know, or
    another subject's) and/or magic byte ``magic``; other values are left alone."""

    id: int | None = None
    magic: int | None = None

    needs_data = True

    def __post_init__(self) -> None:
        from mockkafka.faults.record_edits import check_schema_id

        try:
            check_schema_id(self.id, self.magic)
        except ValueError as exc:
            raise ConfigError(f"schema_id: {exc}") from None


@dataclass(frozen=True, slots=True, repr=False)
class SkewTimestamps(Action):
    """Fetch: the CreateTime timestamps of a matching partition's records moved by ``ms``
    (positive: from the future; negative: from the past), batches kept valid."""

    ms: int

    needs_data = True

    def __post_init__(self) -> None:
        if isinstance(self.ms, bool) or not isinstance(self.ms, int) or self.ms == 0:
            raise ConfigError(f"ms must be a non-zero int (milliseconds), got {self.ms!r}")


@dataclass(frozen=True, slots=True, repr=False)
class LostAck(Action):
    """Produce: the request is applied and its answer lost -- the connection closes before
    the response is sent, as when the network fails between broker and client -- so the
    client retries the batch: twice in the log without idempotence, once with it."""

    apis = ("Produce",)


@dataclass(frozen=True, slots=True, repr=False)
class Blackhole(Action):
    """Swallow every matching request: not processed, never answered, while the
    connection stays open and keeps being read. Once the rule ends (``for_ms``,
    ``between``, ``remove()``) requests are answered again. Fires on every match unless a
    count was given."""

    replaces_response = True


@dataclass(frozen=True, slots=True, repr=False)
class Observe(Action):
    """Do nothing but count (and mark the exchange in traffic)."""


def _fn_repr(fn: Callable[..., Any]) -> str:
    mod = getattr(fn, "__module__", None)
    qual = getattr(fn, "__qualname__", None) or repr(fn)
    return f"{mod}.{qual}" if mod and "<" not in qual else qual


@dataclass(frozen=True, slots=True, repr=False)
class CustomHandler(Action):
    """Call ``fn(request, ctx)``: a returned dict is the response (missing fields take
    defaults; the request is not processed), ``None`` lets the request through."""

    fn: Callable[[dict[str, Any], Any], Any] = field(compare=True)

    replaces_response = True

    def __post_init__(self) -> None:
        if not callable(self.fn):
            raise ConfigError(f"fn must be callable, got {self.fn!r}")

    def __repr__(self) -> str:
        return f"CustomHandler({_fn_repr(self.fn)})"


__all__ = [
    "EVENTS",
    "Action",
    "Blackhole",
    "CorruptBatch",
    "CorruptPayload",
    "CustomHandler",
    "Delay",
    "DropConnection",
    "Duplicate",
    "Error",
    "LostAck",
    "Match",
    "NeverRespond",
    "Observe",
    "PartialTrailingBatch",
    "RequestInfo",
    "SchemaId",
    "SkewTimestamps",
    "Throttle",
    "Trigger",
]

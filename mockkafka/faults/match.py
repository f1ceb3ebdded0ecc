"""What a fault rule matches and when it fires: :class:`Match`, :class:`Trigger` and the
facts of one request (:class:`RequestInfo`) they are matched against.

The lowest part of the fault model: the actions (``faults/actions/``) and the request
inspection (``faults/inspect.py``) build on it, and ``faults/model.py`` gathers it with the
actions as the public model. Every constructor validates its arguments at once and raises
:class:`~mockkafka.errors.ConfigError` naming the argument and the valid choices.
"""

from __future__ import annotations

import difflib
import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from mockkafka.errors import ConfigError
from mockkafka.faults._checks import check_count as check_count
from mockkafka.faults._checks import check_error as check_error
from mockkafka.faults._checks import check_ms as check_ms
from mockkafka.faults._checks import nondefault_repr as _nondefault_repr
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

#: Request contexts a rule can require (``Match(context=...)``, YAML ``context:``): what a
#: request carries that decides which errors Kafka could answer it. A fetch-session error
#: answered to a Fetch without a session, or NOT_ENOUGH_REPLICAS to an ``acks=1`` Produce,
#: is something no broker does; ``fault_plans()`` puts the context an error needs on the
#: rule (``mockkafka.faults.error_facts.ERROR_CONTEXTS``).
REQUEST_CONTEXTS: dict[str, str] = {
    "fetch_session": "an incremental Fetch of a fetch session (v7+, session epoch > 0; KIP-227)",
    "leader_epoch": "a partition carries the client's current leader epoch (>= 0: Fetch v9+, "
    "ListOffsets v4+, OffsetForLeaderEpoch v2+; KIP-320)",
    "acks_all": "a Produce with acks=-1 (all)",
    "transactional": "the request carries a transactional id (InitProducerId of a "
    "transactional producer, ...)",
}


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


def check_contexts(
    value: str | Iterable[str] | None, arg: str = "context"
) -> tuple[str, ...] | None:
    """``"fetch_session"`` or a list of names of :data:`REQUEST_CONTEXTS` -> a tuple."""
    if value is None:
        return None
    names = (value,) if isinstance(value, str) else tuple(value)
    if not names:
        raise ConfigError(f"{arg} must name at least one request context, or be left out")
    for n in names:
        if not isinstance(n, str) or n not in REQUEST_CONTEXTS:
            close = difflib.get_close_matches(str(n), list(REQUEST_CONTEXTS), n=3)
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            raise ConfigError(
                f"{arg}={n!r} is not a request context{hint}; valid: " + ", ".join(REQUEST_CONTEXTS)
            )
    return names


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


_WILDCARDS = frozenset("*?[")


def _glob_match(name: str, pattern: str) -> bool:
    """Shell-wildcard match; a pattern without wildcards is compared as it is (the usual
    case, and the cost of every rule on every request)."""
    if _WILDCARDS.isdisjoint(pattern):
        return name == pattern
    return fnmatch.fnmatchcase(name, pattern)


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
    contexts: frozenset[str] = frozenset()  # names of REQUEST_CONTEXTS the request has


@dataclass(frozen=True, slots=True, repr=False)
class Match:
    """Which requests a rule looks at. Every given field must match; strings take shell
    wildcards (``"svc-*"``); ints may be lists (``partition=[0, 1]``). ``context``: names
    of :data:`REQUEST_CONTEXTS` the request must all have (``context="fetch_session"``)."""

    api: tuple[str, ...] = ("*",)
    versions: tuple[int, int] | None = None
    broker: tuple[int, ...] | None = None
    topic: str | None = None
    partition: tuple[int, ...] | None = None
    group: str | None = None
    transactional_id: str | None = None
    client_id: str | None = None
    connection: int | None = None
    context: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "api", check_api_names(self.api))
        object.__setattr__(self, "context", check_contexts(self.context))
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
        if self.topic is not None and not _glob_match(topic, self.topic):
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
        if self.client_id is not None and not _glob_match(info.client_id or "", self.client_id):
            return False
        if self.partition is not None:
            if not any(self.partition_matches(t, i) for t, i in info.partitions) and not (
                info.all_topics
            ):
                return False
        elif (
            self.topic is not None
            and not info.all_topics
            and not any(_glob_match(t, self.topic) for t in info.topics)
        ):
            return False
        if self.group is not None and not any(_glob_match(g, self.group) for g in info.groups):
            return False
        if self.context is not None and not info.contexts.issuperset(self.context):
            return False
        return not (
            self.transactional_id is not None
            and not _glob_match(info.transactional_id or "", self.transactional_id)
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


__all__ = [
    "EVENTS",
    "REQUEST_CONTEXTS",
    "Match",
    "RequestInfo",
    "Trigger",
    "check_api_names",
    "check_contexts",
]

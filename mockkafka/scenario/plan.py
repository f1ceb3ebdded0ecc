"""The scenario's parts as frozen data: steps, start conditions, checks, and their parsers.

:mod:`mockkafka.scenario.model` builds the :class:`~mockkafka.scenario.model.Scenario` from
these and re-exports every name here (``from mockkafka.scenario.model import *`` gives them
all); the loader, the runner, the checks and the seeding import them from here, below it.

Theory of operation
-------------------
A :class:`Scenario` is a cluster (:class:`ClusterSpec`), topics (:class:`TopicSpec`), seed
data (:class:`SeedSpec`), a timeline of :class:`Step` and the checks of :class:`Expect`.
A step is an *action* -- a cluster verb (:class:`Verb`, named and argued exactly as the
Python method, see ``docs/vocabulary.md``) or a fault rule (:class:`Fault`, built from the
fault engine's own :class:`~mockkafka.faults.model.Match`,
:class:`~mockkafka.faults.model.Trigger` and actions) -- plus an optional *start condition*
(:class:`At`, :class:`AfterTime`, :class:`AfterRequests`, :class:`AfterEvent`,
:class:`AfterRecords`, :class:`AfterCommitted`, :class:`WhenGroup`,
:class:`WhenTransaction`). Steps run one after the other: each waits for its condition, then
acts. ``At`` counts from the start of the scenario, ``AfterTime`` from the previous step.

Everything here is pure data with no I/O (no trio, no faker, no yaml at import time), so the
hypothesis strategies of ``mockkafka.strategies`` build the same objects. Every ``repr`` is
valid Python once ``from mockkafka.scenario.model import *`` and
``from mockkafka.faults.model import *`` are in scope (:meth:`Scenario.to_python` writes
them), and :meth:`Scenario.to_yaml` writes the file form that :func:`from_dict` reads back.

:func:`from_dict` turns a parsed YAML document into a :class:`Scenario`, checking every
value; a mistake raises :class:`ScenarioError` carrying the path of the field
(``("steps", 2, "move_leader", "to")``) so the loader can name the file, line and column.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Protocol

from mockkafka._api.acl_args import AclArgumentError, acl_bindings, acl_filters
from mockkafka._api.verb_args import GROUP_STATES as _GROUP_STATES
from mockkafka.cluster.acls import AclPermissionType
from mockkafka.cluster.transactions import STATE_NAMES
from mockkafka.errors import ConfigError
from mockkafka.faults.actions import SCENARIO_ACTIONS
from mockkafka.faults.model import (
    EVENTS,
    Action,
    Match,
    Trigger,
    check_api_names,
)

Path = tuple[str | int, ...]


class ScenarioError(ConfigError):
    """A mistake in a scenario: names the file, line and column (when known), the field and
    what is allowed. ``path`` is the field's path inside the document."""

    def __init__(
        self,
        path: Path,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        self.path = tuple(path)
        self.message = message
        self.file = file
        self.line = line
        self.column = column
        super().__init__(str(self))

    @property
    def field(self) -> str:
        """The field in dotted form: ``steps[2].move_leader.to``."""
        return format_path(self.path)

    def located(self, file: str | None, line: int | None, column: int | None) -> ScenarioError:
        return ScenarioError(self.path, self.message, file=file, line=line, column=column)

    def __str__(self) -> str:
        where = self.file or "<scenario>"
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        fld = self.field
        return f"{where}: {fld}: {self.message}" if fld else f"{where}: {self.message}"


def combine(errors: Sequence[ScenarioError]) -> ScenarioError:
    """One error telling every mistake of a file: the first (its file, line and field
    are the error's), then ``N more mistake(s):`` with each other one on its own line."""
    first = errors[0]
    if len(errors) == 1:
        return first
    rest = "\n".join(f"  {e}" for e in errors[1:])
    return ScenarioError(
        first.path,
        f"{first.message}\n{len(errors) - 1} more mistake(s):\n{rest}",
        file=first.file,
        line=first.line,
        column=first.column,
    )


def format_path(path: Iterable[str | int]) -> str:
    out = ""
    for p in path:
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            out += f".{p}" if out else str(p)
    return out


def did_you_mean(value: object, choices: Iterable[str]) -> str:
    """`` (did you mean X?)`` when ``value`` is close to one of ``choices``, else ``""``."""
    if not isinstance(value, str):
        return ""
    close = difflib.get_close_matches(value, list(choices), n=2, cutoff=0.6)
    return f" (did you mean {' or '.join(close)}?)" if close else ""


def unknown_key(path: Path, key: object, allowed: Iterable[str], what: str) -> ScenarioError:
    allowed = list(allowed)
    return ScenarioError(
        (*path, str(key)),
        f"unknown {what} {key!r}{did_you_mean(key, allowed)}; allowed: {', '.join(allowed)}",
    )


# -- durations ----------------------------------------------------------------------------

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m)\s*$")


def parse_duration_ms(value: Any, path: Path) -> int:
    """``"2s"``, ``"500ms"``, ``"1m"`` or a number of seconds -> milliseconds."""
    if isinstance(value, bool):
        raise ScenarioError(path, f"expected a duration like 2s or 500ms, got {value!r}")
    if isinstance(value, int | float):
        if value < 0:
            raise ScenarioError(path, f"a duration must be >= 0, got {value!r}")
        return round(value * 1000)
    if isinstance(value, str):
        m = _DURATION.match(value)
        if m:
            unit = {"ms": 1, "s": 1000, "m": 60_000}[m.group(2)]
            return round(float(m.group(1)) * unit)
    raise ScenarioError(
        path, f"expected a duration like 2s, 500ms or 1m (or a number of seconds), got {value!r}"
    )


def format_duration(ms: int) -> str:
    return f"{ms // 1000}s" if ms % 1000 == 0 else f"{ms}ms"


# -- the frozen argument mapping of a verb ---------------------------------------------------


def _freeze(v: Any) -> Any:
    if isinstance(v, Mapping):
        return tuple((k, _freeze(x)) for k, x in v.items())
    if isinstance(v, list | tuple):
        return tuple(_freeze(x) for x in v)
    return v


def _nondefault_repr(obj: Any) -> str:
    parts = []
    for f in fields(obj):
        v = getattr(obj, f.name)
        if f.repr and v != f.default:
            parts.append(f"{f.name}={v!r}")
    return f"{type(obj).__name__}({', '.join(parts)})"


class _Data:
    """Base of the model's dataclasses: ``repr`` shows the non-default fields, as Python."""

    __slots__ = ()

    def __repr__(self) -> str:
        return _nondefault_repr(self)


# -- verbs --------------------------------------------------------------------------------

# Value kinds of verb arguments (also used to build the JSON schema).
STR = "string"
INT = "integer"  # >= 0
PARTITION = "partition"  # int >= 0 or "all"
BROKER = "broker"  # node id >= 1
TO_BROKER = "to_broker"  # node id or "next"
BROKERS = "brokers"  # list of node ids
MS = "ms"  # int >= 0
STR_MAP = "str_map"  # {str: scalar}
CAPS = "caps"  # {api name: version}
OFFSETS = "offsets"  # [{topic, partition, offset}]
HEADERS = "headers"  # [[key, value]]
ASSIGNMENTS = "assignments"  # [[broker, ...], ...] one replica list per partition
BOOL = "boolean"  # true / false
OPERATIONS = "operations"  # an ACL operation name or a list of them
ANY = "any"


@dataclass(frozen=True, slots=True)
class Param:
    """One keyword argument of a verb: its name, value kind and whether it is required."""

    name: str
    kind: str
    required: bool = True


def _p(name: str, kind: str, required: bool = True) -> Param:
    return Param(name, kind, required)


def _acl_params(*, required: bool) -> tuple[Param, ...]:
    """``principal``, ``operations`` and the resource of the ACL verbs."""
    return (
        _p("principal", STR, required),
        _p("operations", OPERATIONS, required),
        _p("topic", STR, False),
        _p("group", STR, False),
        _p("transactional_id", STR, False),
        _p("cluster", BOOL, False),
        _p("prefixed", BOOL, False),
        _p("host", STR, False),
    )


#: Every cluster verb a scenario step may call, with exactly the Python keyword names.
VERBS: dict[str, tuple[Param, ...]] = {
    "create_topic": (
        _p("topic", STR),
        _p("partitions", INT, False),
        _p("replication_factor", INT, False),
        _p("config", STR_MAP, False),
        _p("assignments", ASSIGNMENTS, False),
    ),
    "delete_topic": (_p("topic", STR),),
    "recreate_topic": (_p("topic", STR),),
    "add_partitions": (_p("topic", STR), _p("total", INT)),
    "produce": (
        _p("topic", STR),
        _p("value", STR),
        _p("key", STR, False),
        _p("partition", INT, False),
        _p("headers", HEADERS, False),
        _p("timestamp", INT, False),
    ),
    "delete_records": (_p("topic", STR), _p("partition", PARTITION), _p("before_offset", INT)),
    "truncate_log": (_p("topic", STR), _p("partition", PARTITION), _p("to_offset", INT)),
    "move_leader": (_p("topic", STR), _p("partition", PARTITION), _p("to", TO_BROKER)),
    "set_isr": (_p("topic", STR), _p("partition", PARTITION), _p("to", BROKERS)),
    "stop_broker": (_p("broker", BROKER),),
    "start_broker": (_p("broker", BROKER),),
    "restart_broker": (_p("broker", BROKER),),
    "cap_api_versions": (_p("caps", CAPS),),
    "uncap_api_versions": (),
    "commit_offsets": (_p("group", STR), _p("offsets", OFFSETS), _p("metadata", STR, False)),
    "trigger_rebalance": (_p("group", STR),),
    "expire_member": (_p("group", STR), _p("member_id", STR)),
    "expire_acquisition_locks": (
        _p("group", STR),
        _p("topic", STR, False),
        _p("partition", INT, False),
    ),
    "abort_transaction": (_p("transactional_id", STR),),
    "expire_transaction": (_p("transactional_id", STR),),
    "fence_producer": (_p("transactional_id", STR),),
    "delay_transaction_markers": (_p("ms", MS),),
    "move_coordinator": (
        _p("group", STR, False),
        _p("transactional_id", STR, False),
        _p("to", TO_BROKER),
    ),
    "coordinator_loading": (
        _p("group", STR, False),
        _p("transactional_id", STR, False),
        _p("ms", MS),
    ),
    "set_topic_config": (_p("topic", STR), _p("configs", STR_MAP)),
    "set_group_config": (_p("group", STR), _p("configs", STR_MAP)),
    "allow": _acl_params(required=True),
    "deny": _acl_params(required=True),
    "remove_acls": (*_acl_params(required=False), _p("permission", STR, False)),
}

#: Verbs taking ``group`` and ``transactional_id`` of which at most (or exactly) one is given.
COORDINATOR_VERBS = ("move_coordinator", "coordinator_loading")
#: Verbs making or removing ACLs (their arguments are checked as the Python verbs check them).
ACL_VERBS = ("allow", "deny", "remove_acls")


def _check_kind(kind: str, value: Any, path: Path) -> Any:
    def bad(expected: str) -> ScenarioError:
        return ScenarioError(path, f"expected {expected}, got {value!r}")

    def is_int(v: Any) -> bool:
        return isinstance(v, int) and not isinstance(v, bool)

    if kind == STR:
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise bad("a string")
        return str(value)
    if kind == BOOL:
        if not isinstance(value, bool):
            raise bad("true or false")
        return value
    if kind == OPERATIONS:
        ops = [value] if isinstance(value, str) else value
        if not isinstance(ops, list | tuple) or not ops or not all(isinstance(o, str) for o in ops):
            raise bad("an operation name or a list of them, e.g. write or [read, describe]")
        return value if isinstance(value, str) else tuple(ops)
    if kind in (INT, MS):
        if not is_int(value) or value < 0:
            raise bad("an integer >= 0")
        return value
    if kind == PARTITION:
        if value == "all" or (is_int(value) and value >= 0):
            return value
        raise bad("a partition index >= 0 or 'all'")
    if kind == BROKER:
        if not is_int(value) or value < 1:
            raise bad("a broker node id >= 1")
        return value
    if kind == TO_BROKER:
        if value == "next" or (is_int(value) and value >= 1):
            return value
        raise bad("a broker node id >= 1 or 'next'")
    if kind == BROKERS:
        if not isinstance(value, list | tuple) or not all(is_int(v) and v >= 1 for v in value):
            raise bad("a list of broker node ids")
        return tuple(value)
    if kind == STR_MAP:
        if not isinstance(value, Mapping):
            raise bad("a mapping of names to values")
        return tuple((str(k), None if v is None else str(v)) for k, v in value.items())
    if kind == CAPS:
        if not isinstance(value, Mapping) or not value:
            raise bad("a mapping of API names to versions, e.g. {Fetch: 11}")
        out = []
        for k, v in value.items():
            try:
                check_api_names(str(k), "caps")
            except ConfigError as exc:
                raise ScenarioError((*path, str(k)), str(exc)) from None
            if not is_int(v) or v < 0:
                raise ScenarioError((*path, str(k)), f"expected a version >= 0, got {v!r}")
            out.append((str(k), v))
        return tuple(out)
    if kind == OFFSETS:
        if not isinstance(value, list | tuple) or not value:
            raise bad("a list of {topic, partition, offset}")
        out2 = []
        for i, item in enumerate(value):
            ip = (*path, i)
            if not isinstance(item, Mapping):
                raise ScenarioError(ip, f"expected {{topic, partition, offset}}, got {item!r}")
            for k in item:
                if k not in ("topic", "partition", "offset"):
                    raise unknown_key(ip, k, ("topic", "partition", "offset"), "key")
            for k in ("topic", "partition", "offset"):
                if k not in item:
                    raise ScenarioError(ip, f"missing {k!r} (needs topic, partition, offset)")
            out2.append(
                (
                    _check_kind(STR, item["topic"], (*ip, "topic")),
                    _check_kind(INT, item["partition"], (*ip, "partition")),
                    _check_kind(INT, item["offset"], (*ip, "offset")),
                )
            )
        return tuple(out2)
    if kind == ASSIGNMENTS:
        if (
            not isinstance(value, list | tuple)
            or not value
            or not all(
                isinstance(r, list | tuple) and r and all(is_int(b) and b >= 1 for b in r)
                for r in value
            )
        ):
            raise bad("a replica list (broker ids) per partition, e.g. [[1, 2], [2, 3]]")
        return tuple(tuple(r) for r in value)
    if kind == HEADERS:
        if not isinstance(value, list | tuple) or not all(
            isinstance(h, list | tuple) and len(h) == 2 for h in value
        ):
            raise bad("a list of [key, value] pairs")
        return tuple((str(k), None if v is None else str(v)) for k, v in value)
    return _freeze(value)


class Verb:
    """A cluster verb with its keyword arguments: ``Verb('move_leader', topic='orders',
    partition=0, to=2)`` is ``cluster.move_leader('orders', 0, to=2)``.

    ``partition='all'`` means every partition and ``to='next'`` the next broker of the
    replica list (or of the brokers, for a coordinator). Arguments are checked at once
    against :data:`VERBS`.
    """

    __slots__ = ("args", "name")
    name: str
    args: tuple[tuple[str, Any], ...]

    def __init__(self, name: str, /, **args: Any) -> None:
        checked = check_verb(name, args, ())
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "args", checked)

    @classmethod
    def checked(cls, name: str, args: tuple[tuple[str, Any], ...]) -> Verb:
        """A Verb from arguments already checked by :func:`check_verb`."""
        v = object.__new__(cls)
        object.__setattr__(v, "name", name)
        object.__setattr__(v, "args", args)
        return v

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError("Verb is immutable")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Verb) and (self.name, self.args) == (other.name, other.args)

    def __hash__(self) -> int:
        return hash((self.name, self.args))

    def __repr__(self) -> str:
        inner = ", ".join([repr(self.name), *(f"{k}={v!r}" for k, v in self.kwargs.items())])
        return f"Verb({inner})"

    @property
    def kwargs(self) -> dict[str, Any]:
        """The arguments as the Python method takes them (mappings as dicts)."""
        kinds = {p.name: p.kind for p in VERBS[self.name]}
        return {k: _thaw(kinds[k], v) for k, v in self.args}


def _thaw(kind: str, v: Any) -> Any:
    if kind in (STR_MAP, CAPS):
        return dict(v)
    if kind == OFFSETS:
        return [{"topic": t, "partition": p, "offset": o} for t, p, o in v]
    if kind in (BROKERS, HEADERS, ASSIGNMENTS):
        return [list(x) if isinstance(x, tuple) else x for x in v]
    if kind == OPERATIONS and isinstance(v, tuple):
        return list(v)
    return v


def check_verb(name: str, args: Mapping[str, Any], path: Path) -> tuple[tuple[str, Any], ...]:
    """Check a verb's arguments; returns them frozen, in the order of :data:`VERBS`."""
    if name not in VERBS:
        raise unknown_key(path, name, VERBS, "verb")
    params = VERBS[name]
    by_name = {p.name: p for p in params}
    vpath = (*path, name)
    if not isinstance(args, Mapping):
        raise ScenarioError(
            vpath,
            f"expected a mapping of arguments ({', '.join(by_name) or 'none'}), got {args!r}",
        )
    for k in args:
        if k not in by_name:
            allowed = ", ".join(by_name) or "none"
            raise ScenarioError(
                (*vpath, str(k)),
                f"{name} has no argument {k!r}{did_you_mean(k, by_name)}; arguments: {allowed}",
            )
    for p in params:
        if p.required and p.name not in args:
            raise ScenarioError(
                vpath,
                f"{name} needs {p.name!r}; arguments: "
                + ", ".join(q.name + ("" if q.required else " (optional)") for q in params),
            )
    if name in COORDINATOR_VERBS:
        given = [k for k in ("group", "transactional_id") if args.get(k) is not None]
        if len(given) > 1 or (name == "move_coordinator" and not given):
            raise ScenarioError(vpath, f"{name} takes exactly one of 'group', 'transactional_id'")
    checked = tuple(
        (p.name, _check_kind(p.kind, args[p.name], (*vpath, p.name)))
        for p in params
        if p.name in args
    )
    if name in ACL_VERBS:
        _check_acl_verb(name, dict(checked), vpath)
    return checked


def _check_acl_verb(name: str, args: dict[str, Any], vpath: Path) -> None:
    """Check an ACL verb's arguments as ``cluster.allow(...)`` would, now (not when the
    step runs); the error names the argument at fault."""
    try:
        if name == "remove_acls":
            acl_filters(name, **args)
        else:
            perm = AclPermissionType.ALLOW if name == "allow" else AclPermissionType.DENY
            acl_bindings(name, perm, **args)
    except AclArgumentError as exc:
        raise ScenarioError(vpath if exc.arg is None else (*vpath, exc.arg), exc.detail) from None


# -- faults -------------------------------------------------------------------------------

#: Keys of ``fault:`` that select requests (the arguments of ``cluster.faults.on``).
FAULT_MATCH_KEYS = (
    "on",
    "broker",
    "topic",
    "partition",
    "group",
    "transactional_id",
    "client_id",
    "connection",
    "versions",
    "context",
)
#: Keys of ``fault:`` that say on which matching requests it fires.
FAULT_TRIGGER_KEYS = (
    "once",
    "times",
    "nth",
    "every_time",
    "probability",
    "seed",
    "between",
    "for_ms",
    "after",
    "after_event",
)
#: Keys of ``fault:`` that say what happens: the actions of the registry
#: (``mockkafka/faults/actions/``) that YAML can hold.
FAULT_ACTION_KEYS = tuple(SCENARIO_ACTIONS)
FAULT_KEYS = ("name", *FAULT_MATCH_KEYS, *FAULT_TRIGGER_KEYS, *FAULT_ACTION_KEYS)


@dataclass(frozen=True, slots=True, repr=False)
class Fault(_Data):
    """A fault rule as a step: ``cluster.faults.add(Rule(match, trigger, actions, name))``.

    In YAML: ``fault: {on: Fetch, broker: 2, times: 3, error: NOT_LEADER_OR_FOLLOWER}``.
    """

    match: Match
    trigger: Trigger = field(default_factory=Trigger)
    actions: tuple[Action, ...] = ()
    name: str | None = None

    def __post_init__(self) -> None:
        if not self.actions:
            raise ConfigError("a fault needs an action: one of " + ", ".join(FAULT_ACTION_KEYS))
        from mockkafka.faults.engine import check_action_fits

        for a in self.actions:
            check_action_fits(self.match.api, a)


# -- step start conditions -----------------------------------------------------------------


@dataclass(frozen=True, slots=True, repr=False)
class At(_Data):
    """Start ``ms`` after the scenario started (YAML ``at: 2s``)."""

    ms: int


@dataclass(frozen=True, slots=True, repr=False)
class AfterTime(_Data):
    """Start ``ms`` after the previous step (YAML ``after: {time: 500ms}``)."""

    ms: int


#: Filters an ``after: {requests: ...}`` condition takes besides ``api`` and ``count``
#: (those of ``cluster.traffic.requests``).
REQUEST_FILTERS = ("broker", "topic", "partition", "group", "client_id", "with_error", "version")


@dataclass(frozen=True, slots=True, repr=False)
class AfterRequests(_Data):
    """Start once ``count`` requests of ``api`` (and the filters) were answered
    (YAML ``after: {requests: {api: Produce, count: 50}}``)."""

    api: str
    count: int = 1
    filters: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True, slots=True, repr=False)
class AfterEvent(_Data):
    """Start once the cluster event ``event`` happened (with these attributes)
    (YAML ``after: {event: broker_stopped, broker: 2}``)."""

    event: str
    attrs: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True, slots=True, repr=False)
class AfterRecords(_Data):
    """Start once ``topic`` (or one partition of it) holds ``count`` records
    (YAML ``after: {records: {topic: orders, count: 100}}``)."""

    topic: str
    count: int
    partition: int | None = None


@dataclass(frozen=True, slots=True, repr=False)
class AfterProduced(_Data):
    """Start once clients appended ``count`` records to ``topic`` (or one partition of it)
    since the scenario started, however their clients batched them; seed records do not
    count (YAML ``after: {produced: {topic: orders, count: 20}}``)."""

    topic: str
    count: int
    partition: int | None = None


@dataclass(frozen=True, slots=True, repr=False)
class AfterConsumed(_Data):
    """Start once consumers fetched ``count`` records of ``topic`` (or one partition):
    the sum over partitions of the furthest Fetch position past the log start, whether the
    client fetched by topic name or by topic id
    (YAML ``after: {consumed: {topic: orders, count: 20}}``)."""

    topic: str
    count: int
    partition: int | None = None


@dataclass(frozen=True, slots=True, repr=False)
class AfterCommits(_Data):
    """Start once ``group`` made ``count`` offset commits that succeeded (OffsetCommit or
    TxnOffsetCommit answered without error) since the scenario started
    (YAML ``after: {commits: {group: billing, count: 1}}``)."""

    group: str
    count: int = 1


@dataclass(frozen=True, slots=True, repr=False)
class AfterCommitted(_Data):
    """Start once ``group`` committed at least ``offset`` on the partition
    (YAML ``after: {committed: {group: billing, topic: orders, partition: 0, offset: 10}}``)."""

    group: str
    topic: str
    partition: int
    offset: int


@dataclass(frozen=True, slots=True, repr=False)
class WhenGroup(_Data):
    """Start once ``group`` is in ``state`` (with ``members`` members)
    (YAML ``when: {group: billing, state: Stable}``)."""

    group: str
    state: str = "Stable"
    members: int | None = None


@dataclass(frozen=True, slots=True, repr=False)
class WhenTransaction(_Data):
    """Start once ``transactional_id`` is in ``state``
    (YAML ``when: {transactional_id: tx-1, state: PrepareCommit}``)."""

    transactional_id: str
    state: str


StartCondition = (
    At | AfterTime | AfterRequests | AfterEvent | AfterRecords | AfterProduced | AfterConsumed
    | AfterCommits | AfterCommitted | WhenGroup | WhenTransaction
)  # fmt: skip

#: Kafka's group states a ``when:`` may wait for (those of ``cluster.wait_for_group``).
GROUP_STATES = tuple(sorted(_GROUP_STATES))
#: Kafka's transaction states a ``when:`` may wait for.
TRANSACTION_STATES = tuple(sorted(STATE_NAMES))

#: Default time a step waits for its start condition.
DEFAULT_STEP_TIMEOUT_MS = 30_000


@dataclass(frozen=True, slots=True, repr=False)
class Step(_Data):
    """One action of the timeline, started when ``start`` holds (None: at once)."""

    action: Verb | Fault
    start: StartCondition | None = None
    name: str | None = None
    timeout_ms: int = DEFAULT_STEP_TIMEOUT_MS
    #: The step's line in its file (set by the loader; for messages only).
    line: int | None = field(default=None, compare=False, repr=False)

    @property
    def label(self) -> str:
        what = self.action.name if isinstance(self.action, Verb) else "fault"
        return f"{self.name} ({what})" if self.name else what


# -- setup --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, repr=False)
class ClusterSpec(_Data):
    """``brokers`` and :class:`~mockkafka.ClusterConfig` options of the cluster."""

    brokers: int = 1
    options: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True, slots=True, repr=False)
class TopicSpec(_Data):
    """A topic created before the steps run (``cluster.create_topic``)."""

    topic: str
    partitions: int = 1
    replication_factor: int = 1
    config: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True, repr=False)
class SeedSpec(_Data):
    """``count`` records written to ``topic`` before the steps run.

    ``key`` and ``value`` are templates: a string where ``{{ faker.PROVIDER }}`` and
    ``{{ index }}`` are replaced, or a mapping ``{faker: PROVIDER, ...keyword arguments}``
    (``{faker: json, fields: {name: name}}`` writes a JSON object of provider values).
    ``partition`` None spreads records over the partitions (by key when there is one).
    """

    topic: str
    count: int
    key: Any = None
    value: Any = "{{ index }}"
    partition: int | None = None


# -- expectations -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, repr=False)
class NoDataLoss(_Data):
    """Every record a producer had acknowledged (and every seed record) is still held, at
    its offset, with its key and value."""

    topics: tuple[str, ...]


@dataclass(frozen=True, slots=True, repr=False)
class DataLoss(_Data):
    """At least one acknowledged record is gone (a story about data loss)."""

    topics: tuple[str, ...]


@dataclass(frozen=True, slots=True, repr=False)
class NoDuplicates(_Data):
    """No two records of a partition have the same key, value and headers."""

    topics: tuple[str, ...]


@dataclass(frozen=True, slots=True, repr=False)
class Committed(_Data):
    """``group`` committed at least ``offset`` (``"end"``: the high watermark; a partition
    that holds nothing to read owes no commit) on each partition of ``topic`` (or on
    ``partition``)."""

    group: str
    topic: str
    offset: int | str = "end"
    partition: int | None = None


@dataclass(frozen=True, slots=True, repr=False)
class GroupState(_Data):
    """``group`` is in ``state`` (with ``members`` members) at the end."""

    group: str
    state: str = "Stable"
    members: int | None = None


@dataclass(frozen=True, slots=True, repr=False)
class TransactionState(_Data):
    """``transactional_id`` is in ``state`` at the end (and committed / aborted at least so
    many transactions)."""

    transactional_id: str
    state: str | None = None
    committed: int | None = None
    aborted: int | None = None


@dataclass(frozen=True, slots=True, repr=False)
class Records(_Data):
    """``topic`` holds ``count`` records (or at least / at most so many)."""

    topic: str
    count: int | None = None
    at_least: int | None = None
    at_most: int | None = None


@dataclass(frozen=True, slots=True, repr=False)
class TrafficCount(_Data):
    """At least ``at_least`` (and at most ``at_most``) exchanges of ``api`` matched the
    filters of ``cluster.traffic.requests`` (``with_error``, ``broker``, ...)."""

    api: str
    at_least: int = 1
    at_most: int | None = None
    filters: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True, slots=True, repr=False)
class RulesFired(_Data):
    """Every fault of the scenario (or those named) fired at least once."""

    names: tuple[str, ...] | None = None


Check = (
    NoDataLoss | DataLoss | NoDuplicates | Committed | GroupState | TransactionState | Records
    | TrafficCount | RulesFired
)  # fmt: skip


# -- the scenario -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, repr=False)
class ScenarioParameter(_Data):
    """A name the story is written for (a topic, a group, a count), declared under
    ``parameters:`` with a ``default``; ``value`` is what it was bound to
    (``Scenario.load("leader-failover", topic="payments")``)."""

    name: str
    default: Any
    description: str = ""
    value: Any = None


class ScenarioPlan(Protocol):
    """What the runner and the checks read of a scenario: :class:`~mockkafka.scenario.model.
    Scenario` is one. Defined here, below the runner, so that the runner need not import the
    Scenario class (whose ``run`` and ``load`` call the runner and the loader)."""

    @property
    def name(self) -> str: ...
    @property
    def cluster(self) -> ClusterSpec: ...
    @property
    def topics(self) -> tuple[TopicSpec, ...]: ...
    @property
    def seed(self) -> tuple[SeedSpec, ...]: ...
    @property
    def random_seed(self) -> int: ...
    @property
    def steps(self) -> tuple[Step, ...]: ...
    @property
    def expect(self) -> tuple[Check, ...]: ...
    @property
    def parameters(self) -> tuple[ScenarioParameter, ...]: ...
    @property
    def check_parameters(self) -> tuple[tuple[str, ...], ...]: ...
    @property
    def source(self) -> str | None: ...


# -- document -> model ----------------------------------------------------------------------


STEP_KEYS = ("name", "at", "after", "when", "timeout", *VERBS, "fault")
AFTER_KINDS = (
    "time",
    "requests",
    "event",
    "records",
    "produced",
    "consumed",
    "commits",
    "committed",
)
EXPECT_KEYS = (
    "no_data_loss",
    "data_loss",
    "no_duplicates",
    "committed",
    "group_state",
    "transaction_state",
    "records",
    "traffic",
    "rules_fired",
)


def _mapping(value: Any, path: Path, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ScenarioError(path, f"expected a mapping ({what}), got {value!r}")
    return value


def _keys(m: Mapping[str, Any], path: Path, allowed: Iterable[str], what: str) -> None:
    allowed = tuple(allowed)
    for k in m:
        if k not in allowed:
            raise unknown_key(path, k, allowed, what)


def _required(m: Mapping[str, Any], key: str, path: Path, what: str) -> Any:
    if key not in m:
        raise ScenarioError(path, f"{what} needs {key!r}")
    return m[key]


def _int(value: Any, path: Path, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ScenarioError(path, f"expected an integer >= {minimum}, got {value!r}")
    return value


def _str(value: Any, path: Path) -> str:
    if not isinstance(value, str) or not value:
        raise ScenarioError(path, f"expected a non-empty string, got {value!r}")
    return value


def _one_of(value: Any, choices: Iterable[str], path: Path, what: str) -> str:
    choices = tuple(choices)
    if value not in choices:
        raise ScenarioError(
            path,
            f"{value!r} is not a {what}{did_you_mean(value, choices)}; allowed: "
            + ", ".join(choices),
        )
    return str(value)


def _topics_list(value: Any, path: Path) -> tuple[str, ...]:
    vals = [value] if isinstance(value, str) else value
    if not isinstance(vals, list) or not vals:
        raise ScenarioError(path, f"expected a topic or a list of topics, got {value!r}")
    return tuple(_str(v, (*path, i)) for i, v in enumerate(vals))


def _items(value: Any, path: Path) -> list[tuple[Path, Any]]:
    """A mapping or a list of mappings -> [(path, mapping)]."""
    if isinstance(value, list):
        return [((*path, i), v) for i, v in enumerate(value)]
    return [(path, value)]


def _guard(path: Path, fn: Callable[[], Any]) -> Any:
    """Run a constructor that raises ConfigError; re-raise it as ScenarioError at ``path``."""
    try:
        return fn()
    except ScenarioError:
        raise
    except ConfigError as exc:
        raise ScenarioError(path, str(exc)) from None


def fault_from_dict(doc: Any, path: Path = ("fault",)) -> Fault:
    """``{on: Fetch, broker: 2, times: 3, error: NOT_LEADER_OR_FOLLOWER}`` -> :class:`Fault`."""
    m = _mapping(doc, path, "a fault: on, match keys, a trigger and an action")
    _keys(m, path, FAULT_KEYS, "fault key")
    on = _required(m, "on", path, "a fault")
    _guard((*path, "on"), lambda: check_api_names(on, "on"))
    match_kw: dict[str, Any] = {"api": on}
    for k in FAULT_MATCH_KEYS[1:]:
        if k in m:
            v = m[k]
            match_kw[k] = tuple(v) if isinstance(v, list) else v
    match = _guard(path, lambda: Match(**match_kw))
    trig: dict[str, Any] = {}
    picked = [k for k in ("once", "times", "nth", "every_time", "probability") if k in m]
    if len(picked) > 1:
        raise ScenarioError(
            (*path, picked[1]),
            f"a fault takes one of once, times, nth, every_time, probability; got {picked}",
        )
    for flag in ("once", "every_time"):
        if flag in m and m[flag] is not True:
            raise ScenarioError((*path, flag), f"expected true, got {m[flag]!r}")
    every_match = any(k in m and c.EVERY_MATCH for k, c in SCENARIO_ACTIONS.items())
    if "every_time" in m or (every_match and not picked):
        trig["times"] = None  # e.g. a blackhole swallows every match until the rule ends
    if "times" in m:
        trig["times"] = _int(m["times"], (*path, "times"), 1)
    if "nth" in m:
        trig["nth"] = _int(m["nth"], (*path, "nth"), 1)
        trig["times"] = None
    if "probability" in m:
        trig["probability"] = m["probability"]
        trig["times"] = None
    if "seed" in m:
        if "probability" not in m:
            raise ScenarioError((*path, "seed"), "seed goes with probability")
        trig["seed"] = _int(m["seed"], (*path, "seed"))
    if "between" in m:
        b = m["between"]
        bp = (*path, "between")
        if not isinstance(b, list) or len(b) not in (1, 2):
            raise ScenarioError(bp, f"expected [start, end] durations like [1s, 3s], got {b!r}")
        trig["start_ms"] = parse_duration_ms(b[0], (*bp, 0))
        if len(b) == 2:
            trig["end_ms"] = parse_duration_ms(b[1], (*bp, 1))
    if "for_ms" in m:
        if "between" in m:
            raise ScenarioError((*path, "for_ms"), "use between or for_ms, not both")
        trig["start_ms"] = 0
        trig["end_ms"] = _int(m["for_ms"], (*path, "for_ms"))
    if "after" in m:
        trig["after_rule"] = _str(m["after"], (*path, "after"))
    if "after_event" in m:
        ev = m["after_event"]
        ep = (*path, "after_event")
        if isinstance(ev, Mapping):
            ev = dict(ev)
            name = _required(ev, "event", ep, "after_event")
            trig["event_filter"] = tuple((k, v) for k, v in ev.items() if k != "event")
            ev = name
        trig["after_event"] = _one_of(ev, EVENTS, ep, "cluster event")
    trigger = _guard(path, lambda: Trigger(**trig))
    actions: list[Action] = []
    for k in (k for k in m if k in FAULT_ACTION_KEYS):
        actions.append(_action(k, m[k], (*path, k)))
    if not actions:
        raise ScenarioError(path, "a fault needs an action: one of " + ", ".join(FAULT_ACTION_KEYS))
    name = _str(m["name"], (*path, "name")) if "name" in m else None
    fault: Fault = _guard(path, lambda: Fault(match, trigger, tuple(actions), name))
    return fault


def _shorthand(key: str) -> str | None:
    """The argument a bare YAML value stands for (``error: CODE`` is ``{code: CODE}``)."""
    return next((a.name for a in SCENARIO_ACTIONS[key].args() if a.positional), None)


def _action(key: str, value: Any, path: Path) -> Action:
    cls = SCENARIO_ACTIONS[key]
    allowed = tuple(a.name for a in cls.args())
    short = _shorthand(key)
    if short is not None and not isinstance(value, Mapping):
        value = {short: value}
    if value is True or value is None:
        value = {}
    if not isinstance(value, Mapping):
        hint = f"{{{', '.join(a + ': ...' for a in allowed)}}}" if allowed else "true"
        raise ScenarioError(path, f"expected {hint}, got {value!r}")
    _keys(value, path, allowed, f"argument of {key}")
    action: Action = _guard(path, lambda: cls(**value))
    return action


def start_from_dict(step: Mapping[str, Any], path: Path) -> StartCondition | None:
    given = [k for k in ("at", "after", "when") if k in step]
    if len(given) > 1:
        raise ScenarioError(
            (*path, given[1]), f"a step starts on one condition; it has {' and '.join(given)}"
        )
    if not given:
        return None
    key = given[0]
    v = step[key]
    p = (*path, key)
    if key == "at":
        return At(parse_duration_ms(v, p))
    if key == "when":
        m = _mapping(v, p, "{group: G, state: S} or {transactional_id: T, state: S}")
        if "group" in m:
            _keys(m, p, ("group", "state", "members"), "key of when")
            members = _int(m["members"], (*p, "members")) if "members" in m else None
            state = _one_of(m.get("state", "Stable"), GROUP_STATES, (*p, "state"), "group state")
            return WhenGroup(_str(m["group"], (*p, "group")), state, members)
        if "transactional_id" in m:
            _keys(m, p, ("transactional_id", "state"), "key of when")
            st = _required(m, "state", p, "when")
            return WhenTransaction(
                _str(m["transactional_id"], (*p, "transactional_id")),
                _one_of(st, TRANSACTION_STATES, (*p, "state"), "transaction state"),
            )
        raise ScenarioError(p, "when needs 'group' or 'transactional_id'")
    m = _mapping(v, p, "one of " + ", ".join(AFTER_KINDS))
    if len(m) != 1:
        raise ScenarioError(
            p, f"after takes exactly one of {', '.join(AFTER_KINDS)}; got {list(m) or 'none'}"
        )
    ((kind, arg),) = m.items()
    kp = (*p, kind)
    if kind not in AFTER_KINDS:
        raise unknown_key(p, kind, AFTER_KINDS, "kind of after")
    if kind == "time":
        return AfterTime(parse_duration_ms(arg, kp))
    a = _mapping(arg, kp, f"arguments of after {kind}")
    if kind == "requests":
        _keys(a, kp, ("api", "count", *REQUEST_FILTERS), "key of after requests")
        api = _required(a, "api", kp, "after requests")
        _guard((*kp, "api"), lambda: check_api_names(api, "api"))
        count = _int(a.get("count", 1), (*kp, "count"), 1)
        return AfterRequests(
            api, count, tuple((k, _freeze(x)) for k, x in a.items() if k in REQUEST_FILTERS)
        )
    if kind == "event":
        ev = _required(a, "event", kp, "after event")
        return AfterEvent(
            _one_of(ev, EVENTS, (*kp, "event"), "cluster event"),
            tuple((k, _freeze(x)) for k, x in a.items() if k != "event"),
        )
    if kind in ("records", "produced", "consumed"):
        _keys(a, kp, ("topic", "count", "partition"), f"key of after {kind}")
        part = a.get("partition")
        cls: type[AfterRecords] | type[AfterProduced] | type[AfterConsumed] = (
            AfterRecords
            if kind == "records"
            else AfterProduced
            if kind == "produced"
            else AfterConsumed
        )
        return cls(
            _str(_required(a, "topic", kp, f"after {kind}"), (*kp, "topic")),
            _int(_required(a, "count", kp, f"after {kind}"), (*kp, "count"), 1),
            None if part is None else _int(part, (*kp, "partition")),
        )
    if kind == "commits":
        _keys(a, kp, ("group", "count"), "key of after commits")
        return AfterCommits(
            _str(_required(a, "group", kp, "after commits"), (*kp, "group")),
            _int(a.get("count", 1), (*kp, "count"), 1),
        )
    _keys(a, kp, ("group", "topic", "partition", "offset"), "key of after committed")
    return AfterCommitted(
        _str(_required(a, "group", kp, "after committed"), (*kp, "group")),
        _str(_required(a, "topic", kp, "after committed"), (*kp, "topic")),
        _int(_required(a, "partition", kp, "after committed"), (*kp, "partition")),
        _int(_required(a, "offset", kp, "after committed"), (*kp, "offset")),
    )


def step_from_dict(doc: Any, path: Path) -> Step:
    m = _mapping(doc, path, "a step: an optional at/after/when and one verb or fault")
    _keys(m, path, STEP_KEYS, "step key")
    acts = [k for k in m if k in VERBS or k == "fault"]
    if len(acts) != 1:
        raise ScenarioError(
            path,
            "a step has exactly one action (a verb or fault); "
            + (f"it has {', '.join(acts)}" if acts else "it has none"),
        )
    (act,) = acts
    action: Verb | Fault
    if act == "fault":
        action = fault_from_dict(m[act], (*path, "fault"))
    else:
        raw = m[act]
        if raw is None or raw is True:
            raw = {}
        action = Verb.checked(act, check_verb(act, raw, path))
    start = start_from_dict(m, path)
    name = _str(m["name"], (*path, "name")) if "name" in m else None
    timeout = (
        parse_duration_ms(m["timeout"], (*path, "timeout"))
        if "timeout" in m
        else DEFAULT_STEP_TIMEOUT_MS
    )
    return Step(action, start, name, timeout)


def expect_paths(doc: Any, path: Path = ("expect",)) -> list[Path]:
    """The path of each check :func:`from_dict` builds from ``expect:``, in its order."""
    if not isinstance(doc, Mapping):
        return []
    out: list[Path] = []
    for key, v in doc.items():
        p = (*path, key)
        if key in ("no_data_loss", "data_loss", "no_duplicates", "rules_fired"):
            out.append(p)
        else:
            out.extend(ip for ip, _ in _items(v, p))
    return out


def _expect_from(doc: Any, path: Path) -> tuple[Check, ...]:
    m = _mapping(doc, path, "checks: " + ", ".join(EXPECT_KEYS))
    _keys(m, path, EXPECT_KEYS, "check")
    out: list[Check] = []
    for key, v in m.items():
        p = (*path, key)
        if key == "no_data_loss":
            out.append(NoDataLoss(_topics_list(v, p)))
        elif key == "data_loss":
            out.append(DataLoss(_topics_list(v, p)))
        elif key == "no_duplicates":
            out.append(NoDuplicates(_topics_list(v, p)))
        elif key == "rules_fired":
            if v == "all" or v is True:
                out.append(RulesFired())
            else:
                out.append(RulesFired(_topics_list(v, p)))
        else:
            for ip, item in _items(v, p):
                out.append(_check_item(key, item, ip))
    return tuple(out)


def _check_item(key: str, item: Any, p: Path) -> Check:
    a = _mapping(item, p, f"arguments of {key}")

    def opt_int(k: str) -> int | None:
        return None if a.get(k) is None else _int(a[k], (*p, k))

    if key == "committed":
        _keys(a, p, ("group", "topic", "partition", "offset"), "key of committed")
        off = a.get("offset", "end")
        if off != "end":
            off = _int(off, (*p, "offset"))
        return Committed(
            _str(_required(a, "group", p, "committed"), (*p, "group")),
            _str(_required(a, "topic", p, "committed"), (*p, "topic")),
            off,
            opt_int("partition"),
        )
    if key == "group_state":
        _keys(a, p, ("group", "state", "members"), "key of group_state")
        return GroupState(
            _str(_required(a, "group", p, "group_state"), (*p, "group")),
            _one_of(a.get("state", "Stable"), GROUP_STATES, (*p, "state"), "group state"),
            opt_int("members"),
        )
    if key == "transaction_state":
        _keys(a, p, ("transactional_id", "state", "committed", "aborted"), "key")
        st = a.get("state")
        return TransactionState(
            _str(_required(a, "transactional_id", p, key), (*p, "transactional_id")),
            None if st is None else _one_of(st, TRANSACTION_STATES, (*p, "state"), "state"),
            opt_int("committed"),
            opt_int("aborted"),
        )
    if key == "records":
        _keys(a, p, ("topic", "count", "at_least", "at_most"), "key of records")
        return Records(
            _str(_required(a, "topic", p, "records"), (*p, "topic")),
            opt_int("count"),
            opt_int("at_least"),
            opt_int("at_most"),
        )
    _keys(a, p, ("api", "at_least", "at_most", *REQUEST_FILTERS), "key of traffic")
    api = _required(a, "api", p, "traffic")
    _guard((*p, "api"), lambda: check_api_names(api, "api"))
    if "with_error" in a:
        from mockkafka.faults.model import check_error

        _guard((*p, "with_error"), lambda: check_error(a["with_error"], "with_error"))
    return TrafficCount(
        api,
        _int(a.get("at_least", 1), (*p, "at_least")),
        opt_int("at_most"),
        tuple((k, _freeze(x)) for k, x in a.items() if k in REQUEST_FILTERS),
    )


# -- model -> document ----------------------------------------------------------------------


def _plain(v: Any) -> Any:
    if isinstance(v, tuple):
        if v and all(isinstance(x, tuple) and len(x) == 2 and isinstance(x[0], str) for x in v):
            return {k: _plain(x) for k, x in v}
        return [_plain(x) for x in v]
    return v


def fault_to_dict(f: Fault) -> dict[str, Any]:
    m = f.match
    out: dict[str, Any] = {}
    if f.name:
        out["name"] = f.name
    out["on"] = m.api[0] if len(m.api) == 1 else list(m.api)
    for k in FAULT_MATCH_KEYS[1:]:
        v = getattr(m, k)
        if v is None:
            continue
        out[k] = v[0] if isinstance(v, tuple) and len(v) == 1 and k != "versions" else _plain(v)
    t = f.trigger
    if t.probability is not None:
        out["probability"] = t.probability
        if t.seed is not None:
            out["seed"] = t.seed
    elif t.nth is not None:
        out["nth"] = t.nth
    elif t.times is None:
        out["every_time"] = True
    elif t.times == 1:
        out["once"] = True
    else:
        out["times"] = t.times
    if t.start_ms is not None:
        out["between"] = [format_duration(t.start_ms)] + (
            [format_duration(t.end_ms)] if t.end_ms is not None else []
        )
    if t.after_rule:
        out["after"] = t.after_rule
    if t.after_event:
        out["after_event"] = (
            {"event": t.after_event, **dict(t.event_filter)} if t.event_filter else t.after_event
        )
    for a in f.actions:
        key = type(a).NAME
        if key not in SCENARIO_ACTIONS:
            raise ConfigError(f"{a!r} holds a Python object; a scenario file cannot")
        args = {
            arg.name: getattr(a, arg.name)
            for arg in type(a).args()
            if arg.required or getattr(a, arg.name) != arg.default
        }
        short = _shorthand(key)
        if short is not None and list(args) == [short]:
            out[key] = args[short]
        else:
            out[key] = args or True
    return out


def start_to_dict(s: StartCondition) -> dict[str, Any]:
    if isinstance(s, At):
        return {"at": format_duration(s.ms)}
    if isinstance(s, AfterTime):
        return {"after": {"time": format_duration(s.ms)}}
    if isinstance(s, AfterRequests):
        return {"after": {"requests": {"api": s.api, "count": s.count, **_plain(s.filters or {})}}}
    if isinstance(s, AfterEvent):
        return {"after": {"event": {"event": s.event, **_plain(s.attrs or {})}}}
    if isinstance(s, AfterRecords | AfterProduced | AfterConsumed):
        d: dict[str, Any] = {"topic": s.topic, "count": s.count}
        if s.partition is not None:
            d["partition"] = s.partition
        kind = {AfterRecords: "records", AfterProduced: "produced", AfterConsumed: "consumed"}
        return {"after": {kind[type(s)]: d}}
    if isinstance(s, AfterCommits):
        return {"after": {"commits": {"group": s.group, "count": s.count}}}
    if isinstance(s, AfterCommitted):
        return {
            "after": {
                "committed": {
                    "group": s.group,
                    "topic": s.topic,
                    "partition": s.partition,
                    "offset": s.offset,
                }
            }
        }
    if isinstance(s, WhenGroup):
        w: dict[str, Any] = {"group": s.group, "state": s.state}
        if s.members is not None:
            w["members"] = s.members
        return {"when": w}
    return {"when": {"transactional_id": s.transactional_id, "state": s.state}}


def _fields_dict(obj: Any, skip: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        f.name: _plain(getattr(obj, f.name))
        for f in fields(obj)
        if f.name not in skip and getattr(obj, f.name) != f.default
    }


CHECK_KEYS: dict[type, str] = {
    NoDataLoss: "no_data_loss",
    DataLoss: "data_loss",
    NoDuplicates: "no_duplicates",
    Committed: "committed",
    GroupState: "group_state",
    TransactionState: "transaction_state",
    Records: "records",
    TrafficCount: "traffic",
    RulesFired: "rules_fired",
}


def _expect_to_dict(checks: tuple[Check, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for c in checks:
        key = CHECK_KEYS[type(c)]
        if isinstance(c, NoDataLoss | DataLoss | NoDuplicates):
            out[key] = list(c.topics)
        elif isinstance(c, RulesFired):
            out[key] = "all" if c.names is None else list(c.names)
        else:
            d = _fields_dict(c, ("filters",))
            if isinstance(c, Committed):
                d.setdefault("offset", c.offset)
            if isinstance(c, TrafficCount):
                d = {"api": c.api, **d, **_plain(c.filters or {})}
                d.setdefault("at_least", c.at_least)
            out.setdefault(key, []).append(d)
    return out


__all__ = [
    "EVENTS",
    "GROUP_STATES",
    "TRANSACTION_STATES",
    "VERBS",
    "AfterCommits",
    "AfterCommitted",
    "AfterConsumed",
    "AfterEvent",
    "AfterProduced",
    "AfterRecords",
    "AfterRequests",
    "AfterTime",
    "At",
    "Check",
    "ClusterSpec",
    "Committed",
    "DataLoss",
    "Fault",
    "GroupState",
    "NoDataLoss",
    "NoDuplicates",
    "Param",
    "Records",
    "RulesFired",
    "ScenarioError",
    "ScenarioParameter",
    "ScenarioPlan",
    "SeedSpec",
    "StartCondition",
    "Step",
    "TopicSpec",
    "TrafficCount",
    "TransactionState",
    "Verb",
    "WhenGroup",
    "WhenTransaction",
    "expect_paths",
    "fault_from_dict",
    "fault_to_dict",
    "step_from_dict",
]

"""``fault_plans()``: draw sequences of faults and cluster verbs, in the scenario vocabulary.

Theory of operation
-------------------
A plan is a tuple of :class:`mockkafka.scenario.model.Step` -- the model YAML scenarios load
into. Each step is drawn in the document form of a scenario step (``docs/vocabulary.md``):
``{"move_leader": {"topic": "orders", "partition": 0, "to": 2}}`` or
``{"fault": {"on": "Produce", "topic": "invoices", "error": "TOPIC_AUTHORIZATION_FAILED"}}``,
optionally started ``at`` a time or ``after`` some requests, and turned into the model by the
scenario's own ``step_from_dict`` (so a drawn step is checked as a file's step would be). A
plan therefore prints as valid Python, dumps as a scenario file, and runs through the same
verbs and fault rules a scenario uses.

The strategy draws steps from what the caller allows (APIs, errors, verbs, topics, groups,
transactional ids, brokers); hypothesis shrinks a failing plan by dropping steps, so a
failure ends as the shortest plan that still breaks the property.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import hypothesis.strategies as st
from hypothesis.errors import InvalidArgument

from mockkafka.faults.actions import SCENARIO_ACTIONS
from mockkafka.faults.coverage import action_kind
from mockkafka.faults.error_facts import (
    CLIENT_APIS,
    ERRORS_BY_API,
    REQUEST_LEVEL_ERRORS,
    as_kafka_errors,
    beyond_kafka,
    kafka_match,
    possible_errors,
)
from mockkafka.scenario.model import (
    FAULT_ACTION_KEYS,
    ClusterSpec,
    Scenario,
    Step,
    TopicSpec,
    Verb,
    step_from_dict,
)
from mockkafka.strategies._common import (
    check_apis,
    check_bool,
    check_choices,
    check_int,
    check_names,
    named,
)

#: Fault actions a plan can hold (the action keys of a ``fault:`` step, from the action
#: registry ``mockkafka/faults/actions/``).
FAULT_KINDS = FAULT_ACTION_KEYS
#: Cluster verbs a plan can hold (``docs/vocabulary.md``); each is drawn only where the
#: plan's resources let it mean something.
CLUSTER_VERBS = (
    "move_leader",
    "restart_broker",
    "set_isr",
    "trigger_rebalance",
    "move_coordinator",
    "coordinator_loading",
    "abort_transaction",
    "fence_producer",
    "delay_transaction_markers",
    "truncate_log",
    "delete_records",
)
VERBS = FAULT_KINDS + CLUSTER_VERBS
#: Left out unless ``verbs=`` names them: what even a correct client cannot survive without
#: losing acknowledged data or hanging (hangs, corruption, fencing, truncation, retention,
#: markers held back).
RISKY_VERBS = (
    *(n for n, c in SCENARIO_ACTIONS.items() if c.RISKY),
    "fence_producer",
    "delay_transaction_markers",
    "truncate_log",
    "delete_records",
)
#: Drawn unless ``verbs=`` says otherwise.
DEFAULT_VERBS = tuple(v for v in VERBS if v not in RISKY_VERBS)
_GROUP_APIS = ("OffsetCommit", "OffsetFetch", "JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup")
_TOPIC_APIS = ("Produce", "Fetch", "ListOffsets", "Metadata", "OffsetForLeaderEpoch")


@dataclass(frozen=True, slots=True)
class FaultPlan:
    """A drawn sequence of scenario steps, with the cluster and topics they assume.

    ``steps`` are :class:`mockkafka.scenario.model.Step` -- a :class:`Verb` or a
    :class:`Fault`, each with an optional start condition (:class:`At`,
    :class:`AfterRequests`) -- the very objects a YAML scenario loads into. The repr is valid
    Python once ``from mockkafka.scenario.model import *``, ``from mockkafka.faults.model
    import *`` and ``from mockkafka.strategies import FaultPlan`` are in scope; paste it into
    a regression test. :meth:`to_yaml` writes it as a scenario file (save it under
    ``scenarios/``), :meth:`from_yaml` / :meth:`from_scenario` read one back, :meth:`apply`
    runs it against a cluster.
    """

    steps: tuple[Step, ...] = ()
    brokers: int = 1
    topics: tuple[tuple[str, int], ...] = ()

    def __repr__(self) -> str:
        parts = [f"steps={self.steps!r}"]
        if self.brokers != 1:
            parts.append(f"brokers={self.brokers!r}")
        if self.topics:
            parts.append(f"topics={self.topics!r}")
        return f"FaultPlan({', '.join(parts)})"

    def __len__(self) -> int:
        return len(self.steps)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """Hypothesis prints a falsifying plan with this: the compact, valid-Python repr."""
        printer.text(repr(self))

    @property
    def verbs(self) -> tuple[str, ...]:
        """The verb of each step, in order: a cluster verb name or a fault action
        (``"error"``, ``"delay"``, ...)."""
        return tuple(step_verb(s) for s in self.steps)

    def to_scenario(self, *, name: str = "fuzzed") -> Scenario:
        """This plan as a :class:`~mockkafka.scenario.model.Scenario` (cluster, topics,
        steps; no expectations: the property test is the check)."""
        return Scenario(
            name=name,
            description="a fault plan drawn by mockkafka.strategies.fault_plans",
            cluster=ClusterSpec(brokers=self.brokers),
            topics=tuple(
                TopicSpec(t, partitions=n, replication_factor=self.brokers) for t, n in self.topics
            ),
            steps=self.steps,
        )

    def to_yaml(self, *, name: str = "fuzzed") -> str:
        """The plan as a scenario file, ready to save under ``scenarios/``."""
        return self.to_scenario(name=name).to_yaml()

    @classmethod
    def from_scenario(cls, scenario: Scenario) -> FaultPlan:
        return cls(
            steps=scenario.steps,
            brokers=scenario.cluster.brokers,
            topics=tuple((t.topic, t.partitions) for t in scenario.topics),
        )

    @classmethod
    def from_yaml(cls, text: str, *, file: str = "<fault plan>") -> FaultPlan:
        """Read a plan written by :meth:`to_yaml` (or any scenario file); a mistake raises
        :class:`~mockkafka.scenario.model.ScenarioError` naming the line and field."""
        from mockkafka.scenario.model import load_text

        return cls.from_scenario(load_text(text, file=file))

    def apply(self, cluster: Any, *, timeout: float | None = 30.0) -> None:
        """Play the steps on ``cluster`` (a running :class:`mockkafka.Cluster`) through the
        scenario runner and return once every step ran: faults are installed as rules (they
        then wait for their request), verbs run, ``At``/``AfterRequests`` steps wait for
        their condition. Raises AssertionError naming a step that could not run. Missing
        topics of the plan are created; existing ones are kept.
        """
        self.to_scenario().run(cluster, timeout=timeout)

    def start(self, cluster: Any) -> Any:
        """Play the steps alongside the test (a timed plan while the client works); returns
        the scenario's thread: ``.wait(timeout)``, ``.stop()``, ``.check()``. Steps without a
        start condition at the head of the plan are in place when this returns."""
        return self.to_scenario().start(cluster)


def step_verb(step: Step) -> str:
    """The verb of one step: a cluster verb name, or the action of a fault step."""
    action = step.action
    if isinstance(action, Verb):
        return action.name
    return action_kind(action.actions[0])


def apply_step(cluster: Any, step: Step) -> None:
    """Apply one plan step to a running cluster now, ignoring its start condition (a fault
    becomes a rule; a verb runs), through the scenario runner."""
    FaultPlan(steps=(replace(step, start=None),)).apply(cluster)


def _print_with_repr(obj: Any, printer: Any, cycle: bool) -> None:
    printer.text(repr(obj))


def _register_printers() -> None:
    """Make hypothesis print scenario steps (rule arguments of a state machine) with their
    compact repr instead of every dataclass field."""
    try:
        from hypothesis.vendor.pretty import for_type_by_name
    except ImportError:  # pragma: no cover - an older or newer hypothesis: fields it is
        return
    for name in ("Step", "Verb", "Fault", "At", "AfterRequests"):
        for_type_by_name("mockkafka.scenario.model", name, _print_with_repr)


_register_printers()


# -- the strategy -----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Space:
    apis: tuple[str, ...]
    errors: tuple[str, ...] | None
    verbs: tuple[str, ...]
    topics: tuple[tuple[str, int], ...]
    groups: tuple[str, ...]
    transactional_ids: tuple[str, ...]
    brokers: int
    max_ms: int


def _check_topics(value: Any) -> tuple[tuple[str, int], ...]:
    if isinstance(value, Mapping):
        items = tuple(value.items())
        for name, n in items:
            check_names([name], "topics")
            check_int(n, f"topics[{name!r}]", minimum=1)
        if not items:
            raise InvalidArgument("topics must name at least one topic")
        return items
    return tuple((t, 1) for t in check_names(value, "topics"))


def fault_plans(
    *,
    topics: Sequence[str] | Mapping[str, int] = ("orders",),
    groups: Sequence[str] = (),
    transactional_ids: Sequence[str] = (),
    brokers: int = 1,
    apis: Sequence[str] | None = None,
    errors: Sequence[str] | None = None,
    verbs: Sequence[str] | None = None,
    min_steps: int = 0,
    max_steps: int = 3,
    max_ms: int = 200,
    timed: bool = True,
) -> st.SearchStrategy[FaultPlan]:
    """Fault plans: up to ``max_steps`` faults and cluster verbs on the named resources.

    ``topics``: names (one partition each) or ``{name: partitions}``; ``groups``,
    ``transactional_ids``: ids the client under test uses (verbs and faults on groups or
    transactions are drawn only when given); ``brokers``: the cluster's broker count (node
    ids 1..n; verbs that need another broker are drawn only with 2 or more). ``apis``: API
    names fault steps match (default: what clients send); ``errors``: error names allowed
    (default: the codes a real broker could answer a correct client's request there, with
    the state made consistent -- "as Kafka", see
    :func:`mockkafka.faults.error_facts.beyond_kafka`; a code beyond Kafka, such as
    DUPLICATE_SEQUENCE_NUMBER (Kafka 4 answers a duplicate batch NONE),
    ``OUT_OF_ORDER_SEQUENCE_NUMBER``, an authorization failure without an authorizer, or
    :data:`STATIC_MEMBER_ERRORS`, is drawn only when named here). An as-Kafka error step
    matches only the versions that carry the code and the request context Kafka needs to
    answer it (``context: fetch_session`` for FETCH_SESSION_ID_NOT_FOUND, ``acks_all`` for
    NOT_ENOUGH_REPLICAS, ...: :func:`mockkafka.faults.error_facts.kafka_match`);
    ``verbs``: fault actions and cluster verbs allowed (default :data:`DEFAULT_VERBS`; every
    name is in :data:`VERBS`). ``max_ms``: bound of delays,
    throttles and step times; ``timed=False`` draws no start conditions (every step applies at once).

    Every fault fires a bounded number of times (once, ``times`` or ``nth`` up to 3), so a
    correct client always gets through. A plan shrinks towards fewer, earlier, simpler steps.
    """
    tps = _check_topics(topics)
    grps = tuple(groups) and check_names(groups, "groups")
    tids = tuple(transactional_ids) and check_names(transactional_ids, "transactional_ids")
    check_int(brokers, "brokers", minimum=1)
    api_names = check_apis(apis, CLIENT_APIS)
    errs: tuple[str, ...] | None = None
    if errors is not None:
        known = sorted({n for a in ERRORS_BY_API for n in possible_errors(a, None)})
        errs = check_choices(errors, "errors", known)
    vbs = DEFAULT_VERBS if verbs is None else check_choices(verbs, "verbs", VERBS)
    check_int(min_steps, "min_steps")
    check_int(max_steps, "max_steps", minimum=max(min_steps, 1))
    check_int(max_ms, "max_ms", minimum=1)
    check_bool(timed, "timed")
    space = _Space(api_names, errs, vbs, tps, grps, tids, brokers, max_ms if timed else 0)
    choices = _step_kinds(space)
    if not choices:
        raise InvalidArgument(
            f"no step can be drawn from verbs={list(vbs)} with apis={list(api_names)}, "
            f"groups={list(grps)}, transactional_ids={list(tids)}, brokers={brokers}"
        )
    return _fault_plans(
        topics=topics,
        groups=groups,
        transactional_ids=transactional_ids,
        brokers=brokers,
        apis=apis,
        errors=errors,
        verbs=verbs,
        min_steps=min_steps,
        max_steps=max_steps,
        max_ms=max_ms,
        timed=timed,
    )


def _space_of(kwargs: dict[str, Any]) -> _Space:
    apis = kwargs["apis"]
    api_names = check_apis(apis, CLIENT_APIS)
    errors = kwargs["errors"]
    errs = None if errors is None else ((errors,) if isinstance(errors, str) else tuple(errors))
    verbs = kwargs["verbs"]
    vbs = DEFAULT_VERBS if verbs is None else ((verbs,) if isinstance(verbs, str) else tuple(verbs))
    return _Space(
        api_names,
        errs,
        vbs,
        _check_topics(kwargs["topics"]),
        tuple(kwargs["groups"]),
        tuple(kwargs["transactional_ids"]),
        kwargs["brokers"],
        kwargs["max_ms"] if kwargs["timed"] else 0,
    )


#: Errors Kafka sends only to static group members (``group.instance.id``): a client without
#: one never meets them, and librdkafka treats them as fatal (its ``Consumer.close()`` can then
#: block). Drawn only when named in ``errors=``.
STATIC_MEMBER_ERRORS = frozenset({"FENCED_INSTANCE_ID", "UNRELEASED_INSTANCE_ID"})


def _error_choices(space: _Space, api: str) -> list[str]:
    if api not in ERRORS_BY_API:
        return []
    if space.errors is not None:
        return [n for n in possible_errors(api, None) if n in space.errors]
    # by default only what a real broker could answer there (error_facts.beyond_kafka)
    return list(as_kafka_errors(api))


def _step_kinds(space: _Space) -> list[str]:
    """Which verbs can make a step in this space."""
    out = []
    for v in space.verbs:
        if v in FAULT_KINDS:
            ok = bool(_fault_apis(space, v))
        elif v in ("move_leader", "set_isr"):
            ok = space.brokers > 1
        elif v == "move_coordinator":
            ok = space.brokers > 1 and bool(space.groups or space.transactional_ids)
        elif v in ("trigger_rebalance", "coordinator_loading"):
            ok = bool(space.groups)
        elif v in ("abort_transaction", "fence_producer", "delay_transaction_markers"):
            ok = bool(space.transactional_ids)
        else:
            ok = True
        if ok:
            out.append(v)
    return out


@st.composite
@named("fault_plans")
def _fault_plans(draw: st.DrawFn, /, **kwargs: Any) -> FaultPlan:
    space = _space_of(kwargs)
    kinds = _step_kinds(space)
    docs = draw(
        st.lists(
            _timed_step(space, kinds), min_size=kwargs["min_steps"], max_size=kwargs["max_steps"]
        )
    )
    steps = tuple(step_from_dict(doc, ("steps", i)) for i, doc in enumerate(docs))
    return FaultPlan(steps, space.brokers, space.topics)


@st.composite
def _timed_step(draw: st.DrawFn, space: _Space, kinds: list[str]) -> dict[str, Any]:
    """One step in document form with its start condition. Each step's time is drawn on its
    own (an ``at`` already past when the step comes up applies at once), so hypothesis can
    delete any step while shrinking."""
    step = draw(_step(space, kinds))
    needs = _needs_existing(step)
    start = draw(st.sampled_from(_STARTS if space.max_ms else ("now",)))
    if needs is not None and space.max_ms:
        return {"when": needs, **step}  # the group or transaction must exist first
    if start == "at":
        at = draw(st.integers(min_value=1, max_value=space.max_ms))
        return {"at": f"{at}ms", **step}
    if start == "after_requests":
        api = draw(st.sampled_from(space.apis))
        count = draw(st.integers(1, 3))
        return {"after": {"requests": {"api": api, "count": count}}, **step}
    return step


# How a step starts: at once (after the previous one), at a time, or after requests.
_STARTS = ("now", "at", "after_requests")
#: Verbs that refuse a group or transactional id the cluster does not know yet.
NEEDS_GROUP = ("trigger_rebalance",)
NEEDS_TRANSACTION = ("abort_transaction", "fence_producer")
#: Verbs whose offset argument must lie in the partition's log (Kafka: OFFSET_OUT_OF_RANGE).
OFFSET_VERBS = {"truncate_log": "to_offset", "delete_records": "before_offset"}


def _needs_existing(step: dict[str, Any]) -> dict[str, str] | None:
    """The ``when:`` condition a verb step needs to mean something, if any."""
    for verb in NEEDS_GROUP:
        if verb in step:
            return {"group": step[verb]["group"], "state": "Stable"}
    for verb in NEEDS_TRANSACTION:
        if verb in step:
            return {"transactional_id": step[verb]["transactional_id"], "state": "Ongoing"}
    return None


def missing_resource(cluster: Any, step: Step) -> str | None:
    """Why ``cluster`` would refuse a verb step now, as Kafka would, else None: a group or
    transactional id it does not know yet, or an offset outside the partition's log (a
    ``truncate_log`` or ``delete_records`` offset drawn before the records were written)."""
    action = step.action
    if not isinstance(action, Verb):
        return None
    kw = action.kwargs
    if action.name in NEEDS_GROUP and kw["group"] not in cluster.groups():
        return f"no group {kw['group']!r} yet"
    if action.name in NEEDS_TRANSACTION:
        known = {t.transactional_id for t in cluster.transactions()}
        if kw["transactional_id"] not in known:
            return f"no transactional id {kw['transactional_id']!r} yet"
    if action.name in OFFSET_VERBS and kw["partition"] != "all":
        arg = OFFSET_VERBS[action.name]
        p = cluster.topic(kw["topic"]).partition(kw["partition"])
        if kw[arg] > p.high_watermark:
            return f"{arg}={kw[arg]} is beyond the high watermark {p.high_watermark}"
        if action.name == "truncate_log" and kw[arg] < p.log_start_offset:
            return f"{arg}={kw[arg]} is below the log start offset {p.log_start_offset}"
    return None


def _ms(space: _Space) -> st.SearchStrategy[int]:
    return st.integers(min_value=1, max_value=max(space.max_ms, 50))


@st.composite
def _step(draw: st.DrawFn, space: _Space, kinds: list[str]) -> dict[str, Any]:
    kind = draw(st.sampled_from(kinds))
    topic, partitions = draw(st.sampled_from(space.topics))
    partition = draw(st.integers(0, partitions - 1))
    broker = draw(st.integers(1, space.brokers))
    if kind in FAULT_KINDS:
        return {"fault": draw(_fault(space, kind))}
    if kind == "move_leader":
        # "next": never the broker that already leads (ELECTION_NOT_NEEDED, as in Kafka)
        return {kind: {"topic": topic, "partition": partition, "to": "next"}}
    if kind == "set_isr":
        isr = draw(st.sets(st.integers(1, space.brokers), min_size=1))
        return {kind: {"topic": topic, "partition": partition, "to": sorted(isr)}}
    if kind == "restart_broker":
        return {kind: {"broker": broker}}
    if kind == "truncate_log":
        return {
            kind: {"topic": topic, "partition": partition, "to_offset": draw(st.integers(0, 5))}
        }
    if kind == "delete_records":
        return {
            kind: {"topic": topic, "partition": partition, "before_offset": draw(st.integers(0, 5))}
        }
    if kind in ("trigger_rebalance",):
        return {kind: {"group": draw(st.sampled_from(space.groups))}}
    if kind == "coordinator_loading":
        return {kind: {"group": draw(st.sampled_from(space.groups)), "ms": draw(_ms(space))}}
    if kind == "move_coordinator":
        owners = [("group", g) for g in space.groups] + [
            ("transactional_id", t) for t in space.transactional_ids
        ]
        key, value = draw(st.sampled_from(owners))
        return {kind: {key: value, "to": "next"}}
    if kind == "delay_transaction_markers":
        return {kind: {"ms": draw(_ms(space))}}
    return {kind: {"transactional_id": draw(st.sampled_from(space.transactional_ids))}}


def _fault_apis(space: _Space, kind: str) -> list[str]:
    """The APIs a fault of ``kind`` can be drawn on (the action's ``APIS``; errors where
    the error table has a choice)."""
    if kind == "error":
        return [a for a in space.apis if _error_choices(space, a)]
    can = SCENARIO_ACTIONS[kind].APIS
    return [a for a in space.apis if can is None or a in can]


def _arg_values(draw: st.DrawFn, space: _Space, schema: dict[str, Any] | None) -> Any:
    """A value for an action argument, drawn from its JSON Schema (``arg(schema=...)``)."""
    schema = schema or {}
    if "enum" in schema:
        return draw(st.sampled_from(schema["enum"]))
    if schema.get("type") == "boolean":
        return draw(st.booleans())
    if schema.get("type") == "integer":
        return draw(_ms(space))
    raise InvalidArgument(f"fault_plans cannot draw a value for {schema!r}")


@st.composite
def _fault(draw: st.DrawFn, space: _Space, kind: str) -> dict[str, Any]:
    apis = _fault_apis(space, kind)
    api = draw(st.sampled_from(apis))
    fault: dict[str, Any] = {"on": api}
    if api in _TOPIC_APIS and draw(st.booleans()):
        topic, _ = draw(st.sampled_from(space.topics))
        fault["topic"] = topic
    if api in _GROUP_APIS and space.groups and draw(st.booleans()):
        fault["group"] = draw(st.sampled_from(space.groups))
    if space.brokers > 1 and draw(st.booleans()):
        fault["broker"] = draw(st.integers(1, space.brokers))
    trigger = draw(st.sampled_from(("once", "times", "nth")))
    if trigger != "once":
        fault[trigger] = draw(st.integers(2, 3))
    if kind == "error":
        error = draw(st.sampled_from(_error_choices(space, api)))
        if beyond_kafka(api, error) is None:
            # only at the versions and in the request context Kafka could answer it
            fault.update(kafka_match(api, error))
        if (api, error) in REQUEST_LEVEL_ERRORS:
            fault.pop("topic", None)  # Kafka answers it for the whole request
        fault["error"] = error
        return fault
    # Required arguments always, optional ones the action lets fuzzing draw only when
    # they differ from their default (so a plan prints as the shortest YAML).
    args: dict[str, Any] = {}
    for a in SCENARIO_ACTIONS[kind].args():
        if a.required or a.fuzz:
            value = _arg_values(draw, space, a.schema)
            if a.required or value != a.default:
                args[a.name] = value
    fault[kind] = args or True
    return fault

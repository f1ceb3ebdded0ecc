"""The scenario: a failure story as frozen data, and where it is loaded from and played.

:class:`Scenario` is the object a test holds: ``Scenario.load("leader-failover")`` reads and
checks a file (:mod:`~mockkafka.scenario.loader`), ``.run(cluster)`` plays it
(:mod:`~mockkafka.scenario.runner`). Its parts -- cluster and topic specs, seed data, steps
with their start conditions, checks -- are the frozen data of :mod:`~mockkafka.scenario.plan`,
re-exported here, so ``from mockkafka.scenario.model import *`` is everything a scenario's
``repr`` needs (with ``from mockkafka.faults.model import *``).

This module is the top of the scenario package: it imports the loader and the runner (when
a scenario is loaded or played: they import yaml and trio), and nothing in the package imports
it back; the runner reads a scenario through :class:`~mockkafka.scenario.plan.ScenarioPlan`.
:func:`from_dict` turns a parsed YAML document into a :class:`Scenario`, checking every value;
a mistake raises :class:`ScenarioError` carrying the path of the field, which the loader turns
into file, line and column.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mockkafka.scenario.plan import (
    CHECK_KEYS,
    DEFAULT_STEP_TIMEOUT_MS,
    EVENTS,
    FAULT_ACTION_KEYS,
    GROUP_STATES,
    STR_MAP,
    TRANSACTION_STATES,
    VERBS,
    AfterCommits,
    AfterCommitted,
    AfterConsumed,
    AfterEvent,
    AfterProduced,
    AfterRecords,
    AfterRequests,
    AfterTime,
    At,
    Check,
    ClusterSpec,
    Committed,
    DataLoss,
    Fault,
    GroupState,
    NoDataLoss,
    NoDuplicates,
    Param,
    Path,
    Records,
    RulesFired,
    ScenarioError,
    ScenarioParameter,
    SeedSpec,
    StartCondition,
    Step,
    TopicSpec,
    TrafficCount,
    TransactionState,
    Verb,
    WhenGroup,
    WhenTransaction,
    _check_kind,
    _Data,
    _expect_from,
    _expect_to_dict,
    _fields_dict,
    _freeze,
    _int,
    _keys,
    _mapping,
    _plain,
    _required,
    _str,
    combine,
    did_you_mean,
    expect_paths,
    fault_from_dict,
    fault_to_dict,
    format_duration,
    format_path,
    parse_duration_ms,
    start_from_dict,
    start_to_dict,
    step_from_dict,
    unknown_key,
)

if TYPE_CHECKING:
    import os

    from mockkafka._api.cluster import AsyncCluster, Cluster
    from mockkafka._api.proxy import Proxy
    from mockkafka.scenario.runner import ScenarioThread


@dataclass(frozen=True, slots=True, repr=False)
class Scenario(_Data):
    """A failure story: cluster, topics, seed data, steps and expectations.

    Load one with :meth:`mockkafka.Scenario.load` (a file or a library name); run it with
    ``.run(cluster)`` / ``await .run_async(cluster)`` or ``.start(cluster)``.
    """

    name: str
    description: str = ""
    cluster: ClusterSpec = ClusterSpec()  # noqa: RUF009 - a frozen dataclass
    topics: tuple[TopicSpec, ...] = ()
    seed: tuple[SeedSpec, ...] = ()
    random_seed: int = 0
    steps: tuple[Step, ...] = ()
    expect: tuple[Check, ...] = ()
    source: str | None = field(default=None, compare=False)
    parameters: tuple[ScenarioParameter, ...] = ()
    #: For each check of ``expect``, the parameters its YAML used (for failure messages).
    check_parameters: tuple[tuple[str, ...], ...] = field(default=(), compare=False)

    def to_dict(self) -> dict[str, Any]:
        """The document form (what :func:`from_dict` reads)."""
        return to_dict(self)

    def to_yaml(self) -> str:
        """The YAML file form of this scenario."""
        import yaml

        return str(yaml.safe_dump(self.to_dict(), sort_keys=False, width=100))

    def to_python(self) -> str:
        """Python source that rebuilds this scenario (``SCENARIO = Scenario(...)``)."""
        return (
            "from mockkafka.faults.model import *  # noqa: F403\n"
            "from mockkafka.scenario.model import *  # noqa: F403\n\n"
            f"SCENARIO = {self!r}\n"
        )

    @property
    def faults(self) -> tuple[Fault, ...]:
        return tuple(s.action for s in self.steps if isinstance(s.action, Fault))

    # -- loading and running (the runner imports trio and faker only when used) ------------

    @staticmethod
    def load(
        path_or_name: str | os.PathLike[str],
        /,
        *,
        skip_expect: Iterable[str] = (),
        **parameters: Any,
    ) -> Scenario:
        """A scenario file (``path/to/story.yaml``) or a library name (``"leader-failover"``;
        ``mockkafka scenarios`` lists them), its parameters bound to your app's names
        (``topic="payments", group="ledger"``; ``mockkafka scenarios --show NAME`` lists
        them). ``skip_expect`` leaves out checks of ``expect:`` by key (``["committed"]``
        when the test runs no consumer group). Raises ScenarioError naming file:line:column,
        or naming an unknown parameter with a did-you-mean."""
        return load(path_or_name, skip_expect=skip_expect, **parameters)

    @staticmethod
    def from_yaml(
        text: str,
        *,
        file: str = "<scenario>",
        skip_expect: Iterable[str] = (),
        **parameters: Any,
    ) -> Scenario:
        """A scenario from YAML text (checked and bound as :meth:`load` does a file)."""
        return load_text(text, file=file, skip_expect=skip_expect, **parameters)

    def check_runs_on(self, target: Any) -> None:
        """Raise ScenarioError naming every step and check ``target`` cannot run, with its
        file and line and what to use instead (a :class:`~mockkafka.Proxy` cannot run the
        steps that need the in-process fake); nothing when it can run them all.
        ``start`` and ``run`` call it before anything starts."""
        from mockkafka.scenario.on_proxy import check_runs_on

        check_runs_on(self, target)

    def start(self, cluster: Cluster | Proxy) -> ScenarioThread:
        """Set up topics and seed data, then play the steps in the background on a running
        :class:`~mockkafka.Cluster` (or :class:`~mockkafka.Proxy`); returns a handle with ``wait()``, ``stop()`` and
        ``check()`` (AssertionError listing every failed expectation)."""
        from mockkafka.scenario.runner import start

        return start(self, cluster)

    def run(self, cluster: Cluster | Proxy, *, timeout: float | None = None) -> None:
        """Set up, play every step (each waits at most its ``timeout``), check ``expect:``;
        raises AssertionError listing every failed expectation."""
        from mockkafka.scenario.runner import run

        run(self, cluster, timeout=timeout)

    async def run_async(self, cluster: Cluster | AsyncCluster) -> None:
        """:meth:`run` for async code: an AsyncCluster (trio) is played on its own loop; a
        threaded Cluster from trio or asyncio is played without blocking the event loop."""
        from mockkafka.scenario.runner import run_async

        await run_async(self, cluster)


TOP_KEYS = (
    "name", "description", "parameters", "cluster", "topics", "seed", "random_seed", "steps",
    "expect",
)  # fmt: skip


def from_dict(
    doc: Any,
    *,
    source: str | None = None,
    parameters: tuple[ScenarioParameter, ...] | None = None,
    check_parameters: tuple[tuple[str, ...], ...] = (),
) -> Scenario:
    """A parsed scenario document -> :class:`Scenario`; raises :class:`ScenarioError` with
    the path of the first wrong field, listing every other mistake after it."""
    problems: list[ScenarioError] = []
    scenario = read_dict(
        doc,
        problems,
        source=source,
        parameters=parameters,
        check_parameters=check_parameters,
    )
    if problems:
        raise combine(problems)
    return scenario


class _Collect:
    """``with collect:`` records a ScenarioError and goes on with the next part."""

    def __init__(self, problems: list[ScenarioError]) -> None:
        self.problems = problems
        self.failed = False

    def __enter__(self) -> None:
        self.failed = False

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> bool:
        if isinstance(exc, ScenarioError):
            self.problems.append(exc)
            self.failed = True
            return True
        return False


def read_dict(
    doc: Any,
    problems: list[ScenarioError],
    *,
    source: str | None = None,
    parameters: tuple[ScenarioParameter, ...] | None = None,
    check_parameters: tuple[tuple[str, ...], ...] = (),
) -> Scenario:
    """:func:`from_dict` reporting into ``problems`` every mistake it finds (each part of
    the file is read on its own, then the steps are checked against the topics and brokers
    they will meet: :mod:`~mockkafka.scenario.timeline`); the Scenario holds the parts
    that could be read."""
    collect = _Collect(problems)
    m = _mapping(doc, (), "a scenario: " + ", ".join(TOP_KEYS))
    _keys(m, (), TOP_KEYS, "top-level key")
    name = ""
    with collect:
        name = _str(_required(m, "name", (), "a scenario"), ("name",))
    description = m.get("description", "")
    if not isinstance(description, str):
        problems.append(ScenarioError(("description",), f"expected a string, got {description!r}"))
        description = ""
    cluster = ClusterSpec()
    with collect:
        cl = _mapping(m.get("cluster", {}), ("cluster",), "brokers and cluster options")
        brokers = _int(cl.get("brokers", 1), ("cluster", "brokers"), 1)
        from mockkafka.cluster.config import ClusterConfig

        opts = tuple(sorted(ClusterConfig.__dataclass_fields__))
        options = []
        for k, v in cl.items():
            if k == "brokers":
                continue
            if k not in opts:
                raise unknown_key(("cluster",), k, ("brokers", *opts), "cluster option")
            options.append((str(k), _freeze(v)))
        cluster = ClusterSpec(brokers, tuple(options))
    brokers = cluster.brokers
    topics: list[TopicSpec] = []
    tm: Any = {}
    with collect:
        tm = _mapping(m.get("topics", {}), ("topics",), "topic name -> {partitions, ...}")
    for tname, spec in tm.items():
        with collect:
            tp = ("topics", str(tname))
            spec = (
                {} if spec is None else _mapping(spec, tp, "partitions, replication_factor, config")
            )
            _keys(spec, tp, ("partitions", "replication_factor", "config"), "topic key")
            rf = _int(spec.get("replication_factor", 1), (*tp, "replication_factor"), 1)
            if rf > brokers:
                raise ScenarioError(
                    (*tp, "replication_factor"),
                    f"replication_factor {rf} needs at least {rf} brokers; "
                    f"cluster.brokers is {brokers}",
                )
            topics.append(
                TopicSpec(
                    str(tname),
                    _int(spec.get("partitions", 1), (*tp, "partitions"), 1),
                    rf,
                    _check_kind(STR_MAP, spec.get("config", {}), (*tp, "config")),
                )
            )
    known_topics = {t.topic for t in topics} | {str(t) for t in tm}
    seeds: list[SeedSpec] = []
    sm: Any = {}
    with collect:
        sm = _mapping(m.get("seed", {}), ("seed",), "topic name -> {count, key, value}")
    for tname, spec in sm.items():
        with collect:
            sp = ("seed", str(tname))
            if tname not in known_topics:
                raise ScenarioError(
                    sp,
                    f"seed topic {tname!r} is not under topics"
                    f"{did_you_mean(tname, known_topics)}; "
                    f"topics: {', '.join(sorted(known_topics)) or 'none'}",
                )
            spec = _mapping(spec, sp, "count, key, value, partition")
            _keys(spec, sp, ("count", "key", "value", "partition"), "seed key")
            part = spec.get("partition")
            seeds.append(
                SeedSpec(
                    str(tname),
                    _int(_required(spec, "count", sp, "a seed"), (*sp, "count")),
                    _freeze(spec.get("key")),
                    _freeze(spec.get("value", "{{ index }}")),
                    None if part is None else _int(part, (*sp, "partition")),
                )
            )
    random_seed = 0
    with collect:
        random_seed = _int(m.get("random_seed", 0), ("random_seed",))
    if parameters is None:
        parameters = ()
        with collect:
            from mockkafka.scenario.params import declared

            parameters = declared(m.get("parameters"))
    raw_steps = m.get("steps", [])
    if not isinstance(raw_steps, list):
        problems.append(ScenarioError(("steps",), f"expected a list of steps, got {raw_steps!r}"))
        raw_steps = []
    read: list[tuple[int, Step]] = []
    unsure: set[str] = set()
    for i, s in enumerate(raw_steps):
        with collect:
            read.append((i, step_from_dict(s, ("steps", i))))
        created = s.get("create_topic") if isinstance(s, dict) else None
        if collect.failed and isinstance(created, dict) and isinstance(created.get("topic"), str):
            unsure.add(created["topic"])  # not reported missing in the steps after it
    steps = tuple(s for _, s in read)
    from mockkafka.scenario.timeline import timeline_problems

    problems += timeline_problems(cluster, topics, read, unsure=unsure)
    names = [s.action.name for s in steps if isinstance(s.action, Fault) and s.action.name]
    expect: tuple[Check, ...] = ()
    with collect:
        expect = _expect_from(m.get("expect", {}), ("expect",))
    for c in expect:
        if isinstance(c, RulesFired) and c.names:
            for n in c.names:
                if n not in names:
                    problems.append(
                        ScenarioError(
                            ("expect", "rules_fired"),
                            f"no fault is named {n!r}{did_you_mean(n, names)}; "
                            f"named faults: {', '.join(names) or 'none'}",
                        )
                    )
    return Scenario(
        name, description, cluster, tuple(topics), tuple(seeds), random_seed, steps, expect,
        source, parameters, check_parameters,
    )  # fmt: skip


def to_dict(s: Scenario) -> dict[str, Any]:
    """:class:`Scenario` -> the document :func:`from_dict` reads."""
    out: dict[str, Any] = {"name": s.name}
    if s.description:
        out["description"] = s.description
    if s.parameters:
        # the bound values become the defaults: the document is the story as it was played
        out["parameters"] = {
            p.name: {
                "default": p.value,
                **({"description": p.description} if p.description else {}),
            }
            for p in s.parameters
        }
    out["cluster"] = {"brokers": s.cluster.brokers, **_plain(s.cluster.options or {})}
    if s.topics:
        out["topics"] = {t.topic: _fields_dict(t, ("topic",)) for t in s.topics}
    if s.seed:
        out["seed"] = {
            x.topic: {"count": x.count, **_fields_dict(x, ("topic", "count"))} for x in s.seed
        }
    if s.random_seed:
        out["random_seed"] = s.random_seed
    steps = []
    for st in s.steps:
        d: dict[str, Any] = {}
        if st.name:
            d["name"] = st.name
        if st.start is not None:
            d.update(start_to_dict(st.start))
        if st.timeout_ms != DEFAULT_STEP_TIMEOUT_MS:
            d["timeout"] = format_duration(st.timeout_ms)
        if isinstance(st.action, Fault):
            d["fault"] = fault_to_dict(st.action)
        else:
            d[st.action.name] = st.action.kwargs
        steps.append(d)
    if steps:
        out["steps"] = steps
    if s.expect:
        out["expect"] = _expect_to_dict(s.expect)
    return out


# -- files and text -> Scenario --------------------------------------------------------------


def load_text(
    text: str,
    *,
    file: str = "<scenario>",
    skip_expect: Iterable[str] = (),
    **parameters: Any,
) -> Scenario:
    """Parse and check scenario YAML, its parameters bound to ``parameters`` and the checks
    of ``skip_expect`` left out; raises :class:`ScenarioError` naming file:line:col."""
    from mockkafka.scenario import loader  # reads YAML: imported when a scenario is loaded

    checked, errors = loader.read_text(
        text, file=file, skip_expect=skip_expect, parameters=parameters
    )
    problems: list[ScenarioError] = []
    scenario: Scenario | None = None
    try:
        scenario = read_dict(
            checked.doc,
            problems,
            source=file,
            parameters=checked.parameters,
            check_parameters=checked.check_parameters,
        )
    except ScenarioError as exc:
        problems.append(exc)
    except Exception:
        if not errors:
            raise
        # a document the schema refused may not even have the shape read_dict walks
    if scenario is not None:
        from mockkafka.scenario.seed import check_templates

        for spec in scenario.seed:
            try:
                check_templates(spec, scenario.random_seed)
            except ScenarioError as exc:
                problems.append(exc)
    # the schema's mistakes first; then the others, leaving out a second word on a part
    # of the file the schema already complained about
    later = [
        checked.locate(p) for p in problems if not any(_same_part(p.path, e.path) for e in errors)
    ]
    if errors or later or scenario is None:
        # in the order of the file (the schema's order among mistakes on one line)
        raise combine(sorted([*errors, *later], key=lambda e: e.line or 0))
    steps = tuple(
        dataclasses.replace(s, line=checked.step_line(i)) for i, s in enumerate(scenario.steps)
    )
    return dataclasses.replace(scenario, steps=steps)


def _same_part(a: Path, b: Path) -> bool:
    """Whether two paths are in the same part of a file (the same step, topic, seed or
    check; the whole file for a path naming no part)."""
    n = min(len(a), len(b), 2)
    return a[:n] == b[:n]


def load(
    path_or_name: str | os.PathLike[str],
    /,
    *,
    skip_expect: Iterable[str] = (),
    **parameters: Any,
) -> Scenario:
    """A scenario file (``.yaml``/``.yml`` path) or a library name (``"leader-failover"``),
    its parameters bound (``topic="payments"``) and the checks of ``skip_expect`` left out."""
    from mockkafka.scenario import loader

    f = loader.find(path_or_name)
    return load_text(f.read_text(), file=str(f), skip_expect=skip_expect, **parameters)


__all__ = [
    "CHECK_KEYS",
    "DEFAULT_STEP_TIMEOUT_MS",
    "EVENTS",
    "FAULT_ACTION_KEYS",
    "GROUP_STATES",
    "STR_MAP",
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
    "Path",
    "Records",
    "RulesFired",
    "Scenario",
    "ScenarioError",
    "ScenarioParameter",
    "SeedSpec",
    "StartCondition",
    "Step",
    "TopicSpec",
    "TrafficCount",
    "TransactionState",
    "Verb",
    "WhenGroup",
    "WhenTransaction",
    "did_you_mean",
    "expect_paths",
    "fault_from_dict",
    "fault_to_dict",
    "format_duration",
    "format_path",
    "from_dict",
    "load",
    "load_text",
    "parse_duration_ms",
    "start_from_dict",
    "start_to_dict",
    "step_from_dict",
    "to_dict",
    "unknown_key",
]

"""Rules, the fault engine that decides which fire, and the fluent ``cluster.faults`` API.

Theory of operation
-------------------
A :class:`Rule` is a live rule: its :class:`~mockkafka.faults.model.Match`,
:class:`~mockkafka.faults.model.Trigger` and actions, plus counters (``matched``: requests
it saw while active; ``fired``: requests it acted on; ``declined``: why it matched without
acting, reason -> count). Rules are built fluently::

    cluster.faults.on("Produce", topic="orders").times(2).error("NOT_LEADER_OR_FOLLOWER")

``on(...)`` makes a rule; trigger methods (``once``, ``times``, ``nth``, ``every_time``,
``with_probability``, ``between``, ``for_ms``, ``after``, ``after_event``) shape
it; the first action method (``error``, ``delay``, ``throttle``, ``drop_connection``,
``never_respond``, ``partial_trailing_batch``, ``corrupt_batch``, ``handler``,
``observe``) adds it to the cluster, and further action methods chain more actions. So put
trigger methods before the first action.

:class:`FaultEngine` is owned by the server (``server.faults``; :func:`engine_of` finds
the one of a cluster state, which announces its events through its notification hook) and is
consulted for every request by the server's fault stage: :meth:`FaultEngine.candidates` lists the active
rules whose match fits; :meth:`FaultEngine.decide` applies a rule's trigger (counts the
match, draws the seeded probability) and says whether it fires. Rules whose actions edit
record data count every answer they see as a match, but are decided only for answers that
hold something they can edit, so ``once()`` means "the first fetch whose records it can
edit"; an answer they could not edit is recorded with the reason (:meth:`FaultEngine.decline`),
and so is a firing that never reached the wire (:meth:`FaultEngine.release`).
:meth:`FaultEngine.explain` turns the counters, the trigger and those reasons into text:
no rule does nothing silently. A rule stays listed after it is used up (so a test can
read ``fired``) until removed or cleared. Time is cluster time (milliseconds), so a
manual clock drives windows in sans-IO tests.
"""

from __future__ import annotations

import difflib
import itertools
import random
import weakref
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, TypeVar

from mockkafka.cluster.events import StateEvent
from mockkafka.errors import ConfigError, WaitTimeout
from mockkafka.faults import coverage
from mockkafka.faults._builders import ActionBuilders
from mockkafka.faults._checks import check_count
from mockkafka.faults.actions import ACTIONS
from mockkafka.faults.actions._base import Action
from mockkafka.faults.match import _WILDCARDS, EVENTS, Match, RequestInfo, Trigger

if TYPE_CHECKING:
    from mockkafka.cluster.state import ClusterState

T = TypeVar("T")

_rule_ids = itertools.count(1)

#: Distinct decline reasons kept per rule; later new ones are counted under the last.
_MAX_REASONS = 8
_OTHER_REASONS = "other reasons"


@dataclass(frozen=True, slots=True)
class ClusterEvent:
    """Something a cluster verb did (``broker_stopped`` with ``broker=1``, ...)."""

    name: str
    time_ms: int
    attrs: tuple[tuple[str, Any], ...] = ()

    def matches(self, name: str, flt: tuple[tuple[str, Any], ...]) -> bool:
        if name != self.name:
            return False
        mine = dict(self.attrs)
        return all(mine.get(k) == v for k, v in flt)


class Rule(ActionBuilders):
    """One fault rule; see the module docstring. ``repr`` is valid Python.

    The action methods (``error``, ``delay``, ...) come from the action registry
    (``faults/_builders.py``, generated from ``faults/actions/``)."""

    def __init__(
        self,
        match: Match | None = None,
        trigger: Trigger | None = None,
        actions: Iterable[Action] = (),
        name: str | None = None,
    ) -> None:
        self.id = next(_rule_ids)
        self.name = name or f"rule-{self.id}"
        self.match = match or Match()
        self.trigger = trigger or Trigger()
        self.actions: tuple[Action, ...] = tuple(actions)
        self.matched = 0
        self.fired = 0
        #: Why the rule matched without acting: reason -> how many requests (or answers).
        self.declined: dict[str, int] = {}
        #: The matches the trigger counts (``nth``, probability draws): every match, but
        #: for a rule editing record data only the answers it could edit.
        self._counted = 0
        #: Firings decided for requests whose answer has not reached the wire yet (the
        #: server commits or releases each; see FaultEngine.commit).
        self.pending = 0
        self.created_ms: int | None = None
        self.last_fired_ms: int | None = None
        self._rng: random.Random | None = None
        self._times_set = False
        self._install: Callable[[Rule], None] | None = None
        self._remove: Callable[[Rule], None] | None = None
        self._waits: RuleWaits | None = None
        self.installed = False

    # -- identity and display ---------------------------------------------------------------

    @property
    def spec(self) -> tuple[Match, Trigger, tuple[Action, ...], str]:
        """What the rule is, without its counters (equal for a rule and its repr's eval)."""
        return (self.match, self.trigger, self.actions, self.name)

    def __repr__(self) -> str:
        return (
            f"Rule(match={self.match!r}, trigger={self.trigger!r}, "
            f"actions={self.actions!r}, name={self.name!r})"
        )

    def __str__(self) -> str:
        declined = sum(self.declined.values())
        more = f", declined {declined}x" if declined else ""
        return f"{self.name} (fired {self.fired}x, matched {self.matched}x{more}): {self!r}"

    def _decline(self, reason: str, api: str | None = None) -> None:
        """Count a match declined for ``reason`` (on a request of ``api``, for the
        coverage report)."""
        if api is not None:
            coverage.note_declined(api, self, reason)
        if reason not in self.declined and len(self.declined) >= _MAX_REASONS:
            reason = _OTHER_REASONS
        self.declined[reason] = self.declined.get(reason, 0) + 1

    @property
    def exhausted(self) -> bool:
        """True once the trigger can never fire again."""
        t = self.trigger
        if t.nth is not None:
            return self._counted >= t.nth and not self.pending
        return t.times is not None and self.fired + self.pending >= t.times

    @property
    def needs_data(self) -> bool:
        return bool(self.actions) and all(a.needs_data for a in self.actions)

    @property
    def replaces_response(self) -> bool:
        return any(a.replaces_response for a in self.actions)

    # -- triggers -------------------------------------------------------------------------

    def _set(self, **changes: Any) -> Rule:
        self.trigger = replace(self.trigger, **changes)
        return self

    def named(self, name: str) -> Rule:
        """Give the rule a name (shown in traffic as the fault that fired)."""
        if not isinstance(name, str) or not name:
            raise ConfigError(f"name must be a non-empty string, got {name!r}")
        self.name = name
        return self

    def __getattr__(self, name: str) -> Any:
        # reached only for a name the rule does not have: say what was meant
        if name.startswith("_"):
            raise AttributeError(name)
        public = sorted(n for n in dir(type(self)) if not n.startswith("_"))
        public += [
            n for n in ("name", "match", "trigger", "actions", "matched", "fired", "declined")
        ]
        close = difflib.get_close_matches(name, public, n=2)
        hint = f" (did you mean {' or '.join(close)}?)" if close else ""
        raise AttributeError(
            f"Rule has no attribute {name!r}{hint}; triggers: once, times, nth, every_time, "
            "with_probability, between, for_ms, after, after_event; actions: " + ", ".join(ACTIONS)
        )

    def once(self) -> Rule:
        """Fire on the first match only (the default)."""
        self._times_set = True
        return self._set(times=1, nth=None)

    def times(self, n: int) -> Rule:
        """Fire on the first ``n`` matches."""
        self._times_set = True
        return self._set(times=check_count(n, "n"), nth=None)

    def nth(self, n: int) -> Rule:
        """Fire only on the ``n``-th match (1 is the first)."""
        self._times_set = True
        return self._set(nth=check_count(n, "n"), times=None)

    def every_time(self) -> Rule:
        """Fire on every match until removed."""
        self._times_set = True
        return self._set(times=None, nth=None)

    def with_probability(self, p: float, *, seed: int | None = None) -> Rule:
        """Fire on each match with probability ``p``, drawn from ``random.Random(seed)``.

        Unless ``times``/``once``/``nth`` was given, this rule fires on every match it
        draws (not just the first).
        """
        self._set(probability=p, seed=seed)
        self._rng = None
        if not self._times_set:
            self._set(times=None)
        return self

    def between(self, start_ms: int, end_ms: int | None = None) -> Rule:
        """Only from ``start_ms`` to ``end_ms`` after the rule is added (every match in the
        window fires unless a count was given)."""
        self._set(start_ms=start_ms, end_ms=end_ms)
        if not self._times_set:
            self._set(times=None)
        return self

    def for_ms(self, ms: int) -> Rule:
        """Only during the first ``ms`` after the rule is added."""
        return self.between(0, ms)

    def after(self, other: Rule | str) -> Rule:
        """Only once rule ``other`` has fired."""
        name = other.name if isinstance(other, Rule) else other
        if not isinstance(name, str):
            raise ConfigError(f"other must be a Rule or a rule name, got {other!r}")
        return self._set(after_rule=name)

    def after_event(self, event: str, **attrs: Any) -> Rule:
        """Only after a cluster event, e.g. ``after_event("broker_stopped", broker=1)``."""
        if event not in EVENTS:
            raise ConfigError(f"event={event!r} is not a cluster event; valid: {', '.join(EVENTS)}")
        return self._set(after_event=event, event_filter=tuple(sorted(attrs.items())))

    # -- actions ----------------------------------------------------------------------------

    def then(self, action: Action) -> Rule:
        """Add an action (and the rule to its cluster, if not yet added)."""
        if not isinstance(action, Action):
            raise ConfigError(f"action must be a mockkafka.faults action, got {action!r}")
        check_action_fits(self.match.api, action)
        if type(action).EVERY_MATCH and not self._times_set:
            self._set(times=None)
        self.actions = (*self.actions, action)
        if not self.installed and self._install is not None:
            self._install(self)
        return self

    # -- lifecycle --------------------------------------------------------------------------

    def remove(self) -> None:
        """Take the rule out of its cluster (its counters stay readable)."""
        if self._remove is not None:
            self._remove(self)

    def _fired_probe(self, count: int) -> tuple[Callable[[], _Seen], str]:
        check_count(count, "count")

        def probe() -> _Seen:
            return _Seen(self.fired >= count, self.fired, f"fired {self.fired}x, {self}")

        return probe, f"{self.name}.wait_fired(count={count})"

    def _require_waits(self) -> RuleWaits:
        return self._waits if self._waits is not None else _InPlace()

    def wait_fired(self, count: int = 1, *, timeout: float = 10.0) -> int:
        """Block until the rule fired ``count`` times; returns how often it fired.

        Raises WaitTimeout (showing the counters) after ``timeout`` seconds. From async code
        or the trio cluster use ``await rule.wait_fired_async(...)``.
        """
        __tracebackhide__ = True
        probe, what = self._fired_probe(count)
        fired: int = self._require_waits().wait(
            probe, timeout=timeout, what=what, async_name="rule.wait_fired_async(...)"
        )
        return fired

    async def wait_fired_async(self, count: int = 1, *, timeout: float = 10.0) -> int:
        """The awaitable form of :meth:`wait_fired` (trio or asyncio)."""
        __tracebackhide__ = True
        probe, what = self._fired_probe(count)
        fired: int = await self._require_waits().wait_async(probe, timeout=timeout, what=what)
        return fired


class _Seen(NamedTuple):
    """What one look at a rule saw (the shape the cluster's waits read: ``server/waits``)."""

    done: bool
    value: int
    state: str


class RuleWaits(Protocol):
    """How ``rule.wait_fired`` waits: the cluster's ``Waits`` (``server/waits.py``), handed
    in by whoever adds the rule to a cluster, so the engine imports no server code."""

    def wait(
        self, probe: Callable[[], Any], *, timeout: float, what: str, async_name: str
    ) -> Any: ...

    async def wait_async(self, probe: Callable[[], Any], *, timeout: float, what: str) -> Any: ...


class _InPlace:
    """A rule on no cluster: nothing can fire it while the caller waits, so look once."""

    def wait(self, probe: Callable[[], Any], *, timeout: float, what: str, async_name: str) -> Any:
        __tracebackhide__ = True
        seen = probe()
        if seen.done:
            return seen.value
        raise WaitTimeout(
            f"{what}: not reached; the rule is on no cluster (add it with "
            f"cluster.faults.add(rule)); last seen: {seen.state}",
            seen.state,
        )

    async def wait_async(self, probe: Callable[[], Any], *, timeout: float, what: str) -> Any:
        __tracebackhide__ = True
        return self.wait(probe, timeout=timeout, what=what, async_name="")


def check_action_fits(apis: tuple[str, ...], action: Action) -> None:
    """Refuse ``action`` on a rule matching ``apis`` when it could never fire there (its
    ``APIS``): ConfigError naming the APIs it acts on."""
    can = type(action).APIS
    if can is not None and "*" not in apis and not set(apis) & set(can):
        what = (
            f"edits record data, which only {' and '.join(can)} responses carry"
            if action.needs_data
            else f"acts only on {' and '.join(can)} requests"
        )
        raise ConfigError(
            f"{type(action).__name__} {what}; this rule is on {', '.join(apis)}, "
            "so it could never fire"
        )


def _acts_on(rule: Rule, api: str) -> bool:
    """Whether every action of ``rule`` can act on ``api`` (a ``"*"`` rule of an action
    with ``APIS`` is consulted only for those APIs)."""
    for a in rule.actions:
        can = type(a).APIS
        if can is not None and api not in can:
            return False
    return True


class _ApiIndex:
    """The rules of one API, with those naming one literal topic bucketed by it, so a
    request is checked against the rules of its own topics and the others, not every rule
    (100 rules on other topics cost a request nothing)."""

    __slots__ = ("by_topic", "order", "rules", "untargeted")

    def __init__(self, rules: list[Rule]) -> None:
        self.rules = rules
        self.order = {id(r): n for n, r in enumerate(rules)}
        self.untargeted: list[Rule] = []
        self.by_topic: dict[str, list[Rule]] = {}
        for r in rules:
            topic = r.match.topic
            if topic is None or not _WILDCARDS.isdisjoint(topic):
                self.untargeted.append(r)
            else:
                self.by_topic.setdefault(topic, []).append(r)

    def for_request(self, info: RequestInfo) -> list[Rule]:
        if not self.by_topic or info.all_topics:
            return self.rules
        found: list[Rule] | None = None
        for t in info.topics:
            bucket = self.by_topic.get(t)
            if bucket:
                found = bucket if found is None else found + bucket
        if found is None:
            return self.untargeted
        merged = self.untargeted + found
        merged.sort(key=lambda r: self.order[id(r)])
        return merged


class FaultEngine:
    """Decides which rules fire for a request. Sans-IO; see the module docstring."""

    def __init__(self, clock: Callable[[], int]) -> None:
        self._clock = clock
        self._rules: list[Rule] = []
        #: API name -> an index of the rules whose match names it or "*" (built on first
        #: use after each change of the rule list): see :meth:`_index`.
        self._by_api: dict[str, _ApiIndex] = {}
        self.events: list[ClusterEvent] = []
        # Rules made by ``Faults.on`` are named rule-1, rule-2, ... per cluster, so a test's
        # failure report names them the same way however many tests ran before it.
        self._rule_numbers = itertools.count(1)

    def next_rule_name(self) -> str:
        """A name for a new rule of this cluster: ``rule-1``, ``rule-2``, ..."""
        return f"rule-{next(self._rule_numbers)}"

    def __bool__(self) -> bool:
        return bool(self._rules)

    def rules(self) -> list[Rule]:
        """Every rule added and not removed, in the order added (used-up ones included)."""
        return list(self._rules)

    def add(self, rule: Rule) -> Rule:
        if rule.created_ms is None:
            rule.created_ms = self._clock()
        rule.installed = True
        if rule not in self._rules:
            self._rules.append(rule)
        self._by_api.clear()
        return rule

    def remove(self, rule: Rule | str) -> None:
        for r in list(self._rules):
            if r is rule or r.name == rule:
                self._rules.remove(r)
                self._by_api.clear()
                r.installed = False
                return
        raise ConfigError(f"no rule {rule!r}; rules are {[r.name for r in self._rules]}")

    def clear(self) -> None:
        for r in self._rules:
            r.installed = False
        self._rules.clear()
        self._by_api.clear()

    def reset(self) -> None:
        """As new (cluster reset): no rules, no events, names count from rule-1 again."""
        self.clear()
        self.events.clear()
        self._rule_numbers = itertools.count(1)

    def on_notify(self, key: Hashable) -> None:
        """The cluster state's waker: records the cluster events it announces."""
        if type(key) is StateEvent:
            self.record_event(key.name, **dict(key.attrs))

    def record_event(self, name: str, **attrs: Any) -> None:
        """A cluster verb happened (rules waiting for it with ``after_event`` may start)."""
        self.events.append(ClusterEvent(name, self._clock(), tuple(sorted(attrs.items()))))
        coverage.note_event(name)
        if len(self.events) > 10_000:
            del self.events[:5_000]

    def _active(self, rule: Rule, now: int) -> bool:
        if not rule.actions or rule.exhausted:
            return False
        t = rule.trigger
        created = rule.created_ms if rule.created_ms is not None else now
        if t.start_ms is not None and now < created + t.start_ms:
            return False
        if t.end_ms is not None and now > created + t.end_ms:
            return False
        if t.after_rule is not None and not any(
            r.name == t.after_rule and r.fired for r in self._rules
        ):
            return False
        return not (
            t.after_event is not None
            and not any(
                e.time_ms >= created and e.matches(t.after_event, t.event_filter)
                for e in self.events
            )
        )

    def _api_index(self, api: str) -> _ApiIndex:
        index = self._by_api.get(api)
        if index is None:
            index = self._by_api[api] = _ApiIndex(
                [r for r in self._rules if "*" in r.match.api or api in r.match.api]
            )
        return index

    def watches(self, api: str) -> bool:
        """Whether any rule names ``api`` (or ``"*"``): when none does, a request of that API
        needs no :class:`RequestInfo` built for the engine (its :meth:`select` would be
        empty)."""
        return bool(self._rules) and bool(self._api_index(api).rules)

    def candidates(self, info: RequestInfo) -> list[Rule]:
        """Active rules whose match fits ``info``, in the order they were added."""
        if not self._rules:
            return []
        rules = self._api_index(info.api).for_request(info)
        if not rules:
            return []
        now = self._clock()
        return [
            r
            for r in rules
            if r.match.matches(info) and self._active(r, now) and _acts_on(r, info.api)
        ]

    def select(self, info: RequestInfo, *, reserve: bool = False) -> tuple[list[Rule], list[Rule]]:
        """The rules that fire for a request, and the data-editing candidates to decide
        once the response is known. Only the first response-replacing rule that fires is
        used; later ones are not consulted (their trigger does not count the request),
        and each records the match as declined, naming the rule that answered."""
        fired: list[Rule] = []
        deferred: list[Rule] = []
        replacing: Rule | None = None
        for rule in self.candidates(info):
            if rule.needs_data:
                deferred.append(rule)
            elif rule.replaces_response and replacing is not None:
                rule.matched += 1
                rule._decline(
                    f"rule {replacing.name!r} answered the request first (one rule replaces "
                    "a response; the first added wins)",
                    info.api,
                )
            elif self.decide(rule, reserve=reserve):
                fired.append(rule)
                if replacing is None and rule.replaces_response:
                    replacing = rule
        return fired, deferred

    def decide(self, rule: Rule, *, reserve: bool = False, seen: bool = True) -> bool:
        """Count one match for ``rule`` and say whether it fires (updates ``fired``).

        ``reserve=True`` (the server): a firing is only reserved (``rule.pending``) until
        :meth:`commit` (its effect reached the wire) or :meth:`release` (it did not).
        ``seen=False``: the match was counted already (:meth:`saw`: a rule editing record
        data sees every answer, and is decided only on those it can edit)."""
        t = rule.trigger
        if seen:
            rule.matched += 1
        rule._counted += 1
        if t.nth is not None:
            fire = rule._counted == t.nth
        else:
            fire = t.times is None or rule.fired + rule.pending < t.times
        if t.probability is not None:
            if rule._rng is None:
                rule._rng = random.Random(t.seed)
            draw = rule._rng.random()
            if fire and draw >= t.probability:
                fire = False
                rule._decline(f"not drawn (with_probability({t.probability}, seed={t.seed}))")
        if fire and reserve:
            rule.pending += 1
        elif fire:
            rule.fired += 1
            rule.last_fired_ms = self._clock()
        return fire

    def commit(self, rule: Rule) -> None:
        """A reserved firing reached the wire: count it in ``fired``."""
        rule.pending = max(0, rule.pending - 1)
        rule.fired += 1
        rule.last_fired_ms = self._clock()

    def release(self, rule: Rule, reason: str | None = None, api: str | None = None) -> None:
        """A reserved firing never reached the wire (nothing to edit, connection gone):
        ``reason`` says why, for :meth:`explain` (``api``: the request's, for coverage)."""
        rule.pending = max(0, rule.pending - 1)
        if reason is not None:
            rule._decline(reason, api)

    def saw(self, rule: Rule) -> None:
        """A rule editing record data saw an answer (it may still find nothing to edit)."""
        rule.matched += 1

    def decline(self, rule: Rule, reason: str, api: str | None = None) -> None:
        """``rule`` matched a request (of ``api``, for the coverage report) and could not
        act, because of ``reason`` (one line, the same text for the same cause, so
        :meth:`explain` can count them)."""
        rule._decline(reason, api)

    def explain(self, rule: Rule) -> list[str]:
        """Why ``rule`` has not fired (or not every time it matched), as far as the engine
        knows: what its trigger still waits for, and each reason it declined with its count.
        Empty when there is nothing to say (it fired on every match, or never matched and
        waits for nothing: then the cause is in the traffic, see ``cluster.why_unfired``)."""
        out: list[str] = []
        t = rule.trigger
        now = self._clock()
        created = rule.created_ms if rule.created_ms is not None else now
        if not rule.installed:
            out.append("it is on no cluster (removed, or never added)")
        if not rule.actions:
            out.append("it has no action (add one: .error(...), .delay(ms=...), ...)")
        if t.after_rule is not None:
            other = [r for r in self._rules if r.name == t.after_rule]
            if not other:
                out.append(f"it waits for rule {t.after_rule!r} to fire, and there is no such rule")
            elif not any(r.fired for r in other):
                out.append(f"it waits for rule {t.after_rule!r} to fire, which fired 0x")
        if t.after_event is not None and not any(
            e.time_ms >= created and e.matches(t.after_event, t.event_filter) for e in self.events
        ):
            flt = "".join(f", {k}={v!r}" for k, v in t.event_filter)
            out.append(f"it waits for the event {t.after_event}{flt}, which has not happened")
        if t.start_ms is not None and now < created + t.start_ms:
            out.append(f"its window opens {t.start_ms} ms after it was added (not yet)")
        if t.end_ms is not None and now > created + t.end_ms and not rule.fired:
            out.append(f"its window closed {t.end_ms} ms after it was added")
        if t.nth is not None and rule._counted < t.nth:
            out.append(f"nth({t.nth}) fires on match {t.nth}; it had {rule._counted}")
        if rule.declined:
            total = sum(rule.declined.values())
            what = "; ".join(f"{n}x {reason}" for reason, n in rule.declined.items())
            out.append(f"matched {rule.matched}x, declined {total}x because: {what}")
        return out


class Faults:
    """``cluster.faults``: make, list and remove rules on a cluster.

    ``run`` executes a function on the loop that owns the cluster (the sync ``Cluster``
    hops threads; sans-IO callers pass ``lambda f: f()``); ``waits`` serves
    ``rule.wait_fired``; ``state``, when given, lets :meth:`on` refuse rules that could
    never fire on this cluster (``broker=7`` on 3 brokers).
    """

    def __init__(
        self,
        engine: FaultEngine,
        run: Callable[[Callable[[], Any]], Any],
        waits: RuleWaits | None = None,
        state: ClusterState | None = None,
    ) -> None:
        self.engine = engine
        self._run = run
        self._waits = waits
        self._state = state

    def on(
        self,
        api: str | Iterable[str] = "*",
        *,
        versions: int | tuple[int, int] | None = None,
        broker: int | Iterable[int] | None = None,
        topic: str | None = None,
        partition: int | Iterable[int] | None = None,
        group: str | None = None,
        transactional_id: str | None = None,
        client_id: str | None = None,
        connection: int | None = None,
        context: str | Iterable[str] | None = None,
    ) -> Rule:
        """A new rule for requests matching every given argument (see :class:`Match`).

        It is added to the cluster by its first action method.
        """
        m = Match(
            api=api,  # type: ignore[arg-type]
            versions=versions,  # type: ignore[arg-type]
            broker=broker,  # type: ignore[arg-type]
            topic=topic,
            partition=partition,  # type: ignore[arg-type]
            group=group,
            transactional_id=transactional_id,
            client_id=client_id,
            connection=connection,
            context=context,  # type: ignore[arg-type]
        )
        self._check_can_fire(m)
        rule = Rule(m, name=self.engine.next_rule_name())
        self.attach(rule)
        return rule

    def _check_can_fire(self, m: Match) -> None:
        """Refuse a match no request to this cluster can ever have."""
        if self._state is not None and m.broker is not None:
            brokers = sorted(self._state.brokers)
            unknown = [b for b in m.broker if b not in brokers]
            if unknown:
                raise ConfigError(
                    f"broker={unknown[0]}: this cluster has brokers {brokers}, so the rule "
                    "could never fire"
                )
        if m.versions is not None and "*" not in m.api:
            from mockkafka.protocol.apis import api as lookup_api

            lo, hi = m.versions
            for name in m.api:
                a = lookup_api(name)
                if hi < a.min_version or lo > a.max_version:
                    raise ConfigError(
                        f"versions={m.versions}: {name} has versions {a.min_version}.."
                        f"{a.max_version}, so the rule could never fire"
                    )

    def attach(self, rule: Rule) -> Rule:
        """Let ``rule`` add itself here on its first action (used by ``on``)."""
        rule._install = lambda r: self._run(lambda: self.engine.add(r))
        rule._remove = lambda r: self._run(lambda: self.engine.remove(r))
        rule._waits = self._waits
        return rule

    def add(self, rule: Rule) -> Rule:
        """Add a ready-made rule (e.g. one pasted from a repr)."""
        self._check_can_fire(rule.match)
        for a in rule.actions:
            check_action_fits(rule.match.api, a)
        self.attach(rule)
        self._run(lambda: self.engine.add(rule))
        return rule

    def rules(self) -> list[Rule]:
        return self._run(self.engine.rules)  # type: ignore[no-any-return]

    def on_loop(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` on the loop that owns the rules and the cluster (reads included)."""
        return self._run(fn)  # type: ignore[no-any-return]

    def remove(self, rule: Rule | str) -> None:
        self._run(lambda: self.engine.remove(rule))

    def clear(self) -> None:
        """Remove every rule."""
        self._run(self.engine.clear)

    @property
    def events(self) -> list[ClusterEvent]:
        """Cluster events recorded so far (what ``after_event`` triggers wait for)."""
        return self._run(lambda: list(self.engine.events))  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        return f"<Faults: {len(self.engine.rules())} rules>"


_ENGINES: weakref.WeakKeyDictionary[ClusterState, FaultEngine] = weakref.WeakKeyDictionary()


def engine_of(state: ClusterState) -> FaultEngine:
    """The fault engine for a ClusterState: made on first use, fed the state's cluster
    events through its notification hook (``add_waker``). The server holds it as
    ``server.faults``; sans-IO code asks here. The state keeps no reference to faults
    beyond that waker, and the engine none to the state (its clock is a weak one)."""
    engine = _ENGINES.get(state)
    if engine is None:
        ref = weakref.ref(state)

        def clock() -> int:
            s = ref()
            return s.now_ms() if s is not None else 0

        engine = FaultEngine(clock)
        state.add_waker(engine.on_notify)
        _ENGINES[state] = engine
    return engine

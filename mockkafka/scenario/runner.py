"""Play a scenario against a cluster: set up topics and seed data, run the steps on the
cluster's own trio loop, then check ``expect:``.

Theory of operation
-------------------
:class:`ScenarioRun` holds one playing of a :class:`~mockkafka.scenario.model.Scenario`.
:meth:`ScenarioRun.setup` creates the topics and writes the seed records; :meth:`play` runs
the steps one after the other, each waiting for its start condition (woken every few
milliseconds on the loop that owns the state, so a condition is seen within one client
request) and then acting through the same verbs and fault rules a Python test uses.
A condition that does not come within the step's ``timeout`` stops the timeline; the step
and every later one are reported by :meth:`failures` with the expectations that failed.

Both clusters use the same code: an :class:`~mockkafka.AsyncCluster` is played directly
(``await scenario.run_async(cluster)``); a threaded :class:`~mockkafka.Cluster` is played
by a helper thread running its own trio loop. Start conditions are probes of the cluster's
one waiting primitive (``server/waits.py``), woken by state changes.
"""

from __future__ import annotations

import contextlib
import inspect
import threading
import time
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar, cast

import trio

from mockkafka._api.cluster import AsyncCluster, Cluster
from mockkafka._api.proxy import AsyncProxy, Proxy, _ProxyBase
from mockkafka.errors import KafkaApiError, MockKafkaError, WaitTimeout
from mockkafka.faults.engine import Rule, engine_of
from mockkafka.scenario.expect import Acked, evaluate, view_group
from mockkafka.scenario.on_proxy import check_runs_on
from mockkafka.scenario.plan import (
    AfterCommits,
    AfterCommitted,
    AfterConsumed,
    AfterEvent,
    AfterProduced,
    AfterRecords,
    AfterRequests,
    AfterTime,
    At,
    Fault,
    ScenarioPlan,
    StartCondition,
    Step,
    Verb,
    WhenGroup,
    WhenTransaction,
)
from mockkafka.scenario.seed import seed_records
from mockkafka.server.waits import Seen, check_timeout

if TYPE_CHECKING:
    from mockkafka.cluster.state import ClusterState

T = TypeVar("T")

#: How long ``check()`` gives a failed ``expect:`` to come true once every step ran, and how
#: often it looks again meanwhile.
SETTLE_S = 5.0
SETTLE_POLL_S = 0.05


def check_settle(settle: float) -> None:
    """``settle`` is a number of seconds >= 0 (ConfigError otherwise)."""
    check_timeout(settle)


#: Arguments passed by position (the rest by keyword), as the Python verbs take them.
_POSITIONAL = {"topic", "partition", "broker", "group", "transactional_id", "caps", "configs"}
_POSITIONAL |= {"offsets", "value", "member_id"}


class ScenarioRun:
    """One playing of a scenario on one cluster (see the module docstring)."""

    def __init__(
        self, scenario: ScenarioPlan, cluster: Cluster | AsyncCluster | Proxy | AsyncProxy
    ) -> None:
        self.scenario = scenario
        self.cluster = cluster
        self.rules: dict[str, Rule] = {}
        self.seeded: Acked = {}
        self.log: list[str] = []
        self.problems: list[str] = []
        self.steps_done = 0
        self.finished = False
        self._start_s = 0.0
        self._start_ms = 0
        self._since_seq = 0
        self._baseline: dict[tuple[str, int], int] = {}
        self._scope: trio.CancelScope | None = None
        #: Set once the leading steps without a start condition ran (or play ended), so
        #: ``start()`` returns with those faults and verbs already in place.
        self.leading_done = threading.Event()

    @property
    def state(self) -> ClusterState:
        """The raw state: touch it only in probes and ``cluster.call`` (the loop's thread).
        Against a proxy: a live view of the upstream (``_api/proxy_state.py``)."""
        if isinstance(self.cluster, _ProxyBase):
            from mockkafka._api.proxy_state import UpstreamState

            return cast("ClusterState", UpstreamState(self.cluster))
        return self.cluster._state

    # -- setup --------------------------------------------------------------------------------

    def setup(self) -> None:
        """Create the topics and write the seed records (on the cluster's loop)."""
        sc = self.scenario
        # conditions count from here: requests a client sends right after start() count
        self._start_ms = self.cluster.call(lambda st: st.now_ms())
        self._since_seq = self.cluster.traffic.mark()
        have = len(self.cluster.brokers)
        if sc.cluster.brokers > have:
            raise MockKafkaError(
                f"scenario {sc.name!r} needs {sc.cluster.brokers} brokers; the cluster has "
                f"{have} (use mockkafka.Cluster(brokers={sc.cluster.brokers}))"
            )
        existing = set(self.cluster.topics())
        for t in sc.topics:  # all checked before any is created
            if t.topic in existing:
                have = len(self.cluster.topic(t.topic).partitions)
                if have != t.partitions:
                    raise KafkaApiError(
                        "TOPIC_ALREADY_EXISTS",
                        f"scenario {sc.name!r} declares topic {t.topic!r} with {t.partitions} "
                        f"partition(s); the cluster already holds it with {have}. A scenario "
                        "keeps a topic that exists only when the partitions match (Kafka "
                        "would not re-create it either): set topics."
                        f"{t.topic}.partitions to {have}, or delete the topic first",
                    )
        for t in sc.topics:
            if t.topic in existing:
                continue
            self.cluster.create_topic(
                t.topic,
                partitions=t.partitions,
                replication_factor=t.replication_factor,
                config=dict(t.config) or None,
            )
        for s in sc.seed:
            parts = len(self.cluster.topic(s.topic).partitions)
            records = seed_records(s, sc.random_seed, parts)  # faker runs here, off the loop
            self.cluster.call(partial(self._write_seed, s.topic, records))
        # `after: {produced: ...}` counts what clients append from here, not the seed
        self._baseline = self.cluster.call(
            lambda st: {
                (t.name, p.index): p.log.high_watermark
                for t in st.topics.values()
                for p in t.partitions
            }
        )

    def _write_seed(
        self, topic: str, records: list[tuple[int, str | None, str | None]], _state: object
    ) -> None:
        """On the cluster's loop: append the seed records (``produce`` runs in place there)."""
        for part, key, value in records:
            off = self.cluster.produce(topic, value, key=key, partition=part)
            self.seeded.setdefault((topic, part), []).append(
                (
                    off,
                    None if key is None else key.encode(),
                    None if value is None else value.encode(),
                )
            )

    # -- the timeline -------------------------------------------------------------------------

    def _note(self, text: str) -> None:
        self.log.append(f"{(trio.current_time() - self._start_s) * 1000:8.0f} ms  {text}")

    async def play(self) -> None:
        """Run every step in order (on the cluster's loop); returns when all ran or one
        could not (see :attr:`problems`)."""
        self._start_s = trio.current_time()
        steps = self.scenario.steps
        with trio.CancelScope() as self._scope:
            for i, step in enumerate(steps):
                what = f"step {i + 1} {step.label}"
                if step.start is not None:
                    self.leading_done.set()
                waited = await self._wait_start(step)
                if waited is not None:
                    self.problems.append(f"{what} never ran: {waited}")
                    self._skip(i + 1)
                    break
                try:
                    # A step runs whole or not at all: a stop (the marker's test body ended,
                    # ``ScenarioThread.stop``) waits for the step under way, so that a verb
                    # over every partition never leaves half of them changed.
                    with trio.CancelScope(shield=True):
                        await self._act(step)
                except (MockKafkaError, KeyError, ValueError) as exc:
                    # the step's file:line, so a refused argument is found in the YAML
                    src, line = self.scenario.source, step.line
                    where = f"{src}:{line}: " if src and line else ""
                    self.problems.append(f"{where}{what} failed: {exc}")
                    self._skip(i + 1)
                    break
                self._note(f"{what} done")
                self.steps_done = i + 1
        if self._scope.cancelled_caught and self.steps_done < len(steps):
            i = self.steps_done
            self.problems.append(
                f"step {i + 1} {steps[i].label} never ran: the scenario was stopped before "
                f"its start condition ({_describe(steps[i])}) held"
            )
            self._skip(i + 1)
        self.finished = True
        self.leading_done.set()

    def _skip(self, first: int) -> None:
        for j, s in enumerate(self.scenario.steps[first:], start=first):
            self.problems.append(f"step {j + 1} {s.label} never ran (an earlier step did not)")

    async def _sync(self, fn: Callable[[], T]) -> T:
        """Run a sync cluster method: a threaded Cluster's verbs block, so off this loop (a
        proxy's too: they make requests to the upstream)."""
        if isinstance(self.cluster, Cluster | _ProxyBase):
            return await trio.to_thread.run_sync(fn)
        return fn()

    def count_from_beginning(self) -> None:
        """Make conditions count every request and event since the cluster started (a live
        wait of the control endpoint), not only those since :meth:`setup`."""
        self._since_seq = 0
        self._start_ms = 0

    def cancel(self) -> None:
        if self._scope is not None:
            self._scope.cancel()

    async def _wait_start(self, step: Step) -> str | None:
        """Wait for the step's start condition; None once it holds, else what was seen."""
        if step.start is None:
            return None
        return await self.wait_for(step.start, timeout_ms=step.timeout_ms)

    async def wait_for(self, cond: StartCondition, *, timeout_ms: int) -> str | None:
        """Wait until ``cond`` holds (None) or ``timeout_ms`` passes (what was seen)."""
        if isinstance(cond, At):
            await trio.sleep_until(self._start_s + cond.ms / 1000)
            return None
        if isinstance(cond, AfterTime):
            await trio.sleep(cond.ms / 1000)
            return None
        check = self._condition(cond)

        def probe() -> Seen[None]:
            ok, seen = check()
            return Seen(ok, None, seen)

        try:
            # a proxy's waits poll the upstream; a cluster's are woken by its changes
            await self.cluster._waits.wait_async(
                probe, timeout=timeout_ms / 1000, what=describe_start(cond)
            )
        except WaitTimeout as exc:
            return str(exc)
        return None

    def _condition(self, cond: StartCondition) -> Callable[[], tuple[bool, str]]:
        st = self.state
        if isinstance(cond, AfterRequests):
            flt = dict(cond.filters)
            if not self.cluster.traffic.enabled:
                from mockkafka.errors import ConfigError

                raise ConfigError(
                    f"{describe_start(cond)}: traffic recording is off (record_traffic=False, "
                    "serve --no-traffic), so requests are not counted"
                )

            def requests() -> tuple[bool, str]:
                n = self.cluster.traffic.count(cond.api, since_seq=self._since_seq, **flt)
                return n >= cond.count, f"saw {n}"

            return requests
        if isinstance(cond, AfterEvent):
            engine = engine_of(st)

            def event() -> tuple[bool, str]:
                seen = [e for e in engine.events if e.time_ms >= self._start_ms]
                ok = any(e.matches(cond.event, cond.attrs) for e in seen)
                return ok, "events seen: " + (", ".join(e.name for e in seen[-5:]) or "none")

            return event
        if isinstance(cond, AfterRecords):

            def records() -> tuple[bool, str]:
                if cond.topic not in st.topics:
                    return False, f"topic {cond.topic!r} does not exist"
                parts = st.topics[cond.topic].partitions
                n = sum(
                    p.log.high_watermark - p.log.log_start_offset
                    for p in parts
                    if cond.partition is None or p.index == cond.partition
                )
                return n >= cond.count, f"holds {n}"

            return records
        if isinstance(cond, AfterProduced):

            def produced() -> tuple[bool, str]:
                if cond.topic not in st.topics:
                    return False, f"topic {cond.topic!r} does not exist"
                n = sum(
                    p.log.high_watermark - self._baseline.get((cond.topic, p.index), 0)
                    for p in st.topics[cond.topic].partitions
                    if cond.partition is None or p.index == cond.partition
                )
                return n >= cond.count, f"{n} records produced"

            return produced
        if isinstance(cond, AfterConsumed):
            seen: dict[tuple[str, int], int] = {}
            cursor = [self._since_seq]
            traffic = self.cluster.traffic

            def consumed() -> tuple[bool, str]:
                # incremental: each probe reads only the Fetch requests since the last one
                last = traffic.mark()
                new = traffic.fetch_positions(cond.topic, since_seq=cursor[0])
                cursor[0] = last
                for k, off in new.items():
                    seen[k] = max(seen.get(k, -1), off)
                if cond.topic not in st.topics:
                    return False, f"topic {cond.topic!r} does not exist"
                n = sum(
                    max(0, seen.get((cond.topic, p.index), -1) - p.log.log_start_offset)
                    for p in st.topics[cond.topic].partitions
                    if cond.partition is None or p.index == cond.partition
                )
                return n >= cond.count, f"consumers fetched up to {n} records"

            return consumed
        if isinstance(cond, AfterCommits):

            def commits() -> tuple[bool, str]:
                n = sum(
                    1
                    for ex in self.cluster.traffic.requests(
                        ["OffsetCommit", "TxnOffsetCommit"],
                        group=cond.group,
                        since_seq=self._since_seq,
                        answered=True,
                    )
                    if not ex.error_codes
                )
                return n >= cond.count, f"{n} commits"

            return commits
        if isinstance(cond, AfterCommitted):

            def committed() -> tuple[bool, str]:
                got = st.groups.committed(cond.group).get((cond.topic, cond.partition))
                have = None if got is None else got.offset
                return have is not None and have >= cond.offset, f"committed {have}"

            return committed
        if isinstance(cond, WhenGroup):

            def group() -> tuple[bool, str]:
                if cond.group not in st.groups.groups:
                    return False, "the group does not exist"
                v = view_group(st, cond.group)
                ok = v.state == cond.state and (
                    cond.members is None or len(v.members) == cond.members
                )
                return ok, f"last seen {v.state} with {len(v.members)} members"

            return group
        assert isinstance(cond, WhenTransaction)

        def transaction() -> tuple[bool, str]:
            try:
                v = cast(Any, self.cluster).transaction(cond.transactional_id)
            except MockKafkaError:
                return False, "the transactional id is unknown"
            return v.state == cond.state, f"last seen {v.state}"

        return transaction

    # -- actions ------------------------------------------------------------------------------

    async def _act(self, step: Step) -> None:
        if isinstance(step.action, Fault):
            f = step.action
            rule = Rule(f.match, f.trigger, f.actions, f.name)
            await self._sync(lambda: self.cluster.faults.add(rule))
            self.rules[rule.name] = rule
            return
        await self._verb(step.action)

    async def _verb(self, verb: Verb) -> None:
        kw = verb.kwargs
        if kw.get("partition") == "all" and verb.name != "produce":
            topic = await self._sync(lambda: self.cluster.topic(kw["topic"]))
            for p in topic.partitions:
                await self._call(verb.name, {**kw, "partition": p.partition})
            return
        await self._call(verb.name, kw)

    def _next_broker(self, name: str, kw: dict[str, Any]) -> int:
        """The broker after the current leader (or coordinator); runs in a worker thread.
        A partition with a single replica moves to the next broker of the cluster (the
        fake's ``move_leader`` adds it to the replicas), so ``next`` is never the broker
        that already leads while there is another."""
        ids = sorted(b if isinstance(b, int) else b.node_id for b in self.cluster.brokers)
        if name == "move_leader":
            p = self.cluster.topic(kw["topic"]).partitions[kw["partition"]]
            reps: list[int] = list(p.replicas) if len(p.replicas) > 1 else ids
            return reps[(reps.index(p.leader) + 1) % len(reps)] if p.leader in reps else reps[0]
        cur = self._coordinator(kw)
        return ids[(ids.index(cur) + 1) % len(ids)] if cur in ids else ids[0]

    def _coordinator(self, kw: dict[str, Any]) -> int:
        c: Any = self.cluster
        if hasattr(c, "coordinator"):
            return int(
                c.coordinator(group=kw.get("group"), transactional_id=kw.get("transactional_id"))
            )
        if kw.get("group") is not None:
            return int(c.coordinator_of(kw["group"]))
        return int(c.transaction_coordinator(kw["transactional_id"]))

    async def _call(self, name: str, kw: dict[str, Any]) -> None:
        c: Any = self.cluster
        kw = dict(kw)
        if kw.get("to") == "next":
            kw["to"] = await self._sync(lambda: self._next_broker(name, kw))
        if name == "expire_member" and kw["member_id"] == "any":
            members = (await self._sync(lambda: self.cluster.group(kw["group"]))).members
            if not members:
                raise MockKafkaError(f"group {kw['group']!r} has no member to expire")
            kw["member_id"] = members[0].member_id
        if name == "commit_offsets":
            kw["offsets"] = {(o["topic"], o["partition"]): o["offset"] for o in kw["offsets"]}
        args = [kw.pop(p.name) for p in _params(name) if p.name in kw and _positional(name, p.name)]
        result = await self._sync(lambda: getattr(c, name)(*args, **kw))
        if inspect.isawaitable(result):
            await result

    # -- results ------------------------------------------------------------------------------

    def failures(self) -> list[str]:
        """Steps that did not run and expectations that failed."""
        checks = self.scenario.expect
        traffic = self.cluster.traffic
        found = self.cluster.call(
            lambda st: evaluate(
                checks,
                st,
                traffic,
                rules=self.rules,
                seeded=self.seeded,
                parameters=self.scenario.parameters,
                check_parameters=self.scenario.check_parameters,
                why=self.cluster._why,
            )
        )
        return self.problems + found

    def rule_notes(self) -> list[str]:
        """A line for each of the scenario's fault rules that did not act on every match
        (never fired, or declined some), with why (``cluster.why_unfired``)."""

        def notes() -> list[str]:
            return [
                f"{r.name} fired {r.fired}x, matched {r.matched}x{self.cluster._why(r)}"
                for r in self.rules.values()
                if r.fired == 0 or r.declined
            ]

        return self.cluster.faults.on_loop(notes)

    def report(self, failures: list[str]) -> str:
        sc = self.scenario
        lines = [f"scenario {sc.name!r}: {len(failures)} expectation(s) failed:"]
        lines += [f"  - {f}" for f in failures]
        if self.log:
            lines.append("timeline:")
            lines += [f"  {x}" for x in self.log[-30:]]
        notes = self.rule_notes()
        if notes:
            lines.append("faults that did not act:")
            lines += [f"  {x}" for x in notes]
        return "\n".join(lines)


def _params(name: str) -> tuple[Any, ...]:
    from mockkafka.scenario.plan import VERBS

    return VERBS[name]


def _positional(verb: str, arg: str) -> bool:
    if verb == "produce" and arg == "partition":
        return False
    if verb == "expire_acquisition_locks" and arg in ("topic", "partition"):
        return False
    if verb in ("move_coordinator", "coordinator_loading", "allow", "deny", "remove_acls"):
        return False
    return arg in _POSITIONAL


def describe_start(cond: StartCondition) -> str:
    """The condition as its YAML form, for messages."""
    from mockkafka.scenario.plan import start_to_dict

    return str(start_to_dict(cond))


def _describe(step: Step) -> str:
    assert step.start is not None
    return describe_start(step.start)


# -- the public entry points (Scenario.run / run_async / start) -----------------------------


class ScenarioThread:
    """A scenario playing alongside a test on a threaded :class:`~mockkafka.Cluster`.

    ``wait(timeout)`` until every step ran, ``stop()`` to cancel what is left, ``check()``
    to raise an AssertionError listing every failed expectation.
    """

    def __init__(self, scenario: ScenarioPlan, cluster: Cluster | Proxy) -> None:
        self.cluster = cluster
        self.run = ScenarioRun(scenario, cluster)
        self.run.setup()
        self._error: BaseException | None = None
        self._token: trio.lowlevel.TrioToken | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._main, name="mockkafka-scenario", daemon=True)
        self._thread.start()
        self._ready.wait(10)
        self.run.leading_done.wait(10)

    def _main(self) -> None:
        async def main() -> None:
            self._token = trio.lowlevel.current_trio_token()
            self._ready.set()
            await self.run.play()

        try:
            trio.run(main)
        except BaseException as exc:
            self._error = exc
            self._ready.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until every step ran (or the timeline stopped); False on timeout."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def stop(self) -> None:
        """Cancel the steps not yet run (they are reported by :meth:`check`)."""
        if self._thread.is_alive() and self._token is not None:
            with contextlib.suppress(trio.RunFinishedError):
                trio.from_thread.run_sync(self.run.cancel, trio_token=self._token)
        self._thread.join(10)

    def failures(self) -> list[str]:
        """Steps that did not run and failed expectations (empty: the scenario held)."""
        if self._error is not None:
            return [f"the scenario runner raised {self._error!r}"]
        return self.run.failures()

    def check(self, *, settle: float = SETTLE_S) -> None:
        """Raise AssertionError listing every failed expectation and step not run.

        ``expect:`` describes the state the app reaches *after* the last step (a group
        through its last rebalance, a commit of the last records): once every step ran, a
        failed expectation is looked at again, as the cluster changes, for up to ``settle``
        seconds before it counts (issue 33: ``run.check()`` straight after ``run.wait()``
        saw rebalance-storm's group still PreparingRebalance). ``settle=0`` judges at once.
        """
        __tracebackhide__ = True
        check_settle(settle)
        failures = self.failures()
        deadline = time.monotonic() + settle
        while failures and not self._thread.is_alive() and time.monotonic() < deadline:
            time.sleep(SETTLE_POLL_S)  # the caller's thread; the cluster's loop runs on
            failures = self.failures()
        if failures:
            raise AssertionError(self.run.report(failures))


def start(scenario: ScenarioPlan, cluster: Cluster | Proxy) -> ScenarioThread:
    if not isinstance(cluster, Cluster | Proxy):
        raise MockKafkaError(
            "Scenario.start takes a running mockkafka.Cluster or mockkafka.Proxy; for a trio "
            "AsyncCluster or AsyncProxy use `await scenario.run_async(cluster)` (e.g. in a "
            "nursery task)"
        )
    check_runs_on(scenario, cluster)
    return ScenarioThread(scenario, cluster)


def run(scenario: ScenarioPlan, cluster: Cluster | Proxy, *, timeout: float | None = None) -> None:
    t = start(scenario, cluster)
    if not t.wait(timeout):
        t.stop()
    t.check()


async def run_async(
    scenario: ScenarioPlan, cluster: AsyncCluster | Cluster | AsyncProxy | Proxy
) -> None:
    if isinstance(cluster, Cluster | Proxy):
        import sniffio

        if sniffio.current_async_library() == "asyncio":
            import asyncio

            await asyncio.to_thread(run, scenario, cluster)
        else:
            await trio.to_thread.run_sync(run, scenario, cluster)
        return
    check_runs_on(scenario, cluster)
    r = ScenarioRun(scenario, cluster)
    if isinstance(cluster, AsyncProxy):  # setup and checks make requests to the upstream
        await trio.to_thread.run_sync(r.setup)
        await r.play()
        failures = await trio.to_thread.run_sync(r.failures)
    else:
        r.setup()
        await r.play()
        failures = r.failures()
    deadline = time.monotonic() + SETTLE_S  # as ScenarioThread.check: expect: may settle
    while failures and time.monotonic() < deadline:
        await trio.sleep(SETTLE_POLL_S)
        if isinstance(cluster, AsyncProxy):
            failures = await trio.to_thread.run_sync(r.failures)
        else:
            failures = r.failures()
    if failures:
        raise AssertionError(r.report(failures))

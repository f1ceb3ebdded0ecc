"""What the public objects share: :class:`~mockkafka.Cluster`, ``AsyncCluster``,
:class:`~mockkafka.Proxy` and ``AsyncProxy`` (fault rules, the traffic log, the report of
rules that never fired, the ``with`` block, and the waits).

A wait is a probe and a description from the verbs (``_group_probe`` & co: the fake's read
its state, the proxy's ask the upstream) run by the object's
:class:`~mockkafka.server.waits.Waits`: the fake's are woken by each change of its state,
a proxy's poll the upstream (:meth:`Waits.polling`). :class:`BlockingWaits` block the
calling thread, :class:`AwaitableWaits` are coroutines; the same probes serve both.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Any, Protocol, Self, TypeVar

from mockkafka.errors import UnfiredRulesError, UnfiredRuleWarning
from mockkafka.faults.engine import Faults, Rule
from mockkafka.faults.match import RequestInfo
from mockkafka.protocol import records as rec
from mockkafka.server.traffic import TrafficLog
from mockkafka.server.waits import Seen, Waits
from mockkafka.views import GroupView, ShareGroupView, TransactionView

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Awaitable[Any]])


def report_unfired(
    unfired: list[Rule], *, strict: bool, why: Callable[[Rule], str] | None = None
) -> None:
    """Rules that never fired (each followed by ``why(rule)``, e.g. a topic that never
    existed): UnfiredRulesError when ``strict``, else an UnfiredRuleWarning pointing at the
    caller's caller (the ``with`` block that ended)."""
    if not unfired:
        return
    lines = "\n".join(f"  {r}{why(r) if why is not None else ''}" for r in unfired)
    message = f"{len(unfired)} fault rule(s) never fired:\n{lines}"
    if strict:
        raise UnfiredRulesError(message)
    warnings.warn(message, UnfiredRuleWarning, stacklevel=4)


class _HasTraffic(Protocol):
    @property
    def traffic(self) -> TrafficLog: ...


class PublicObject:
    """Fault rules, the traffic log and the report of rules that never fired."""

    _faults: Faults
    _server: _HasTraffic
    strict_faults: bool

    @property
    def faults(self) -> Faults:
        """Fault rules: ``cluster.faults.on("Produce").times(2).error("NOT_LEADER_OR_FOLLOWER")``
        (on a proxy they act on the requests it relays).

        Also ``rules()``, ``remove(rule)``, ``clear()`` and ``events``.
        """
        return self._faults

    @property
    def traffic(self) -> TrafficLog:
        """Every request and response seen (on a proxy: relayed), decoded, for assertions:
        ``traffic.requests("Produce")`` (see TrafficLog)."""
        return self._server.traffic

    def unfired_rules(self) -> list[Rule]:
        """Rules added and never fired (reported at teardown; an error with
        ``strict_faults=True``)."""
        return [r for r in self._faults.rules() if r.fired == 0]

    def why_unfired(self, rule: Rule) -> str:
        """Why ``rule`` did not act, as far as the cluster can tell, as text to append to
        the rule (`` -- ...``; empty when there is nothing to say): a topic it names that
        does not exist (with a did-you-mean); what its trigger still waits for (another
        rule, an event, its window, its nth match); each reason it matched without acting,
        with a count (``matched 3x, declined 3x: 3x partial_trailing_batch: the answer held
        a single batch ...``); and, when it never matched, the nearest requests the traffic
        holds (``12 Fetch requests matched all but topic='t': they had topics u``).
        The teardown report of unfired rules, the pytest failure report and a scenario's
        report show it."""
        return self._faults.on_loop(lambda: self._why(rule))

    def _why(self, rule: Rule) -> str:
        """:meth:`why_unfired`, on the loop that owns the rules (a scenario's checks run
        there)."""
        from mockkafka.faults.near_miss import near_miss

        reasons = self._state_reasons(rule)
        if not reasons:
            reasons = self._faults.engine.explain(rule)
        if not reasons and rule.matched == 0:
            if not self._server.traffic.enabled:
                reasons.append(
                    "it matched no request; with traffic recording off (record_traffic=False) "
                    "the requests it did not match are not known"
                )
            else:
                infos = self._infos_since(rule.created_ms)
                miss = near_miss(rule.match, infos)
                reasons.append(
                    miss
                    if miss is not None
                    else f"{sum(rule.match.matches(i) for i in infos)} request(s) that fit "
                    "its match were recorded while it was active, yet it saw none (they "
                    "were under way when it was added)"
                )
        return f" -- {'; '.join(reasons)}" if reasons else ""

    def _state_reasons(self, rule: Rule) -> list[str]:
        """What the cluster's state says against ``rule`` (on the loop); none by default."""
        return []

    def _infos_since(self, time_ms: int | None, last: int = 5000) -> list[RequestInfo]:
        """The facts of the newest ``last`` requests recorded from ``time_ms`` on."""
        traffic = self._server.traffic
        items = list(traffic)[-last:]
        return [ex.request_info() for ex in items if time_ms is None or ex.time_ms >= time_ms]

    def check_rules(self) -> None:
        """Report rules that never fired: UnfiredRulesError when ``strict_faults`` is on, an
        UnfiredRuleWarning otherwise, each with :meth:`why_unfired`. Called when the
        ``with`` block ends."""
        report_unfired(self.unfired_rules(), strict=self.strict_faults, why=self.why_unfired)


class WithBlock:
    """``with obj:``: ``start()`` on entry; ``stop()`` on exit, then, unless the block
    raised, :meth:`_after_block` (report what went wrong meanwhile)."""

    def start(self) -> Self:
        raise NotImplementedError  # pragma: no cover - provided by the object

    def stop(self) -> None:
        raise NotImplementedError  # pragma: no cover - provided by the object

    def _after_block(self) -> None:
        raise NotImplementedError  # pragma: no cover - provided by the object

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
        if exc is None:
            self._after_block()


class _Probes(Protocol):
    """What the waits need of the verbs (``ClusterVerbs``, ``ProxyVerbs``): the waits and,
    per wait, a probe and its description (see those methods there)."""

    @property
    def _waits(self) -> Waits: ...

    @property
    def _group_probe(self) -> Callable[..., tuple[Callable[[], Seen[GroupView]], str]]: ...

    @property
    def _share_group_probe(
        self,
    ) -> Callable[..., tuple[Callable[[], Seen[ShareGroupView]], str]]: ...

    @property
    def _transaction_probe(
        self,
    ) -> Callable[..., tuple[Callable[[], Seen[TransactionView]], str]]: ...

    @property
    def _records_probe(self) -> Callable[..., tuple[Callable[[], Seen[list[rec.Record]]], str]]: ...

    @property
    def _committed_probe(self) -> Callable[..., tuple[Callable[[], Seen[int]], str]]: ...

    @property
    def _broker_probe(self) -> Callable[..., tuple[Callable[[], Seen[None]], str]]: ...


class BlockingWaits:
    """The waits of :class:`~mockkafka.Cluster` and :class:`~mockkafka.Proxy`: they block
    the calling thread. A Proxy polls the upstream every 50 ms (DescribeGroups,
    ConsumerGroupDescribe, DescribeTransactions, Metadata and Fetch, OffsetFetch)."""

    def wait_for_group(
        self: _Probes,
        group: str,
        *,
        state: str | None = "Stable",
        members: int | None = None,
        where: Callable[[GroupView], bool] | None = None,
        timeout: float = 10.0,
    ) -> GroupView:
        """Block until ``group`` exists in ``state`` (None: any) with ``members`` members and
        ``where(view)`` holds; returns the view. WaitTimeout shows the last state seen."""
        __tracebackhide__ = True
        probe, what = self._group_probe(group, state, members, where)
        return self._waits.wait(
            probe, timeout=timeout, what=what, async_name="cluster.wait_for_group_async(...)"
        )

    def wait_for_share_group(
        self: _Probes,
        group: str,
        *,
        state: str | None = "Stable",
        members: int | None = None,
        where: Callable[[ShareGroupView], bool] | None = None,
        timeout: float = 10.0,
    ) -> ShareGroupView:
        """Block until share group ``group`` exists in ``state`` (None: any) with ``members``
        members and ``where(view)`` holds; returns the view. WaitTimeout shows the last state
        seen."""
        __tracebackhide__ = True
        probe, what = self._share_group_probe(group, state, members, where)
        return self._waits.wait(
            probe, timeout=timeout, what=what, async_name="cluster.wait_for_share_group_async(...)"
        )

    def wait_for_transaction(
        self: _Probes,
        transactional_id: str,
        *,
        state: str | None = None,
        where: Callable[[TransactionView], bool] | None = None,
        timeout: float = 10.0,
    ) -> TransactionView:
        """Block until ``transactional_id`` is in ``state`` and ``where(view)`` holds;
        returns the view. WaitTimeout shows the last state seen."""
        __tracebackhide__ = True
        probe, what = self._transaction_probe(transactional_id, state, where)
        return self._waits.wait(
            probe, timeout=timeout, what=what, async_name="cluster.wait_for_transaction_async()"
        )

    def wait_for_records(
        self: _Probes,
        topic: str,
        *,
        partition: int | None = None,
        count: int,
        timeout: float = 10.0,
    ) -> list[rec.Record]:
        """Block until ``topic`` (or one ``partition`` of it) holds at least ``count``
        records; returns them (partition by partition)."""
        __tracebackhide__ = True
        probe, what = self._records_probe(topic, partition, count)
        return self._waits.wait(
            probe, timeout=timeout, what=what, async_name="cluster.wait_for_records_async(...)"
        )

    def wait_for_committed(
        self: _Probes,
        group: str,
        topic: str,
        partition: int,
        *,
        offset: int,
        timeout: float = 10.0,
    ) -> int:
        """Block until ``group``'s committed offset of ``topic``-``partition`` is at least
        ``offset``; returns it."""
        __tracebackhide__ = True
        probe, what = self._committed_probe(group, topic, partition, offset)
        return self._waits.wait(
            probe, timeout=timeout, what=what, async_name="cluster.wait_for_committed_async(...)"
        )

    def wait_for_broker(
        self: _Probes, broker: int, *, up: bool = True, timeout: float = 10.0
    ) -> None:
        """Block until ``broker`` is running (``up=False``: stopped); on a Proxy, until
        clients can reach it through the proxy (see ``stop_broker``)."""
        __tracebackhide__ = True
        probe, what = self._broker_probe(broker, up)
        self._waits.wait(
            probe, timeout=timeout, what=what, async_name="cluster.wait_for_broker_async(...)"
        )


class AwaitableWaits:
    """The waits as coroutines (trio or asyncio): those of ``AsyncCluster`` and
    ``AsyncProxy``, and the ``*_async`` forms of :class:`~mockkafka.Cluster`'s."""

    async def wait_for_group(
        self: _Probes,
        group: str,
        *,
        state: str | None = "Stable",
        members: int | None = None,
        where: Callable[[GroupView], bool] | None = None,
        timeout: float = 10.0,
    ) -> GroupView:
        """Wait until ``group`` exists in ``state`` (None: any) with ``members`` members and
        ``where(view)`` holds; returns the view. WaitTimeout shows the last state seen."""
        __tracebackhide__ = True
        probe, what = self._group_probe(group, state, members, where)
        return await self._waits.wait_async(probe, timeout=timeout, what=what)

    async def wait_for_share_group(
        self: _Probes,
        group: str,
        *,
        state: str | None = "Stable",
        members: int | None = None,
        where: Callable[[ShareGroupView], bool] | None = None,
        timeout: float = 10.0,
    ) -> ShareGroupView:
        """Wait until share group ``group`` exists in ``state`` (None: any) with ``members``
        members and ``where(view)`` holds; returns the view. WaitTimeout shows the last state
        seen."""
        __tracebackhide__ = True
        probe, what = self._share_group_probe(group, state, members, where)
        return await self._waits.wait_async(probe, timeout=timeout, what=what)

    async def wait_for_transaction(
        self: _Probes,
        transactional_id: str,
        *,
        state: str | None = None,
        where: Callable[[TransactionView], bool] | None = None,
        timeout: float = 10.0,
    ) -> TransactionView:
        """Wait until ``transactional_id`` is in ``state`` and ``where(view)`` holds."""
        __tracebackhide__ = True
        probe, what = self._transaction_probe(transactional_id, state, where)
        return await self._waits.wait_async(probe, timeout=timeout, what=what)

    async def wait_for_records(
        self: _Probes,
        topic: str,
        *,
        partition: int | None = None,
        count: int,
        timeout: float = 10.0,
    ) -> list[rec.Record]:
        """Wait until ``topic`` (or one ``partition``) holds at least ``count`` records."""
        __tracebackhide__ = True
        probe, what = self._records_probe(topic, partition, count)
        return await self._waits.wait_async(probe, timeout=timeout, what=what)

    async def wait_for_committed(
        self: _Probes,
        group: str,
        topic: str,
        partition: int,
        *,
        offset: int,
        timeout: float = 10.0,
    ) -> int:
        """Wait until ``group``'s committed offset of the partition is at least ``offset``."""
        __tracebackhide__ = True
        probe, what = self._committed_probe(group, topic, partition, offset)
        return await self._waits.wait_async(probe, timeout=timeout, what=what)

    async def wait_for_broker(
        self: _Probes, broker: int, *, up: bool = True, timeout: float = 10.0
    ) -> None:
        """Wait until ``broker`` is running (``up=False``: stopped)."""
        __tracebackhide__ = True
        probe, what = self._broker_probe(broker, up)
        await self._waits.wait_async(probe, timeout=timeout, what=what)


def awaitable_form(wait: F) -> F:
    """``wait`` (one of :class:`AwaitableWaits`) as ``NAME_async`` of a blocking object."""

    @functools.wraps(wait)
    async def form(self: Any, *args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        return await wait(self, *args, **kwargs)

    form.__name__ = form.__qualname__ = f"{wait.__name__}_async"
    form.__doc__ = f"The awaitable form of :meth:`{wait.__name__}` (trio or asyncio)."
    return form  # type: ignore[return-value]

"""Which parts of a scenario a :class:`~mockkafka.Proxy` can play, and why not the others.

Derived, not listed twice: a verb step from the proxy's verb table
(:data:`mockkafka._api.proxy_verbs.PROXY_VERBS`), a fault step from the actions the proxy
applies (:data:`mockkafka.server.proxy.PROXY_ACTIONS`). Start conditions and checks that
read what only the fake records (cluster events, transaction state) are named too.
:func:`check_runs_on` raises one ScenarioError listing all of them, each with file, line,
step and what to use instead, before a scenario starts.
"""

from __future__ import annotations

from typing import Any

from mockkafka.scenario.plan import (
    AfterEvent,
    Fault,
    ScenarioError,
    ScenarioPlan,
    Step,
    TransactionState,
    start_to_dict,
)

_FAKE = "needs the in-process fake (mockkafka.Cluster)"


def step_problem(step: Step) -> str | None:
    """Why a proxy cannot run ``step`` (None: it can)."""
    from mockkafka._api.proxy_verbs import refusal
    from mockkafka.server.proxy import PROXY_ACTIONS

    if isinstance(step.start, AfterEvent):
        return (
            f"after: {start_to_dict(step.start)['after']} {_FAKE}: cluster events come from "
            "its state; start the step after requests, records or time instead"
        )
    if isinstance(step.action, Fault):
        f = step.action
        if f.trigger.after_event is not None:
            return f"fault {f.name!r}: after_event {_FAKE}; use after (a rule) or a time window"
        for a in f.actions:
            if type(a) not in PROXY_ACTIONS:
                return (
                    f"fault {f.name!r}: {type(a).NAME} reads the partition log, which is "
                    f"upstream; it {_FAKE}"
                )
        return None
    return refusal(step.action.name)


def too_few_brokers(wanted: int, target: Any) -> str | None:
    """Why the proxy ``target`` cannot give ``wanted`` brokers (None when it can): a
    scenario's ``cluster.brokers`` and a ``kafka_cluster(brokers=...)`` marker skip alike."""
    have = len(target.brokers)
    if wanted <= have:
        return None
    return f"the upstream has {have} broker(s); point the proxy at a cluster with as many"


def problems(scenario: ScenarioPlan, target: Any) -> list[str]:
    """Everything of ``scenario`` the proxy ``target`` cannot run, one line each."""
    file = scenario.source or scenario.name
    out: list[str] = []
    short = too_few_brokers(scenario.cluster.brokers, target)
    if short is not None:
        out.append(f"{file}: cluster: brokers: {scenario.cluster.brokers}: {short}")
    for i, step in enumerate(scenario.steps):
        why = step_problem(step)
        if why is not None:
            where = f"{file}:{step.line}" if step.line else file
            out.append(f"{where}: step {i + 1} {step.label}: {why}")
    for c in scenario.expect:
        if isinstance(c, TransactionState):
            out.append(
                f"{file}: expect: transaction_state {_FAKE} (leave it out with "
                "skip_expect=['transaction_state'])"
            )
    return out


def check_runs_on(scenario: ScenarioPlan, target: Any) -> None:
    """Raise ScenarioError listing what ``target`` cannot run (nothing for a Cluster)."""
    from mockkafka._api.proxy import _ProxyBase

    if not isinstance(target, _ProxyBase):
        return
    found = problems(scenario, target)
    if found:
        raise ScenarioError(
            ("steps",),
            f"scenario {scenario.name!r} cannot run against a proxy in front of a real Kafka "
            f"({len(found)} problem(s)):\n" + "\n".join(f"  {p}" for p in found),
            file=scenario.source,
        )

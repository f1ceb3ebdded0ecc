"""Evaluate a scenario's ``expect:`` checks against the cluster state and traffic.

Runs on the cluster's loop (it reads the state directly). Each check returns the list of
what failed, in words a test author can act on; an empty list means it held.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mockkafka.errors import ErrorCode
from mockkafka.protocol import records as rec
from mockkafka.scenario.plan import (
    CHECK_KEYS,
    Check,
    Committed,
    DataLoss,
    GroupState,
    NoDataLoss,
    NoDuplicates,
    Records,
    RulesFired,
    ScenarioParameter,
    TrafficCount,
    TransactionState,
)
from mockkafka.views import GroupView, group_view

if TYPE_CHECKING:
    from mockkafka.cluster.state import ClusterState
    from mockkafka.faults.engine import Rule
    from mockkafka.server.traffic import TrafficLog

#: (topic, partition) -> [(offset, key, value)] of records a client or the seed wrote and
#: had acknowledged (a list: after a truncation two records may have had the same offset).
Acked = dict[tuple[str, int], list[tuple[int, bytes | None, bytes | None]]]


def view_group(state: Any, group: str) -> GroupView:
    """The view of ``group`` in ``state``: the fake's state on its loop, or a proxy's
    upstream read through the Admin API (``_api/proxy_state.py``)."""
    from mockkafka._api.proxy_state import UpstreamState

    if isinstance(state, UpstreamState):
        return state.groups.view(group)
    return group_view(state, group)


def acknowledged(traffic: TrafficLog, topics: set[str], since_seq: int = 0) -> Acked:
    """Records whose Produce was answered without error (acks != 0), by offset."""
    out: Acked = {}
    for ex in traffic.requests("Produce", since_seq=since_seq):
        req, resp = ex.request, ex.response
        if req is None or resp is None or req.get("acks") == 0:
            continue
        sent: dict[tuple[str, int], bytes] = {}
        for t in req.get("topic_data", []):
            for p in t.get("partition_data", []):
                if t["name"] in topics and p.get("records"):
                    sent[(t["name"], p["index"])] = p["records"]
        for t in resp.get("responses", []):
            for p in t.get("partition_responses", []):
                key = (t["name"], p["index"])
                if key not in sent or p.get("error_code", 0) != ErrorCode.NONE:
                    continue
                try:
                    recs = rec.decode_records(sent[key], check_crc=False)
                except Exception:  # a corrupt request was not acknowledged data anyway
                    continue
                acked = out.setdefault(key, [])
                for i, r in enumerate(recs):
                    acked.append((p["base_offset"] + i, r.key, r.value))
    return out


def _b(x: Any) -> bytes | None:
    return x.encode() if isinstance(x, str) else x


def _lost(
    state: ClusterState, traffic: TrafficLog, topics: tuple[str, ...], seeded: Acked
) -> list[str]:
    acked = acknowledged(traffic, set(topics))
    for k, v in seeded.items():
        if k[0] in topics:
            acked.setdefault(k, []).extend(v)
    lost: list[str] = []
    for (topic, part), want in sorted(acked.items()):
        if topic not in state.topics:
            lost.append(f"{topic}: the topic is gone ({len(want)} acknowledged records)")
            continue
        p = state.partition(topic, part)
        held = {r.offset: (r.key, r.value) for r in p.records()}
        missing = sorted(o for o, key, value in want if held.get(o) != (key, value))
        if missing:
            lost.append(
                f"{topic}-{part}: {len(missing)} of {len(want)} acknowledged records missing or "
                f"changed (first at offset {missing[0]}; log holds "
                f"[{p.log.log_start_offset}, {p.log.high_watermark}))"
            )
    return lost


def evaluate(
    checks: tuple[Check, ...],
    state: ClusterState,
    traffic: TrafficLog,
    *,
    rules: dict[str, Rule],
    seeded: Acked,
    parameters: tuple[ScenarioParameter, ...] = (),
    check_parameters: tuple[tuple[str, ...], ...] = (),
    why: Callable[[Rule], str] | None = None,
) -> list[str]:
    """Every failed expectation, as one line each; a check written with parameters says
    which (``depends on parameter group='ledger'``) and how to switch it off. ``why``
    explains a rule that never fired (``cluster.why_unfired``, run on the loop)."""
    failures: list[str] = []
    values = {p.name: p.value for p in parameters}
    for i, c in enumerate(checks):
        uses = check_parameters[i] if i < len(check_parameters) else ()
        hint = ""
        if uses:
            bound = ", ".join(f"{n}={values.get(n)!r}" for n in uses)
            key = CHECK_KEYS[type(c)]
            hint = (
                f" [depends on parameter {bound}: bind it to your app's name, or leave the "
                f"check out with skip_expect=[{key!r}]]"
            )
        failures.extend(
            f"{type(c).__name__}: {m}{hint}" for m in _one(c, state, traffic, rules, seeded, why)
        )
    return failures


def _one(
    c: Check,
    state: ClusterState,
    traffic: TrafficLog,
    rules: dict[str, Rule],
    seeded: Acked,
    why: Callable[[Rule], str] | None = None,
) -> list[str]:
    if isinstance(c, NoDataLoss):
        return _lost(state, traffic, c.topics, seeded)
    if isinstance(c, DataLoss):
        if _lost(state, traffic, c.topics, seeded):
            return []
        return [f"expected acknowledged records of {', '.join(c.topics)} to be lost; none were"]
    if isinstance(c, NoDuplicates):
        out = []
        for topic in c.topics:
            if topic not in state.topics:
                out.append(f"{topic}: no such topic")
                continue
            for p in state.topics[topic].partitions:
                seen: dict[Any, int] = {}
                for r in p.records():
                    k = (r.key, r.value, r.headers)
                    if k in seen:
                        out.append(
                            f"{topic}-{p.index}: offset {r.offset} duplicates offset {seen[k]} "
                            f"(key {r.key!r})"
                        )
                        break
                    seen[k] = r.offset
        return out
    if isinstance(c, Committed):
        if c.topic not in state.topics:
            return [f"{c.topic}: no such topic"]
        got = {k: v.offset for k, v in state.groups.committed(c.group).items()}
        out = []
        for p in state.topics[c.topic].partitions:
            if c.partition is not None and p.index != c.partition:
                continue
            want = p.log.high_watermark if c.offset == "end" else int(c.offset)
            have = got.get((c.topic, p.index))
            if have is None and c.offset == "end" and want == p.log.log_start_offset:
                continue  # nothing to read there (issue 33: a keyless producer's sticky
                # partitioner may leave a partition empty): no commit is owed
            if have is None or have < want:
                out.append(
                    f"group {c.group!r} committed {have} on {c.topic}-{p.index}, expected >= "
                    f"{want}" + (" (the high watermark)" if c.offset == "end" else "")
                )
        return out
    if isinstance(c, GroupState):
        if c.group not in state.groups.groups:
            return [f"group {c.group!r} does not exist"]
        v = view_group(state, c.group)
        if v.state != c.state or (c.members is not None and len(v.members) != c.members):
            return [
                f"group {c.group!r} is {v.state} with {len(v.members)} members, expected "
                f"{c.state}" + ("" if c.members is None else f" with {c.members} members")
            ]
        return []
    if isinstance(c, TransactionState):
        from mockkafka.errors import MockKafkaError
        from mockkafka.views import transaction_view

        try:
            tv = transaction_view(
                state.coordinators, state.transactions._require(c.transactional_id)
            )
        except MockKafkaError:
            return [f"transactional id {c.transactional_id!r} is unknown"]
        out = []
        if c.state is not None and tv.state != c.state:
            out.append(f"{c.transactional_id!r} is {tv.state}, expected {c.state}")
        if c.committed is not None and tv.committed_count < c.committed:
            out.append(
                f"{c.transactional_id!r} committed {tv.committed_count}, expected >= {c.committed}"
            )
        if c.aborted is not None and tv.aborted_count < c.aborted:
            out.append(
                f"{c.transactional_id!r} aborted {tv.aborted_count}, expected >= {c.aborted}"
            )
        return out
    if isinstance(c, Records):
        if c.topic not in state.topics:
            return [f"{c.topic}: no such topic"]
        n = sum(len(p.records()) for p in state.topics[c.topic].partitions)
        bad = (
            (c.count is not None and n != c.count)
            or (c.at_least is not None and n < c.at_least)
            or (c.at_most is not None and n > c.at_most)
        )
        return (
            [f"{c.topic} holds {n} records, expected {_bounds(c.count, c.at_least, c.at_most)}"]
            if bad
            else []
        )
    if isinstance(c, TrafficCount):
        n = traffic.count(c.api, **dict(c.filters))
        if n < c.at_least or (c.at_most is not None and n > c.at_most):
            flt = "".join(f", {k}={v}" for k, v in c.filters)
            return [f"{n} {c.api} exchanges{flt}, expected {_bounds(None, c.at_least, c.at_most)}"]
        return []
    assert isinstance(c, RulesFired)
    names = c.names if c.names is not None else tuple(rules)
    return [
        f"fault {n!r} never fired (matched {rules[n].matched}x): {rules[n]!r}"
        + (why(rules[n]) if why is not None else "")
        for n in names
        if n in rules and rules[n].fired == 0
    ] + [f"fault {n!r} was never added (its step did not run)" for n in names if n not in rules]


def _bounds(count: int | None, at_least: int | None, at_most: int | None) -> str:
    if count is not None:
        return f"exactly {count}"
    parts = []
    if at_least is not None:
        parts.append(f">= {at_least}")
    if at_most is not None:
        parts.append(f"<= {at_most}")
    return " and ".join(parts) or "any number"


Evaluate = Callable[..., list[str]]

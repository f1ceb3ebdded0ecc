"""Why a rule never matched: the closest requests the traffic holds (sans-IO).

Theory of operation
-------------------
A rule that never matched has no counter to show; what explains it is in the traffic. So
:func:`near_miss` takes the facts of the requests seen while the rule was active (the
:class:`~mockkafka.faults.match.RequestInfo` traffic keeps for each exchange) and looks for
the nearest ones: none of its API (then: which APIs the clients sent), or requests of its
API that one argument of the match kept out (``topic='t'``: they named ``u``; ``broker=2``:
they went to broker 1). Relaxing one argument at a time and keeping the one that lets in
the most requests names the argument to look at first.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Iterable, Sequence

from mockkafka.faults.match import Match, RequestInfo

#: Each match argument, relaxed one at a time (in this order on a tie): how the message
#: calls its values, and the values a request has for it.
_ARGS: dict[str, tuple[str, Callable[[RequestInfo], list[str]]]] = {
    "topic": ("topics", lambda i: sorted(i.topics)),
    "partition": ("partitions", lambda i: [f"{t}-{p}" for t, p in sorted(i.partitions)]),
    "broker": ("brokers", lambda i: [str(i.broker_id)]),
    "versions": ("versions", lambda i: [str(i.version)]),
    "client_id": ("client ids", lambda i: [repr(i.client_id or "")]),
    "group": ("groups", lambda i: sorted(i.groups)),
    "transactional_id": ("transactional ids", lambda i: [repr(i.transactional_id)]),
    "connection": ("connections", lambda i: [str(i.connection_id)]),
}
_SHOWN = 6


def _listing(values: Iterable[str]) -> str:
    counted = Counter(values)
    shown = [f"{v} ({n}x)" if n > 1 else v for v, n in counted.most_common(_SHOWN)]
    if len(counted) > _SHOWN:
        shown.append(f"+{len(counted) - _SHOWN} more")
    return ", ".join(shown) or "none"


def _had(arg: str, infos: Sequence[RequestInfo]) -> str:
    """What ``infos`` had for ``arg`` (``topics u, v``), for the message."""
    label, values = _ARGS[arg]
    found = [v for i in infos for v in values(i)]
    if arg == "topic" and not found:
        return "no topic this cluster knows by name or id"
    return f"{label} {_listing(found)}"


def _value(match: Match, arg: str) -> str:
    v = getattr(match, arg)
    if arg == "versions":
        lo, hi = v
        return str(lo) if lo == hi else f"{lo}..{hi}"
    if isinstance(v, tuple):
        return str(v[0]) if len(v) == 1 else str(list(v))
    return repr(v)


def near_miss(match: Match, infos: Sequence[RequestInfo]) -> str | None:
    """Why none of ``infos`` (the requests seen while the rule was active) matched
    ``match``, naming the nearest ones; None when some do match (the rule saw them: the
    cause is elsewhere)."""
    apis = " or ".join(match.api)
    same_api = [i for i in infos if "*" in match.api or i.api in match.api]
    if not same_api:
        if not infos:
            return "no request reached the cluster while it was active"
        return (
            f"no {apis} request reached the cluster while it was active "
            f"(the clients sent {_listing(i.api for i in infos)})"
        )
    if any(match.matches(i) for i in same_api):
        return None
    best: tuple[str, list[RequestInfo]] | None = None
    for arg in _ARGS:
        if getattr(match, arg) is None:
            continue
        relaxed = dataclasses.replace(match, **{arg: None})  # type: ignore[arg-type]
        hits = [i for i in same_api if relaxed.matches(i)]
        if hits and (best is None or len(hits) > len(best[1])):
            best = (arg, hits)
    if best is None:
        named = ", ".join(f"{a}={_value(match, a)}" for a in _ARGS if getattr(match, a) is not None)
        return (
            f"{len(same_api)} {apis} request(s) were seen, none with {named}; "
            f"they had {_had('topic', same_api)}, {_had('broker', same_api)}"
        )
    arg, hits = best
    n = len(hits)
    return (
        f"{n} {apis} request{'s' if n > 1 else ''} matched all but {arg}={_value(match, arg)}: "
        f"{'they' if n > 1 else 'it'} had {_had(arg, hits)}"
    )


__all__ = ["near_miss"]

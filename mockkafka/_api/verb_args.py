"""What ``Cluster``'s verbs and ``Proxy``'s verbs of the same name check and build alike.

A verb of the fake (``_api/verbs.py``) and its namesake on a proxy (``_api/proxy_verbs.py``)
take the same arguments, so they refuse the same bad ones with the same ConfigError: the
checks are here, called by both. So are the waits' descriptions and the probes that only
differ in how they read a view (the fake reads its state on its loop; the proxy asks the
upstream with Admin API requests, which raises KafkaApiError while Kafka has no such
group, transaction, ...): a probe here takes a ``read`` function and turns what it returns
(or raises) into :class:`~mockkafka.server.waits.Seen`.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from mockkafka.cluster.coordinators import GROUP, TRANSACTION
from mockkafka.cluster.transactions import STATE_NAMES
from mockkafka.errors import ConfigError, KafkaApiError
from mockkafka.faults.model import check_api_names
from mockkafka.protocol.apis import api as lookup_api
from mockkafka.server.waits import Seen
from mockkafka.views import GroupView, ShareGroupView, TransactionView

SHARE_GROUP_STATES = frozenset({"Empty", "Stable", "Dead"})

GROUP_STATES = frozenset(
    {
        "Empty",
        "PreparingRebalance",
        "CompletingRebalance",
        "Stable",
        "Dead",
        "Assigning",
        "Reconciling",
    }
)

V = TypeVar("V", GroupView, ShareGroupView)

Probe = Callable[[], Seen[Any]]


# -- argument checks ----------------------------------------------------------------------------


def check_int(value: Any, what: str, minimum: int | None = None) -> int:
    """``value`` if it is an int (not a bool) of at least ``minimum``, else ConfigError
    ``"{what} must be an int[ >= minimum], got ..."``."""
    if isinstance(value, bool) or not isinstance(value, int):
        bound = "" if minimum is None else f" >= {minimum}"
        raise ConfigError(f"{what} must be an int{bound}, got {value!r}")
    if minimum is not None and value < minimum:
        raise ConfigError(f"{what} must be an int >= {minimum}, got {value!r}")
    return value


def check_choice(value: str | None, choices: frozenset[str], arg: str, what: str) -> None:
    """ConfigError with a did-you-mean when ``value`` (None: not given) is not a choice."""
    if value is not None and value not in choices:
        close = difflib.get_close_matches(str(value), sorted(choices), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ConfigError(f"unknown {what} {arg}={value!r}{hint}; use one of {sorted(choices)}")


def _bytes(x: bytes | str | None, arg: str) -> bytes | None:
    if x is None or isinstance(x, bytes):
        return x
    if isinstance(x, str):
        return x.encode()
    raise ConfigError(f"{arg} must be bytes, str or None, not {type(x).__name__}")


def record_args(
    value: bytes | str | None,
    key: bytes | str | None,
    headers: Sequence[tuple[str, bytes | str | None]],
    timestamp: int | None,
) -> tuple[bytes | None, bytes | None, tuple[tuple[str, bytes | None], ...]]:
    """``produce``'s record as bytes: (value, key, headers); ConfigError names a bad one."""
    if timestamp is not None and (isinstance(timestamp, bool) or not isinstance(timestamp, int)):
        raise ConfigError(f"produce: timestamp must be an int (ms) or None, got {timestamp!r}")
    hdrs = tuple((hk, _bytes(hv, f"headers[{hk!r}]")) for hk, hv in headers)
    return _bytes(value, "value"), _bytes(key, "key"), hdrs


def api_caps(caps: Mapping[str | int, int]) -> dict[int, int]:
    """``cap_api_versions``'s ``{"Fetch": 11}`` as {api key: highest version}; an unknown
    API raises ConfigError with a did-you-mean, a version the API does not have (a cap
    above its newest one would change nothing) names the entry and the API's range."""
    resolved: dict[int, int] = {}
    for k, v in caps.items():
        try:
            a = lookup_api(k)
        except KeyError:
            check_api_names(str(k), "caps")  # raises ConfigError with a did-you-mean
            raise
        if isinstance(v, bool) or not isinstance(v, int) or not a.min_version <= v <= a.max_version:
            raise ConfigError(
                f"caps[{k!r}] must be a version of {a.name} from {a.min_version} to "
                f"{a.max_version}, got {v!r}"
            )
        resolved[a.key] = v
    return resolved


def coordinator_key(
    group: str | None, transactional_id: str | None, verb: str, *, allow_none: bool = False
) -> tuple[int, str | None]:
    """(GROUP or TRANSACTION, key) from the ``group=`` / ``transactional_id=`` pair."""
    if group is not None and transactional_id is not None:
        raise ConfigError(f"{verb}: give group= or transactional_id=, not both")
    for arg, value in (("group", group), ("transactional_id", transactional_id)):
        if value is not None and not isinstance(value, str):
            raise ConfigError(f"{verb}: {arg} must be a str, got {value!r}")
    if transactional_id is not None:
        return TRANSACTION, transactional_id
    if group is None and not allow_none:
        raise ConfigError(f"{verb}: give group= or transactional_id=")
    return GROUP, group


def config_items(configs: Mapping[str, Any], verb: str) -> dict[str, Any]:
    """The ``configs`` of a ``set_*_config`` verb as a dict (ConfigError if not a mapping)."""
    if not isinstance(configs, Mapping):
        raise ConfigError(f"{verb}: configs must be a dict {{config: value}}")
    return dict(configs)


def quota_entity(user: str | None, client_id: str | None, ip: str | None) -> dict[str, str | None]:
    """The entity of ``set_client_quotas``: {entity type: name, None for ``"<default>"``}."""
    given = {"user": user, "client-id": client_id, "ip": ip}
    return {t: (None if n == "<default>" else n) for t, n in given.items() if n is not None}


# -- the waits' probes --------------------------------------------------------------------------


def _read_or_why(read: Callable[[], Any], missing: str) -> tuple[Any, str | None]:
    """(what ``read`` returned, None), or (None, why there is nothing yet)."""
    try:
        got = read()
    except KafkaApiError as exc:
        return None, str(exc)
    return got, (missing if got is None else None)


def members_probe(
    read: Callable[[], V | None],
    missing: str,
    state: str | None,
    members: int | None,
    where: Callable[[V], bool] | None,
) -> Callable[[], Seen[V]]:
    """A wait's probe on a group view: its state, member count and ``where``. ``read``
    returns the view, None (``missing`` says why) or raises KafkaApiError (its text does)."""

    def probe() -> Seen[V]:
        v, why = _read_or_why(read, missing)
        if why is not None:
            return Seen(False, None, why)  # type: ignore[arg-type]
        ok = (
            (state is None or v.state == state)
            and (members is None or len(v.members) == members)
            and (where is None or where(v))
        )
        return Seen(ok, v, v.summary())

    return probe


def group_probe(
    read: Callable[[], GroupView | None],
    group: str,
    state: str | None,
    members: int | None,
    where: Callable[[GroupView], bool] | None,
) -> tuple[Callable[[], Seen[GroupView]], str]:
    """``wait_for_group``'s probe and description (ConfigError for an unknown state)."""
    check_choice(state, GROUP_STATES, "state", "group state")
    return members_probe(
        read, "the group does not exist", state, members, where
    ), f"wait_for_group({group!r}, state={state!r}, members={members!r})"


def transaction_probe(
    read: Callable[[], TransactionView | None],
    transactional_id: str,
    state: str | None,
    where: Callable[[TransactionView], bool] | None,
) -> tuple[Callable[[], Seen[TransactionView]], str]:
    """``wait_for_transaction``'s probe and description (ConfigError for an unknown state)."""
    check_choice(state, STATE_NAMES, "state", "transaction state")

    def probe() -> Seen[TransactionView]:
        v, why = _read_or_why(read, "no producer initialised it yet")
        if why is not None:
            return Seen(False, None, why)  # type: ignore[arg-type]
        ok = (state is None or v.state == state) and (where is None or where(v))
        return Seen(ok, v, v.summary())

    return probe, f"wait_for_transaction({transactional_id!r}, state={state!r})"


def records_wait(topic: str, partition: int | None, count: int) -> str:
    """``wait_for_records``'s description (ConfigError for a bad ``count``)."""
    check_int(count, "wait_for_records: count", 0)
    return f"wait_for_records({topic!r}, partition={partition!r}, count={count})"


def committed_probe(
    read: Callable[[], int | None], group: str, topic: str, partition: int, offset: int
) -> tuple[Callable[[], Seen[int]], str]:
    """``wait_for_committed``'s probe and description; ``read`` returns the committed
    offset of the partition (None: none)."""
    missing = f"group {group!r} has no offset for {topic}-{partition}"

    def probe() -> Seen[int]:
        c, why = _read_or_why(read, missing)
        if why is not None:
            return Seen(False, -1, why)
        return Seen(c >= offset, c, f"committed offset {c}")

    return probe, f"wait_for_committed({group!r}, {topic!r}, {partition}, offset={offset})"


def broker_probe(
    running: Callable[[], bool], broker: int, up: bool, where: str = ""
) -> tuple[Callable[[], Seen[None]], str]:
    """``wait_for_broker``'s probe and description; ``running()`` says if it is up."""

    def probe() -> Seen[None]:
        now = running()
        return Seen(now == up, None, f"broker {broker} {'up' if now else 'down'}{where}")

    return probe, f"wait_for_broker({broker}, up={up})"

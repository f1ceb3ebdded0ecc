"""Fault coverage: which (API, fault kind, error code) combinations and which cluster verbs
a test run exercised.

Theory of operation
-------------------
Collection is off until something opens a :class:`FaultCoverage` with :func:`collect`
(the pytest plugin's ``--kafka-fault-coverage`` does, for the whole session). While one is
open, the server reports every rule that fired (``note_fired``: the API of the request and
each action of the rule) and the fault engine every cluster event a verb emitted
(``note_event``), and every match a rule declined with its reason (``note_declined``: a
suite that writes a ``partial_trailing_batch`` rule which never acts learns why). Off,
each report point costs one falsy check. Counting is per process;
the pytest plugin merges the counts of xdist workers.

:func:`universe` lists what *could* be exercised: every (API, ``error``, code) a broker may
really answer (the table behind :func:`mockkafka.strategies.error_codes`), every other fault
kind on every client API it can act on (each action's ``coverage_details``), and every cluster verb, so a report can say what was never tried.
:func:`realism` labels each combination "as Kafka" (a real broker could do it, with the
state made consistent) or "beyond Kafka" (asked for by name: corruption, lies).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from mockkafka.faults.actions import ACTIONS, Action

#: Cluster event -> the verb that emits it (what the coverage report calls it).
EVENT_VERBS = {
    "broker_stopped": "stop_broker",
    "broker_started": "start_broker",
    "leader_moved": "move_leader",
    "isr_changed": "set_isr",
    "log_truncated": "truncate_log",
    "records_deleted": "delete_records",
    "topic_created": "create_topic",
    "topic_deleted": "delete_topic",
    "partitions_added": "add_partitions",
    "config_changed": "set_topic_config",
    "api_versions_capped": "cap_api_versions",
    "rebalance_triggered": "trigger_rebalance",
    "member_expired": "expire_member",
    "coordinator_moved": "move_coordinator",
    "transaction_aborted": "abort_transaction",
    "transaction_expired": "expire_transaction",
    "producer_fenced": "fence_producer",
}

#: Verbs the report cannot see: they emit no cluster event (``restart_broker`` shows as
#: ``stop_broker`` and ``start_broker``).
UNTRACKED_VERBS = ("restart_broker", "coordinator_loading", "delay_transaction_markers")

#: A fault combination: (API, fault kind, error name or "").
FaultKey = tuple[str, str, str]


class FaultCoverage:
    """Counts of fault combinations fired and verbs applied (see the module docstring)."""

    def __init__(self) -> None:
        self.faults: Counter[FaultKey] = Counter()
        self.verbs: Counter[str] = Counter()
        #: (API, fault kind, error name or "", reason) -> matches declined for that reason.
        self.declined: Counter[tuple[str, str, str, str]] = Counter()

    def merge(self, data: dict[str, Any]) -> None:
        """Add counts in the form :meth:`to_dict` writes (another process's)."""
        for api, kind, error, n in data.get("faults", ()):
            self.faults[(api, kind, error)] += n
        for verb, n in data.get("verbs", {}).items():
            self.verbs[verb] += n
        for api, kind, error, reason, n in data.get("declined", ()):
            self.declined[(api, kind, error, reason)] += n

    def to_dict(self) -> dict[str, Any]:
        return {
            "faults": [[*k, n] for k, n in sorted(self.faults.items())],
            "verbs": dict(sorted(self.verbs.items())),
            "declined": [[*k, n] for k, n in sorted(self.declined.items())],
        }


_SINKS: list[FaultCoverage] = []


def collect(coverage: FaultCoverage) -> None:
    """Start counting into ``coverage`` (until :func:`stop`)."""
    _SINKS.append(coverage)


def stop(coverage: FaultCoverage) -> None:
    if coverage in _SINKS:
        _SINKS.remove(coverage)


def action_kind(action: Action) -> str:
    """The fault kind of an action: its registered ``NAME`` (``"error"``, ``"delay"``, ...)."""
    return type(action).NAME or type(action).__name__


def note_fired(api: str, rules: Iterable[Any]) -> None:
    """Rules fired on a request of ``api`` (called by the server)."""
    if not _SINKS:
        return
    for rule in rules:
        for a in rule.actions:
            key = (api, action_kind(a), a.coverage_detail())
            for sink in _SINKS:
                sink.faults[key] += 1


def note_declined(api: str, rule: Any, reason: str) -> None:
    """A rule matched a request of ``api`` and did not act, because of ``reason``."""
    if not _SINKS:
        return
    for a in rule.actions:
        key = (api, action_kind(a), a.coverage_detail(), reason)
        for sink in _SINKS:
            sink.declined[key] += 1


def note_event(name: str) -> None:
    """A cluster verb emitted event ``name`` (called by the fault engine)."""
    if not _SINKS:
        return
    verb = EVENT_VERBS.get(name, name)
    for sink in _SINKS:
        sink.verbs[verb] += 1


AS_KAFKA = "as Kafka"
BEYOND_KAFKA = "beyond Kafka"


def realism(api: str, kind: str, error: str = "") -> str:
    """``"as Kafka"`` when a real broker could do this to a correct client's request with
    the state made consistent, else ``"beyond Kafka"`` (a corrupt batch, a custom handler,
    an error code that claims something false: :func:`error_facts.beyond_kafka`)."""
    cls = ACTIONS.get(kind)
    if cls is None:
        return BEYOND_KAFKA
    return AS_KAFKA if cls.as_kafka_on(api, error) else BEYOND_KAFKA


def universe(apis: Iterable[str] | None = None) -> tuple[list[FaultKey], list[str]]:
    """Every fault combination and verb that could be exercised (for the "never" list):
    errors per the error-facts table, other fault kinds on every client API (record-data
    faults on Fetch only), every verb that emits an event."""
    from mockkafka.faults.error_facts import CLIENT_APIS

    chosen = tuple(apis) if apis is not None else CLIENT_APIS
    keys: list[FaultKey] = []
    for api in chosen:
        for kind, cls in ACTIONS.items():
            keys += [(api, kind, detail) for detail in cls.coverage_details(api)]
    return keys, sorted(set(EVENT_VERBS.values()))

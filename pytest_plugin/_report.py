"""What the plugin remembers about one test's clusters, and how it reports on them.

Every cluster a fixture starts for a test is registered in the test item's
:class:`TestClusters` (kept in ``item.stash``). The plugin's hooks use it to

* re-raise errors raised inside a broker in the test that caused them (once each);
* add a compact traffic timeline to the report of a failed test;
* write the full traffic as JSON lines when ``--kafka-traffic=DIR`` is given;
* list the fault rules that never fired (a failure with ``strict_faults``).

mockkafka itself is imported only when a cluster exists: the plugin loads in every pytest
session, most of which never start a cluster.
"""

from __future__ import annotations

import hashlib
import re
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mockkafka import AsyncCluster, BrokerError, Cluster
    from mockkafka.server.traffic import Exchange

    AnyCluster = Cluster | AsyncCluster


@dataclass(slots=True)
class TrackedCluster:
    label: str
    cluster: AnyCluster
    # Errors of cluster's server already surfaced to the user (a count: errors only grow).
    reported_errors: int = 0
    # Protocol violations already reported (a count: they only grow during a test).
    reported_violations: int = 0
    # strict_faults: a rule of this cluster that never fired fails the test.
    strict_faults: bool = False


@dataclass(slots=True)
class TestClusters:
    """The clusters started for one test item."""

    clusters: list[TrackedCluster] = field(default_factory=list)
    failed: bool = False
    written: bool = False

    def add(
        self, label: str, cluster: AnyCluster, *, strict_faults: bool = False
    ) -> TrackedCluster:
        """Track ``cluster`` for this test (a shared cluster's older errors are not its)."""
        tracked = TrackedCluster(
            label, cluster, len(cluster.broker_errors), strict_faults=strict_faults
        )
        self.clusters.append(tracked)
        return tracked

    # -- broker errors ------------------------------------------------------------------------

    def take_broker_errors(self) -> list[BaseException]:
        """Errors raised inside any broker since the last call (each surfaces once)."""
        out: list[BaseException] = []
        for t in self.clusters:
            errors = list(t.cluster.broker_errors)
            out.extend(errors[t.reported_errors :])
            t.reported_errors = len(errors)
        return out

    # -- protocol violations ------------------------------------------------------------------

    def take_violations(self) -> list[str]:
        """Protocol violations noted by any cluster since the last call, as report lines."""
        out: list[str] = []
        for t in self.clusters:
            try:
                found = t.cluster.protocol_violations
            except Exception:  # a cluster already stopped: nothing more to report
                continue
            out.extend(f"{t.label}: {v}" for v in found[t.reported_violations :])
            t.reported_violations = len(found)
        return out

    # -- traffic -------------------------------------------------------------------------------

    def traffic_section(self, last: int, jsonl_hint: str | None) -> str | None:
        """The newest ``last`` exchanges of every cluster, one line each, and the fault
        rules; None when no cluster saw traffic or had rules (no empty section)."""
        from mockkafka.server.traffic import SUMMARY_LEGEND

        parts: list[str] = []
        for t in self.clusters:
            items = _snapshot(t.cluster)
            rules = _fault_rules(t.cluster)
            if not items and not rules and t.cluster.traffic.enabled:
                continue
            shown = items[-last:] if last > 0 else []
            head = f"{t.label} ({t.cluster.bootstrap_servers}): {len(items)} exchanges"
            if len(shown) < len(items):
                head += f", last {len(shown)} shown"
            if not t.cluster.traffic.enabled:
                head += " (traffic recording is off: record_traffic=False)"
            parts.append(head)
            origin = t.cluster.traffic.origin_ms
            # each exchange names topic ids as its cluster does (deleted topics too)
            parts.extend("  " + ex.summary(origin) for ex in shown)
            if rules:
                parts.append("  fault rules:")
                parts.extend("    " + r for r in rules)
        if not parts:
            return None
        parts.insert(0, f"columns: {SUMMARY_LEGEND}")
        if jsonl_hint:
            parts.append(jsonl_hint)
        return "\n".join(parts)

    def unfired_rules(self) -> tuple[list[str], bool]:
        """Rules (``label: rule``) that never fired, and whether any is on a strict cluster."""
        out: list[str] = []
        strict = False
        for t in self.clusters:
            for rule in t.cluster.unfired_rules():
                out.append(f"{t.label}: {rule}{t.cluster.why_unfired(rule)}")
                strict = strict or t.strict_faults
        return out, strict

    def write_jsonl(self, directory: Path, nodeid: str) -> list[Path]:
        """Write each cluster's full traffic to ``directory``; returns the files written."""
        directory.mkdir(parents=True, exist_ok=True)
        paths: list[Path] = []
        base = jsonl_name(nodeid)
        for i, t in enumerate(self.clusters):
            path = directory / (f"{base}.jsonl" if i == 0 else f"{base}.{i + 1}.jsonl")
            items = _snapshot(t.cluster)
            with path.open("w", encoding="utf-8") as fp:
                t.cluster.traffic.to_jsonl(fp, items)
            paths.append(path)
        return paths


def _snapshot(cluster: AnyCluster) -> list[Exchange]:
    """The traffic log as a list, read on the cluster's loop (it may still be serving)."""
    return cluster.call(lambda _state: list(cluster.traffic))


def _fault_rules(cluster: AnyCluster) -> list[str]:
    """The cluster's fault rules with how often each fired, and why one that did not act
    on every match did not (``cluster.why_unfired``)."""
    return [
        f"{rule}{cluster.why_unfired(rule)}" if rule.fired == 0 or rule.declined else str(rule)
        for rule in cluster.faults.rules()
    ]


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def jsonl_name(nodeid: str) -> str:
    """A file name for a test id: ``tests/test_a.py::test_b[x]`` -> ``tests_test_a.py_test_b_x``."""
    name = _UNSAFE.sub("_", nodeid.replace("::", "_")).strip("_") or "test"
    if len(name) > 150:
        digest = hashlib.sha1(nodeid.encode()).hexdigest()[:10]
        name = f"{name[:139]}_{digest}"
    return name


def broker_error(errors: list[BaseException]) -> BrokerError:
    """A BrokerError for ``errors`` chained to the first, whose traceback pytest shows."""
    from mockkafka import BrokerError

    first = errors[0]
    more = f" (and {len(errors) - 1} more, see the log)" if len(errors) > 1 else ""
    err = BrokerError(f"error inside the broker during this test{more}: {first!r}")
    err.__cause__ = first
    return err


def format_broker_errors(errors: list[BaseException]) -> str:
    """Each distinct traceback once, with how often it happened."""
    counts: dict[str, int] = {}
    for e in errors:
        text = "".join(traceback.format_exception(e))
        counts[text] = counts.get(text, 0) + 1
    return "\n".join((f"({n} times)\n" if n > 1 else "") + text for text, n in counts.items())

"""``pytest --kafka-fault-coverage[=PATH]``: which fault combinations the suite exercised.

Counts, over the whole session, every fault rule that fired (API, fault kind, error code) and
every cluster verb applied, in any mockkafka cluster of the process (fixtures, state
machines, clusters a test makes itself). At the end it prints a table per API -- what fired
and how often, and what was never tried -- and writes the full report as JSON to PATH
(default ``kafka-fault-coverage.json``). Under pytest-xdist each worker counts its own tests
and the controller merges them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

# mockkafka is imported only when --kafka-fault-coverage is on: loading the plugin stays cheap.
if TYPE_CHECKING:
    from mockkafka.faults import coverage

DEFAULT_PATH = "kafka-fault-coverage.json"
COVERAGE_KEY: pytest.StashKey[coverage.FaultCoverage] = pytest.StashKey()
OPTION = "--kafka-fault-coverage"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mockkafka", "mockkafka (fake Kafka cluster)")
    group.addoption(
        OPTION,
        metavar="PATH",
        nargs="?",
        const=DEFAULT_PATH,
        default=None,
        dest="kafka_fault_coverage",
        help="report which (API, error code, fault kind, verb) combinations the tests "
        f"exercised and which they never did; JSON to PATH (default {DEFAULT_PATH})",
    )


def _enabled(config: pytest.Config) -> bool:
    return config.getoption("kafka_fault_coverage", None) is not None


def pytest_configure(config: pytest.Config) -> None:
    if _enabled(config):
        from mockkafka.faults import coverage

        cov = coverage.FaultCoverage()
        config.stash[COVERAGE_KEY] = cov
        coverage.collect(cov)


def pytest_unconfigure(config: pytest.Config) -> None:
    cov = config.stash.get(COVERAGE_KEY, None)
    if cov is not None:
        from mockkafka.faults import coverage

        coverage.stop(cov)


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    cov = config.stash.get(COVERAGE_KEY, None)
    if cov is None:
        return
    if _is_worker(config):
        config.workeroutput["kafka_fault_coverage"] = cov.to_dict()  # type: ignore[attr-defined]
        return
    report = build_report(cov)
    path = Path(config.getoption("kafka_fault_coverage"))
    path.write_text(json.dumps(report, indent=1) + "\n")


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """xdist controller: merge a finished worker's counts (a pytest-xdist hook: optional, so
    pluggy accepts this plugin where xdist is not installed)."""
    cov = node.config.stash.get(COVERAGE_KEY, None)
    data = getattr(node, "workeroutput", {}).get("kafka_fault_coverage")
    if cov is not None and data:
        cov.merge(data)


def build_report(cov: coverage.FaultCoverage) -> dict[str, Any]:
    """The JSON report: what was exercised (with counts) and what never was."""
    from mockkafka.faults import coverage

    keys, verbs = coverage.universe()
    known = set(keys)
    exercised = [
        {"api": a, "fault": k, "error": e or None, "count": n, "kafka": coverage.realism(a, k, e)}
        for (a, k, e), n in sorted(cov.faults.items())
    ]
    never = [
        {"api": a, "fault": k, "error": e or None, "kafka": coverage.realism(a, k, e)}
        for a, k, e in keys
        if (a, k, e) not in cov.faults
    ]
    hit = sum(1 for k in known if k in cov.faults)
    declined = [
        {
            "api": a,
            "fault": k,
            "error": e or None,
            "reason": reason,
            "count": n,
            "never_fired": (a, k, e) not in cov.faults,
        }
        for (a, k, e, reason), n in sorted(cov.declined.items())
    ]
    return {
        "faults": {
            "exercised": exercised,
            "never": never,
            "covered": hit,
            "total": len(known),
            "declined": declined,
        },
        "verbs": {
            "exercised": dict(sorted(cov.verbs.items())),
            "never": [v for v in verbs if v not in cov.verbs],
        },
    }


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    cov = config.stash.get(COVERAGE_KEY, None)
    if cov is None or _is_worker(config):
        return
    report = build_report(cov)
    tr = terminalreporter
    tr.section("mockkafka fault coverage")
    for line in format_table(report):
        tr.write_line(line)
    tr.write_line(f"JSON report: {config.getoption('kafka_fault_coverage')}")


def format_table(report: dict[str, Any]) -> list[str]:
    """One row per API: combinations exercised (with counts) and the count never tried."""
    rows: dict[str, tuple[list[str], int]] = {}
    for item in report["faults"]["exercised"]:
        label = item["fault"] + (f"={item['error']}" if item["error"] else "")
        if item.get("kafka") == "beyond Kafka":
            label += " (beyond Kafka)"
        done, missing = rows.get(item["api"], ([], 0))
        rows[item["api"]] = ([*done, f"{label} x{item['count']}"], missing)
    for item in report["faults"]["never"]:
        done, missing = rows.get(item["api"], ([], 0))
        rows[item["api"]] = (done, missing + 1)
    f = report["faults"]
    beyond = sum(1 for i in f["exercised"] if i.get("kafka") == "beyond Kafka")
    lines = [
        f"fault combinations exercised: {f['covered']} of {f['total']} known; "
        f"{len(f['exercised']) - beyond} as Kafka, {beyond} beyond Kafka (asked for by name)"
    ]
    width = max((len(a) for a in rows), default=3)
    lines.append(f"{'API'.ljust(width)}  never  exercised")
    for api in sorted(rows):
        done, missing = rows[api]
        lines.append(f"{api.ljust(width)}  {missing:5d}  {', '.join(done) or '-'}")
    silent = [i for i in f.get("declined", ()) if i["never_fired"]]
    if silent:
        lines.append("tried and never fired (the rule matched and declined):")
        for i in silent:
            label = i["fault"] + (f"={i['error']}" if i["error"] else "")
            lines.append(f"  {i['api']} {label} x{i['count']}: {i['reason']}")
    v = report["verbs"]
    exercised = ", ".join(f"{k} x{n}" for k, n in v["exercised"].items()) or "-"
    lines.append(f"verbs exercised: {exercised}")
    lines.append(f"verbs never applied: {', '.join(v['never']) or '-'}")
    return lines

"""``--kafka-fault-coverage``: a table of what fired and what never did, and a JSON file,
merged across xdist workers."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.timeout(90)

TESTS = """
import pytest
from confluent_kafka import Producer

@pytest.mark.kafka_cluster(brokers=2, topics={"orders": 1})
@pytest.mark.parametrize("code", ["NOT_LEADER_OR_FOLLOWER", "REQUEST_TIMED_OUT"])
def test_retried(kafka_cluster, code):
    kafka_cluster.faults.on("Produce").once().error(code)
    p = Producer({"bootstrap.servers": kafka_cluster.bootstrap_servers,
                  "retry.backoff.ms": 10, "log_level": 0})
    p.produce("orders", b"x")
    assert p.flush(10) == 0

@pytest.mark.kafka_cluster(brokers=2, topics={"orders": 1})
def test_leader_moves(kafka_cluster):
    kafka_cluster.move_leader("orders", 0, to=2)
"""


ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.fixture(autouse=True)
def this_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    """Subprocesses (and xdist workers) import this checkout's plugin, not an installed one
    (a path already set, such as a worktree's shim for the plugin package, stays after it)."""
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    )


def _run(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, dict[str, Any]]:
    pytester.makepyfile(TESTS)
    result = pytester.runpytest_subprocess("--kafka-fault-coverage=cov.json", *args)
    result.assert_outcomes(passed=3)
    return result, json.loads((pytester.path / "cov.json").read_text())


def test_coverage_reports_what_fired_and_what_never_did(pytester: pytest.Pytester) -> None:
    result, report = _run(pytester)
    result.stdout.fnmatch_lines(
        [
            "*mockkafka fault coverage*",
            "fault combinations exercised: 2 of * known; 2 as Kafka, 0 beyond Kafka*",
            "Produce *error=NOT_LEADER_OR_FOLLOWER x1, error=REQUEST_TIMED_OUT x1",
            "verbs exercised: *move_leader x1*",
            "verbs never applied: *trigger_rebalance*",
            "JSON report: cov.json",
        ]
    )
    exercised = {
        (e["api"], e["fault"], e["error"]): e["count"] for e in report["faults"]["exercised"]
    }
    assert exercised == {
        ("Produce", "error", "NOT_LEADER_OR_FOLLOWER"): 1,
        ("Produce", "error", "REQUEST_TIMED_OUT"): 1,
    }
    never = report["faults"]["never"]
    assert {
        "api": "Fetch",
        "fault": "partial_trailing_batch",
        "error": None,
        "kafka": "as Kafka",
    } in never
    assert {
        "api": "Produce",
        "fault": "error",
        "error": "OUT_OF_ORDER_SEQUENCE_NUMBER",
        "kafka": "beyond Kafka",
    } in never
    assert not [
        n for n in never if n["error"] == "NOT_LEADER_OR_FOLLOWER" and n["api"] == "Produce"
    ]
    assert report["faults"]["covered"] == 2
    assert report["verbs"]["exercised"]["move_leader"] == 1
    assert "trigger_rebalance" in report["verbs"]["never"]


def test_coverage_merges_xdist_workers(pytester: pytest.Pytester) -> None:
    _result, report = _run(pytester, "-n", "2")
    assert report["faults"]["covered"] == 2
    assert report["verbs"]["exercised"]["move_leader"] == 1


def test_no_report_without_the_option(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(TESTS)
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=3)
    assert "fault coverage" not in result.stdout.str()
    assert not (pytester.path / "kafka-fault-coverage.json").exists()


def test_the_report_marks_each_combination_as_kafka_or_beyond_kafka() -> None:
    from mockkafka_pytest._coverage import build_report, format_table

    from mockkafka.faults.coverage import FaultCoverage

    cov = FaultCoverage()
    cov.faults[("Produce", "error", "NOT_ENOUGH_REPLICAS_AFTER_APPEND")] = 1  # stored first
    cov.faults[("Produce", "error", "OUT_OF_ORDER_SEQUENCE_NUMBER")] = 2  # a lie
    cov.faults[("Fetch", "corrupt_batch", "")] = 1
    report = build_report(cov)
    kinds = {
        (e["api"], e["error"] or e["fault"]): e["kafka"] for e in report["faults"]["exercised"]
    }
    assert kinds == {
        ("Fetch", "corrupt_batch"): "beyond Kafka",
        ("Produce", "NOT_ENOUGH_REPLICAS_AFTER_APPEND"): "as Kafka",
        ("Produce", "OUT_OF_ORDER_SEQUENCE_NUMBER"): "beyond Kafka",
    }
    table = "\n".join(format_table(report))
    assert "1 as Kafka, 2 beyond Kafka" in table
    assert "error=OUT_OF_ORDER_SEQUENCE_NUMBER (beyond Kafka) x2" in table
    assert "error=NOT_ENOUGH_REPLICAS_AFTER_APPEND x1" in table


DECLINING = """
import pytest
from tests.robustness._wire import fetch_partition

@pytest.mark.kafka_cluster(topics={"t": 1})
def test_cut(kafka_cluster):
    kafka_cluster.produce("t", b"only")
    kafka_cluster.faults.on("Fetch", topic="t").partial_trailing_batch()
    fetch_partition(kafka_cluster.bootstrap_servers, "t")
"""


def test_a_fault_the_suite_tried_that_never_acted_is_listed_with_why(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(DECLINING)
    result = pytester.runpytest_subprocess(
        "--kafka-fault-coverage=cov.json", "-W", "ignore::mockkafka.UnfiredRuleWarning"
    )
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "tried and never fired (the rule matched and declined):",
            "  Fetch partial_trailing_batch x1: partial_trailing_batch: the answer held a single "
            "batch and the log has none after it*",
        ]
    )
    report = json.loads((pytester.path / "cov.json").read_text())
    (declined,) = report["faults"]["declined"]
    assert (declined["api"], declined["fault"], declined["count"]) == (
        "Fetch",
        "partial_trailing_batch",
        1,
    )
    assert declined["never_fired"] is True


def test_declines_survive_the_merge_of_xdist_workers() -> None:
    from mockkafka.faults.coverage import FaultCoverage

    worker = FaultCoverage()
    worker.declined[("Fetch", "schema_id", "", "schema_id: no value ...")] += 2
    merged = FaultCoverage()
    merged.merge(worker.to_dict())
    merged.merge(worker.to_dict())
    assert merged.declined == {("Fetch", "schema_id", "", "schema_id: no value ..."): 4}

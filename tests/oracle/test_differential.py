"""The differential harness as a test: 0 unexplained differences between mockkafka and a
fresh Apache Kafka 4.4 broker, every API compared, and the allow-list mirrored in
``docs/skipped_features.md``. ``python -m tests.oracle.report -v`` prints the details."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import mockkafka
from mockkafka.kafka_broker import KafkaBroker, KafkaUnavailable
from tests.oracle.allowed import ALLOWED
from tests.oracle.differential import common_versions, run_all
from tests.oracle.harness import ApiTally
from tests.oracle.report import format_report

pytestmark = pytest.mark.kafka_oracle

DOCS = Path(__file__).resolve().parents[2] / "docs" / "skipped_features.md"


@pytest.fixture(scope="module")
def compared() -> Iterator[tuple[dict[str, ApiTally], dict[str, tuple[int, int]]]]:
    """A fresh broker of its own: the sweep reads "all topics" and "all groups"."""
    try:
        kafka = KafkaBroker().start()
    except KafkaUnavailable as exc:
        pytest.skip(f"kafka oracle tier: {exc}")
    try:
        with mockkafka.Cluster() as fake:
            port = int(fake.bootstrap_servers.split(",")[0].rsplit(":", 1)[1])
            versions = common_versions(port, kafka.port)
            tallies, _ = run_all(port, kafka.port)
            yield tallies, versions
    finally:
        kafka.stop()


def test_no_unexplained_difference_from_kafka(
    compared: tuple[dict[str, ApiTally], dict[str, tuple[int, int]]],
) -> None:
    tallies, _ = compared
    unexplained = sum(t.unexplained for t in tallies.values())
    assert unexplained == 0, format_report(tallies, verbose=True)


def test_every_api_both_brokers_serve_is_compared(
    compared: tuple[dict[str, ApiTally], dict[str, tuple[int, int]]],
) -> None:
    tallies, versions = compared
    assert len(versions) >= 50, versions
    missing = sorted(set(versions) - {a for a, t in tallies.items() if t.compared})
    assert missing == [], missing


def test_every_allowed_difference_is_used_and_documented(
    compared: tuple[dict[str, ApiTally], dict[str, tuple[int, int]]],
) -> None:
    tallies, _ = compared
    used = {d.allowed_by for t in tallies.values() for d in t.examples if d.allowed_by}
    assert sorted(e.key for e in ALLOWED if e.kind == "exchange" and e.key not in used) == []
    assert_allow_list_matches_docs()


def assert_allow_list_matches_docs() -> None:
    text = DOCS.read_text()
    section = text.split("## Differences from Apache Kafka", 1)[-1]
    documented = set(re.findall(r"^\| `([a-z0-9-]+)` \|", section, re.M))
    assert documented == {e.key for e in ALLOWED}, (
        "docs/skipped_features.md's 'Differences from Apache Kafka' table must list exactly "
        "the keys of tests/oracle/allowed.py"
    )

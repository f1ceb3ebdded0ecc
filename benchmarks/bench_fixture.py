"""Per-test overhead of the ``kafka_cluster`` fixture, next to librdkafka's mock cluster.

Run ``python benchmarks/bench_fixture.py`` (``--tests N`` per case, default 200; about 10 s).

What is measured, in milliseconds per test (median and 90th percentile):

- ``kafka_cluster`` fixture, 1 and 3 brokers: an inner pytest session runs N trivial tests
  that request the fixture and N that request nothing; the overhead is the setup + teardown
  time of a fixture test minus that of a bare test (pytest's own per-test cost).
- ``kafka_cluster`` + first Metadata: a whole test (setup, call, teardown) whose body
  creates a confluent-kafka AdminClient and fetches metadata once: comparable to the
  librdkafka row below, which also includes a client.
- librdkafka mock cluster, 1 and 3 brokers: creating a confluent-kafka AdminClient with
  ``test.mock.num.brokers`` (librdkafka starts its in-process mock cluster), fetching
  metadata once (so the cluster is up and answered) and destroying the client.
- ``mockkafka.Cluster`` start + stop called directly, 1 and 3 brokers, for reference.
- ``Cluster.reset()`` of a started 3-broker cluster (what a shared-cluster fixture pays
  between tests): after a test that did nothing, and after a typical one (a 6-partition
  topic holding 100 records, committed offsets, a fault rule, a confluent-kafka client's
  metadata traffic). ``--reset`` runs only these rows (about 2 s).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pytest
from confluent_kafka.admin import AdminClient

import mockkafka

INNER_TESTS = """
import pytest
from confluent_kafka.admin import AdminClient

N = {n}

@pytest.mark.parametrize("i", range(N))
def test_bare(i):
    pass

@pytest.mark.parametrize("i", range(N))
def test_fixture_1(kafka_cluster, i):
    pass

@pytest.mark.parametrize("i", range(N))
@pytest.mark.kafka_cluster(brokers=3)
def test_fixture_3(kafka_cluster, i):
    pass

@pytest.mark.parametrize("i", range(N))
@pytest.mark.kafka_cluster(brokers={brokers_metadata})
def test_fixture_metadata(kafka_cluster, i):
    AdminClient({{"bootstrap.servers": kafka_cluster.bootstrap_servers}}).list_topics(timeout=10)
"""


class Collect:
    """A pytest plugin that sums the duration of every phase of each test."""

    def __init__(self) -> None:
        self.phases: dict[str, dict[str, float]] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.phases.setdefault(report.nodeid, {})[report.when] = report.duration


def ms(values: list[float]) -> tuple[float, float]:
    values = sorted(values)
    return statistics.median(values) * 1000, values[int(len(values) * 0.9)] * 1000


def run_inner(n: int, brokers_metadata: int) -> dict[str, dict[str, list[float]]]:
    """Run the inner session; {test name: {"setup+teardown": [...], "total": [...]}}."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "test_bench_inner.py")
        path.write_text(INNER_TESTS.format(n=n, brokers_metadata=brokers_metadata))
        collect = Collect()
        # mockkafka is imported already, so pytest cannot assertion-rewrite it: fine here.
        quiet = ["-W", "ignore::pytest.PytestAssertRewriteWarning"]
        code = pytest.main(
            [str(path), "-q", "-p", "no:cacheprovider", "--no-header", *quiet],
            plugins=[collect],
        )
        if code != 0:
            raise SystemExit(f"inner pytest session failed ({code})")
    out: dict[str, dict[str, list[float]]] = {}
    for nodeid, phases in collect.phases.items():
        name = nodeid.split("::")[1].split("[")[0]
        entry = out.setdefault(name, {"setup+teardown": [], "total": []})
        entry["setup+teardown"].append(phases["setup"] + phases["teardown"])
        entry["total"].append(sum(phases.values()))
    return out


def time_calls(fn: Callable[[], Any], n: int) -> list[float]:
    out = []
    gc.collect()
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def librdkafka_mock(brokers: int) -> None:
    admin = AdminClient({"test.mock.num.brokers": brokers, "log_level": 0})
    md = admin.list_topics(timeout=10)
    assert len(md.brokers) == brokers
    del admin


def mockkafka_direct(brokers: int) -> None:
    mockkafka.Cluster(brokers=brokers).start().stop()


def reset_rows(n: int) -> list[tuple[str, list[float]]]:
    """Time ``Cluster.reset()`` on a 3-broker cluster, idle and after a typical test."""
    with mockkafka.Cluster(brokers=3) as cluster:
        cluster.reset()  # warm up
        idle = time_calls(cluster.reset, n)
        admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers, "log_level": 0})
        busy: list[float] = []
        for _ in range(n):
            cluster.create_topic("orders", partitions=6, replication_factor=3)
            for i in range(100):
                cluster.produce("orders", b"v%d" % i, partition=i % 6)
            cluster.commit_offsets("billing", {("orders", p): 10 for p in range(6)})
            cluster.faults.on("Fetch").every_time().delay(ms=1)
            admin.list_topics(timeout=10)
            gc.collect()
            t0 = time.perf_counter()
            cluster.reset()
            busy.append(time.perf_counter() - t0)
        del admin
    return [
        ("Cluster(3).reset(), idle", idle),
        ("Cluster(3).reset() after a typical test", busy),
    ]


def print_rows(rows: list[tuple[str, list[float]]]) -> None:
    width = max(len(label) for label, _ in rows)
    print(f"{'case':<{width}}  {'median':>8}  {'p90':>8}")
    for label, values in rows:
        med, p90 = ms(values)
        print(f"{label:<{width}}  {med:8.2f}  {p90:8.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=200, help="tests per case")
    parser.add_argument("--reset", action="store_true", help="only the Cluster.reset() rows")
    args = parser.parse_args()
    n = args.tests
    if args.reset:
        print(f"Cluster.reset() in ms ({n} resets per case)")
        print_rows(reset_rows(n))
        return

    inner = run_inner(n, brokers_metadata=3)
    bare_st = statistics.median(inner["test_bare"]["setup+teardown"])
    rows: list[tuple[str, list[float]]] = []
    for label, name in (
        ("kafka_cluster fixture, 1 broker (setup+teardown)", "test_fixture_1"),
        ("kafka_cluster fixture, 3 brokers (setup+teardown)", "test_fixture_3"),
    ):
        rows.append((label, [x - bare_st for x in inner[name]["setup+teardown"]]))
    rows.append(
        (
            "kafka_cluster 3 brokers + AdminClient metadata (whole test)",
            inner["test_fixture_metadata"]["total"],
        )
    )
    for b in (1, 3):
        rows.append(
            (
                f"librdkafka mock cluster, {b} broker{'s' if b > 1 else ''} "
                "(AdminClient + metadata)",
                time_calls(lambda b=b: librdkafka_mock(b), min(n, 100)),
            )
        )
    for b in (1, 3):
        rows.append(
            (
                f"mockkafka.Cluster({b}).start().stop() direct",
                time_calls(lambda b=b: mockkafka_direct(b), n),
            )
        )
    rows.extend(reset_rows(n))

    print()
    print(
        textwrap.dedent(f"""\
        per-test cost in ms ({n} tests per fixture case; pytest's own per-test
        setup+teardown of {bare_st * 1000:.2f} ms is subtracted from fixture rows)""")
    )
    print_rows(rows)


if __name__ == "__main__":
    main()

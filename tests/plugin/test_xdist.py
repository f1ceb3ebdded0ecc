"""pytest-xdist: every worker starts its own clusters on its own ephemeral ports."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.timeout(90)


def test_parallel_workers_get_separate_clusters(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import os
        import pytest
        from confluent_kafka.admin import AdminClient

        @pytest.mark.parametrize("i", range(4))
        @pytest.mark.kafka_cluster(brokers=2, topics={"shared-name": 3})
        def test_worker(kafka_cluster, kafka_bootstrap, i, tmp_path_factory):
            # Same topic name everywhere: the clusters are separate, so nothing clashes.
            md = AdminClient({"bootstrap.servers": kafka_bootstrap}).list_topics(timeout=10)
            assert len(md.topics["shared-name"].partitions) == 3
            kafka_cluster.produce("shared-name", f"{os.getpid()}-{i}")
            assert kafka_cluster.topic("shared-name").partition(0).high_watermark == 1
            out = tmp_path_factory.getbasetemp().parent / "ports.txt"
            with open(out, "a") as fp:
                fp.write(f"{os.environ.get('PYTEST_XDIST_WORKER')} {kafka_bootstrap}\\n")

        def test_failing(kafka_cluster, kafka_bootstrap):
            AdminClient({"bootstrap.servers": kafka_bootstrap}).list_topics(timeout=10)
            assert False
        """
    )
    result = pytester.runpytest_subprocess(
        "-n",
        "2",
        "--kafka-traffic=traffic",
    )
    result.assert_outcomes(passed=4, failed=1)
    result.stdout.fnmatch_lines(
        ["*- mockkafka traffic -*", "columns: *", "kafka_cluster (127.0.0.1:*): * exchanges"]
    )
    assert [p.name for p in (pytester.path / "traffic").iterdir()] == [
        "test_parallel_workers_get_separate_clusters.py_test_failing.jsonl"
    ]
    basetemps = list(pytester.path.glob("**/ports.txt"))
    lines = [line.split() for p in basetemps for line in p.read_text().splitlines()]
    assert len(lines) == 4
    assert {worker for worker, _ in lines} == {"gw0", "gw1"}
    assert all(b.startswith("127.0.0.1:") for _, b in lines)

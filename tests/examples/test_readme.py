"""README.md's Python blocks run as written (fragments run against the cluster they assume)."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer

import mockkafka

README = Path(__file__).resolve().parent.parent.parent / "README.md"
DOCS_PYTEST = README.parent / "docs" / "pytest.md"


def blocks() -> dict[str, str]:
    """Python blocks by the heading they stand under (numbered when a heading has several)."""
    out: dict[str, str] = {}
    heading = ""
    for m in re.finditer(r"^(#+ [^\n]*)$|^```python\n(.*?)^```", README.read_text(), re.M | re.S):
        if m.group(1):
            heading = m.group(1).lstrip("# ").strip()
            continue
        key = heading
        n = 2
        while key in out:
            key = f"{heading} {n}"
            n += 1
        out[key] = m.group(2)
    return out


def test_readme_blocks_are_all_covered() -> None:
    assert set(blocks()) == {
        "Use it from Python",
        "Use it from Python 2",
        "Use it from Python 3",
        "In pytest",
        "Faults",
        "Groups and transactions",
        "Groups and transactions 2",
        "Security: TLS, SASL and ACLs",
    }


@pytest.mark.parametrize(
    "name",
    [
        "Use it from Python",
        "Use it from Python 2",
        "Use it from Python 3",
        "Security: TLS, SASL and ACLs",
    ],
)
def test_standalone_block_runs(name: str) -> None:
    exec(compile(blocks()[name], f"README.md: {name}", "exec"), {})


def test_pytest_block_is_a_tested_example() -> None:
    # docs/pytest.md's examples are the tests in tests/examples (see test_docs_in_sync.py).
    assert blocks()["In pytest"].strip() in DOCS_PYTEST.read_text()


def test_faults_block_runs_against_the_cluster_it_assumes() -> None:
    with mockkafka.Cluster(brokers=3) as cluster:
        cluster.create_topic("orders", partitions=1, replication_factor=3)
        for i in range(600):
            cluster.produce("orders", b"%d" % i)
        cluster.commit_offsets("g", {("orders", 0): 1})
        producer = Producer(
            {
                "bootstrap.servers": cluster.bootstrap_servers,
                "transactional.id": "my-transactional-id",
            }
        )
        producer.init_transactions(10)
        for _ in range(3):
            producer.list_topics(timeout=10)
        code = blocks()["Faults"]
        exec(compile(code, "README.md: Faults", "exec"), {"cluster": cluster})
        assert len(cluster.faults.rules()) == 11
        assert cluster.topic("orders").partition(0).log_start_offset == 50
        assert cluster.topic("orders").partition(0).high_watermark == 100
        # No client runs after the block, so its rules never fire: the cluster says so.
        assert len(cluster.unfired_rules()) == 11
        cluster.faults.clear()


def test_groups_block_runs_against_the_cluster_it_assumes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with mockkafka.Cluster(brokers=1) as cluster:
        cluster.create_topic("orders", partitions=2)
        bootstrap = cluster.bootstrap_servers
        tx = Producer({"bootstrap.servers": bootstrap, "transactional.id": "billing-tx"})
        tx.init_transactions(10)
        tx.begin_transaction()
        tx.produce("orders", b"paid", partition=0)
        tx.commit_transaction(10)
        consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": "billing",
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
            }
        )
        try:
            consumer.subscribe(["orders"])
            msg: Any = None
            deadline = time.monotonic() + 15
            while msg is None and time.monotonic() < deadline:
                m = consumer.poll(0.2)
                if m is not None and m.error() is None:
                    msg = m
            assert msg is not None and msg.value() == b"paid"
            consumer.commit(msg, asynchronous=False)
            exec(
                compile(blocks()["Groups and transactions"], "README.md", "exec"),
                {"cluster": cluster},
            )
        finally:
            consumer.close()
    out = capsys.readouterr().out
    assert "Stable" in out
    assert "('orders', 0): 1" in out  # committed past the one record (offset 0)
    assert "CompleteCommit 1 0" in out or "Empty 1 0" in out


def test_share_groups_block_runs_against_the_cluster_it_assumes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Two share-group members over raw sockets (the share consumers of the interop tiers
    # need Java or Go); the first acquires the three records of "tasks".
    from tests.apis.test_share_groups_wire import join, raw, share_fetch

    with mockkafka.Cluster(brokers=1) as cluster:
        cluster.create_topic("tasks")
        for i in range(3):
            cluster.produce("tasks", f"job-{i}")
        cluster.set_group_config("jobs", {"share.auto.offset.reset": "earliest"})
        with raw(cluster) as first, raw(cluster) as second:
            me = join(first, "jobs", "tasks")
            assert join(second, "jobs", "tasks")["error_code"] == 0
            first_fetch = share_fetch(
                first, "jobs", me["member_id"], cluster.topic("tasks").topic_id, 0
            )
            assert first_fetch["error_code"] == 0
            exec(
                compile(blocks()["Groups and transactions 2"], "README.md", "exec"),
                {"cluster": cluster},
            )
            assert cluster.share_group("jobs").partition("tasks", 0).offsets("Available") == [
                0,
                1,
                2,
            ]
            cluster.faults.clear()
    out = capsys.readouterr().out
    assert "{'tasks': [0]}" in out  # both members share the one partition
    assert "0 [0, 1, 2] 1" in out


def quickstart_commands() -> list[str]:
    """The shell commands of README's Quickstart section, in order."""
    text = README.read_text()
    section = text.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    return [b.strip() for b in re.findall(r"^```sh\n(.*?)^```", section, re.M | re.S)]


def test_quickstart_test_command_is_what_ci_runs() -> None:
    """The second quickstart command is the one `.ci/run` runs (after installing)."""
    serve, tests = quickstart_commands()
    assert tests == "pip install -e '.[test]' && python -m pytest -n 2"
    ci = (README.parent / ".ci" / "run").read_text()
    assert re.search(r"^pip install (--quiet )?-e '\.\[test\]'$", ci, re.M)
    assert re.search(r"^python -m pytest -n 2$", ci, re.M)
    assert serve.startswith("pip install . && mockkafka serve ")


def test_quickstart_serve_command_serves_a_real_client() -> None:
    """The first quickstart command (its `mockkafka serve` part, with this checkout
    installed) serves the topic it names to confluent-kafka and stops on Ctrl-C."""
    import shlex
    import signal

    from tests.cli.test_serve import round_trip, serving

    argv = shlex.split(quickstart_commands()[0].split(" && ", 1)[1])
    assert argv[:2] == ["mockkafka", "serve"]
    with serving(*argv[2:]) as (proc, bootstrap):
        assert len(bootstrap.split(",")) == 3
        round_trip(bootstrap, "orders", 6, 60)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(10) == 0

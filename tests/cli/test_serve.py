"""`mockkafka serve`: a cluster as a process for test suites in other languages."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from mockkafka.cli import main, parse_topic


@contextmanager
def serving(*args: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "mockkafka.cli", "serve", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("bootstrap.servers="), (
            line,
            proc.stderr.read() if proc.stderr else "",
        )
        yield proc, line.split("=", 1)[1]
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)


def test_serve_prints_bootstrap_and_serves_a_real_client_then_stops_on_sigterm() -> None:
    with serving("--brokers", "3", "--topic", "orders:3:3") as (proc, bootstrap):
        assert len(bootstrap.split(",")) == 3
        assert all(h.startswith("127.0.0.1:") for h in bootstrap.split(","))
        p = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
        for i in range(30):
            p.produce("orders", value=b"m%d" % i, partition=i % 3)
        assert p.flush(10) == 0
        c = Consumer(
            {"bootstrap.servers": bootstrap, "group.id": "cli", "enable.auto.commit": False}
        )
        try:
            c.assign([TopicPartition("orders", i, 0) for i in range(3)])
            got: list[bytes] = []
            deadline = time.monotonic() + 15
            while len(got) < 30 and time.monotonic() < deadline:
                m = c.poll(0.5)
                if m is not None and not m.error():
                    got.append(m.value())
            assert sorted(got) == sorted(b"m%d" % i for i in range(30))
        finally:
            c.close()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0


def test_serve_stops_cleanly_on_sigint() -> None:
    with serving() as (proc, bootstrap):
        assert bootstrap.count(",") == 0
        proc.send_signal(signal.SIGINT)
        assert proc.wait(10) == 0


def test_serve_writes_traffic_jsonl_at_exit(tmp_path: os.PathLike[str]) -> None:
    out = os.path.join(os.fspath(tmp_path), "traffic.jsonl")
    with serving("--traffic-jsonl", out) as (proc, bootstrap):
        p = Producer({"bootstrap.servers": bootstrap})
        p.list_topics(timeout=10)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
    with open(out) as fp:
        text = fp.read()
    assert '"api": "Metadata"' in text and '"api": "ApiVersions"' in text


@pytest.mark.parametrize(
    ("text", "expected"),
    [("t", ("t", 1, 1)), ("t:6", ("t", 6, 1)), ("t:6:3", ("t", 6, 3))],
)
def test_topic_argument_forms(text: str, expected: tuple[str, int, int]) -> None:
    spec = parse_topic(text)
    assert (spec.name, spec.partitions, spec.replication_factor) == expected


@pytest.mark.parametrize("bad", ["t:x", ":3", "t:0", "t:1:2:3"])
def test_bad_topic_argument_is_a_usage_error(bad: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["serve", "--topic", bad])
    assert exc.value.code == 2
    assert "invalid topic" in capsys.readouterr().err


def test_replication_factor_above_brokers_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--brokers", "1", "--topic", "t:1:3"]) == 2
    assert "only 1 brokers" in capsys.readouterr().err


def test_apis_lists_advertised_versions(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["apis"]) == 0
    out = capsys.readouterr().out
    assert "Produce" in out and "Fetch" in out and "ApiVersions" in out

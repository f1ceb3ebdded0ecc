"""`mockkafka serve`: a cluster as a process for test suites in other languages."""

from __future__ import annotations

import io
import json
import os
import shlex
import signal
import socket
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


def round_trip(bootstrap: str, topic: str, partitions: int, count: int) -> None:
    """confluent-kafka writes ``count`` messages across ``partitions`` of ``topic`` and reads
    every one back (bounded: 15 s)."""
    p = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    for i in range(count):
        p.produce(topic, value=b"m%d" % i, partition=i % partitions)
    assert p.flush(10) == 0
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "cli", "enable.auto.commit": False})
    try:
        c.assign([TopicPartition(topic, i, 0) for i in range(partitions)])
        got: list[bytes] = []
        deadline = time.monotonic() + 15
        while len(got) < count and time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is not None and not m.error():
                got.append(m.value())
        assert sorted(got) == sorted(b"m%d" % i for i in range(count))
    finally:
        c.close()


def test_serve_prints_bootstrap_and_serves_a_real_client_then_stops_on_sigterm() -> None:
    with serving("--brokers", "3", "--topic", "orders:3:3") as (proc, bootstrap):
        assert len(bootstrap.split(",")) == 3
        assert all(h.startswith("127.0.0.1:") for h in bootstrap.split(","))
        round_trip(bootstrap, "orders", 3, 30)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0


def test_serve_with_sasl_users_prints_client_settings_and_authenticates_them() -> None:
    args = ("--security-protocol", "SASL_PLAINTEXT", "--user", "alice:s3cret", "--topic", "t")
    with serving(*args) as (proc, bootstrap):
        assert proc.stdout is not None
        lines = [proc.stdout.readline().strip() for _ in range(4)]
        settings = dict(line.split("=", 1) for line in lines[1:])
        assert settings["security.protocol"] == "SASL_PLAINTEXT"
        assert settings["sasl.mechanism"] == "PLAIN"
        assert 'username="alice"' in settings["sasl.jaas.config"]
        good = {
            "bootstrap.servers": bootstrap,
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "SCRAM-SHA-256",
            "sasl.username": "alice",
            "sasl.password": "s3cret",
        }
        p = Producer(good)
        p.produce("t", b"v")
        assert p.flush(10) == 0
        errors: list[str] = []
        bad = Producer(
            {**good, "sasl.password": "wrong", "error_cb": lambda e: errors.append(e.str())}
        )
        bad.produce("t", b"v")
        assert bad.flush(3) == 1
        assert any("Authentication failed" in e for e in errors), errors
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0


def test_serve_stops_cleanly_on_sigint() -> None:
    with serving() as (proc, bootstrap):
        assert bootstrap.count(",") == 0
        proc.send_signal(signal.SIGINT)
        assert proc.wait(10) == 0


def test_serve_writes_traffic_jsonl_as_it_happens_and_loses_nothing_on_a_crash(
    tmp_path: os.PathLike[str],
) -> None:
    out = os.path.join(os.fspath(tmp_path), "traffic.jsonl")
    with serving("--traffic-jsonl", out) as (proc, bootstrap):
        p = Producer({"bootstrap.servers": bootstrap})
        p.list_topics(timeout=10)
        # Written while the server runs, not at exit...
        rows = _jsonl(out)
        assert {"ApiVersions", "Metadata"} <= {r["api"] for r in rows}
        # ...so a crash loses nothing already answered.
        proc.kill()
        proc.wait(10)
    assert _jsonl(out) == rows
    assert all(r["response"] is not None for r in rows)


def _jsonl(path: str) -> list[dict[str, object]]:
    with open(path) as fp:
        return [json.loads(line) for line in fp]


def test_serve_log_prints_one_line_per_exchange_live() -> None:
    with serving("--log", "--topic", "orders") as (proc, bootstrap):
        p = Producer({"bootstrap.servers": bootstrap, "client.id": "logged"})
        p.produce("orders", b"v")
        assert p.flush(10) == 0
        assert proc.stderr is not None
        lines: list[str] = []
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and not any(" Produce v" in x for x in lines):
            lines.append(proc.stderr.readline())
        produce = [x for x in lines if " Produce v" in x]
        assert produce and " logged " in produce[0] and "orders-0>0" in produce[0]
        assert proc.poll() is None  # still serving
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0


@pytest.mark.parametrize(("flags", "created"), [((), True), (("--no-auto-create-topics",), False)])
def test_serve_auto_creates_topics_as_kafka_does_and_can_be_told_not_to(
    flags: tuple[str, ...], created: bool
) -> None:
    with serving(*flags) as (proc, bootstrap):
        p = Producer({"bootstrap.servers": bootstrap, "message.timeout.ms": 2000})
        reports: list[object] = []
        p.produce("new-topic", b"v", on_delivery=lambda err, _m: reports.append(err))
        p.flush(10)
        assert len(reports) == 1
        assert (reports[0] is None) is created, reports
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0


def _run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mockkafka.cli", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def _one_line_error(result: subprocess.CompletedProcess[str], status: int, text: str) -> None:
    assert result.returncode == status, result.stderr
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and text in lines[0], result.stderr
    assert "Traceback" not in result.stderr


def test_port_in_use_is_one_line_naming_the_port() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = _run_cli("serve", "--port", str(port))
    _one_line_error(result, 1, f"cannot listen on 127.0.0.1:{port}")


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (("--topic", "a", "--topic", "a:3"), "--topic 'a' is given twice"),
        (("--port", "65534", "--brokers", "3"), "broker 3 would listen on 65536, above 65535"),
        (("--traffic-jsonl", "/nonexistent-dir/t.jsonl"), "cannot write --traffic-jsonl"),
        (("--brokers", "0"), "--brokers: must be at least 1"),
        (("--port", "70000"), "port 70000 out of range"),
        (("--default-replication-factor", "2"), "default_replication_factor must be between"),
        (("--topic", "t:1:3"), "only 1 brokers"),
        (("--bogus",), "unrecognized arguments: --bogus (see mockkafka serve --help)"),
        (("--brokres", "3"), "unrecognized arguments: --brokres 3; did you mean --brokers?"),
        (("--broker=3",), "unrecognized arguments: --broker=3; did you mean --brokers?"),
        (("--user", "alice"), "invalid user 'alice': expected NAME:PASSWORD"),
        (("--security-protocol", "SASL_PLAIN"), "SASL_PLAINTEXT"),
        (("--security-protocol", "SASL_PLAINTEXT"), "users"),
    ],
)
def test_bad_flags_are_one_line_naming_the_problem(args: tuple[str, ...], text: str) -> None:
    _one_line_error(_run_cli("serve", *args), 2, text)


def test_unwritable_traffic_file_is_refused_before_anything_listens(
    tmp_path: os.PathLike[str],
) -> None:
    os.chmod(tmp_path, 0o500)
    try:
        if os.access(tmp_path, os.W_OK):
            pytest.skip("running as a user who can write anywhere (root)")
        result = _run_cli("serve", "--traffic-jsonl", os.path.join(os.fspath(tmp_path), "t"))
    finally:
        os.chmod(tmp_path, 0o700)
    _one_line_error(result, 2, "cannot write --traffic-jsonl")


def test_version() -> None:
    import mockkafka

    result = _run_cli("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"mockkafka {mockkafka.__version__}"


def test_apis_into_a_closed_pipe_exits_quietly() -> None:
    """``mockkafka apis | head -1``: the reader is gone before the listing is written."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "mockkafka.cli", "apis"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(30) == 0
    assert err == ""


def test_apis_piped_into_head() -> None:
    result = subprocess.run(
        f"{shlex.quote(sys.executable)} -m mockkafka.cli apis | head -1",
        shell=True,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.stdout.split()[:2] == ["0", "Produce"]
    assert result.stderr == ""


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
    [line] = capsys.readouterr().err.splitlines()
    assert "invalid topic" in line


def test_replication_factor_above_brokers_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--brokers", "1", "--topic", "t:1:3"]) == 2
    assert "only 1 brokers" in capsys.readouterr().err


def test_apis_lists_advertised_versions(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["apis"]) == 0
    out = capsys.readouterr().out
    assert "Produce" in out and "Fetch" in out and "ApiVersions" in out


def test_a_failing_traffic_file_is_reported_once_and_serving_goes_on(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from mockkafka.cli import TrafficWriter
    from mockkafka.server.traffic import Exchange

    class DiskFull(io.StringIO):
        def write(self, text: str) -> int:
            raise OSError(28, "No space left on device")

    writer = TrafficWriter(DiskFull(), None)
    ex = Exchange(1, 0, 1, 1, "c", "Metadata", 3, 12, 1, {"topics": None})
    writer(ex)
    writer(ex)  # no second complaint, no exception into the broker
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "mockkafka serve: writing --traffic-jsonl failed (No space left on device); "
        "traffic is no longer written"
    ]
    assert writer.written == 2


@pytest.mark.parametrize(
    ("argv", "text"),
    [
        (
            ["apis", "--kafka-versoin", "3.9"],
            "mockkafka apis: unrecognized arguments: --kafka-versoin 3.9; "
            "did you mean --kafka-version?",
        ),
        (
            ["proxy", "--upstream", "h:1", "--scenaro", "x"],
            "mockkafka proxy: unrecognized arguments: --scenaro x; did you mean --scenario?",
        ),
    ],
)
def test_a_misspelt_flag_of_any_command_is_named_by_it_with_a_did_you_mean(
    argv: list[str], text: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert capsys.readouterr().err.startswith(text)

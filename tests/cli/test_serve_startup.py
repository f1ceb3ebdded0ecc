"""`mockkafka serve` says where it listens before it imports the broker (server/prebind.py):
the line comes in tens of milliseconds, and what the broker does is unchanged."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys

import pytest

from mockkafka.protocol.framing import NEED_DATA, ClientConnection

SERVE = (sys.executable, "-m", "mockkafka.cli", "serve")


def _start(*args: str) -> tuple[subprocess.Popen[str], list[str]]:
    proc = subprocess.Popen(
        [*SERVE, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    lines = [proc.stdout.readline().strip(), proc.stdout.readline().strip()]
    assert lines[0].startswith("bootstrap.servers="), (lines, proc.stderr)
    assert lines[1].startswith("control=http://127.0.0.1:"), lines
    return proc, lines


def _request(address: str, api: str, version: int, body: dict[str, object]) -> dict[str, object]:
    """One request on a fresh connection, its decoded answer (bounded: 30 s)."""
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        conn = ClientConnection(client_id="startup-test")
        sock.sendall(conn.send_request(api, version, body))
        for _ in range(1000):
            event = conn.next_event()
            if event is not NEED_DATA:
                answer: dict[str, object] = event.body
                return answer
            data = sock.recv(65536)
            assert data, "the broker closed the connection"
            conn.receive_data(data)
    raise AssertionError(f"no {api} answer")


def _api_versions(address: str) -> dict[str, object]:
    return _request(
        address, "ApiVersions", 3, {"client_software_name": "t", "client_software_version": "1"}
    )


def test_a_topic_of_the_command_line_is_there_for_the_first_request() -> None:
    """A client that asks at once for a --topic finds its partitions (no auto-created
    one-partition topic in its place): the topics exist before a request is read."""
    proc, lines = _start("--brokers", "2", "--topic", "orders:6:2")
    try:
        first = lines[0].split("=", 1)[1].split(",")[0]
        meta = _request(first, "Metadata", 12, {"topics": [{"name": "orders"}]})
        topics = meta["topics"]
        assert isinstance(topics, list) and len(topics) == 1
        assert topics[0]["error_code"] == 0
        assert len(topics[0]["partitions"]) == 6
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
        assert proc.stderr is not None
        assert proc.stderr.read() == ""
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)


def test_a_request_sent_right_after_the_line_is_answered_by_every_broker() -> None:
    proc, lines = _start("--brokers", "3", "--topic", "orders:3:3")
    try:
        for address in lines[0].split("=", 1)[1].split(","):
            answer = _api_versions(address)
            assert answer["error_code"] == 0
            assert answer["api_keys"]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_right_after_the_line_stops_serve_cleanly(sig: signal.Signals) -> None:
    proc, _ = _start()
    proc.send_signal(sig)  # most likely while the broker is still being imported
    try:
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.stderr is not None
    assert proc.stderr.read() == ""


def test_the_line_comes_before_the_broker_is_imported() -> None:
    script = (
        "import io, sys\n"
        "from mockkafka import cli\n"
        "args = cli.build_parser().parse_args(['serve', '--brokers', '2', '--topic', 't:2:2'])\n"
        "scenario = cli.load_scenario(args)\n"
        "cli.check_args(args)\n"
        "out = io.StringIO()\n"
        "bound = cli.prebind(args, scenario, out)\n"
        "print(bound is not None, 'trio' in sys.modules, 'mockkafka.cluster.state' in sys.modules)\n"
        "print(out.getvalue().splitlines()[0].count(','))\n"
        "bound.close()\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.split() == ["True", "False", "False", "1"], result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("--topic", "a/b"),  # CreateTopics would refuse it: the error comes first, as before
        ("--security-protocol", "SASL_PLAINTEXT", "--user", "alice:secret"),  # more lines to print
    ],
)
def test_what_could_fail_or_print_more_before_the_line_takes_the_full_start(
    args: tuple[str, ...],
) -> None:
    script = (
        "import io, sys\n"
        "from mockkafka import cli\n"
        f"args = cli.build_parser().parse_args(['serve', *{list(args)!r}])\n"
        "scenario = cli.load_scenario(args)\n"
        "cli.check_args(args)\n"
        "print(cli.prebind(args, scenario, io.StringIO()))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.strip() == "None", result.stderr


def test_an_illegal_topic_name_is_one_line_and_no_bootstrap_line() -> None:
    result = subprocess.run([*SERVE, "--topic", "a/b"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert "contains illegal characters '/'" in result.stderr
    assert "Traceback" not in result.stderr


def test_control_port_in_use_is_one_line_naming_it() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = subprocess.run(
            [*SERVE, "--control-port", str(port)], capture_output=True, text=True, timeout=60
        )
    assert result.returncode == 1, result.stderr
    assert result.stdout == ""
    assert f"control endpoint cannot listen on 127.0.0.1:{port}" in result.stderr
    assert "Traceback" not in result.stderr

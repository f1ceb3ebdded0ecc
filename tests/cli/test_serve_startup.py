"""`mockkafka serve` binds its listeners before it imports the broker (server/prebind.py) and
prints ``bootstrap.servers=`` once the broker answers, with the first requests of a test
prepared (issue 33): what the broker does is unchanged."""

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


# Runs ``mockkafka serve`` as its entry point does, in a fresh interpreter, and notes which
# modules are loaded when ``bootstrap.servers=`` is written; a line on stdin asks it for the
# modules loaded since (on stderr), while it keeps serving.
_SERVE_NOTING_MODULES = """
import sys, threading
from mockkafka import cli

class Out:
    def __init__(self, real):
        self.real, self.at_line = real, None
    def write(self, text):
        if text.startswith("bootstrap.servers=") and self.at_line is None:
            self.at_line = set(sys.modules)
        return self.real.write(text)
    def flush(self):
        self.real.flush()

sys.stdout = out = Out(sys.stdout)

def report():
    sys.stdin.readline()
    print(sorted(set(sys.modules) - out.at_line), file=sys.stderr, flush=True)
    print(sorted(out.at_line), file=sys.stderr, flush=True)

threading.Thread(target=report, daemon=True).start()
sys.exit(cli.main(["serve", *sys.argv[1:]]))
"""


#: What a start without compressed batches, fault rules, groups, scenarios or secured
#: listeners does not need (each was imported before issue 33, 5-15 ms apiece): the
#: metadata reader that crc32c's package runs, the compression libraries, the fault
#: action modules, the group machinery, YAML and the scenario schema, HTTP parsing.
NOT_FOR_THE_FIRST_REQUESTS = {
    "importlib.metadata",
    "email",
    "lz4",
    "snappy",
    "zstandard",
    "xxhash",
    "mockkafka.faults.actions.delay",
    "mockkafka.cluster.groups",
    "yaml",
    "jsonschema",
    "h11",
    "hypothesis",
}


def test_after_the_line_the_first_requests_of_a_test_import_nothing() -> None:
    """Issue 33: the line means ready. A client that connects right after it gets its
    ApiVersions, CreateTopics, Metadata, InitProducerId and Produce (acks=all, one record)
    answers, each at the newest version served, without the broker importing a module
    first (imports on first use made the first answer come 0.5 s after the line); and
    the start imported nothing those requests do not need."""
    import ast

    from mockkafka.protocol import records as rec

    proc = subprocess.Popen(
        [sys.executable, "-c", _SERVE_NOTING_MODULES, "--brokers", "3"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdin is not None and proc.stderr is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("bootstrap.servers="), (line, proc.stderr)
        host, port = line.split("=", 1)[1].split(",")[0].rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=30) as sock:
            conn = ClientConnection(client_id="first-requests")

            def ask(api: str, version: int, body: dict[str, object]) -> dict[str, object]:
                sock.sendall(conn.send_request(api, version, body))
                for _ in range(1000):
                    event = conn.next_event()
                    if event is not NEED_DATA:
                        answer: dict[str, object] = event.body
                        return answer
                    data = sock.recv(65536)
                    assert data, f"the broker closed the connection after {api}"
                    conn.receive_data(data)
                raise AssertionError(f"no {api} answer")

            versions = ask(
                "ApiVersions", 3, {"client_software_name": "t", "client_software_version": "1"}
            )
            newest = {k["api_key"]: k["max_version"] for k in versions["api_keys"]}  # type: ignore[union-attr]
            created = ask(
                "CreateTopics",
                newest[19],
                {
                    "topics": [{"name": "t", "num_partitions": 1, "replication_factor": 3}],
                    "timeout_ms": 5000,
                },
            )
            topic = created["topics"][0]  # type: ignore[index]
            assert topic["error_code"] == 0, created
            meta = ask("Metadata", newest[3], {"topics": [{"name": "t"}]})
            assert meta["topics"][0]["error_code"] == 0, meta  # type: ignore[index]
            init = ask("InitProducerId", newest[22], {"transaction_timeout_ms": 60000})
            assert init["error_code"] == 0, init
            batch = rec.encode_batch(
                [rec.Record(0, 0, None, b"v")],
                producer_id=int(init["producer_id"]),  # type: ignore[call-overload]
                producer_epoch=int(init["producer_epoch"]),  # type: ignore[call-overload]
                base_sequence=0,
            )
            topic_key = {"name": "t"} if newest[0] < 13 else {"topic_id": topic["topic_id"]}
            produced = ask(
                "Produce",
                newest[0],
                {
                    "acks": -1,
                    "timeout_ms": 5000,
                    "topic_data": [
                        {**topic_key, "partition_data": [{"index": 0, "records": batch}]}
                    ],
                },
            )
            part = produced["responses"][0]["partition_responses"][0]  # type: ignore[index]
            assert part["error_code"] == 0, produced
        proc.stdin.write("\n")
        proc.stdin.flush()
        imported = ast.literal_eval(proc.stderr.readline())
        assert imported == [], f"imported on the first requests, after the line: {imported}"
        at_line = set(ast.literal_eval(proc.stderr.readline()))
        assert not at_line & NOT_FOR_THE_FIRST_REQUESTS
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)


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
        "print(cli.prebind(args, scenario))\n"
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

"""``mockkafka proxy``'s control endpoint: the routes of ``mockkafka serve``'s, on a proxy
in front of real Kafka 4.4 (faults, steps, waits, traffic, state, scenarios, stop)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from confluent_kafka import Producer

from mockkafka.kafka_broker import KafkaBroker
from tests.cli.test_control import http
from tests.interop.conftest import unique

pytestmark = [pytest.mark.kafka_oracle, pytest.mark.interop, pytest.mark.timeout(120)]


@contextmanager
def proxy_process(*args: str) -> Iterator[tuple[subprocess.Popen[str], str, str]]:
    """``mockkafka proxy ARGS``: the process, bootstrap.servers and the control URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "mockkafka.cli", "proxy", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first, second = proc.stdout.readline().strip(), proc.stdout.readline().strip()
        assert first.startswith("bootstrap.servers=127.0.0.1:"), (first, proc.stderr)
        assert second.startswith("control=http://127.0.0.1:"), second
        yield proc, first.split("=", 1)[1], second.split("=", 1)[1]
    finally:
        if proc.poll() is None:
            proc.terminate()
        proc.wait(20)


def test_the_control_endpoint_drives_a_proxy(kafka: KafkaBroker) -> None:
    topic = unique("pctl")
    with proxy_process("--upstream", kafka.bootstrap_servers) as (proc, bootstrap, ctl):
        status, got = http("POST", f"{ctl}/steps", {"create_topic": {"topic": topic}})
        assert status == 200, got
        status, got = http(
            "POST",
            f"{ctl}/steps",
            {
                "fault": {
                    "name": "nl",
                    "on": "Produce",
                    "times": 2,
                    "error": "NOT_LEADER_OR_FOLLOWER",
                }
            },
        )
        assert status == 200, got
        producer = Producer({"bootstrap.servers": bootstrap, "retry.backoff.ms": 10})
        producer.produce(topic, b"through the proxy")
        assert producer.flush(30) == 0
        status, faults = http("GET", f"{ctl}/faults")
        assert status == 200 and faults[0]["name"] == "nl" and faults[0]["fired"] == 2
        status, traffic = http("GET", f"{ctl}/traffic?api=Produce")
        assert status == 200 and len(traffic) >= 3
        status, got = http(
            "POST", f"{ctl}/wait", {"after": {"records": {"topic": topic, "count": 1}}}
        )
        assert status == 200, got
        status, state = http("GET", f"{ctl}/state")
        assert status == 200 and state["topics"][topic][0]["high_watermark"] == 1
        assert [b["port"] for b in state["brokers"]] == [int(bootstrap.rsplit(":", 1)[1])]

        # a step the proxy cannot run is refused, saying what to use instead
        status, got = http(
            "POST",
            f"{ctl}/steps",
            {"truncate_log": {"topic": topic, "partition": 0, "to_offset": 0}},
        )
        assert status == 400 and "truncate_log needs the in-process fake" in got["error"]
        status, got = http("POST", f"{ctl}/reset", {})
        assert status == 409 and "reset needs the in-process fake" in got["error"]

        # a library scenario over HTTP, checked against Kafka
        t2 = unique("pctls")
        status, got = http(
            "POST",
            f"{ctl}/scenario",
            {
                "name": "throttled-cluster",
                "parameters": {"topic": t2},
                "skip_expect": ["committed"],
            },
        )
        assert status == 202, got
        producer = Producer({"bootstrap.servers": bootstrap})
        for i in range(20):
            producer.produce(t2, f"v{i}".encode(), partition=i % 2)
        assert producer.flush(30) == 0
        status, got = http("GET", f"{ctl}/scenario")
        assert status == 200 and got["finished"]
        status, got = http("POST", f"{ctl}/scenario/check", {})
        # fetch-quota never fired: nobody consumed (the check says so)
        assert status == 200 and not got["ok"]
        assert [f for f in got["failures"] if "never fired" in f] == got["failures"]
        assert any("'fetch-quota' never fired" in f for f in got["failures"])
        assert not any("produce-quota" in f for f in got["failures"])

        status, got = http("POST", f"{ctl}/stop", {})
        assert status == 200
        assert proc.wait(20) == 0


def test_the_proxy_command_refuses_a_scenario_it_cannot_run(kafka: KafkaBroker) -> None:
    result = subprocess.run(
        [
            sys.executable, "-m", "mockkafka.cli", "proxy", "--upstream",
            kafka.bootstrap_servers, "--scenario", "unclean-leader-election",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert "step 1 truncate_log: truncate_log needs the in-process fake" in result.stderr
    assert "Traceback" not in result.stderr

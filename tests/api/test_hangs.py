"""A hung in-process cluster says what hangs: stop() is bounded and names the stuck request,
MOCKKAFKA_WATCHDOG reports a slow control call with every thread's stack, and the suite's
pytest settings end a test stuck in C with the GIL held (where pytest-timeout cannot)."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import mockkafka
from mockkafka.protocol.framing import ClientConnection
from mockkafka.server import runner

ROOT = Path(__file__).resolve().parents[2]


def _send_metadata(cluster: mockkafka.Cluster, client_id: str) -> socket.socket:
    broker = cluster.brokers[0]
    sock = socket.create_connection((broker.host, broker.port), timeout=5)
    sock.sendall(ClientConnection(client_id=client_id).send_request("Metadata", 1, {"topics": []}))
    return sock


def test_stop_of_a_stuck_loop_returns_in_its_bound_and_names_the_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Regression (a run that never ended): stop() waited unbounded for the loop thread
    and, after its join, said nothing about what kept it."""
    monkeypatch.setattr(runner, "STOP_TIMEOUT_S", 1.0)
    started, release = threading.Event(), threading.Event()

    def stuck_handler(request: dict[str, Any], ctx: Any) -> None:
        started.set()
        release.wait(30)  # blocks the cluster's loop, as a careless custom handler does

    cluster = mockkafka.Cluster().start()
    loop = cluster._runner._thread
    assert loop is not None
    cluster.faults.on("Metadata").handler(stuck_handler)
    sock = _send_metadata(cluster, "stuck-client")
    try:
        assert started.wait(10), "the handler never ran"
        t0 = time.monotonic()
        with pytest.raises(mockkafka.MockKafkaError) as info:
            cluster.stop()
        assert time.monotonic() - t0 < 5
    finally:
        release.set()
        sock.close()
        loop.join(10)
    message = str(info.value)
    assert "did not stop within 1 s" in message
    assert "(client id 'stuck-client'): Metadata v1 (correlation id" in message
    assert "in flight for" in message
    assert "in stuck_handler" in message  # where the loop thread is
    assert not loop.is_alive()
    cluster.stop()  # idempotent: nothing left to stop


WATCHDOG_SCRIPT = """
import socket, sys, threading
sys.path.insert(0, {tests!r})
import mockkafka
from api.test_hangs import _send_metadata

release = threading.Event()

def stuck_handler(request, ctx):
    release.wait(30)

with mockkafka.Cluster() as cluster:
    cluster.faults.on("Metadata").handler(stuck_handler)
    sock = _send_metadata(cluster, "stuck-client")
    while not cluster.traffic.requests(api="Metadata"):
        pass
    threading.Timer(2.0, release.set).start()
    cluster.create_topic("orders")  # a control call: waits for the loop
    sock.close()
print("control call returned")
"""


def test_watchdog_reports_a_slow_control_call_with_every_threads_stack(tmp_path: Path) -> None:
    env = {**os.environ, "MOCKKAFKA_WATCHDOG": "0.5"}
    script = WATCHDOG_SCRIPT.format(tests=str(ROOT / "tests"))
    proc = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert "control call returned" in proc.stdout
    err = proc.stderr
    assert (
        "mockkafka watchdog (MOCKKAFKA_WATCHDOG=0.5): a control call from thread "
        "'MainThread' has waited 0.5 s for the cluster's loop" in err
    ), err
    assert "(client id 'stuck-client'): Metadata v1" in err, err
    # faulthandler's dump of every thread: the loop thread inside the handler
    assert "Thread 0x" in err, err
    assert re.search(r"line \d+ in stuck_handler", err), err


def test_watchdog_refuses_a_value_that_is_not_seconds() -> None:
    from mockkafka.errors import ConfigError
    from mockkafka.server.watchdog import watchdog_seconds

    assert watchdog_seconds({}) is None
    assert watchdog_seconds({"MOCKKAFKA_WATCHDOG": "2.5"}) == 2.5
    for bad in ("soon", "0", "-1", "inf"):
        with pytest.raises(ConfigError, match=r"MOCKKAFKA_WATCHDOG must be a number of seconds"):
            watchdog_seconds({"MOCKKAFKA_WATCHDOG": bad})


GIL_HOLDING_TEST = """
import ctypes

def test_stuck_in_c_with_the_gil_held():
    # what confluent-kafka's rebalance callback does in rd_kafka_assign: wait in C
    # without releasing the GIL (PyDLL keeps it)
    ctypes.PyDLL(None).sleep(60)
"""


def test_the_suite_ends_a_test_stuck_in_c_holding_the_gil(tmp_path: Path) -> None:
    """pytest-timeout's thread method needs the GIL to fire, so a C call holding it hung
    the suite for 25 minutes; tests/conftest.py arms faulthandler (no GIL needed) past each
    test's timeout: it dumps the stacks and ends the process."""
    (tmp_path / "test_gil.py").write_text(textwrap.dedent(GIL_HOLDING_TEST))
    t0 = time.monotonic()
    proc = subprocess.run(
        [
            sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "tests.conftest",
            "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(tmp_path), "-o", "timeout=1",
            str(tmp_path / "test_gil.py"),
        ],
        capture_output=True, text=True, timeout=50, cwd=ROOT,
    )  # fmt: skip
    assert time.monotonic() - t0 < 40
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "Timeout (0:00:06.250000)!" in out, out  # hang_exit_after(1): 1 + 5 + 1/4 s
    assert "in test_stuck_in_c_with_the_gil_held" in out, out


def test_hang_report_of_a_proxy_says_where_its_loop_is() -> None:
    """The proxy's runner is the same ThreadedRunner; its server keeps no connection table."""
    from mockkafka.server.watchdog import hang_report

    report = hang_report(object(), threading.current_thread())  # type: ignore[arg-type]
    assert report.startswith("no request in flight\nthe cluster's loop thread (MainThread) is at:")
    assert "in test_hang_report_of_a_proxy_says_where_its_loop_is" in report

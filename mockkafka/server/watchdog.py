"""Saying why an in-process cluster hangs: what is in flight, and a watchdog that says it.

Theory of operation
-------------------
A test with an in-process cluster hangs in one of two ways.

* The cluster's loop thread is stuck (a custom fault handler that blocks, a wait on a
  client that stopped reading) while the test thread waits for it: in a control call, or
  in :meth:`~mockkafka.server.runner.ThreadedRunner.stop`. The GIL is free, so Python code
  can say which connection is stuck. ``stop()`` always waits a bounded time and then raises
  with :func:`hang_report`; with ``MOCKKAFKA_WATCHDOG=SECONDS`` in the environment, a
  control call that waits longer writes the same report to stderr, then every thread's
  stack (:func:`faulthandler.dump_traceback`), and goes on waiting.
* A C call holds the GIL while it waits (confluent-kafka calls ``rd_kafka_assign`` with the
  GIL held; see :func:`mockkafka.stateful.close_consumers`). Then no Python code runs at
  all -- not the broker, not this watchdog, not pytest-timeout's timer thread -- and only a
  thread that needs no GIL can speak: faulthandler's. Under pytest that is
  ``faulthandler_timeout`` (with ``faulthandler_exit_on_timeout``, pytest 9+, it also ends
  the process); elsewhere :func:`faulthandler.dump_traceback_later`. This module leaves that
  timer alone: there is one per process, and pytest's is armed per test.

:func:`in_flight` reads the connection table from the waiting thread, not on the loop: the
loop is what is stuck. It is a racy snapshot of plain attributes, for a report only;
nothing acts on it.
"""

from __future__ import annotations

import faulthandler
import math
import os
import sys
import threading
import time
import traceback
from collections.abc import Mapping
from typing import TYPE_CHECKING, TextIO

from mockkafka.errors import ConfigError
from mockkafka.protocol.apis import API_BY_KEY

if TYPE_CHECKING:
    from mockkafka.server.connection import Connection
    from mockkafka.server.runtime import ClusterServer

#: Seconds a control call may wait for the cluster's loop before the watchdog reports.
WATCHDOG_ENV = "MOCKKAFKA_WATCHDOG"


def watchdog_seconds(environ: Mapping[str, str] = os.environ) -> float | None:
    """``MOCKKAFKA_WATCHDOG`` in seconds, or None when unset or empty (no watchdog)."""
    raw = environ.get(WATCHDOG_ENV, "").strip()
    if not raw:
        return None
    try:
        seconds = float(raw)
    except ValueError:
        seconds = math.nan
    if not (seconds > 0 and math.isfinite(seconds)):
        raise ConfigError(
            f"environment variable {WATCHDOG_ENV} must be a number of seconds > 0 "
            f"(e.g. {WATCHDOG_ENV}=30), got {raw!r}"
        )
    return seconds


def in_flight(connections: Mapping[int, Connection], now: float | None = None) -> list[str]:
    """One line per connection that is busy: the request it handles (client id, API,
    version, for how long), or answers waiting for the client to read them."""
    now = time.monotonic() if now is None else now
    lines = []
    for conn in list(connections.values()):  # the loop may change the table meanwhile
        who = f"connection {conn.id} to broker {conn.broker_id} from {conn.peer}"
        header = conn.in_flight
        if header is not None:
            spec = API_BY_KEY.get(header.api_key)
            api = spec.name if spec is not None else f"API key {header.api_key}"
            lines.append(
                f"{who} (client id {header.client_id!r}): {api} v{header.api_version} "
                f"(correlation id {header.correlation_id}) in flight for "
                f"{now - conn.in_flight_since:.1f} s"
            )
        blocked = conn.send_blocked_since
        if blocked is not None:
            lines.append(
                f"{who}: its answers wait for the client to read them for {now - blocked:.1f} s"
            )
    return lines


def hang_report(server: ClusterServer, loop_thread: threading.Thread | None) -> str:
    """What the cluster is doing: :func:`in_flight`, and where its loop thread is (a
    proxy's server keeps no connection table: only where its loop is)."""
    connections: Mapping[int, Connection] = getattr(server, "connections", None) or {}
    lines = in_flight(connections) or ["no request in flight"]
    if loop_thread is not None and loop_thread.ident is not None:
        frame = sys._current_frames().get(loop_thread.ident)
        if frame is not None:
            lines.append(f"the cluster's loop thread ({loop_thread.name}) is at:")
            lines.append("".join(traceback.format_stack(frame)).rstrip())
    return "\n".join(lines)


def report_slow_call(what: str, seconds: float, report: str, file: TextIO | None = None) -> None:
    """Write the watchdog's report of ``what`` waiting ``seconds``, then every thread's
    stack (faulthandler: the C-level view, threads in C included)."""
    out = file if file is not None else sys.stderr
    out.write(
        f"mockkafka watchdog ({WATCHDOG_ENV}={seconds:g}): {what} has waited {seconds:g} s "
        f"for the cluster's loop\n{report}\nevery thread's stack:\n"
    )
    out.flush()
    try:
        faulthandler.dump_traceback(file=out, all_threads=True)
    except (AttributeError, ValueError, OSError):  # a stream without a file descriptor
        out.write("".join(_python_stacks()))
    out.flush()


def _python_stacks() -> list[str]:
    names = {t.ident: t.name for t in threading.enumerate()}
    out = []
    for ident, frame in sys._current_frames().items():
        out.append(f"Thread {names.get(ident, ident)}:\n")
        out.extend(traceback.format_stack(frame))
    return out

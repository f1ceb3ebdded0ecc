"""Suite-wide settings: every message the project encodes in its tests is checked strictly
(an unknown or misspelt field raises instead of being dropped; see protocol/codec.py), and a
test stuck in C with the GIL held ends the run's process with every thread's stack instead
of hanging it (see pytest_timeout_set_timer below)."""

from __future__ import annotations

import faulthandler
import os
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from mockkafka.protocol.codec import set_strict_encode

os.environ["MOCKKAFKA_STRICT_ENCODE"] = "1"  # for `mockkafka serve` subprocesses too


@pytest.fixture(autouse=True, scope="session")
def _strict_encode() -> Iterator[None]:
    previous = set_strict_encode(True)
    yield
    set_strict_encode(previous)


# pytest-timeout's thread method needs the GIL to fire, and a C call may wait holding it
# (confluent-kafka's rebalance callback inside Consumer.close(): see
# mockkafka.stateful.close_consumers); the suite then hung for 25 minutes. faulthandler's
# watchdog thread needs no GIL: armed with each test's own timeout plus a grace, it dumps
# every thread's stack and ends the process (xdist replaces the worker). pytest-timeout,
# when it can fire, fires first.
_stderr_fd: int | None = None


def hang_exit_after(timeout: float) -> float:
    """When faulthandler ends a test that pytest-timeout could not: its timeout plus a grace
    for pytest-timeout's own dump."""
    return timeout + 5.0 + timeout / 4


def pytest_configure(config: pytest.Config) -> None:
    global _stderr_fd
    try:
        fd = sys.stderr.fileno()
    except (AttributeError, ValueError):  # a stream without a descriptor (xdist worker)
        assert sys.__stderr__ is not None
        fd = sys.__stderr__.fileno()
    _stderr_fd = os.dup(fd)  # capture is suspended here: this is the terminal


def pytest_unconfigure(config: pytest.Config) -> None:
    global _stderr_fd
    if _stderr_fd is not None:
        faulthandler.cancel_dump_traceback_later()
        os.close(_stderr_fd)
        _stderr_fd = None


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_timeout_set_timer(item: pytest.Item, settings: Any) -> None:
    if _stderr_fd is not None:
        after = hang_exit_after(float(settings.timeout))
        faulthandler.dump_traceback_later(after, exit=True, file=_stderr_fd)


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_timeout_cancel_timer(item: pytest.Item) -> None:
    if _stderr_fd is not None:
        faulthandler.cancel_dump_traceback_later()

"""The threaded runner: one :class:`~mockkafka.server.runtime.ClusterServer` on a trio loop
in a background thread, for sync and asyncio tests (``mockkafka.Cluster``).

Calls from other threads enter the loop with :func:`call_on_loop` (``run_sync_soon`` and a
future: unlike ``trio.from_thread`` it also works from a thread that runs its own trio or
asyncio loop, so a verb may be called from any test); a call from the loop's own thread (a
custom fault handler, a callback) runs in place. Before :meth:`start` and after :meth:`stop`
nothing else touches the state, so calls run in place too.

No wait here is unbounded without a word: :meth:`ThreadedRunner.stop` joins the thread for
``STOP_TIMEOUT_S`` and then raises naming what is in flight; a control call waits as long
as the loop takes, and with ``MOCKKAFKA_WATCHDOG=SECONDS`` reports a longer wait
(``server/watchdog.py``).
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import suppress
from typing import TypeVar

import trio

from mockkafka.errors import ListenError, MockKafkaError, leaf_exception
from mockkafka.server.runtime import ClusterServer
from mockkafka.server.watchdog import hang_report, report_slow_call, watchdog_seconds

T = TypeVar("T")

START_TIMEOUT_S = 30.0
#: How long stop() waits for the loop thread before it raises with a hang report.
STOP_TIMEOUT_S = 10.0


def _settle(future: Future[T], fn: Callable[[], T]) -> None:
    try:
        future.set_result(fn())
    except BaseException as exc:  # handed to the caller, never to the loop
        future.set_exception(exc)


def _block_on(
    token: trio.lowlevel.TrioToken,
    schedule: Callable[[], None],
    future: Future[T],
    report: Callable[[], str] | None,
) -> T:
    try:
        token.run_sync_soon(schedule)
    except trio.RunFinishedError:
        raise MockKafkaError("the cluster has stopped") from None
    seconds = watchdog_seconds()
    if seconds is None:
        return future.result()
    try:
        return future.result(timeout=seconds)
    except FutureTimeout:
        what = "a control call from thread " + repr(threading.current_thread().name)
        report_slow_call(what, seconds, report() if report is not None else "")
    return future.result()


def call_on_loop(
    token: trio.lowlevel.TrioToken, fn: Callable[[], T], report: Callable[[], str] | None = None
) -> T:
    """Run ``fn()`` on the trio loop of ``token`` and block this (other) thread for the
    result. Unlike ``trio.from_thread`` it works from a thread running its own event loop.
    With ``MOCKKAFKA_WATCHDOG`` set, a wait longer than that writes ``report()`` and every
    thread's stack to stderr (server/watchdog.py)."""
    future: Future[T] = Future()
    return _block_on(token, lambda: _settle(future, fn), future, report)


def call_async_on_loop(
    token: trio.lowlevel.TrioToken,
    nursery: trio.Nursery,
    afn: Callable[[], Awaitable[T]],
    report: Callable[[], str] | None = None,
) -> T:
    """Run the coroutine function ``afn`` as a task of ``nursery`` (on the loop of ``token``)
    and block this (other) thread for its result (watchdog: as :func:`call_on_loop`)."""
    future: Future[T] = Future()

    async def run() -> None:
        try:
            future.set_result(await afn())
        except BaseException as exc:
            future.set_exception(exc)

    return _block_on(token, lambda: nursery.start_soon(run), future, report)


class ThreadedRunner:
    """Runs ``server`` in a daemon thread named ``mockkafka``; see the module docstring."""

    def __init__(self, server: ClusterServer) -> None:
        self.server = server
        self._thread: threading.Thread | None = None
        self._token: trio.lowlevel.TrioToken | None = None
        self._nursery: trio.Nursery | None = None
        self._stop: trio.Event | None = None
        self._ready = threading.Event()
        self._startup_error: BaseException | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None

    def start(self) -> None:
        """Start the loop; returns once every broker listens (raises what stopped it)."""
        if self._thread is not None:
            raise MockKafkaError("cluster already started")
        self._ready.clear()
        self._startup_error = None
        self._thread = threading.Thread(target=self._thread_main, name="mockkafka", daemon=True)
        self._thread.start()
        if not self._ready.wait(START_TIMEOUT_S):
            raise MockKafkaError(f"mockkafka cluster did not start within {START_TIMEOUT_S} s")
        if self._startup_error is not None:
            self._thread.join(10)
            self._thread = None
            leaf = leaf_exception(self._startup_error)
            if isinstance(leaf, ListenError):
                # one line, not trio's nested exception groups
                raise ListenError(leaf.errno, leaf.strerror) from None
            raise self._startup_error

    def _thread_main(self) -> None:
        try:
            trio.run(self._main)
        except BaseException as exc:
            self._startup_error = exc
            self._ready.set()

    async def _main(self) -> None:
        self._token = trio.lowlevel.current_trio_token()
        self._stop = trio.Event()
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            await nursery.start(self.server.run)
            self._ready.set()
            await self._stop.wait()
            nursery.cancel_scope.cancel()

    def stop(self, timeout: float | None = None) -> None:
        """Close every listener, connection and the thread (idempotent).

        Waits at most ``timeout`` seconds (default ``STOP_TIMEOUT_S``) for the loop
        thread: the stop is handed to the loop without waiting for the loop to take it,
        and the thread is joined with a bound. A loop that has not ended by then (a custom
        fault handler that blocks it) raises MockKafkaError naming the requests in flight
        and where the loop thread is; the thread is left behind (a daemon)."""
        thread = self._thread
        if thread is None:
            return
        if timeout is None:
            timeout = STOP_TIMEOUT_S
        token, stop = self._token, self._stop
        if token is not None and stop is not None and thread.is_alive():
            with suppress(trio.RunFinishedError):
                token.run_sync_soon(stop.set)
        thread.join(timeout)
        self._thread = None
        self._token = None
        if thread.is_alive():
            raise MockKafkaError(
                f"the cluster's loop thread did not stop within {timeout:g} s:\n"
                + hang_report(self.server, thread)
            )

    def on_loop_thread(self) -> bool:
        """Is the caller the loop's own thread?"""
        return self._thread is not None and threading.current_thread() is self._thread

    def call(self, fn: Callable[[], T]) -> T:
        """Run ``fn()`` on the loop and return its result (in place when not running)."""
        if self._token is None or self._thread is None or self.on_loop_thread():
            return fn()
        return call_on_loop(self._token, fn, self._report)

    def _report(self) -> str:
        return hang_report(self.server, self._thread)

    def call_async(self, fn: Callable[[], Awaitable[T]]) -> T:
        """Run the coroutine function ``fn`` on the loop (from another thread)."""
        if self._token is None or self._thread is None or self._nursery is None:
            raise MockKafkaError("the cluster is not running: call start() first")
        if self.on_loop_thread():
            raise MockKafkaError(
                "this verb waits for the network and cannot run on the cluster's own loop "
                "thread; call it from the test thread"
            )
        return call_async_on_loop(self._token, self._nursery, fn, self._report)

"""The threaded runner: one :class:`~mockkafka.server.runtime.ClusterServer` on a trio loop
in a background thread, for sync and asyncio tests (``mockkafka.Cluster``).

Calls from other threads enter the loop with :func:`call_on_loop` (``run_sync_soon`` and a
future: unlike ``trio.from_thread`` it also works from a thread that runs its own trio or
asyncio loop, so a verb may be called from any test); a call from the loop's own thread (a
custom fault handler, a callback) runs in place. Before :meth:`start` and after :meth:`stop`
nothing else touches the state, so calls run in place too.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from contextlib import suppress
from typing import TypeVar

import trio

from mockkafka.errors import ListenError, MockKafkaError, leaf_exception
from mockkafka.server.runtime import ClusterServer

T = TypeVar("T")

START_TIMEOUT_S = 30.0


def _settle(future: Future[T], fn: Callable[[], T]) -> None:
    try:
        future.set_result(fn())
    except BaseException as exc:  # handed to the caller, never to the loop
        future.set_exception(exc)


def _block_on(token: trio.lowlevel.TrioToken, schedule: Callable[[], None], future: Future[T]) -> T:
    try:
        token.run_sync_soon(schedule)
    except trio.RunFinishedError:
        raise MockKafkaError("the cluster has stopped") from None
    return future.result()


def call_on_loop(token: trio.lowlevel.TrioToken, fn: Callable[[], T]) -> T:
    """Run ``fn()`` on the trio loop of ``token`` and block this (other) thread for the
    result. Unlike ``trio.from_thread`` it works from a thread running its own event loop."""
    future: Future[T] = Future()
    return _block_on(token, lambda: _settle(future, fn), future)


def call_async_on_loop(
    token: trio.lowlevel.TrioToken, nursery: trio.Nursery, afn: Callable[[], Awaitable[T]]
) -> T:
    """Run the coroutine function ``afn`` as a task of ``nursery`` (on the loop of ``token``)
    and block this (other) thread for its result."""
    future: Future[T] = Future()

    async def run() -> None:
        try:
            future.set_result(await afn())
        except BaseException as exc:
            future.set_exception(exc)

    return _block_on(token, lambda: nursery.start_soon(run), future)


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

    def stop(self) -> None:
        """Close every listener, connection and the thread (idempotent)."""
        if self._thread is None:
            return
        if self._token is not None and self._stop is not None and self._thread.is_alive():
            with suppress(trio.RunFinishedError):
                trio.from_thread.run_sync(self._stop.set, trio_token=self._token)
        self._thread.join(10)
        self._thread = None
        self._token = None

    def on_loop_thread(self) -> bool:
        """Is the caller the loop's own thread?"""
        return self._thread is not None and threading.current_thread() is self._thread

    def call(self, fn: Callable[[], T]) -> T:
        """Run ``fn()`` on the loop and return its result (in place when not running)."""
        if self._token is None or self._thread is None or self.on_loop_thread():
            return fn()
        return call_on_loop(self._token, fn)

    def call_async(self, fn: Callable[[], Awaitable[T]]) -> T:
        """Run the coroutine function ``fn`` on the loop (from another thread)."""
        if self._token is None or self._thread is None or self._nursery is None:
            raise MockKafkaError("the cluster is not running: call start() first")
        if self.on_loop_thread():
            raise MockKafkaError(
                "this verb waits for the network and cannot run on the cluster's own loop "
                "thread; call it from the test thread"
            )
        return call_async_on_loop(self._token, self._nursery, fn)

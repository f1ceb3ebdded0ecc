"""The one waiting primitive: waits woken by cluster state changes, sync and awaitable.

Theory of operation
-------------------
The loop that owns a cluster calls :meth:`StateSignal.notify` after each request step (a
handler run or a parked request resumed), each timer run, each traffic record and each
verb. A wait is a *probe* -- a function run on that loop that says whether the condition
holds, what to return, and what it saw -- and a loop around it: probe; if not done, sleep
until the signal's version moves past the one read before the probe (so no change is lost)
or the deadline passes; probe again. A wait never sleeps on the loop that serves the
cluster: the sync form blocks the *calling* thread (and refuses to run on the loop's own
thread, where it could never succeed), the awaitable form suspends the calling task under
trio or asyncio (detected with ``sniffio``), in any thread.

On timeout every wait raises :class:`~mockkafka.errors.WaitTimeout` with the last state the
probe saw, so a failing test says what happened instead. The waits, and every public wait
built on them, set ``__tracebackhide__``: pytest shows the test's line that waited, not
this module's source.
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Callable
from typing import Generic, NamedTuple, TypeVar

import sniffio
import trio

from mockkafka.errors import ConfigError, MockKafkaError, WaitTimeout

T = TypeVar("T")

#: Longest sleep between two probes even without a notification (a safety net only).
MAX_SLICE_S = 0.5


class Seen(NamedTuple, Generic[T]):
    """What one probe saw: ``done`` (stop waiting), ``value`` (returned when done) and
    ``state`` (text for the timeout message)."""

    done: bool
    value: T
    state: str


Probe = Callable[[], Seen[T]]


class StateSignal:
    """A version counter bumped by :meth:`notify`; waiters sleep until it moves."""

    def __init__(self) -> None:
        self.version = 0
        self._cond = threading.Condition()
        self._callbacks: list[Callable[[], None]] = []
        self._sleepers = 0  # threads in wait_sync (counted before they read the version)

    def notify(self) -> None:
        """The cluster changed: wake every waiter (call on the cluster's loop).

        Called after every request, so it takes the lock only when someone waits: a waiter
        counts itself (or registers its callback) under the lock *before* it reads the
        version, so a waiter that read the old version is seen here after the bump."""
        self.version += 1
        if not self._sleepers and not self._callbacks:
            return
        with self._cond:
            callbacks, self._callbacks = self._callbacks, []
            self._cond.notify_all()
        for cb in callbacks:
            cb()

    def wait_sync(self, seen: int, timeout: float) -> None:
        """Block this thread until the version moves past ``seen`` or ``timeout`` passes."""
        with self._cond:
            self._sleepers += 1
            try:
                if self.version == seen:
                    self._cond.wait(min(timeout, MAX_SLICE_S))
            finally:
                self._sleepers -= 1

    def _register(self, seen: int, cb: Callable[[], None]) -> bool:
        with self._cond:
            if self.version != seen:
                return False
            self._callbacks.append(cb)
            return True

    def _unregister(self, cb: Callable[[], None]) -> None:
        with self._cond:
            if cb in self._callbacks:
                self._callbacks.remove(cb)

    async def wait_async(self, seen: int, timeout: float) -> None:
        """Suspend this task (trio or asyncio, any thread) until the version moves past
        ``seen`` or ``timeout`` passes."""
        timeout = min(timeout, MAX_SLICE_S)
        if sniffio.current_async_library() == "trio":
            token = trio.lowlevel.current_trio_token()
            event = trio.Event()

            def wake_trio() -> None:
                with contextlib.suppress(trio.RunFinishedError):
                    token.run_sync_soon(event.set)

            if self._register(seen, wake_trio):
                try:
                    with trio.move_on_after(timeout):
                        await event.wait()
                finally:
                    self._unregister(wake_trio)
            return
        import asyncio  # only asyncio code gets here, and it has imported asyncio

        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()

        def resolve() -> None:
            if not future.done():
                future.set_result(None)

        def wake_asyncio() -> None:
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(resolve)

        if self._register(seen, wake_asyncio):
            try:
                await asyncio.wait_for(future, timeout)
            except TimeoutError:
                pass
            finally:
                self._unregister(wake_asyncio)


class Waits:
    """Runs probes for one cluster; see the module docstring.

    ``run_on_loop(fn)`` runs ``fn`` on the cluster's loop (from any other thread) and
    ``on_loop_thread()`` says whether the caller is that loop's thread; ``slice_s`` is the
    longest sleep between two probes.
    """

    def __init__(
        self,
        signal: StateSignal,
        run_on_loop: Callable[[Callable[[], object]], object],
        on_loop_thread: Callable[[], bool],
        *,
        slice_s: float = MAX_SLICE_S,
    ) -> None:
        self.signal = signal
        self._run_on_loop = run_on_loop
        self._on_loop_thread = on_loop_thread
        self._slice_s = slice_s

    @classmethod
    def inline(cls, signal: StateSignal | None = None) -> Waits:
        """Waits for a state with no loop of its own (sans-IO use): probes run in place."""
        return cls(signal or StateSignal(), lambda fn: fn(), lambda: False)

    @classmethod
    def polling(cls, every_s: float) -> Waits:
        """Waits on a state that changes with no signal (a proxy's upstream Kafka): the
        probe runs every ``every_s`` in the calling thread (the awaitable form: in a worker
        thread, so a probe may block on the network)."""
        return cls(StateSignal(), lambda fn: fn(), lambda: False, slice_s=every_s)

    def _probe(self, probe: Probe[T]) -> Seen[T]:
        if self._on_loop_thread():
            return probe()
        return self._run_on_loop(probe)  # type: ignore[return-value]

    def wait(self, probe: Probe[T], *, timeout: float, what: str, async_name: str) -> T:
        """Block the calling thread until ``probe`` is done; WaitTimeout after ``timeout``.

        ``what`` describes the wait for messages; ``async_name`` is the awaitable form to
        suggest when called on the loop's own thread.
        """
        __tracebackhide__ = True
        check_timeout(timeout)
        if self._on_loop_thread():
            raise MockKafkaError(
                f"{what}: a blocking wait was called on the cluster's own loop thread, where "
                f"it could never see a change; use the awaitable form: await {async_name}"
            )
        deadline = time.monotonic() + timeout
        while True:
            version = self.signal.version
            seen = self._probe(probe)
            if seen.done:
                return seen.value
            left = deadline - time.monotonic()
            if left <= 0:
                raise _timeout(what, timeout, seen.state)
            self.signal.wait_sync(version, min(left, self._slice_s))

    async def wait_async(self, probe: Probe[T], *, timeout: float, what: str) -> T:
        """Suspend the calling task (trio or asyncio) until ``probe`` is done."""
        __tracebackhide__ = True
        check_timeout(timeout)
        on_loop = self._on_loop_thread()
        deadline = time.monotonic() + timeout
        while True:
            version = self.signal.version
            seen = probe() if on_loop else await _in_worker_thread(self._run_on_loop, probe)
            if seen.done:
                return seen.value
            left = deadline - time.monotonic()
            if left <= 0:
                raise _timeout(what, timeout, seen.state)
            await self.signal.wait_async(version, min(left, self._slice_s))


async def _in_worker_thread(
    run_on_loop: Callable[[Callable[[], object]], object], probe: Probe[T]
) -> Seen[T]:
    # Hopping to the cluster's loop blocks a thread; never block the caller's event loop.
    def hop() -> Seen[T]:
        return run_on_loop(probe)  # type: ignore[return-value]

    if sniffio.current_async_library() == "trio":
        return await trio.to_thread.run_sync(hop)
    import asyncio

    return await asyncio.to_thread(hop)


def check_timeout(timeout: float) -> None:
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or math.isnan(timeout)
        or timeout < 0
    ):
        raise ConfigError(f"timeout must be a number of seconds >= 0, got {timeout!r}")


def _timeout(what: str, timeout: float, state: str) -> WaitTimeout:
    return WaitTimeout(f"{what}: not reached within {timeout} s; last seen: {state}", state)

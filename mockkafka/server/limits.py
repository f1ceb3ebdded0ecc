"""The trio side of the broker's limits: accepting, idle and buffered bytes, memory.

Theory of operation
-------------------
The values come from :mod:`mockkafka.cluster.limits` (Kafka's config names); this module
applies the ones that need sockets:

* :func:`accept_connections` survives the accept errors a busy test process meets (EMFILE,
  ENFILE, ENOMEM, ENOBUFS: out of file descriptors or kernel memory) by backing off and
  trying again, instead of letting the error end the listener and every connection; and it
  closes a connection beyond ``max.connections`` at once.
* :class:`QueuedBytes` counts the bytes of partly received requests across every connection
  of a cluster against ``queued.max.request.bytes``.
* :func:`release_memory` hands freed heap back to the operating system after a big request,
  so RSS returns to its baseline (glibc keeps freed arenas otherwise).
* :func:`validate_produce_off_loop` runs the LogValidator checks of a Produce request's big
  or compressed batches on a worker thread (pure code on immutable bytes), so a batch of a
  million records or a decompression bomb does not stall every other connection.
* :func:`keep_error` keeps the broker's error list short and frees what each exception's
  traceback frames hold (a decompression buffer, a request body).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import logging
import traceback
from collections.abc import Callable
from typing import Any, Final

import trio

from mockkafka.cluster.limits import limits
from mockkafka.cluster.produce import produce_blobs, validate_records, validation_is_costly
from mockkafka.handlers.base import RequestContext
from mockkafka.protocol.codec import Message

log = logging.getLogger("mockkafka.server")

#: accept() errors that mean "out of a resource for now": survived with a back-off.
RESOURCE_ERRNOS: Final = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.ENOBUFS})

#: A request or response frame at least this big triggers :func:`release_memory`.
BIG_FRAME: Final = 1024 * 1024

#: How many broker errors are kept (the first ones: the first is the one a test re-raises).
MAX_ERRORS: Final = 100


async def accept_connections(
    listener: trio.SocketListener,
    serve: Callable[[trio.SocketStream], None],
    *,
    admit: Callable[[], bool],
    quiet: bool = False,
) -> None:
    """Accept forever, handing each stream to ``serve``; see the module docstring.

    ``admit()`` is asked for each new connection; when it says no (``max.connections``
    reached) the socket is closed at once and the client sees a disconnect. ``quiet``: a
    resource error is logged once per episode (the first failure after a success), not on
    every retry.
    """
    backoff = 0.005
    failing = False
    while True:
        try:
            stream = await listener.accept()
        except OSError as exc:
            if exc.errno not in RESOURCE_ERRNOS:
                raise
            if not (quiet and failing):
                log.warning("accept failed (%s); retrying in %.3f s", exc, backoff)
            failing = True
            # The pending connection stays in the backlog; wait for fds to be given back.
            await trio.sleep(backoff)
            backoff = min(backoff * 2, 0.5)
            continue
        backoff = 0.005
        failing = False
        if not admit():
            log.debug("max.connections reached: closing a new connection")
            stream.socket.close()
            continue
        serve(stream)


class QueuedBytes:
    """Bytes of partly received requests, per connection and in all (see module doc)."""

    def __init__(self) -> None:
        self.total = 0
        self._by_conn: dict[int, int] = {}

    def update(self, conn_id: int, buffered: int) -> int:
        """Record that ``conn_id`` now buffers ``buffered`` bytes; returns the new total."""
        self.total += buffered - self._by_conn.get(conn_id, 0)
        if buffered:
            self._by_conn[conn_id] = buffered
        else:
            self._by_conn.pop(conn_id, None)
        return self.total

    def forget(self, conn_id: int) -> None:
        """The connection is gone: its bytes no longer count."""
        self.update(conn_id, 0)


def _load_malloc_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    if not name:
        return None
    try:
        libc = ctypes.CDLL(name)
        fn = libc.malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None
    fn.argtypes = [ctypes.c_size_t]
    fn.restype = ctypes.c_int
    trim: Callable[[int], int] = fn
    return trim


_malloc_trim = _load_malloc_trim()


def release_memory() -> None:
    """Give freed heap pages back to the operating system (glibc only; else a no-op)."""
    if _malloc_trim is not None:
        _malloc_trim(0)


def keep_error(errors: list[BaseException], exc: BaseException) -> bool:
    """Append ``exc`` to ``errors`` unless MAX_ERRORS are kept already; returns whether it
    was kept. The traceback's frames are cleared either way, so the locals they held (big
    buffers, request bodies) are freed; the formatted traceback was logged already."""
    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen and len(seen) < 32:
        seen.add(id(e))
        if e.__traceback__ is not None:
            traceback.clear_frames(e.__traceback__)  # skips frames still executing
        e = e.__cause__ or e.__context__
    if len(errors) >= MAX_ERRORS:
        return False
    errors.append(exc)
    return True


def costly_blobs(request: Message) -> list[Any]:
    """The records blobs of a Produce request that :func:`validate_produce_off_loop` must
    validate on a worker thread (usually none: then nothing needs awaiting)."""
    return [b for b in produce_blobs(request) if validation_is_costly(b)]


async def validate_produce_off_loop(ctx: RequestContext, costly: list[Any]) -> None:
    """Validate the ``costly`` blobs (see :func:`costly_blobs`) of a Produce request on a
    worker thread; the verdicts go to ``ctx.records_verdicts`` for the handler (cheap blobs
    are validated by it)."""
    cap = limits(ctx.cluster).max_decompressed_batch_bytes

    def work() -> dict[int, Any]:
        return {id(b): validate_records(b, cap) for b in costly}

    ctx.records_verdicts = await trio.to_thread.run_sync(work)

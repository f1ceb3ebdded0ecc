"""Listening sockets bound before the broker is imported, so ``mockkafka serve`` reports a
port in use at once and accepts connections while the broker loads.

Theory of operation
-------------------
Importing trio, the codec and the broker state takes a few hundred milliseconds. The
sockets do not need any of it: :func:`bind_listeners` binds and listens on plain
:mod:`socket` sockets (the options ``trio.open_tcp_listeners`` sets), so from then on the
kernel accepts connections into the listen backlog and a client's first request waits in
its socket buffer. ``serve`` then imports the broker and hands the same sockets to
:class:`~mockkafka.server.runtime.ClusterServer` and the control endpoint, which answer
what was queued. ``serve`` prints ``bootstrap.servers=...`` only once the broker answers
and the first requests a test makes are prepared (issue 33: the line means ready; issue
28 printed it before the import, and the first answer then took the rest of the start).

:class:`EarlyStop` stands in for trio's signal handling while the broker loads: a SIGINT
or SIGTERM that arrives after the sockets were bound, before the broker runs, is
remembered, and the broker stops as soon as it runs -- exit 0, as for a signal a second
later.

This module imports nothing of mockkafka and no trio.
"""

from __future__ import annotations

import signal
import socket
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

# What trio.open_tcp_listeners passes to listen() (the kernel caps it at somaxconn).
BACKLOG = 0xFFFF


def listen_socket(host: str, port: int) -> socket.socket:
    """One IPv4 listening socket on ``host:port`` (``port`` 0: a free port), with the
    options trio's listeners use; raises OSError."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        if sys.platform != "win32":
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(BACKLOG)
    except BaseException:
        sock.close()
        raise
    return sock


def bind_listeners(host: str, ports: dict[int, int]) -> dict[int, socket.socket]:
    """Listening sockets by node id for ``ports`` (node id -> port, 0: a free port).

    Raises OSError naming the broker and port, worded as the broker's own listener does, and
    closes what it bound before that."""
    bound: dict[int, socket.socket] = {}
    try:
        for node_id, port in ports.items():
            try:
                bound[node_id] = listen_socket(host, port)
            except OSError as exc:
                raise OSError(
                    exc.errno,
                    f"broker {node_id} cannot listen on {host}:{port}: {exc.strerror}",
                ) from None
    except BaseException:
        close_all(bound.values())
        raise
    return bound


def close_all(sockets: Any) -> None:
    """Close every socket of an iterable (those not handed over yet)."""
    for sock in sockets:
        sock.close()


@dataclass
class EarlyStop:
    """Remembers SIGINT/SIGTERM between :meth:`install` and the broker's own handling."""

    signals: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM)
    received: list[int] = field(default_factory=list)
    _previous: dict[int, Callable[[int, FrameType | None], Any] | int | None] = field(
        default_factory=dict
    )

    def install(self) -> None:
        for sig in self.signals:
            self._previous[sig] = signal.signal(sig, self._note)

    def _note(self, signum: int, _frame: FrameType | None) -> None:
        self.received.append(signum)

    def restore(self) -> None:
        """Put back the handlers that were there before :meth:`install`."""
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()


@dataclass
class Prebound:
    """What ``serve`` bound before importing the broker: broker sockets by node id, the
    control endpoint's socket, and the signals that arrived meanwhile."""

    brokers: dict[int, socket.socket]
    control: socket.socket
    early_stop: EarlyStop = field(default_factory=EarlyStop)

    def ports(self) -> dict[int, int]:
        return {n: int(s.getsockname()[1]) for n, s in self.brokers.items()}

    def close(self) -> None:
        """Close the sockets not handed over (idempotent)."""
        close_all(self.brokers.values())
        self.control.close()

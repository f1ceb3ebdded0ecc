"""One client connection to one broker, and how dispatch closes it (shared by the server
loop in ``runtime.py`` and the fault executor in ``faults.py``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import trio

from mockkafka.protocol.framing import RequestHeader, ServerConnection

RECEIVE_SIZE = 256 * 1024


class CloseConnection(Exception):
    """Raised inside dispatch to close the connection (after sending ``pending`` bytes)."""

    def __init__(self, reason: str, pending: bytes = b"") -> None:
        super().__init__(reason)
        self.pending = pending


@dataclass(slots=True)
class Connection:
    """One client connection to one broker."""

    id: int
    broker_id: int
    stream: trio.abc.Stream  # the socket, or TLS over it
    peer: str
    state: dict[str, Any] = field(default_factory=dict)
    # Earliest time (trio clock) the next request may be answered (KIP-219 throttling).
    muted_until: float = 0.0
    # The sans-IO framing of this connection (bytes read while a request is parked go here).
    codec: ServerConnection | None = None
    # Responses encoded but not yet sent: requests the client pipelined are answered with
    # one write (see ClusterServer.flush).
    out: bytearray = field(default_factory=bytearray)
    requests: int = 0  # requests read so far
    # The socket's file descriptor on plain TCP (read and written directly), -1 for TLS.
    fd: int = -1
    # Trio time since when the connection waits for a request; None while it is busy.
    idle_since: float | None = None
    # Cancelled to close the connection (idle past connections.max.idle.ms).
    scope: trio.CancelScope | None = None
    # What a hang report names (server/watchdog.py): the header of the request being
    # handled and since when (time.monotonic(): read from other threads), and since when
    # answers wait for the client to read them.
    in_flight: RequestHeader | None = None
    in_flight_since: float = 0.0
    send_blocked_since: float | None = None

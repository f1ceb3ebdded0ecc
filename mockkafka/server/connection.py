"""One client connection to one broker, and how dispatch closes it (shared by the server
loop in ``runtime.py`` and the fault executor in ``faults.py``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import trio

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
    stream: trio.SocketStream
    peer: str
    state: dict[str, Any] = field(default_factory=dict)
    # Earliest time (trio clock) the next request may be answered (KIP-219 throttling).
    muted_until: float = 0.0

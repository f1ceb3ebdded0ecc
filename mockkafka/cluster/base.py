"""The plain parts of the cluster state that depend on nothing else of it: clocks, brokers
and timers.

They live here, below every module of ``cluster/``, so that ``state.py`` is the top of the
package: it imports the parts, and no part imports it back (the parts see the state through
the protocols of :mod:`~mockkafka.cluster.host`). ``mockkafka.cluster.state``
re-exports the names here (``from mockkafka.cluster.state import ManualClock`` keeps working).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

__all__ = ["Broker", "Clock", "ManualClock", "SystemClock", "TimerHandle"]


class Clock(Protocol):
    """Source of cluster time in milliseconds since the epoch."""

    def now_ms(self) -> int: ...


class SystemClock:
    """Wall-clock time (the default)."""

    def now_ms(self) -> int:
        return int(time.time() * 1000)


class ManualClock:
    """A clock that moves only when told to (sans-IO tests of timeouts)."""

    def __init__(self, start_ms: int = 1_700_000_000_000) -> None:
        self.t = start_ms

    def now_ms(self) -> int:
        return self.t

    def advance(self, ms: int) -> None:
        self.t += ms


@dataclass(slots=True)
class Broker:
    """One broker of the cluster: where it listens and whether it is running."""

    node_id: int
    host: str = "127.0.0.1"
    port: int = 0
    rack: str | None = None
    running: bool = True
    configs: dict[str, str] = field(default_factory=dict)


@dataclass(order=True, slots=True)
class _Timer:
    at_ms: int
    seq: int
    fn: Callable[[], None] = field(compare=False)
    cancelled: bool = field(default=False, compare=False)

    def cancel(self) -> None:
        self.cancelled = True


TimerHandle = _Timer

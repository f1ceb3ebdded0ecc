"""Cluster events: what a verb did, announced through the state's one notification hook.

``ClusterState.emit_event("leader_moved", topic=..., partition=..., leader=...)`` calls
every waker (``ClusterState.add_waker``) with a :class:`StateEvent`; the fault engine,
which the server owns, records it for rules waiting with ``after_event``. The state itself
keeps no fault engine and knows nothing of faults.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True, eq=False)
class StateEvent:
    """A cluster event as a notification key (hashed by identity: each is one event)."""

    name: str
    attrs: tuple[tuple[str, Any], ...] = ()

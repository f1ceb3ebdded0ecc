"""Consumer group coordinator (classic protocol and KIP-848). To be written (issue #4)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mockkafka.cluster.state import ClusterState


class GroupCoordinator:
    """All consumer groups of one cluster."""

    def __init__(self, state: ClusterState) -> None:
        self._state = state

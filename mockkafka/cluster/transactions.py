"""Transaction coordinator. To be written (issue #5)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mockkafka.errors import ErrorCode

if TYPE_CHECKING:
    from mockkafka.cluster.state import ClusterState, Partition
    from mockkafka.handlers.base import RequestContext


class TransactionCoordinator:
    """All transactional ids of one cluster."""

    def __init__(self, state: ClusterState) -> None:
        self._state = state

    def check_produce(
        self, p: Partition, producer_id: int, producer_epoch: int, transactional_id: str | None
    ) -> ErrorCode:
        """May this transactional batch be written to ``p``? (called by the produce path)"""
        return ErrorCode.NONE

    def init_producer_id(self, ctx: RequestContext, request: dict[str, Any]) -> dict[str, Any]:
        """InitProducerId for a transactional id."""
        return {
            "error_code": ErrorCode.COORDINATOR_NOT_AVAILABLE,
            "producer_id": -1,
            "producer_epoch": -1,
        }

"""``lost_ack``: a Produce is applied and its answer lost."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from mockkafka.faults.actions._base import CONNECTION, Action, FaultCall

if TYPE_CHECKING:
    from mockkafka.faults.match import Match


@dataclass(frozen=True, slots=True, repr=False)
class LostAck(Action):
    """Produce: the batch is appended and the answer lost -- the connection closes before
    the response is sent, as when the network fails between broker and client -- so the
    producer retries it: twice in the log with ``enable.idempotence=false``, once with
    idempotence (the broker recognises the sequence numbers)."""

    NAME: ClassVar[str] = "lost_ack"
    PHASE: ClassVar[str] = CONNECTION
    ORDER: ClassVar[int] = 140
    APIS: ClassVar[tuple[str, ...] | None] = ("Produce",)
    RISKY: ClassVar[bool] = True  # duplicates in the log without idempotence

    async def apply(self, call: FaultCall, match: Match) -> None:
        call.close_after_response()

"""``never_respond``: never answer; the request is not processed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from mockkafka.faults.actions._base import BEFORE, Action, FaultCall

if TYPE_CHECKING:
    from mockkafka.faults.match import Match


@dataclass(frozen=True, slots=True, repr=False)
class NeverRespond(Action):
    """Never answer; the request is not processed. The connection stays open (and answers
    nothing more, as requests are handled in order) until the client closes it."""

    NAME: ClassVar[str] = "never_respond"
    PHASE: ClassVar[str] = BEFORE
    ORDER: ClassVar[int] = 50
    RISKY: ClassVar[bool] = True

    @property
    def replaces_response(self) -> bool:
        return True

    async def apply(self, call: FaultCall, match: Match) -> None:
        await call.never_respond()

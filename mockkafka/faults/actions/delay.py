"""``delay``: hold the response (or the request) back."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from mockkafka.faults._checks import check_bool, check_ms
from mockkafka.faults.actions._base import BEFORE, CONNECTION, Action, FaultCall, arg

if TYPE_CHECKING:
    from mockkafka.faults.match import Match

MS = {"type": "integer", "minimum": 0}


@dataclass(frozen=True, slots=True, repr=False)
class Delay(Action):
    """Hold the response back ``ms`` (or the request, with ``before_processing``)."""

    NAME: ClassVar[str] = "delay"
    PHASE: ClassVar[str] = CONNECTION
    OTHER_PHASES: ClassVar[tuple[str, ...]] = (BEFORE,)
    ORDER: ClassVar[int] = 20

    ms: int = field(metadata=arg("milliseconds to wait", schema=MS))
    before_processing: bool = field(
        default=False,
        metadata=arg("wait before the handler runs, not after", schema={"type": "boolean"}),
    )

    def __post_init__(self) -> None:
        check_ms(self.ms, "ms")
        check_bool(self.before_processing, "before_processing")

    def phase_on(self, api: str) -> str:
        return BEFORE if self.before_processing else CONNECTION

    async def apply(self, call: FaultCall, match: Match) -> None:
        await call.flush()  # the answers held before this request go out first
        await call.sleep(self.ms / 1000)

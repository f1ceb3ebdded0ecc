"""``drop_connection``: close the connection before or after processing the request."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from mockkafka.faults._checks import check_bool
from mockkafka.faults.actions._base import BEFORE, CONNECTION, Action, FaultCall, arg

if TYPE_CHECKING:
    from mockkafka.faults.match import Match


@dataclass(frozen=True, slots=True, repr=False)
class DropConnection(Action):
    """Close the connection: before processing (the request is lost), or after processing
    (the request is applied, the response is lost)."""

    NAME: ClassVar[str] = "drop_connection"
    PHASE: ClassVar[str] = BEFORE
    OTHER_PHASES: ClassVar[tuple[str, ...]] = (CONNECTION,)
    ORDER: ClassVar[int] = 40

    after_processing: bool = field(
        default=False,
        metadata=arg(
            "apply the request, then close instead of answering", schema={"type": "boolean"}
        ),
    )

    def __post_init__(self) -> None:
        check_bool(self.after_processing, "after_processing")

    @property
    def replaces_response(self) -> bool:
        return not self.after_processing

    def phase_on(self, api: str) -> str:
        return CONNECTION if self.after_processing else BEFORE

    async def apply(self, call: FaultCall, match: Match) -> None:
        if self.after_processing:
            call.close_after_response()
        else:
            call.close(f"fault: drop connection before {call.api}")

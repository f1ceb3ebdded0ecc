"""``throttle``: answer with a throttle time and mute the connection for it (KIP-219)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from mockkafka.faults._checks import check_ms
from mockkafka.faults.actions._base import CONNECTION, Action, FaultCall, arg
from mockkafka.faults.actions.delay import MS

if TYPE_CHECKING:
    from mockkafka.faults.match import Match


@dataclass(frozen=True, slots=True, repr=False)
class Throttle(Action):
    """Answer with ``throttle_time_ms=ms`` and, as KIP-219 brokers do, read nothing more
    from that connection until the throttle time has passed."""

    NAME: ClassVar[str] = "throttle"
    PHASE: ClassVar[str] = CONNECTION
    ORDER: ClassVar[int] = 30

    ms: int = field(metadata=arg("the throttle time in milliseconds", schema=MS))

    def __post_init__(self) -> None:
        check_ms(self.ms, "ms")

    async def apply(self, call: FaultCall, match: Match) -> None:
        if isinstance(call.response, dict) and call.has_field("throttle_time_ms"):
            call.response["throttle_time_ms"] = self.ms
        call.mute(self.ms / 1000)

"""``blackhole``: every matching request swallowed until the rule ends."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from mockkafka.faults.actions._base import INSTEAD, Action, FaultCall

if TYPE_CHECKING:
    from mockkafka.faults.match import Match


@dataclass(frozen=True, slots=True, repr=False)
class Blackhole(Action):
    """Swallow every matching request: not processed, never answered, the connection left
    open. Kafka answers a connection's requests in order, so once a request is swallowed
    that connection answers nothing more (later requests on it are read and dropped, as if
    the network lost them) until the client times out and reconnects; when the rule has
    ended (``for_ms``, ``between``, ``remove()``) the new connection is answered. Fires on
    every match unless a count was given. On a group member's ``client_id`` the
    coordinator hears nothing from it and evicts it after its session timeout."""

    NAME: ClassVar[str] = "blackhole"
    PHASE: ClassVar[str] = INSTEAD
    ORDER: ClassVar[int] = 150
    RISKY: ClassVar[bool] = True  # the client waits for its request timeout
    EVERY_MATCH: ClassVar[bool] = True

    async def apply(self, call: FaultCall, match: Match) -> None:
        from mockkafka.handlers.base import NO_RESPONSE

        if not call.answered:
            call.response = NO_RESPONSE
            call.silence()

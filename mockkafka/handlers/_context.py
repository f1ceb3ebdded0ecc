"""What a handler is handed and what it may answer: the request context and the result types.

Defined below :mod:`mockkafka.handlers.base` (which re-exports every name here) so that the
modules ``base`` itself uses -- the authorizer gate in :mod:`mockkafka.handlers.authz` -- can
import them without importing ``base`` back. Handler modules import them from ``base``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, Final, Union

from mockkafka.cluster.state import ClusterState
from mockkafka.protocol.apis import Api
from mockkafka.protocol.codec import Message
from mockkafka.protocol.framing import RequestHeader

__all__ = ["NO_RESPONSE", "Park", "RequestContext", "Result", "error_response"]


class _NoResponse:
    def __repr__(self) -> str:
        return "NO_RESPONSE"


NO_RESPONSE: Final = _NoResponse()


@dataclass(slots=True)
class Park:
    """Answer later: wait for a notified key or the deadline, then call ``resume``."""

    keys: tuple[Hashable, ...]
    deadline_ms: int
    resume: Callable[[bool], Result]  # argument: True when the deadline passed


Result = Union[Message, _NoResponse, Park]  # noqa: UP007 - used at runtime


@dataclass(slots=True)
class RequestContext:
    """Everything a handler may look at besides the request body."""

    cluster: ClusterState
    broker_id: int
    connection_id: int
    header: RequestHeader
    api: Api
    now_ms: int
    listener: str = "PLAINTEXT"
    principal: str = "User:ANONYMOUS"
    # Per-connection state that outlives one request (fetch sessions, SASL progress).
    connection_state: dict[str, Any] = field(default_factory=dict)
    # Produce: LogValidator verdicts the server computed off the event loop, by id() of the
    # records blob (see cluster/produce.validate_records); None when none were.
    records_verdicts: dict[int, Any] | None = None
    #: The client's address, ``host:port`` ("?" when unknown).
    peer: str = "?"
    #: Partitions a fault rule answers with an error in this request, for handlers whose
    #: state lives beyond the request (ShareFetch must not acquire there, ShareAcknowledge
    #: must not acknowledge): (topic, partition) -> error code. Set by the fault engine.
    fault_partitions: dict[tuple[str, int], int] = field(default_factory=dict)

    @property
    def version(self) -> int:
        return self.header.api_version

    @property
    def client_id(self) -> str | None:
        return self.header.client_id


def error_response(
    ctx: RequestContext, request: Message, error: int, message: str | None = None
) -> Message:
    """A response answering every part of ``request`` with ``error``.

    Mirrors the request's topics/partitions/groups where the response has them, so clients
    can match results. Used by the fault engine and for requests a broker refuses whole.
    """
    from mockkafka.handlers._errors import build_error_response

    return build_error_response(ctx.api, ctx.version, request, int(error), message)

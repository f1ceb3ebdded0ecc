"""Protocol violations: requests a correct client would never send, noted for the test.

Theory of operation
-------------------
The broker answers a misbehaving client exactly as Kafka does (an error code, or a closed
connection) and, in addition, notes a :class:`Violation` here, so a test (and the pytest
plugin, which reports them as warnings of the test, or failures with
``--kafka-violations=error``) shows a client author the bug. Rules, each named:

``version-not-negotiated``
    a request at a version the broker did not advertise, on a connection whose ApiVersions
    exchange told the client the ranges (without that exchange: ``version-not-served``);
``idempotent-sequence-gap``
    an idempotent Produce answered OUT_OF_ORDER_SEQUENCE_NUMBER: the producer skipped
    sequence numbers;
``commit-from-fenced-member``
    an OffsetCommit / TxnOffsetCommit from a generation, member epoch or instance the group
    has moved past (ILLEGAL_GENERATION, STALE_MEMBER_EPOCH, FENCED_INSTANCE_ID);
``fetch-session-ignored``
    an incremental Fetch with an epoch its session did not expect
    (INVALID_FETCH_SESSION_EPOCH);
``request-before-sasl``
    on a SASL listener, a request other than ApiVersions, SaslHandshake and SaslAuthenticate
    before authentication completed (Kafka closes the connection: ILLEGAL_SASL_STATE).

A response a fault rule produced or changed is never counted: the test asked for it.
Requests before ApiVersions are not violations (Kafka does not require ApiVersions).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mockkafka.errors import ErrorCode, error_code

if TYPE_CHECKING:
    from mockkafka.cluster.state import ClusterState

RULES = (
    "version-not-negotiated",
    "version-not-served",
    "idempotent-sequence-gap",
    "commit-from-fenced-member",
    "fetch-session-ignored",
    "request-before-sasl",
)

_FENCED_COMMIT = {
    int(ErrorCode.ILLEGAL_GENERATION),
    int(ErrorCode.STALE_MEMBER_EPOCH),
    int(ErrorCode.FENCED_INSTANCE_ID),
}


@dataclass(frozen=True, slots=True)
class Violation:
    """One protocol violation: which rule, what happened, and where."""

    rule: str
    message: str
    api: str
    version: int
    broker_id: int
    connection_id: int
    client_id: str | None
    time_ms: int

    def __str__(self) -> str:
        return (
            f"[{self.rule}] {self.message} ({self.api} v{self.version}, client "
            f"{self.client_id!r}, broker {self.broker_id}, connection {self.connection_id})"
        )


def violations(state: ClusterState) -> list[Violation]:
    """The violations noted on this cluster, oldest first (cleared by ``reset``)."""
    out: list[Violation] = state.extensions.setdefault("protocol_violations", [])
    return out


def _partition_codes(response: dict[str, Any], key: str) -> list[int]:
    return [
        int(p.get("error_code", 0))
        for t in response.get(key) or []
        for p in t.get("partitions") or t.get("partition_responses") or []
    ]


def classify(api: str, request: dict[str, Any], response: dict[str, Any]) -> list[tuple[str, str]]:
    """(rule, message) for each violation this answered request shows."""
    out: list[tuple[str, str]] = []
    if api == "Produce":
        if int(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER) in _partition_codes(response, "responses"):
            out.append(
                (
                    "idempotent-sequence-gap",
                    "an idempotent producer sent a batch whose first sequence does not follow "
                    "the last one the partition accepted",
                )
            )
    elif api in ("OffsetCommit", "TxnOffsetCommit"):
        fenced = _FENCED_COMMIT.intersection(_partition_codes(response, "topics"))
        if fenced:
            names = ", ".join(sorted(error_code(c).name for c in fenced))
            out.append(
                (
                    "commit-from-fenced-member",
                    f"group {request.get('group_id')!r}: a commit from a generation, epoch or "
                    f"instance the group has moved past ({names})",
                )
            )
    elif (
        api == "Fetch"
        and int(response.get("error_code", 0)) == ErrorCode.INVALID_FETCH_SESSION_EPOCH
    ):
        out.append(
            (
                "fetch-session-ignored",
                f"fetch session {request.get('session_id')}: epoch "
                f"{request.get('session_epoch')} is not the one the session expects",
            )
        )
    return out


def note(
    state: ClusterState,
    rule: str,
    message: str,
    *,
    api: str,
    version: int,
    broker_id: int,
    connection_id: int,
    client_id: str | None,
) -> None:
    violations(state).append(
        Violation(rule, message, api, version, broker_id, connection_id, client_id, state.now_ms())
    )

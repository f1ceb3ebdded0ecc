"""``corrupt_payload``: record values (keys, header values) garbled under valid CRCs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from mockkafka.errors import ConfigError
from mockkafka.faults.actions._base import DATA, RECORD_RESPONSE_APIS, Action, FaultCall, arg

PARTS = ("value", "key", "headers")


@dataclass(frozen=True, slots=True, repr=False)
class CorruptPayload(Action):
    """Fetch and ShareFetch: every record's value (or key, or header values) in a matching partition's
    answer has each byte changed, length kept, and the batches are re-encoded with valid
    CRCs in their format and codec: the client library accepts them and the application's
    deserializer meets the garbage. The log is untouched. Null and empty values are left
    alone."""

    NAME: ClassVar[str] = "corrupt_payload"
    PHASE: ClassVar[str] = DATA
    ORDER: ClassVar[int] = 110
    APIS: ClassVar[tuple[str, ...] | None] = RECORD_RESPONSE_APIS
    AS_KAFKA: ClassVar[bool] = False
    RISKY: ClassVar[bool] = True

    part: Literal["value", "key", "headers"] = field(
        default="value",
        metadata=arg(
            "what to garble: value, key or headers (header values)",
            schema={"enum": list(PARTS)},
        ),
    )
    seed: int | None = field(
        default=None,
        metadata=arg(
            "the same garbage on every run (None: fresh each time)", schema={"type": "integer"}
        ),
    )

    def __post_init__(self) -> None:
        if self.part not in PARTS:
            raise ConfigError(f"part must be one of {', '.join(PARTS)}, got {self.part!r}")
        if self.seed is not None and (
            isinstance(self.seed, bool) or not isinstance(self.seed, int)
        ):
            raise ConfigError(f"seed must be an int or None, got {self.seed!r}")

    @classmethod
    def coverage_details(cls, api: str) -> tuple[str, ...]:
        return ("",) if api == "Fetch" else ()

    def edit_records(self, call: FaultCall, topic: str, index: int, records: Any) -> Any:
        from mockkafka.faults.record_edits import corrupt_payload

        return corrupt_payload(records, part=self.part, seed=self.seed)

    def why_not(self, call: FaultCall, topic: str, index: int, records: Any) -> str:
        from mockkafka.faults.record_edits import why_unedited

        what = "header values are" if self.part == "headers" else f"{self.part}s are"
        return why_unedited(records) or (
            f"every record's {what} null or empty: nothing to garble"
            + ("" if self.part != "value" else " (part='key' or 'headers' garbles those)")
        )

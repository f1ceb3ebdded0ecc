"""``skew_timestamps``: CreateTime timestamps moved into the future or the past."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from mockkafka.errors import ConfigError
from mockkafka.faults.actions._base import DATA, RECORD_RESPONSE_APIS, Action, FaultCall, arg


@dataclass(frozen=True, slots=True, repr=False)
class SkewTimestamps(Action):
    """Fetch and ShareFetch: the CreateTime timestamps of a matching partition's records moved by ``ms``
    (positive: from the future; negative: from the past, not below 0), batch timestamps
    and CRCs kept valid. LogAppendTime batches and records without a timestamp are left
    alone. Match a partition (``partition=``) to skew one producer's clock."""

    NAME: ClassVar[str] = "skew_timestamps"
    PHASE: ClassVar[str] = DATA
    ORDER: ClassVar[int] = 130
    APIS: ClassVar[tuple[str, ...] | None] = RECORD_RESPONSE_APIS
    AS_KAFKA: ClassVar[bool] = False
    RISKY: ClassVar[bool] = True

    ms: int = field(
        metadata=arg(
            "milliseconds to move by (non-zero; negative: into the past)",
            schema={"type": "integer", "not": {"const": 0}},
        ),
    )

    def __post_init__(self) -> None:
        if isinstance(self.ms, bool) or not isinstance(self.ms, int) or self.ms == 0:
            raise ConfigError(f"ms must be a non-zero int (milliseconds), got {self.ms!r}")

    @classmethod
    def coverage_details(cls, api: str) -> tuple[str, ...]:
        return ("",) if api == "Fetch" else ()

    def edit_records(self, call: FaultCall, topic: str, index: int, records: Any) -> Any:
        from mockkafka.faults.record_edits import skew_timestamps

        return skew_timestamps(records, ms=self.ms)

    def why_not(self, call: FaultCall, topic: str, index: int, records: Any) -> str:
        from mockkafka.faults.record_edits import why_unedited

        return why_unedited(records, create_time_only=True) or (
            "no record has a timestamp to move (-1), or moving it into the past stops at 0"
        )

"""``corrupt_batch``: flip a byte under a Fetch partition's first batch CRC."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from mockkafka.faults.actions._base import DATA, RECORD_RESPONSE_APIS, Action, FaultCall


@dataclass(frozen=True, slots=True, repr=False)
class CorruptBatch(Action):
    """Fetch and ShareFetch: flip a byte in the CRC-covered part of a matching partition's first batch."""

    NAME: ClassVar[str] = "corrupt_batch"
    PHASE: ClassVar[str] = DATA
    ORDER: ClassVar[int] = 70
    APIS: ClassVar[tuple[str, ...] | None] = RECORD_RESPONSE_APIS
    AS_KAFKA: ClassVar[bool] = False
    RISKY: ClassVar[bool] = True

    @classmethod
    def coverage_details(cls, api: str) -> tuple[str, ...]:
        return ("",) if api == "Fetch" else ()

    def edit_records(self, call: FaultCall, topic: str, index: int, records: Any) -> Any:
        from mockkafka.faults.inspect import corrupt_first_batch

        return corrupt_first_batch(records)

"""``duplicate``: a Fetch answer repeats the batch the consumer read last."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from mockkafka.faults.actions._base import DATA, Action, FaultCall


@dataclass(frozen=True, slots=True, repr=False)
class Duplicate(Action):
    """Fetch: a matching partition's answer starts with the batch the consumer read last
    (the one holding the offset before its fetch offset, from the log, at its original
    offsets), as a new leader's answer can after a leader change. Clients drop records
    below their fetch position (librdkafka and the Java client do), so a correct consumer
    delivers nothing twice. Fires on a partition answered without error, with or without
    records, that has a batch before the fetch offset."""

    NAME: ClassVar[str] = "duplicate"
    PHASE: ClassVar[str] = DATA
    ORDER: ClassVar[int] = 100
    APIS: ClassVar[tuple[str, ...] | None] = ("Fetch",)
    EDITS_EMPTY: ClassVar[bool] = True
    NEEDS_LOG: ClassVar[bool] = True
    #: Drawn by fault_plans() only when named: a consumer that does not drop records
    #: below its fetch position delivers them twice.
    RISKY: ClassVar[bool] = True

    def edit_records(self, call: FaultCall, topic: str, index: int, records: Any) -> Any:
        from mockkafka.faults.record_edits import prepend_batch

        previous = call.previous_batch(topic, index)
        return None if previous is None else prepend_batch(records or b"", previous)

    def why_not(self, call: FaultCall, topic: str, index: int, records: Any) -> str:
        return (
            "no batch before the fetch offset to repeat: the fetch started at the log start "
            "offset, or past the high watermark (a proxy holds no log to read it from)"
        )

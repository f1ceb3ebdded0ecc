"""``partial_trailing_batch``: end a Fetch partition's records with a cut batch."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from mockkafka.faults.actions._base import DATA, RECORD_RESPONSE_APIS, Action, FaultCall


@dataclass(frozen=True, slots=True, repr=False)
class PartialTrailingBatch(Action):
    """Fetch: end a matching partition's records with a batch cut mid-record (as a broker
    does when ``max_bytes`` runs out). Fires only on responses with records to cut.
    ShareFetch: the acquired batches arrive whole and a cut copy of the next batch in the
    log follows them (fires only when the log has one)."""

    NAME: ClassVar[str] = "partial_trailing_batch"
    PHASE: ClassVar[str] = DATA
    ORDER: ClassVar[int] = 60
    APIS: ClassVar[tuple[str, ...] | None] = RECORD_RESPONSE_APIS

    @classmethod
    def coverage_details(cls, api: str) -> tuple[str, ...]:
        return ("",) if api == "Fetch" else ()

    def edit_records(self, call: FaultCall, topic: str, index: int, records: Any) -> Any:
        from mockkafka.faults.inspect import cut_trailing_batch

        # A share consumer is handed every record the answer acquired: none may be cut.
        share = call.api == "ShareFetch"
        nxt = call.next_batch(topic, index, records)
        return cut_trailing_batch(records, nxt, keep_complete=share)

    def why_not(self, call: FaultCall, topic: str, index: int, records: Any) -> str:
        from mockkafka.faults.inspect import complete_batches

        if not complete_batches(records):
            return "the records hold no complete batch"
        if call.api == "ShareFetch":
            return (
                "the log has no batch after the acquired ones, so there is no next batch to "
                "follow them cut (the acquired batches are never cut)"
            )
        return (
            "the answer held a single batch and the log has none after it: a broker ends an "
            "answer with a cut batch only when more data follows the complete ones, and "
            "returns the first batch whole (KIP-74), so there was nothing to cut (write the "
            "records in two batches or more, flushing between them, or produce more while "
            "the consumer reads)"
        )

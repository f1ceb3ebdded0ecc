"""``schema_id``: the schema-registry header of each value rewritten."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from mockkafka.errors import ConfigError
from mockkafka.faults.actions._base import DATA, RECORD_RESPONSE_APIS, Action, FaultCall, arg


@dataclass(frozen=True, slots=True, repr=False)
class SchemaId(Action):
    """Fetch and ShareFetch: each value in the Confluent schema-registry wire format (magic byte 0, then a
    4-byte big-endian schema id) gets schema id ``id`` (one the registry does not know, or
    another subject's) and/or magic byte ``magic``; the payload is kept, batches stay
    valid. Values not in that format are left alone (no registry serializer wrote them)."""

    NAME: ClassVar[str] = "schema_id"
    PHASE: ClassVar[str] = DATA
    ORDER: ClassVar[int] = 120
    APIS: ClassVar[tuple[str, ...] | None] = RECORD_RESPONSE_APIS
    AS_KAFKA: ClassVar[bool] = False
    RISKY: ClassVar[bool] = True

    id: int | None = field(
        default=None,
        metadata=arg(
            "the schema id to write (int32)",
            schema={"type": "integer", "minimum": -(2**31), "maximum": 2**31 - 1},
        ),
    )
    magic: int | None = field(
        default=None,
        metadata=arg(
            "the magic byte to write instead of 0",
            schema={"type": "integer", "minimum": 0, "maximum": 255},
            fuzz=False,
        ),
    )

    def __post_init__(self) -> None:
        from mockkafka.faults.record_edits import check_schema_id

        try:
            check_schema_id(self.id, self.magic)
        except ValueError as exc:
            raise ConfigError(f"schema_id: {exc}") from None

    @classmethod
    def coverage_details(cls, api: str) -> tuple[str, ...]:
        return ("",) if api == "Fetch" else ()

    def edit_records(self, call: FaultCall, topic: str, index: int, records: Any) -> Any:
        from mockkafka.faults.record_edits import rewrite_schema_id

        return rewrite_schema_id(records, schema_id=self.id, magic=self.magic)

    def why_not(self, call: FaultCall, topic: str, index: int, records: Any) -> str:
        from mockkafka.faults.record_edits import why_unedited

        return why_unedited(records) or (
            "no value is in the schema-registry wire format (magic byte 0, then a 4-byte "
            "schema id): they are null, shorter than 5 bytes or do not start with byte 0, so "
            "no registry serializer wrote them (produce with a schema-registry serializer)"
        )

"""``error``: answer with a Kafka error code, for the whole request or per partition."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Literal

from mockkafka.errors import ConfigError, ErrorCode
from mockkafka.faults._checks import check_error
from mockkafka.faults.actions._base import AFTER, INSTEAD, Action, FaultCall, arg

if TYPE_CHECKING:
    from mockkafka.faults.match import Match

ErrorLevel = Literal["auto", "request", "partition"]


@dataclass(frozen=True, slots=True, repr=False)
class Error(Action):
    """Answer with ``code``. ``level="request"``: every error field of the response (the
    request is not processed); ``"partition"``: only the partitions the rule matches (the
    others are processed normally); ``"auto"``: per partition when the rule names a topic or
    partition, else the whole request.

    A code that says the request was applied (``NOT_ENOUGH_REPLICAS_AFTER_APPEND``,
    ``REQUEST_TIMED_OUT`` on Produce, as Kafka sends them; ``DUPLICATE_SEQUENCE_NUMBER``) is
    answered after the handler applied it, so the state is as the answer says."""

    NAME: ClassVar[str] = "error"
    PHASE: ClassVar[str] = INSTEAD
    OTHER_PHASES: ClassVar[tuple[str, ...]] = (AFTER,)
    ORDER: ClassVar[int] = 10

    code: str = field(
        metadata=arg(
            "the error, by name (NOT_LEADER_OR_FOLLOWER) or number",
            schema={"type": ["string", "integer"]},
            python_type="ErrorCode | int | str",
            positional=True,
        )
    )
    level: ErrorLevel = field(
        default="auto",
        metadata=arg(
            "auto, request or partition (see above)",
            schema={"enum": ["auto", "request", "partition"]},
            python_type='Literal["auto", "request", "partition"]',
            fuzz=False,
        ),
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "code", check_error(self.code, "code"))
        if self.level not in ("auto", "request", "partition"):
            raise ConfigError(f"level must be 'auto', 'request' or 'partition', got {self.level!r}")

    @property
    def error_code(self) -> ErrorCode:
        return ErrorCode[self.code]

    @property
    def replaces_response(self) -> bool:
        return self.level != "partition"

    def phase_on(self, api: str) -> str:
        from mockkafka.faults.error_facts import APPLIED_FIRST

        return AFTER if (api, self.code) in APPLIED_FIRST else INSTEAD

    def per_partition(self, call: FaultCall, match: Match) -> bool:
        """Whether this error goes to the matched partitions only."""
        if self.level != "auto":
            return self.level == "partition"
        info = call.info
        return match.targets_partitions and bool(info.partitions or info.topics or info.all_topics)

    async def apply(self, call: FaultCall, match: Match) -> None:
        if self.phase_on(call.api) == AFTER:
            self._after_applied(call, match)
        elif self.per_partition(call, match):
            call.claim(match, self.error_code)
        elif not call.answered:
            call.response = call.error_response(self.error_code)

    def _after_applied(self, call: FaultCall, match: Match) -> None:
        """The partitions the handler applied without error get the code (a stored batch
        answered DUPLICATE_SEQUENCE_NUMBER, ...): the state is as the answer says."""
        per_partition = self.per_partition(call, match)
        for t, i, entry in call.partitions():
            if not isinstance(entry, dict) or entry.get("error_code", 0) != 0:
                continue
            if per_partition and (t is None or not match.partition_matches(t, i)):
                continue
            entry["error_code"] = int(self.error_code)
            if "base_offset" in entry:
                entry["base_offset"] = -1

    def coverage_detail(self) -> str:
        return self.code

    @classmethod
    def coverage_details(cls, api: str) -> tuple[str, ...]:
        from mockkafka.faults.error_facts import ERRORS_BY_API, possible_errors

        return tuple(possible_errors(api, None)) if api in ERRORS_BY_API else ()

    @classmethod
    def as_kafka_on(cls, api: str, detail: str = "") -> bool:
        from mockkafka.faults.error_facts import beyond_kafka

        return not (detail and beyond_kafka(api, detail))

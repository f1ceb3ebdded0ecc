"""``handler``: a Python function answers instead of the broker."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from mockkafka.errors import ConfigError, ErrorCode
from mockkafka.faults.actions._base import INSTEAD, Action, FaultCall, arg

if TYPE_CHECKING:
    from mockkafka.faults.match import Match


def _fn_repr(fn: Callable[..., Any]) -> str:
    mod = getattr(fn, "__module__", None)
    qual = getattr(fn, "__qualname__", None) or repr(fn)
    return f"{mod}.{qual}" if mod and "<" not in qual else qual


@dataclass(frozen=True, slots=True, repr=False)
class CustomHandler(Action):
    """Call ``fn(request, ctx)``: a returned dict is the response (missing fields take
    defaults; the request is not processed), ``None`` lets the request through."""

    NAME: ClassVar[str] = "handler"
    PHASE: ClassVar[str] = INSTEAD
    ORDER: ClassVar[int] = 910
    SCENARIO: ClassVar[bool] = False
    AS_KAFKA: ClassVar[bool] = False
    COVERAGE: ClassVar[bool] = False

    fn: Callable[[dict[str, Any], Any], Any] = field(
        compare=True,
        metadata=arg(
            "fn(request, ctx) -> response dict, or None to let the request through",
            python_type="Callable[[dict[str, Any], Any], Any]",
            positional=True,
        ),
    )

    def __post_init__(self) -> None:
        if not callable(self.fn):
            raise ConfigError(f"fn must be callable, got {self.fn!r}")

    def __repr__(self) -> str:
        return f"CustomHandler({_fn_repr(self.fn)})"

    async def apply(self, call: FaultCall, match: Match) -> None:
        if call.answered:
            return
        try:
            out = self.fn(call.request, call.context)
        except Exception as exc:
            call.record_error(exc)
            out = call.error_response(ErrorCode.UNKNOWN_SERVER_ERROR)
        if out is not None:
            call.response = out

"""``observe``: do nothing but count."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mockkafka.faults.actions._base import AFTER, Action


@dataclass(frozen=True, slots=True, repr=False)
class Observe(Action):
    """Do nothing but count (and mark the exchange in traffic)."""

    NAME: ClassVar[str] = "observe"
    PHASE: ClassVar[str] = AFTER
    ORDER: ClassVar[int] = 900
    SCENARIO: ClassVar[bool] = False
    COVERAGE: ClassVar[bool] = False

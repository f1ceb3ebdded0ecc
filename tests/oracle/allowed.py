"""The one allow-list of known differences between mockkafka and Apache Kafka.

Each entry names the API, a pattern of the differing field path (``re.fullmatch``) and why
the difference is kept. ``docs/skipped_features.md`` lists every entry's ``key`` in its
"Differences from Apache Kafka" section (a test checks both directions). A difference no
entry explains is *unexplained*: fix the fake, or add an entry with its reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tests.oracle.harness import Difference


@dataclass(frozen=True)
class Allowed:
    key: str
    api: str
    path: str
    reason: str
    session: str = ".*"

    def matches(self, d: Difference) -> bool:
        return (
            (self.api == "*" or self.api == d.api)
            and re.fullmatch(self.path, d.path) is not None
            and re.fullmatch(self.session, d.session) is not None
        )


ALLOWED: tuple[Allowed, ...] = ()


def allowed_by(d: Difference) -> str | None:
    for entry in ALLOWED:
        if entry.matches(d):
            return entry.key
    return None

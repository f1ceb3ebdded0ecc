"""The allow-list and ``docs/skipped_features.md`` agree (no broker needed)."""

from __future__ import annotations

from tests.oracle.allowed import ALLOWED
from tests.oracle.test_differential import assert_allow_list_matches_docs


def test_the_docs_list_exactly_the_allowed_differences() -> None:
    assert_allow_list_matches_docs()


def test_every_allowed_difference_says_why() -> None:
    assert all(len(e.reason) > 40 for e in ALLOWED)
    assert len({e.key for e in ALLOWED}) == len(ALLOWED)

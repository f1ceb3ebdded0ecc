"""Suite-wide settings: every message the project encodes in its tests is checked strictly
(an unknown or misspelt field raises instead of being dropped; see protocol/codec.py)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from mockkafka.protocol.codec import set_strict_encode

os.environ["MOCKKAFKA_STRICT_ENCODE"] = "1"  # for `mockkafka serve` subprocesses too


@pytest.fixture(autouse=True, scope="session")
def _strict_encode() -> Iterator[None]:
    previous = set_strict_encode(True)
    yield
    set_strict_encode(previous)

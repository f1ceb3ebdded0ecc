"""Plugin tests run inner pytest sessions through ``pytester`` (in-process unless noted)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _subprocess_imports_this_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    """``runpytest_subprocess`` runs in a temporary directory: put this checkout first on
    its path, so it tests this copy of mockkafka and its plugin (not whichever copy the
    environment has installed)."""
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    )

"""The example blocks of the example tests appear verbatim in docs/pytest.md."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

HERE = Path(__file__).parent
DOCS = HERE.parent.parent / "docs" / "pytest.md"


def example_blocks() -> list[tuple[str, str]]:
    out = []
    for path in sorted(HERE.glob("test_readme_*.py")):
        text = path.read_text()
        parts = re.split(r"^# --- example: (.*?) -*\n", text, flags=re.M)
        # parts: [preamble, title1, body1, title2, body2, ...]
        for title, body in zip(parts[1::2], parts[2::2], strict=True):
            out.append((f"{path.name}: {title}", body.strip()))
    return out


def test_there_are_examples() -> None:
    assert len(example_blocks()) >= 6


@pytest.mark.parametrize(("title", "code"), example_blocks(), ids=lambda v: str(v)[:40])
def test_example_is_in_the_docs(title: str, code: str) -> None:
    docs = DOCS.read_text()
    assert code in docs, f"{title}: update docs/pytest.md (or the example) so they match"

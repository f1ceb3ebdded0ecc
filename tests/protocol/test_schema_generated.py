"""The committed generated modules match Kafka's schemas (when the schemas are at hand).

``tools/gen_schemas.py`` reads ``../shared/kafka-protocol`` (not part of the repository) and
writes ``mockkafka/protocol/_schema_data.py`` and ``mockkafka/_error_codes.py``. Where that
folder exists, ``--check`` must report the committed modules up to date; elsewhere (a fresh
clone, an sdist) the test skips.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GEN = ROOT / "tools" / "gen_schemas.py"


def _default_source() -> Path:
    spec = importlib.util.spec_from_file_location("_gen_schemas_for_test", GEN)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    source: Path = module.DEFAULT_SOURCE
    return source


def test_generated_schema_modules_are_up_to_date() -> None:
    source = _default_source()
    if not (source / "schemas").is_dir():
        pytest.skip(f"Kafka's JSON schemas are not at {source}; nothing to compare against")
    result = subprocess.run(
        [sys.executable, str(GEN), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr

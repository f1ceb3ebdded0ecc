"""The curated public API: every public name exported once, importable, documented."""

from __future__ import annotations

import subprocess
import sys

import pytest

import mockkafka


def test_every_public_name_is_exported_once_and_exists() -> None:
    names = mockkafka.__all__
    assert len(names) == len(set(names))
    for name in names:
        assert hasattr(mockkafka, name), name


def test_all_lists_every_public_attribute() -> None:
    assert set(mockkafka._EXPORTS) == set(mockkafka.__all__)
    public = {
        n
        for n in dir(mockkafka)
        if not n.startswith("_") and n not in ("annotations",) and not _is_module(n)
    }
    assert public == set(mockkafka.__all__)


def test_public_names_have_docstrings() -> None:
    for name in mockkafka.__all__:
        obj = getattr(mockkafka, name)
        assert obj.__doc__, f"mockkafka.{name} has no docstring"


def _is_module(name: str) -> bool:
    import types

    return isinstance(getattr(mockkafka, name), types.ModuleType)


def test_importing_mockkafka_does_not_import_the_broker() -> None:
    """``import mockkafka`` (and the pytest plugin) must stay cheap: names load on use."""
    code = (
        "import sys, mockkafka, mockkafka.cluster.config; "
        "heavy = [m for m in ('trio', 'mockkafka.protocol._schema_data', 'mockkafka._cluster') "
        "if m in sys.modules]; "
        "print(heavy); "
        "mockkafka.Cluster; "
        "print('mockkafka._cluster' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    ).stdout.split()
    assert out == ["[]", "True"]


def test_unknown_attribute_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="Clustre"):
        mockkafka.Clustre  # noqa: B018

"""The curated public API: every public name exported once, importable, documented."""

from __future__ import annotations

import mockkafka


def test_every_public_name_is_exported_once_and_exists() -> None:
    names = mockkafka.__all__
    assert len(names) == len(set(names))
    for name in names:
        assert hasattr(mockkafka, name), name


def test_all_lists_every_public_attribute() -> None:
    public = {
        n
        for n in vars(mockkafka)
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

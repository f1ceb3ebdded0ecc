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
        "heavy = [m for m in ('trio', 'mockkafka.protocol._schema_data', 'mockkafka._api.cluster') "
        "if m in sys.modules]; "
        "print(heavy); "
        "mockkafka.Cluster; "
        "print('mockkafka._api.cluster' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    ).stdout.split()
    assert out == ["[]", "True"]


def test_unknown_attribute_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="Clustre"):
        mockkafka.Clustre  # noqa: B018


def _vocabulary_names() -> set[str]:
    import re
    from pathlib import Path

    text = (Path(__file__).parent.parent / "docs" / "vocabulary.md").read_text()
    return set(re.findall(r"`(?:[a-z_]+\.)?([a-z_]+)\(", text))


CLUSTER_EXTRAS = {
    # Lifecycle, addresses and plumbing, not verbs of the vocabulary.
    "start",
    "stop",
    "call",
    "raise_broker_errors",
    "check_rules",
    "why_unfired",
}


def test_every_cluster_verb_is_in_the_vocabulary_and_back() -> None:
    methods = {
        n
        for n in dir(mockkafka.Cluster)
        if not n.startswith("_") and callable(getattr(mockkafka.Cluster, n))
    }
    verbs = {n for n in methods - CLUSTER_EXTRAS if not n.endswith("_async")}
    documented = _vocabulary_names()
    assert verbs - documented == set(), "verbs missing from docs/vocabulary.md"
    assert {n[: -len("_async")] for n in methods if n.endswith("_async")} <= verbs
    async_waits = {n for n in dir(mockkafka.AsyncCluster) if n.startswith("wait_for_")}
    assert async_waits == {n for n in verbs if n.startswith("wait_for_")}


def test_every_cluster_method_has_a_docstring() -> None:
    for cls in (mockkafka.Cluster, mockkafka.AsyncCluster):
        for n in dir(cls):
            if not n.startswith("_"):
                assert getattr(cls, n).__doc__, f"{cls.__name__}.{n} has no docstring"


def test_every_exception_class_derives_from_mockkafka_error() -> None:
    import inspect

    import mockkafka.errors as errors

    for _name, obj in inspect.getmembers(errors, inspect.isclass):
        if issubclass(obj, BaseException) and not issubclass(obj, Warning):
            assert issubclass(obj, mockkafka.MockKafkaError), obj

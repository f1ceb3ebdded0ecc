"""mockkafka.strategies and mockkafka.stateful: curated names, each exported once, documented."""

from __future__ import annotations

import types

import pytest

import mockkafka.stateful
import mockkafka.strategies


@pytest.mark.parametrize("module", [mockkafka.strategies, mockkafka.stateful])
def test_every_public_name_is_exported_once_and_documented(module: types.ModuleType) -> None:
    names = module.__all__
    assert len(names) == len(set(names))
    for name in names:
        obj = getattr(module, name)
        assert isinstance(obj, str | tuple) or obj.__doc__, f"{module.__name__}.{name}"


def test_strategies_are_plural_nouns_taking_keyword_arguments_only() -> None:
    import inspect

    for name in ("records", "headers", "record_batches", "client_configs", "error_codes",
                 "fault_plans", "requests"):  # fmt: skip
        assert name.endswith("s")
        params = inspect.signature(getattr(mockkafka.strategies, name)).parameters.values()
        assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params), name


def test_importing_mockkafka_does_not_need_hypothesis() -> None:
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['hypothesis'] = None; import mockkafka; "
        "import pytest_plugin._coverage"
    )
    subprocess.run([sys.executable, "-c", code], check=True)

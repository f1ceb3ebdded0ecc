"""mockkafka's pytest plugin (installed as ``mockkafka_pytest``; the ``pytest11`` entry point
names this package).

A pytest plugin is a guest in environments its authors never see, so this module is only a
gate: on a pytest the plugin supports (``SUPPORTED_PYTEST``, the range the ``[pytest]`` extra
of ``pyproject.toml`` states) it loads :mod:`mockkafka_pytest.plugin`, the fixtures and hooks.
On an older pytest it loads nothing but a warning that says which pytest to install, so the
session still runs its other tests instead of dying in pluggy's validation of hooks and
hook-wrappers that pytest does not know yet.
"""

from __future__ import annotations

import re

import pytest

#: The pytest versions the plugin supports (the ``[pytest]`` extra states the same range, a
#: test checks that they agree). The lower end is enforced here; the upper end is the newest
#: major release the plugin is tested on (tests/packaging/test_plugin_environments.py).
SUPPORTED_PYTEST = ">=8.0,<10"
OLDEST_PYTEST = (8, 0)


def _version(text: str) -> tuple[int, ...]:
    """``"8.3.5"`` -> ``(8, 3, 5)``; a pre-release suffix is dropped (``"9.0.0rc1"``)."""
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


def supported(version: str = pytest.__version__) -> bool:
    """True when the plugin can load on this pytest version."""
    return _version(version) >= OLDEST_PYTEST


if supported():
    pytest_plugins = [f"{__name__}.plugin"]
else:

    def pytest_configure(config: pytest.Config) -> None:
        """Too old a pytest: say so once, load no fixture, break nothing else."""
        message = (
            f"mockkafka's pytest plugin needs pytest{SUPPORTED_PYTEST} (found "
            f"{pytest.__version__}); its fixtures are not loaded: "
            f"pip install 'pytest{SUPPORTED_PYTEST}'"
        )
        config.issue_config_time_warning(pytest.PytestConfigWarning(message), stacklevel=2)

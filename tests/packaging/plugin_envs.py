"""The environments the pytest plugin is tested in, and the wheelhouse they install from.

A pytest plugin lives in environments its authors never see: with and without pytest-xdist,
pytest-asyncio, pytest-trio, pytest-timeout, hypothesis and faker, on the oldest and the newest
pytest it claims (``mockkafka_pytest.SUPPORTED_PYTEST``). Each entry of :data:`ENVIRONMENTS` is
one fresh virtual environment: the project's wheel, its runtime dependencies, and those
neighbours, nothing else.

The tests install offline, from a wheelhouse that this module fills (``.ci/run`` runs it as a
bounded step, like the Java tier resolves its jars)::

    python -m tests.packaging.plugin_envs download          # into .cache/wheelhouse
    python -m tests.packaging.plugin_envs download DIR      # or MOCKKAFKA_WHEELHOUSE=DIR

Where the wheelhouse lacks what an environment needs, its test skips and says this command.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_WHEELHOUSE = ROOT / ".cache" / "wheelhouse"


def wheelhouse() -> Path:
    """Where the environments' wheels are: ``$MOCKKAFKA_WHEELHOUSE`` or ``.cache/wheelhouse``."""
    return Path(os.environ.get("MOCKKAFKA_WHEELHOUSE") or DEFAULT_WHEELHOUSE)


def _pyproject() -> dict[str, object]:
    with (ROOT / "pyproject.toml").open("rb") as f:
        return tomllib.load(f)


def runtime_requirements() -> list[str]:
    """What ``pip install mockkafka`` installs (the ``dependencies`` of pyproject.toml)."""
    project = _pyproject()["project"]
    assert isinstance(project, dict)
    return list(project["dependencies"])


def supported_pytest() -> str:
    """The pytest range the ``[pytest]`` extra states, e.g. ``">=8.0,<10"``."""
    project = _pyproject()["project"]
    assert isinstance(project, dict)
    [spec] = project["optional-dependencies"]["pytest"]
    match = re.fullmatch(r"pytest\s*([<>=!~].*)", spec)
    assert match, spec
    return match.group(1).replace(" ", "")


def oldest_pytest() -> str:
    """The oldest pytest the range admits, as an exact version (``">=8.0,<10"`` -> ``"8.0.0"``)."""
    match = re.search(r">=\s*(\d+)\.(\d+)(?:\.(\d+))?", supported_pytest())
    assert match, supported_pytest()
    major, minor, micro = match.groups()
    return f"{major}.{minor}.{micro or 0}"


@dataclass(frozen=True)
class Environment:
    """One fresh virtual environment: ``requirements`` beside the wheel and its dependencies.

    ``runs`` names the sample projects run there (see ``_projects.py``) with their extra
    pytest arguments.
    """

    name: str
    requirements: tuple[str, ...]
    runs: tuple[tuple[str, tuple[str, ...]], ...]


# The runs every supported environment makes.
COMMON_RUNS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("no_kafka", ()),
    ("cluster", ()),
    ("scenario", ()),
    ("failing", ()),
    ("help", ()),
)


def environments() -> list[Environment]:
    """The matrix, newest pytest unless an entry pins another (resolved from the range)."""
    newest = f"pytest{supported_pytest()}"
    return [
        Environment("pytest-oldest", (f"pytest=={oldest_pytest()}",), COMMON_RUNS),
        Environment("pytest-newest", (newest,), COMMON_RUNS),
        Environment(
            "xdist",
            (newest, "pytest-xdist"),
            (*COMMON_RUNS, ("cluster", ("-n", "2")), ("coverage", ("-n", "2"))),
        ),
        Environment(
            "asyncio",
            (newest, "pytest-asyncio"),
            (
                *COMMON_RUNS,
                ("asyncio_strict", ("-o", "asyncio_mode=strict")),
                ("asyncio_auto", ("-o", "asyncio_mode=auto")),
            ),
        ),
        Environment("trio", (newest, "pytest-trio"), (*COMMON_RUNS, ("trio", ()))),
        Environment("hypothesis", (newest, "hypothesis"), (*COMMON_RUNS, ("hypothesis", ()))),
        Environment("faker", (newest, "faker"), (*COMMON_RUNS, ("faker", ()))),
        Environment(
            "timeout",
            (newest, "pytest-timeout"),
            (*COMMON_RUNS, ("cluster", ("--timeout", "60"))),
        ),
        Environment(
            "no-xdist-coverage",
            (newest,),
            (("coverage", ()),),
        ),
        # An older pytest than the plugin supports: the session must still run its tests.
        Environment("pytest-too-old", ("pytest==7.4.4", "pluggy==1.0.0"), (("too_old", ()),)),
    ]


def download(target: Path) -> int:
    """Fill ``target`` with the wheels of every environment (one ``pip download`` each, since
    their pins conflict) and of the project's runtime dependencies. Returns pip's worst exit
    status (0: all there)."""
    target.mkdir(parents=True, exist_ok=True)
    sets = [runtime_requirements(), ["setuptools>=77", "wheel"]]
    sets += [list(env.requirements) for env in environments()]
    worst = 0
    for reqs in sets:
        cmd = [sys.executable, "-m", "pip", "download", "-q", "-d", str(target), *reqs]
        print("+", " ".join(cmd[3:]), flush=True)
        worst = max(worst, subprocess.run(cmd, check=False, timeout=600).returncode)
    return worst


if __name__ == "__main__":
    args = sys.argv[1:]
    if not args or args[0] != "download" or len(args) > 2:
        sys.exit("usage: python -m tests.packaging.plugin_envs download [DIR]")
    sys.exit(download(Path(args[1]) if len(args) == 2 else wheelhouse()))

"""The built wheel in fresh virtual environments with different neighbours (issue 21).

Each environment of ``plugin_envs.environments()`` is a new venv holding the wheel, its
runtime dependencies and a few neighbours (pytest-xdist, pytest-asyncio, pytest-trio,
pytest-timeout, hypothesis, faker; the oldest and the newest supported pytest), installed
offline from the wheelhouse (``python -m tests.packaging.plugin_envs download``). There it
runs user projects from ``_projects.py``: one with no Kafka tests (it must pass, with output
identical to a run without the plugin and none of mockkafka's broker imported), one using
``kafka_cluster`` and friends, one with the ``kafka_scenario`` marker, a failing test (its
traffic report), ``--help`` (the plugin's options listed), and each neighbour's own use
(asyncio tests, trio tests, hypothesis, faker, ``--kafka-fault-coverage`` with and without
xdist). Every run uses ``-p no:cacheprovider --strict-markers``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from . import _projects, plugin_envs
from .test_wheel import build_wheel

pytestmark = pytest.mark.timeout(600)

BASE_ARGS = ("-q", "-p", "no:cacheprovider", "--strict-markers")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("wheel"))


@dataclass
class Venv:
    """A fresh virtual environment with the wheel and ``requirements`` installed."""

    path: Path

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"

    def pytest(self, project: Path, *args: str) -> subprocess.CompletedProcess[str]:
        env = {
            "PATH": f"{self.path / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
            "HOME": str(project.parent),
            "LANG": "C.UTF-8",
            "SAMPLE_REPORT": str(project / "loaded.json"),
        }
        return subprocess.run(
            [str(self.python), "-m", "pytest", *BASE_ARGS, *args],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=240,
        )


def make_venv(base: Path, wheel: Path, requirements: tuple[str, ...]) -> Venv:
    """A new venv under ``base`` with ``wheel`` and ``requirements`` from the wheelhouse only
    (skips, naming the command that fills it, where the wheelhouse lacks something)."""
    house = plugin_envs.wheelhouse()
    if not house.is_dir():
        pytest.skip(
            f"no wheelhouse at {house}: run `python -m tests.packaging.plugin_envs download`"
        )
    venv = Venv(base / "venv")
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv.path)], check=True, timeout=120
    )
    install = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(venv.python),
            "install",
            "-q",
            "--no-index",
            "--find-links",
            str(house),
            str(wheel),
            *requirements,
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if install.returncode != 0:
        if "No matching distribution" in install.stderr:
            pytest.skip(
                f"the wheelhouse {house} lacks a wheel for {requirements}: run "
                f"`python -m tests.packaging.plugin_envs download`\n{install.stderr[-800:]}"
            )
        raise AssertionError(f"pip install failed:\n{install.stdout}\n{install.stderr}")
    return venv


def write_project(base: Path, name: str) -> Path:
    project = base / name
    project.mkdir(parents=True)
    for filename, text in _projects.PROJECTS[name].items():
        (project / filename).write_text(text.lstrip("\n"))
    return project


def passed(result: subprocess.CompletedProcess[str]) -> int:
    match = re.search(r"(\d+) passed", result.stdout)
    return int(match.group(1)) if match else 0


def _timeless(text: str) -> str:
    return re.sub(r"in \d+\.\d+s", "in Ns", text)


def check_run(venv: Venv, base: Path, name: str, args: tuple[str, ...], serial: int) -> list[str]:
    """Run sample project ``name`` in ``venv``; the problems found (empty: all as expected)."""
    if name == "help":
        project, args = base, ("--help",)
    else:
        project = write_project(base / f"run{serial}", name)
    result = venv.pytest(project, *args)
    out = result.stdout + result.stderr
    label = f"{name} {' '.join(args)}".strip()
    problems: list[str] = []

    def expect(ok: bool, what: str) -> None:
        if not ok:
            problems.append(f"[{label}] {what}\n--- output ---\n{out[-3000:]}")

    expect("INTERNALERROR" not in out, "pytest died with INTERNALERROR")
    if name == "help":
        expect(result.returncode == 0, f"--help exit {result.returncode}")
        for option in ("--kafka-traffic", "--kafka-fault-coverage", "kafka_brokers"):
            expect(option in result.stdout, f"{option} not listed by --help")
        return problems
    if name == "failing":
        expect(result.returncode == 1, f"exit {result.returncode}, expected 1 (one failure)")
        expect("mockkafka traffic" in out, "no 'mockkafka traffic' section in the report")
        expect("ApiVersions" in out, "the traffic section does not show the ApiVersions call")
        return problems
    expected = {
        "no_kafka": 4,
        "too_old": 4,
        "cluster": 5,
        "scenario": 1,
        "coverage": 4,
        "asyncio_strict": 1,
        "asyncio_auto": 1,
        "trio": 1,
        "hypothesis": 2,
        "faker": 2,
    }[name]
    expect(result.returncode == 0, f"exit {result.returncode}")
    expect(passed(result) == expected, f"{passed(result)} passed, expected {expected}")
    if name == "no_kafka":
        loaded = set(json.loads((project / "loaded.json").read_text()))
        without = venv.pytest(project, *args, "-p", "no:mockkafka")
        # What the neighbours import themselves (pytest-trio imports trio) is not the plugin's.
        extra = loaded - set(json.loads((project / "loaded.json").read_text()))
        expect(not extra, f"the plugin imported {sorted(extra)} in a session without Kafka tests")
        expect(
            _timeless(without.stdout) == _timeless(result.stdout),
            "the plugin changed the output of a session without Kafka tests:\n"
            f"without the plugin:\n{without.stdout}",
        )
    if name == "too_old":
        expect("needs pytest>=8.0,<10" in out, "no warning naming the supported pytest")
    if name == "coverage":
        report = json.loads((project / "kafka-fault-coverage.json").read_text())
        counts = {(e["api"], e["fault"]): e["count"] for e in report["faults"]["exercised"]}
        expect(
            counts.get(("ApiVersions", "delay")) == 4,
            f"fault coverage counted {counts}, expected ApiVersions delay x4",
        )
    if name in ("cluster", "scenario", "coverage"):
        expect("MockKafkaWarning" not in out and "UnfiredRule" not in out, "plugin warnings")
    return problems


def coverage_args(name: str, args: tuple[str, ...]) -> tuple[str, ...]:
    return (*args, "--kafka-fault-coverage") if name == "coverage" else args


@pytest.mark.parametrize("environment", plugin_envs.environments(), ids=lambda e: e.name)
def test_plugin_in_a_fresh_environment(
    environment: plugin_envs.Environment, wheel: Path, tmp_path: Path
) -> None:
    venv = make_venv(tmp_path, wheel, environment.requirements)
    problems: list[str] = []
    for serial, (name, args) in enumerate(environment.runs):
        problems += check_run(venv, tmp_path, name, coverage_args(name, args), serial)
    assert not problems, "\n\n".join(problems)


def test_supported_pytest_range_is_stated_once() -> None:
    """pyproject's ``[pytest]`` extra and the plugin's gate state the same range."""
    import mockkafka_pytest

    assert plugin_envs.supported_pytest() == mockkafka_pytest.SUPPORTED_PYTEST
    assert plugin_envs.oldest_pytest() == ".".join(map(str, mockkafka_pytest.OLDEST_PYTEST)) + ".0"
    assert mockkafka_pytest.supported("8.0.0") and mockkafka_pytest.supported("9.2.0rc1")
    assert not mockkafka_pytest.supported("7.4.4")

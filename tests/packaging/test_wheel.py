"""The wheel: what lands in site-packages, and a user project with its own ``pytest_plugin``."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(300)

ROOT = Path(__file__).resolve().parents[2]
PIP = (sys.executable, "-m", "pip")
SOURCES = (
    "mockkafka",
    "pytest_plugin",
    "scenarios",
    "pyproject.toml",
    "setup.py",
    "README.md",
    "NOTICE",
)


def _setuptools_is_new_enough() -> bool:
    try:
        from importlib.metadata import version

        return int(version("setuptools").split(".")[0]) >= 77
    except Exception:
        return False


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project's wheel, built from a copy of the sources (the build leaves
    ``*.egg-info`` behind, which must not land in the checkout)."""
    return build_wheel(tmp_path_factory.mktemp("wheel"))


def build_wheel(base: Path) -> Path:
    """Build the project's wheel under ``base`` from a copy of the sources (so no
    ``*.egg-info`` lands in the checkout, where pytest would load a plugin entry point the
    checkout cannot import) and return its path."""
    if not _setuptools_is_new_enough():
        pytest.skip("building the wheel offline needs setuptools>=77 (the test extra has it)")
    src = base / "src"
    src.mkdir()
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(path, src / name)
    dist = base / "dist"
    subprocess.run(
        [*PIP, "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(dist), str(src)],
        check=True,
        timeout=240,
        capture_output=True,
    )
    [built] = dist.glob("mockkafka-*.whl")
    return built


def test_wheel_installs_the_plugin_under_a_distinctive_name(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        top = {n.split("/", 1)[0] for n in names}
        [entry_points] = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
        eps = zf.read(entry_points).decode()
    assert {t for t in top if not t.endswith(".dist-info")} == {"mockkafka", "mockkafka_pytest"}
    assert "mockkafka = mockkafka_pytest\n" in eps
    assert "mockkafka = mockkafka.cli:main" in eps
    # Every module of the checkout is in the wheel (a new subpackage is picked up by itself).
    expected = {
        str(p.relative_to(ROOT)).replace("pytest_plugin/", "mockkafka_pytest/", 1)
        for folder in ("mockkafka", "pytest_plugin")
        for p in (ROOT / folder).rglob("*.py")
    }
    assert expected <= set(names)
    assert "mockkafka/py.typed" in names


def test_user_project_with_its_own_pytest_plugin_module_runs(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    subprocess.run(
        [*PIP, "install", "--no-deps", "-q", "--target", str(site), str(wheel)],
        check=True,
        timeout=240,
        capture_output=True,
    )
    project = tmp_path / "project"
    project.mkdir()
    (project / "pytest_plugin.py").write_text("NAME = 'the user project own module'\n")
    (project / "test_app.py").write_text(
        "import mockkafka\n"
        "import pytest_plugin\n\n"
        "def test_app(kafka_bootstrap):\n"
        "    assert pytest_plugin.NAME == 'the user project own module'\n"
        "    assert kafka_bootstrap.startswith('127.0.0.1:')\n"
        f"    assert mockkafka.__file__.startswith({str(site)!r})\n"
    )
    env = {**os.environ, "PYTHONPATH": str(site)}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout

"""The scenario library, the JSON Schema and the OpenAPI document are installed with the
package: a wheel holds them and Scenario.load(NAME) works from it."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

from setuptools import find_packages

from tests.packaging.test_wheel import build_wheel

REPO = Path(__file__).resolve().parent.parent.parent


def test_a_wheel_ships_the_library_and_loads_it_by_name(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path)
    names = zipfile.ZipFile(wheel).namelist()
    for package in find_packages(where=str(REPO), include=["mockkafka", "mockkafka.*"]):
        assert package.replace(".", "/") + "/__init__.py" in names, package
    shipped = {n.split("/")[-1] for n in names if n.startswith("mockkafka/scenarios/")}
    assert shipped == {p.name for p in (REPO / "scenarios").glob("*.yaml")}
    assert "mockkafka/scenario/schema.json" in names
    assert "mockkafka/openapi.json" in names
    target = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(target)
    out = subprocess.run(
        [sys.executable, "-c",
         "import mockkafka, sys; sc = mockkafka.Scenario.load('leader-failover');"
         "print(mockkafka.__file__); print(sc.source);"
         "from importlib import resources;"
         "text = resources.files('mockkafka').joinpath('scenarios/leader-failover.yaml')"
         ".read_text();"
         "mine = mockkafka.Scenario.from_yaml(text, topic='payments');"
         "print(mine.topics[0].topic)"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    module, source, bound_topic = out.stdout.split()
    assert module.startswith(str(target)) and source.startswith(str(target / "mockkafka/scenarios"))
    # docs/scenarios.md: a library file read from the installed package, bound to your names
    assert bound_topic == "payments"

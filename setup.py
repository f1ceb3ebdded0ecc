"""Package list for setuptools (everything else is in pyproject.toml).

The scenario library lives at the top of the repository (``scenarios/``) and is installed as
the package ``mockkafka.scenarios`` (its ``*.yaml``), so ``Scenario.load("leader-failover")``
works from a wheel (``mockkafka/scenario/loader.py``: ``library_dirs``).
"""

from setuptools import find_packages, setup

setup(
    packages=[
        *find_packages(include=["mockkafka", "mockkafka.*", "pytest_plugin"]),
        "mockkafka.scenarios",
    ],
    package_dir={"mockkafka.scenarios": "scenarios"},
)

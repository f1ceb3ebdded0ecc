"""Package list for setuptools (everything else is in pyproject.toml).

The pytest plugin's code lives in the ``pytest_plugin/`` folder and is installed as the
package ``mockkafka_pytest``: a generic top-level name in site-packages would shadow a user's
own ``pytest_plugin`` module.

The scenario library lives at the top of the repository (``scenarios/``) and is installed as
the package ``mockkafka.scenarios`` (its ``*.yaml``), so ``Scenario.load("leader-failover")``
works from a wheel (``mockkafka/scenario/loader.py``: ``library_dirs``).
"""

from setuptools import find_packages, setup

setup(
    packages=[
        *find_packages(include=["mockkafka", "mockkafka.*"]),
        "mockkafka_pytest",
        "mockkafka.scenarios",
    ],
    package_dir={"mockkafka_pytest": "pytest_plugin", "mockkafka.scenarios": "scenarios"},
)

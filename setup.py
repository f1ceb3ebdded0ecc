"""Package list for setuptools (everything else is in pyproject.toml).

The pytest plugin's code lives in the ``pytest_plugin/`` folder and is installed as the
package ``mockkafka_pytest``: a generic top-level name in site-packages would shadow a user's
own ``pytest_plugin`` module.
"""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["mockkafka", "mockkafka.*"]), "mockkafka_pytest"],
    package_dir={"mockkafka_pytest": "pytest_plugin"},
)

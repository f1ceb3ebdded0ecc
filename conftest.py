"""Root conftest: plugins the test suite needs (pytest only allows them here), and the
hypothesis profiles: ``ci`` (bounded, the default) and ``long`` (``--hypothesis-profile=long``,
for nightly fuzzing campaigns), and the ``--run-spark-extended`` switch for the longer Spark
fault scenarios."""

from __future__ import annotations

import pytest

from mockkafka.stateful import register_profiles

pytest_plugins = ["pytester"]

register_profiles()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--run-spark-extended",
        action="store_true",
        default=False,
        help="also run the tests marked spark_extended (Spark fault scenarios, minutes)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("run_spark_extended"):
        return
    skip = pytest.mark.skip(reason="Spark fault scenario: run with --run-spark-extended")
    for item in items:
        if item.get_closest_marker("spark_extended") is not None:
            item.add_marker(skip)

"""Root conftest: plugins the test suite needs (pytest only allows them here), and the
hypothesis profiles: ``ci`` (bounded, the default) and ``long`` (``--hypothesis-profile=long``,
for nightly fuzzing campaigns), the ``--run-spark-extended`` switch for the longer Spark
fault scenarios, ``--run-kafka-three-brokers`` for the tests that start a three-node
Apache Kafka cluster (three JVMs)."""

from __future__ import annotations

import random

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
    parser.addoption(
        "--shuffle-seed",
        type=int,
        default=None,
        metavar="SEED",
        help="run the tests in a random order drawn from SEED (tools/flake_hunt.py uses it; "
        "every xdist worker draws the same order)",
    )
    parser.addoption(
        "--run-kafka-three-brokers",
        action="store_true",
        default=False,
        help="also run the tests marked kafka_three_brokers (a three-node Apache Kafka "
        "cluster behind the proxy: three JVMs, ~1 GB)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    seed = config.getoption("shuffle_seed")
    if seed is not None:
        random.Random(seed).shuffle(items)
    switches = {
        "spark_extended": (
            "run_spark_extended",
            "Spark fault scenario: run with --run-spark-extended",
        ),
        "kafka_three_brokers": (
            "run_kafka_three_brokers",
            "three-node Apache Kafka cluster (three JVMs): run with --run-kafka-three-brokers",
        ),
    }
    for marker, (option, reason) in switches.items():
        if config.getoption(option):
            continue
        skip = pytest.mark.skip(reason=reason)
        for item in items:
            if item.get_closest_marker(marker) is not None:
                item.add_marker(skip)

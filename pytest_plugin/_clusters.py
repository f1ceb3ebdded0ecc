"""What the cluster fixtures share: option resolution, topic creation, tracking, unfired rules.

Both the fixtures of :mod:`.plugin` and the trio fixture of :mod:`._trio` build their clusters
with these; they live here, below both, so that neither fixture module imports the other.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pytest

from ._options import ClusterOptions, OptionsError, merge
from ._report import TestClusters

if TYPE_CHECKING:
    from mockkafka._api.cluster import Cluster

    from ._report import AnyCluster

__all__ = [
    "INI_KEY",
    "TESTS_KEY",
    "check_rules",
    "create_topics",
    "marker_layers",
    "resolve_options",
    "start_cluster",
    "tests_of",
    "usage_error",
    "validated",
]

#: The clusters the plugin tracks for a test item (see :func:`tests_of`).
TESTS_KEY = pytest.StashKey[TestClusters]()
#: The ``kafka_cluster_*`` ini options, read once at configure time.
INI_KEY = pytest.StashKey[Mapping[str, Any]]()


def usage_error(message: str) -> None:
    """Fail the current test with ``message`` and no traceback (a mistake in the test)."""
    __tracebackhide__ = True
    pytest.fail(f"mockkafka usage error: {message}", pytrace=False)


def marker_layers(request: pytest.FixtureRequest) -> list[tuple[str, Mapping[str, Any]]]:
    """The test's kafka_cluster markers, farthest first."""
    __tracebackhide__ = True
    layers: list[tuple[str, Mapping[str, Any]]] = []
    for mark in reversed(list(request.node.iter_markers("kafka_cluster"))):
        if mark.args:
            usage_error(
                "@pytest.mark.kafka_cluster takes keyword arguments only "
                f"(e.g. brokers=3), got positional {mark.args!r}"
            )
        layers.append(("@pytest.mark.kafka_cluster", mark.kwargs))
    return layers


def validated(layers: list[tuple[str, Mapping[str, Any]]]) -> ClusterOptions:
    """Merge ``layers`` and check them as ``mockkafka.Cluster`` would (usage error if bad)."""
    __tracebackhide__ = True
    from mockkafka.cluster.config import ClusterConfig
    from mockkafka.errors import ConfigError

    problem = ""
    try:
        opts = merge(layers)
        ClusterConfig(brokers=opts.brokers, **opts.config)
    except OptionsError as exc:
        problem = str(exc)
    except ConfigError as exc:
        problem = f"{exc}{opts.source_of(str(exc))}"
    if problem:  # raised outside the except block: no "during handling" chain in the report
        usage_error(problem)
    return opts


def resolve_options(
    request: pytest.FixtureRequest,
    fixture_options: Mapping[str, Any],
    call_options: Mapping[str, Any] | None = None,
    scenario_options: Mapping[str, Any] | None = None,
) -> ClusterOptions:
    """Merge ini options, ``kafka_cluster_options``, the scenario's cluster, markers and call
    options (in that order)."""
    __tracebackhide__ = True
    layers: list[tuple[str, Mapping[str, Any]]] = [
        ("ini options", request.config.stash.get(INI_KEY, {})),
        ("fixture kafka_cluster_options", fixture_options),
    ]
    if scenario_options is not None:
        layers.append(("@pytest.mark.kafka_scenario", scenario_options))
    layers.extend(marker_layers(request))
    if call_options is not None:
        layers.append(("kafka_cluster_factory(...)", call_options))
    return validated(layers)


def tests_of(item: pytest.Item) -> TestClusters:
    """The clusters the plugin tracks for ``item`` (created on first use)."""
    tests = item.stash.get(TESTS_KEY, None)
    if tests is None:
        tests = item.stash[TESTS_KEY] = TestClusters()
    return tests


def create_topics(cluster: AnyCluster, opts: ClusterOptions) -> None:
    __tracebackhide__ = True
    from mockkafka.errors import KafkaApiError

    for name, spec in opts.topics.items():
        try:
            cluster.create_topic(
                name,
                partitions=spec.partitions,
                replication_factor=spec.replication_factor,
                config=dict(spec.config),
            )
        except KafkaApiError as exc:
            problem = f"cannot create topic {name!r} (set by {opts.sources['topics']}): {exc}"
        else:
            continue
        usage_error(problem)


def start_cluster(opts: ClusterOptions) -> Cluster:
    """A started ``mockkafka.Cluster`` with ``opts`` (a usage error if a port is taken)."""
    __tracebackhide__ = True
    from mockkafka import Cluster
    from mockkafka.errors import leaf_exception

    try:
        return Cluster(**opts.cluster_kwargs()).start()
    except BaseException as group:
        exc = leaf_exception(group)
        if not (isinstance(exc, OSError) and opts.port):
            raise
        problem = f"{exc.strerror or exc} (port set by {opts.sources.get('port')})"
    usage_error(problem)
    raise AssertionError("unreachable")  # pragma: no cover


def check_rules(request: pytest.FixtureRequest) -> None:
    """Fault rules that never fired: fail the test (``strict_faults``) or warn."""
    __tracebackhide__ = True
    tests = request.node.stash.get(TESTS_KEY, None)
    if tests is None or tests.failed:  # a failed test's rules are in its report already
        return
    unfired, strict = tests.unfired_rules()
    if not unfired:
        return
    listed = "\n  ".join(unfired)
    if strict:
        pytest.fail(
            f"mockkafka strict_faults: fault rules that never fired:\n  {listed}", pytrace=False
        )
    from mockkafka.errors import UnfiredRuleWarning

    warnings.warn(
        UnfiredRuleWarning(
            f"fault rules that never fired (strict_faults=True makes this a failure):\n  {listed}"
        ),
        stacklevel=1,
    )

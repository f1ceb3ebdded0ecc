"""pytest plugin for mockkafka (registered through the ``pytest11`` entry point).

Installing mockkafka is enough; nothing to import::

    def test_roundtrip(kafka_cluster):                       # a fresh cluster for this test
        producer = Producer({"bootstrap.servers": kafka_cluster.bootstrap_servers})

Fixtures
    ``kafka_cluster``          a started :class:`mockkafka.Cluster`, fresh for every test
    ``kafka_bootstrap``        its ``bootstrap.servers`` string
    ``kafka_cluster_factory``  ``factory(**options) -> Cluster``: more clusters, other options
    ``kafka_cluster_options``  the options dict; override it in a conftest.py
    ``kafka_cluster_trio``     a :class:`mockkafka.AsyncCluster` on the test's trio loop
                               (only when pytest-trio is installed)

asyncio tests (aiokafka) use ``kafka_cluster`` / ``kafka_bootstrap``: the cluster runs in its
own thread, so it serves whichever event loop the test runs.

Options come from ini options (``kafka_brokers = 3``), the ``kafka_cluster_options`` fixture
and ``@pytest.mark.kafka_cluster(brokers=3, topics={"orders": 6})``, later ones winning (see
``_options.py``). A fresh cluster costs about 2 ms to start and stop, so every test gets its
own: no state can leak between tests, and xdist workers never share a port.

When a test fails, its report gets a "mockkafka traffic" section: one line per request with
the broker, connection, client id, API and version, error codes in the response and the
faults that fired. ``--kafka-traffic=DIR`` also writes every exchange of every failing test
as JSON lines to ``DIR/<test id>.jsonl``. An exception raised inside the broker fails the test
that caused it, with the broker's traceback.
"""

from __future__ import annotations

import importlib.util
import warnings
from collections.abc import Generator, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from mockkafka import Cluster
from mockkafka.cluster.state import ClusterConfig
from mockkafka.errors import ConfigError, KafkaApiError, ProtocolViolationWarning
from pytest_plugin._options import (
    ClusterOptions,
    OptionsError,
    ini_layer,
    ini_options,
    merge,
    option_keys,
)
from pytest_plugin._report import (
    AnyCluster,
    TestClusters,
    broker_error,
    format_broker_errors,
    jsonl_name,
)

TESTS_KEY = pytest.StashKey[TestClusters]()
INI_KEY = pytest.StashKey[Mapping[str, Any]]()
LINES_KEY = pytest.StashKey[int]()

DEFAULT_REPORT_LINES = 60

__all__ = [
    "ClusterFactory",
    "kafka_bootstrap",
    "kafka_cluster",
    "kafka_cluster_factory",
    "kafka_cluster_options",
]


# -- options, markers, configuration ------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mockkafka", "mockkafka (fake Kafka cluster)")
    group.addoption(
        "--kafka-traffic",
        metavar="DIR",
        default=None,
        help="write the protocol traffic of every failing test to DIR/<test id>.jsonl",
    )
    group.addoption(
        "--kafka-violations",
        choices=("warn", "error"),
        default=None,
        help="client protocol violations seen by a test's cluster: report them as warnings "
        "of the test (default) or fail the test",
    )
    parser.addini(
        "kafka_violations",
        "mockkafka: warn (default) or error on client protocol violations",
        type="string",
    )
    for opt in ini_options():
        parser.addini(opt.name, opt.help, type=opt.type)  # type: ignore[arg-type]
    parser.addini(
        "kafka_report_lines",
        "mockkafka: how many exchanges the failure report shows per cluster "
        f"(default {DEFAULT_REPORT_LINES})",
        type="string",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "kafka_cluster(**options): options of the kafka_cluster fixture for this test: "
        "brokers, topics={name: partitions}, auto_create_topics, "
        "group_initial_rebalance_delay_ms, ... (any mockkafka ClusterConfig field)",
    )
    config.addinivalue_line(
        "markers",
        "kafka_scenario(name): reserved for mockkafka YAML scenarios (not yet supported)",
    )
    try:
        config.stash[INI_KEY] = ini_layer(config.getini)
    except OptionsError as exc:
        raise pytest.UsageError(f"mockkafka: {exc}") from None
    raw = config.getini("kafka_report_lines")
    try:
        config.stash[LINES_KEY] = int(raw) if raw else DEFAULT_REPORT_LINES
    except ValueError:
        raise pytest.UsageError(
            f"mockkafka: ini option kafka_report_lines must be an int, got {raw!r}"
        ) from None


def _report_lines(config: pytest.Config) -> int:
    return config.stash.get(LINES_KEY, DEFAULT_REPORT_LINES)


def _traffic_dir(config: pytest.Config) -> Path | None:
    raw = config.getoption("kafka_traffic")
    if not raw:
        return None
    return Path(config.invocation_params.dir, str(raw))


def usage_error(message: str) -> None:
    """Fail the current test with ``message`` and no traceback (a mistake in the test)."""
    __tracebackhide__ = True
    pytest.fail(f"mockkafka usage error: {message}", pytrace=False)


def resolve_options(
    request: pytest.FixtureRequest,
    fixture_options: Mapping[str, Any],
    call_options: Mapping[str, Any] | None = None,
) -> ClusterOptions:
    """Merge ini options, ``kafka_cluster_options``, markers and call options (in that order)."""
    __tracebackhide__ = True
    layers: list[tuple[str, Mapping[str, Any]]] = [
        ("ini options", request.config.stash.get(INI_KEY, {})),
        ("fixture kafka_cluster_options", fixture_options),
    ]
    for mark in reversed(list(request.node.iter_markers("kafka_cluster"))):
        if mark.args:
            usage_error(
                "@pytest.mark.kafka_cluster takes keyword arguments only "
                f"(e.g. brokers=3), got positional {mark.args!r}"
            )
        layers.append(("@pytest.mark.kafka_cluster", mark.kwargs))
    if call_options is not None:
        layers.append(("kafka_cluster_factory(...)", call_options))
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


def _tests(item: pytest.Item) -> TestClusters:
    tests = item.stash.get(TESTS_KEY, None)
    if tests is None:
        tests = item.stash[TESTS_KEY] = TestClusters()
    return tests


def create_topics(cluster: AnyCluster, opts: ClusterOptions) -> None:
    __tracebackhide__ = True
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


def _start(request: pytest.FixtureRequest, opts: ClusterOptions, label: str) -> Cluster:
    __tracebackhide__ = True
    cluster = Cluster(**opts.cluster_kwargs()).start()
    _tests(request.node).add(label, cluster)
    try:
        create_topics(cluster, opts)
    except BaseException:
        cluster.stop()
        raise
    return cluster


def _stop(request: pytest.FixtureRequest, clusters: list[Cluster]) -> None:
    """Stop clusters (newest first), then raise broker errors no report has shown yet."""
    __tracebackhide__ = True
    for cluster in reversed(clusters):
        cluster.stop()
    tests = request.node.stash.get(TESTS_KEY, None)
    errors = tests.take_broker_errors() if tests is not None else []
    if errors:
        raise broker_error(errors)


# -- fixtures -----------------------------------------------------------------------------------


@pytest.fixture
def kafka_cluster_options() -> dict[str, Any]:
    """Options for ``kafka_cluster`` and friends; override in conftest.py to change defaults::

    @pytest.fixture
    def kafka_cluster_options():
        return {"brokers": 3, "topics": {"orders": 6}}

    Markers on a test still win over this fixture, and this fixture over ini options.
    """
    return {}


@pytest.fixture
def kafka_cluster(
    request: pytest.FixtureRequest, kafka_cluster_options: dict[str, Any]
) -> Iterator[Cluster]:
    """A started fake Kafka cluster, fresh for this test (``mockkafka.Cluster``).

    Configure it with ``@pytest.mark.kafka_cluster(brokers=3, topics={"t": 6}, ...)``, ini
    options (``kafka_brokers = 3``) or by overriding ``kafka_cluster_options``.
    """
    opts = resolve_options(request, kafka_cluster_options)
    cluster = _start(request, opts, "kafka_cluster")
    try:
        yield cluster
    finally:
        _stop(request, [cluster])


@pytest.fixture
def kafka_bootstrap(kafka_cluster: Cluster) -> str:
    """``bootstrap.servers`` of this test's ``kafka_cluster`` (``127.0.0.1:PORT,...``)."""
    return kafka_cluster.bootstrap_servers


class ClusterFactory:
    """``factory(**options)`` starts another cluster for this test; all stop at teardown.

    Options are those of the ``kafka_cluster`` marker; they override the test's defaults (ini
    options, ``kafka_cluster_options``, markers).
    """

    def __init__(self, request: pytest.FixtureRequest, defaults: Mapping[str, Any]) -> None:
        self._request = request
        self._defaults = defaults
        self.clusters: list[Cluster] = []

    def __call__(self, **options: Any) -> Cluster:
        __tracebackhide__ = True
        opts = resolve_options(self._request, self._defaults, options)
        cluster = _start(self._request, opts, f"kafka_cluster_factory #{len(self.clusters) + 1}")
        self.clusters.append(cluster)
        return cluster

    def __repr__(self) -> str:
        return f"<kafka_cluster_factory: {len(self.clusters)} clusters; options {option_keys()}>"


@pytest.fixture
def kafka_cluster_factory(
    request: pytest.FixtureRequest, kafka_cluster_options: dict[str, Any]
) -> Iterator[ClusterFactory]:
    """Start extra clusters, or clusters with per-call options::

    def test_mirror(kafka_cluster_factory):
        source = kafka_cluster_factory(brokers=3, topics={"orders": 6})
        target = kafka_cluster_factory(auto_create_topics=True)
    """
    factory = ClusterFactory(request, kafka_cluster_options)
    try:
        yield factory
    finally:
        _stop(request, factory.clusters)


if importlib.util.find_spec("pytest_trio") is not None:
    from pytest_plugin._trio import kafka_cluster_trio

    __all__ += ["kafka_cluster_trio"]


# -- hooks: reserved marker, broker errors, failure report --------------------------------------


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("kafka_scenario") is not None:
        usage_error(
            "@pytest.mark.kafka_scenario is reserved for YAML scenarios and not yet "
            "supported; configure the cluster with @pytest.mark.kafka_cluster(...) and "
            "script faults with kafka_cluster.faults"
        )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """A test that passed fails anyway if a broker raised while it ran."""
    __tracebackhide__ = True
    result = yield
    tests = item.stash.get(TESTS_KEY, None)
    if tests is not None:
        errors = tests.take_broker_errors()
        if errors:
            raise broker_error(errors)
        found = tests.take_violations()
        if found:
            mode = item.config.getoption("kafka_violations") or (
                item.config.getini("kafka_violations") or "warn"
            )
            text = "client protocol violations:\n  " + "\n  ".join(found)
            if mode == "error":
                pytest.fail(text, pytrace=False)
            warnings.warn(ProtocolViolationWarning(text), stacklevel=1)
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    tests = item.stash.get(TESTS_KEY, None)
    if tests is None or not tests.clusters:
        return report
    directory = _traffic_dir(item.config)
    if report.failed:
        tests.failed = True
        errors = tests.take_broker_errors()
        if errors:
            report.sections.append(("mockkafka broker errors", format_broker_errors(errors)))
        if directory is not None:
            hint = f"full traffic: {directory / jsonl_name(item.nodeid)}.jsonl"
        else:
            hint = "full traffic as JSON lines: pytest --kafka-traffic=DIR"
        section = tests.traffic_section(_report_lines(item.config), hint)
        report.sections.append(("mockkafka traffic", section))
    if call.when == "teardown":
        if tests.failed and directory is not None and not tests.written:
            tests.written = True
            tests.write_jsonl(directory, item.nodeid)
        del item.stash[TESTS_KEY]  # release the clusters and their traffic
    return report

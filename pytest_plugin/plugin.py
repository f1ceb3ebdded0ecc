"""pytest plugin for mockkafka (registered through the ``pytest11`` entry point).

Installing mockkafka is enough; nothing to import::

    def test_roundtrip(kafka_cluster):                       # a fresh cluster for this test
        producer = Producer({"bootstrap.servers": kafka_cluster.bootstrap_servers})

Fixtures
    ``kafka_cluster``          a started :class:`mockkafka.Cluster`, fresh for every test
    ``kafka_bootstrap``        its ``bootstrap.servers`` string
    ``kafka_cluster_factory``  ``factory(**options) -> Cluster``: more clusters, other options
    ``kafka_cluster_options``  the options dict; override it in a conftest.py
    ``kafka_cluster_shared``   one cluster for the whole session (or module), reset before
                               every test that asks for it: same ports, nothing left over
    ``kafka_bootstrap_shared`` its ``bootstrap.servers``, for session fixtures and
                               applications that read the address once
    ``kafka_cluster_shared_options``  the shared cluster's options (session scope)
    ``kafka_cluster_trio``     a :class:`mockkafka.AsyncCluster` on the test's trio loop
                               (only when pytest-trio is active)
    ``spark``                  a local SparkSession with Spark's Kafka connector (session
                               scope; skips saying why where pyspark/Java/the connector is
                               missing; see docs/spark.md)
    ``spark_kafka``            a :class:`mockkafka.spark.SparkKafka` for ``kafka_cluster``

asyncio tests (aiokafka) use ``kafka_cluster`` / ``kafka_bootstrap``: the cluster runs in its
own thread, so it serves whichever event loop the test runs.

Options come from ini options (``kafka_brokers = 3``), the ``kafka_cluster_options`` fixture
and ``@pytest.mark.kafka_cluster(brokers=3, topics={"orders": 6})``, later ones winning (see
``_options.py``).

When a test fails, its report gets a "mockkafka traffic" section: one line per request with
the broker, connection, client id, API and version, partitions and offsets, error codes in
the response and the faults that fired. ``--kafka-traffic=DIR`` also writes every exchange
of every failing test as JSON lines to ``DIR/<test id>.jsonl``. An exception raised inside
the broker fails the test that caused it, with the broker's traceback. A fault rule that
never fired is reported (a warning), or fails the test with ``strict_faults``.

Cost: this module imports only pytest and the options table. mockkafka's broker, codec and
schema tables are imported when a fixture first starts a cluster, so a session without Kafka
tests pays almost nothing for the plugin (``benchmarks/bench_startup.py``).
"""

from __future__ import annotations

import warnings
from collections.abc import Generator, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

import pytest

from ._clusters import (
    INI_KEY,
    TESTS_KEY,
    check_rules,
    create_topics,
    marker_layers,
    resolve_options,
    start_cluster,
    tests_of,
    usage_error,
    validated,
)
from ._options import (
    ClusterOptions,
    OptionsError,
    ini_layer,
    ini_options,
    option_keys,
)
from ._report import broker_error, format_broker_errors, jsonl_name

if TYPE_CHECKING:
    from mockkafka import Cluster, Scenario


from . import _backend, _scenario
from ._spark import spark, spark_kafka  # cheap: pyspark is imported lazily

#: ``--kafka-fault-coverage`` lives in its own plugin module, registered with this one.
pytest_plugins = [f"{__package__}._coverage"]

LINES_KEY = pytest.StashKey[int]()
Scope = Literal["session", "package", "module"]
SCOPE_KEY = pytest.StashKey[Scope]()

DEFAULT_REPORT_LINES = 60
SHARED_SCOPES: tuple[Scope, ...] = ("session", "package", "module")
# Fixtures that give a test a cluster the kafka_cluster marker configures.
CLUSTER_FIXTURES = (
    "kafka_cluster",
    "kafka_bootstrap",
    "kafka_cluster_factory",
    "kafka_cluster_shared",
    "kafka_cluster_trio",
)
# What a marker may set for kafka_cluster_shared: the rest is fixed when the cluster starts.
PER_TEST_KEYS = frozenset({"topics", "strict_faults"})

__all__ = [
    "ClusterFactory",
    "MockKafkaWarning",
    "kafka_bootstrap",
    "kafka_bootstrap_shared",
    "kafka_cluster",
    "kafka_cluster_factory",
    "kafka_cluster_options",
    "kafka_cluster_shared",
    "kafka_cluster_shared_options",
    "spark",
    "spark_kafka",
]


class MockKafkaWarning(pytest.PytestWarning):
    """Something about a test's use of mockkafka that is probably a mistake."""


# -- options, markers, configuration ------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mockkafka", "mockkafka (fake Kafka cluster)")
    _backend.add_options(parser, group)
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
    parser.addini(
        "kafka_shared_scope",
        "mockkafka: how long kafka_cluster_shared lives: session (default), package or module",
        type="string",
    )


def pytest_configure(config: pytest.Config) -> None:
    from ._install import shadowing_folder, shadowing_message

    shadow = shadowing_folder()
    if shadow is not None:
        raise pytest.UsageError(shadowing_message(shadow))
    config.addinivalue_line(
        "markers",
        "kafka_cluster(**options): options of the kafka_cluster fixture for this test: "
        "brokers, topics={name: partitions}, port, strict_faults, auto_create_topics, "
        "group_initial_rebalance_delay_ms, ... (any mockkafka ClusterConfig field)",
    )
    config.addinivalue_line(
        "markers",
        _scenario.MARKER_HELP,
    )
    _backend.backend(config)  # a usage error at once for a wrong --kafka-backend
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
    scope = (config.getini("kafka_shared_scope") or "session").strip()
    if scope not in SHARED_SCOPES:
        raise pytest.UsageError(
            f"mockkafka: ini option kafka_shared_scope must be one of "
            f"{', '.join(SHARED_SCOPES)}, got {scope!r}"
        )
    config.stash[SCOPE_KEY] = next(s for s in SHARED_SCOPES if s == scope)
    # The trio fixture, only where pytest-trio runs (importing it costs ~100 ms otherwise).
    if config.pluginmanager.has_plugin("trio"):
        from . import _trio

        config.pluginmanager.register(_trio, "mockkafka-trio")


def _report_lines(config: pytest.Config) -> int:
    return config.stash.get(LINES_KEY, DEFAULT_REPORT_LINES)


def _traffic_dir(config: pytest.Config) -> Path | None:
    raw = config.getoption("kafka_traffic")
    if not raw:
        return None
    return Path(config.invocation_params.dir, str(raw))


def _start(
    request: pytest.FixtureRequest,
    opts: ClusterOptions,
    label: str,
    scenario: Scenario | None = None,
) -> Cluster:
    __tracebackhide__ = True
    name, version = _backend.backend(request.config)
    if name == "kafka":  # a real Apache Kafka broker (see _backend.py)
        real: Any = _backend.RealKafkaCluster(version, _backend.proxy_upstream(request.config))
        if scenario is not None:  # every problem at once: brokers, steps, checks
            _scenario.skip_unless_it_runs_on(scenario, real)
        _backend.check_brokers(real, opts.brokers, opts.sources.get("brokers"))
        create_topics(real, opts)
        return cast("Cluster", real)
    cluster = start_cluster(opts)
    tests_of(request.node).add(label, cluster, strict_faults=opts.strict_faults)
    try:
        create_topics(cluster, opts)
    except BaseException:
        cluster.stop()
        raise
    return cluster


def _stop(request: pytest.FixtureRequest, clusters: list[Cluster]) -> None:
    """Stop clusters (newest first), check the rules, then raise broker errors no report
    has shown yet. Stopping comes first, as ``with Cluster()`` does it: a rule check goes
    through the cluster's loop, and a stuck loop would hold it; a stop is bounded and
    raises naming the stuck request (after the other clusters stopped)."""
    __tracebackhide__ = True
    stuck: list[Exception] = []
    for cluster in reversed(clusters):
        try:
            cluster.stop()
        except Exception as exc:  # a loop that did not stop: stop the others first
            stuck.append(exc)
    if stuck:
        raise stuck[0]
    check_rules(request)
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
    scenario = _scenario.scenario_of(request.node)
    opts = resolve_options(
        request, kafka_cluster_options, scenario_options=_scenario.cluster_options(scenario)
    )
    cluster = _start(request, opts, "kafka_cluster", scenario)
    try:
        _scenario.start(request.node, scenario, cluster)
        yield cluster
    finally:
        _scenario.abandon(request.node)
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
        target = kafka_cluster_factory(auto_create_topics=False)
    """
    factory = ClusterFactory(request, kafka_cluster_options)
    try:
        yield factory
    finally:
        _stop(request, factory.clusters)


# -- the shared cluster -------------------------------------------------------------------------


def _shared_scope(fixture_name: str, config: pytest.Config) -> Scope:
    """The scope of the shared cluster: ini option ``kafka_shared_scope`` (default session)."""
    return config.stash.get(SCOPE_KEY, "session")


@pytest.fixture(scope="session")
def kafka_cluster_shared_options() -> dict[str, Any]:
    """Options of the shared cluster (``kafka_cluster_shared``); override in conftest.py::

    @pytest.fixture(scope="session")
    def kafka_cluster_shared_options():
        return {"brokers": 3, "port": 19092, "topics": {"orders": 6}}

    They win over ini options. ``topics`` are created again after every reset.
    """
    return {}


@pytest.fixture(scope=_shared_scope)
def _kafka_cluster_shared_instance(
    request: pytest.FixtureRequest, kafka_cluster_shared_options: dict[str, Any]
) -> Iterator[tuple[Cluster, ClusterOptions]]:
    """The shared cluster and its options, started once per session (or module)."""
    opts = validated(
        [
            ("ini options", request.config.stash.get(INI_KEY, {})),
            ("fixture kafka_cluster_shared_options", kafka_cluster_shared_options),
        ]
    )
    real: Any = _backend.real_cluster(request.config)  # --kafka-backend=kafka
    cluster = cast("Cluster", real) if real is not None else start_cluster(opts)
    try:
        yield cluster, opts
    finally:
        cluster.stop()


@pytest.fixture(scope=_shared_scope)
def kafka_bootstrap_shared(
    _kafka_cluster_shared_instance: tuple[Cluster, ClusterOptions],
) -> str:
    """``bootstrap.servers`` of the shared cluster, for session (or module) fixtures and
    applications that read the address once; it never changes while the session runs."""
    return _kafka_cluster_shared_instance[0].bootstrap_servers


@pytest.fixture
def kafka_cluster_shared(
    request: pytest.FixtureRequest,
    _kafka_cluster_shared_instance: tuple[Cluster, ClusterOptions],
) -> Iterator[Cluster]:
    """The session's shared cluster (``mockkafka.Cluster``), reset before this test.

    Reset clears topics, groups, transactions, fault rules and traffic and keeps the brokers
    and their ports, so ``kafka_bootstrap_shared`` stays valid. The shared options' topics
    (ini ``kafka_topics``, ``kafka_cluster_shared_options``) are created again, or the
    marker's ``topics`` instead. A marker may set only ``topics`` and ``strict_faults``
    here; the rest is fixed when the shared cluster starts.
    """
    cluster, shared = _kafka_cluster_shared_instance
    layers = marker_layers(request)
    marker = validated(layers)
    for key in sorted(set(marker.sources) - PER_TEST_KEYS):
        if getattr(marker, key, marker.config.get(key)) != getattr(
            shared, key, shared.config.get(key)
        ):
            usage_error(
                f"@pytest.mark.kafka_cluster({key}=...) cannot change kafka_cluster_shared: "
                "the shared cluster is started once; set it with kafka_cluster_shared_options "
                "or an ini option, or use kafka_cluster for a cluster of this test's own"
            )
    cluster.reset()
    topics = marker if "topics" in marker.sources else shared
    if isinstance(cluster, _backend.RealKafkaCluster):
        create_topics(cluster, topics)
        yield cluster
        return
    strict = marker.strict_faults if "strict_faults" in marker.sources else shared.strict_faults
    tests_of(request.node).add("kafka_cluster_shared", cluster, strict_faults=strict)
    create_topics(cluster, topics)
    yield cluster
    _stop(request, [])  # the rules and broker errors of this test; the cluster stays up


# -- hooks: markers, broker errors, failure report ----------------------------------------------


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Warn about a kafka_cluster marker on a test that uses no cluster fixture."""
    for item in items:
        own = getattr(item, "own_markers", ())
        if not any(m.name == "kafka_cluster" for m in own):
            continue
        if not set(CLUSTER_FIXTURES) & set(getattr(item, "fixturenames", ())):
            item.warn(
                MockKafkaWarning(
                    f"@pytest.mark.kafka_cluster on {item.name}, which uses no mockkafka "
                    f"cluster fixture ({', '.join(CLUSTER_FIXTURES)}): the options do nothing"
                )
            )


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    _scenario.check_mark_names(item)
    _scenario.check_fixture(item)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """A test that passed fails anyway if a broker raised while it ran."""
    __tracebackhide__ = True
    result = yield
    _scenario.finish(item)  # a scenario's expect: fails the test like an assertion
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
            from mockkafka.errors import ProtocolViolationWarning

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
    if report.failed and not tests.failed:
        tests.failed = True
        errors = tests.take_broker_errors()
        if errors:
            report.sections.append(("mockkafka broker errors", format_broker_errors(errors)))
        if directory is not None:
            hint = f"full traffic: {directory / jsonl_name(item.nodeid)}.jsonl"
        else:
            hint = "full traffic as JSON lines: pytest --kafka-traffic=DIR"
        section = tests.traffic_section(_report_lines(item.config), hint)
        if section is not None:
            report.sections.append(("mockkafka traffic", section))
    if call.when == "teardown":
        if tests.failed and directory is not None and not tests.written:
            tests.written = True
            tests.write_jsonl(directory, item.nodeid)
        del item.stash[TESTS_KEY]  # release the clusters and their traffic
    return report

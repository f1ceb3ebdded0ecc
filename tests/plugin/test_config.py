"""Configuring the cluster: marker, ini options, the kafka_cluster_options fixture."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.timeout(60)


def test_marker_sets_brokers_topics_and_cluster_options(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.kafka_cluster(
            brokers=3,
            topics={
                "a": 6,
                "b": {"partitions": 2, "replication_factor": 3,
                      "config": {"cleanup.policy": "compact"}},
            },
            auto_create_topics=True,
            group_initial_rebalance_delay_ms=250,
        )
        def test_marker(kafka_cluster):
            assert len(kafka_cluster.brokers) == 3
            assert len(kafka_cluster.topic("a").partitions) == 6
            b = kafka_cluster.topic("b")
            assert len(b.partitions) == 2
            assert len(b.partition(0).replicas) == 3
            assert b.configs["cleanup.policy"] == "compact"
            config = kafka_cluster.state.config
            assert config.auto_create_topics is True
            assert config.group_initial_rebalance_delay_ms == 250

        @pytest.mark.kafka_cluster(topics=["x", "y"])
        def test_topic_list(kafka_cluster):
            assert kafka_cluster.topics() == ["x", "y"]
        """
    )
    pytester.runpytest().assert_outcomes(passed=2)


def test_closest_marker_wins_key_by_key(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        pytestmark = pytest.mark.kafka_cluster(brokers=3, topics={"m": 1})

        class TestGroup:
            pytestmark = pytest.mark.kafka_cluster(auto_create_topics=True)

            @pytest.mark.kafka_cluster(topics={"f": 2})
            def test_layers(self, kafka_cluster):
                assert len(kafka_cluster.brokers) == 3          # module marker
                assert kafka_cluster.state.config.auto_create_topics  # class marker
                assert kafka_cluster.topics() == ["f"]          # function marker replaces
        """
    )
    pytester.runpytest().assert_outcomes(passed=1)


def test_unknown_marker_option_is_a_usage_error_naming_marker_and_key(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.kafka_cluster(brokres=3)
        def test_typo(kafka_cluster):
            pass

        @pytest.mark.kafka_cluster(3)
        def test_positional(kafka_cluster):
            pass

        @pytest.mark.kafka_cluster(brokers=0)
        def test_bad_value(kafka_cluster):
            pass

        @pytest.mark.kafka_cluster(topics={"t": "six"})
        def test_bad_topic(kafka_cluster):
            pass

        @pytest.mark.kafka_cluster(topics={"t": {"partitions": 1, "replication_factor": 2}})
        def test_topic_refused_by_cluster(kafka_cluster):
            pass
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(errors=5)
    result.stdout.fnmatch_lines(
        [
            "*mockkafka usage error: @pytest.mark.kafka_cluster: unknown option 'brokres' "
            "(did you mean 'brokers'?)*",
            "*mockkafka usage error: @pytest.mark.kafka_cluster takes keyword arguments only*",
            "*mockkafka usage error: brokers must be between 1 and 64, got 0 *"
            "(brokers set by @pytest.mark.kafka_cluster)*",
            "*mockkafka usage error: @pytest.mark.kafka_cluster: topic 't': expected a "
            "partition count*",
            "*mockkafka usage error: cannot create topic 't' (set by @pytest.mark.kafka_cluster)"
            ": INVALID_REPLICATION_FACTOR*",
        ]
    )
    # A usage error is a mistake in the test: no traceback, no exception chain.
    result.stdout.no_fnmatch_line("*During handling of the above exception*")


def test_ini_options_set_defaults(pytester: pytest.Pytester) -> None:
    pytester.makeini(
        """
        [pytest]
        kafka_brokers = 3
        kafka_auto_create_topics = true
        kafka_default_partitions = 4
        kafka_topics =
            orders:6
            audit:1:3
        """
    )
    pytester.makepyfile(
        """
        import pytest

        def test_ini(kafka_cluster):
            assert len(kafka_cluster.brokers) == 3
            assert kafka_cluster.state.config.auto_create_topics
            assert kafka_cluster.state.config.default_partitions == 4
            assert kafka_cluster.topics() == ["audit", "orders"]
            assert len(kafka_cluster.topic("orders").partitions) == 6
            assert len(kafka_cluster.topic("audit").partition(0).replicas) == 3

        @pytest.mark.kafka_cluster(brokers=1, topics={})
        def test_marker_beats_ini(kafka_cluster):
            assert len(kafka_cluster.brokers) == 1
            assert kafka_cluster.topics() == []
        """
    )
    pytester.runpytest().assert_outcomes(passed=2)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("kafka_brokers = three", "*mockkafka: ini option kafka_brokers: *'three'*"),
        ("kafka_report_lines = many", "*mockkafka: ini option kafka_report_lines must be an int*"),
    ],
)
def test_bad_ini_value_stops_the_run_with_a_usage_error(
    pytester: pytest.Pytester, line: str, message: str
) -> None:
    pytester.makeini(f"[pytest]\n{line}\n")
    pytester.makepyfile("def test_never(kafka_cluster): pass")
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_conftest_overrides_the_options_fixture(pytester: pytest.Pytester) -> None:
    pytester.makeini(
        """
        [pytest]
        kafka_brokers = 2
        kafka_default_partitions = 5
        """
    )
    pytester.makeconftest(
        """
        import pytest

        @pytest.fixture
        def kafka_cluster_options():
            return {"brokers": 3, "topics": {"from-conftest": 2}}
        """
    )
    pytester.makepyfile(
        """
        import pytest

        def test_fixture_beats_ini(kafka_cluster):
            assert len(kafka_cluster.brokers) == 3
            assert kafka_cluster.state.config.default_partitions == 5  # ini still applies
            assert kafka_cluster.topics() == ["from-conftest"]

        @pytest.mark.kafka_cluster(brokers=1)
        def test_marker_beats_fixture(kafka_cluster):
            assert len(kafka_cluster.brokers) == 1
            assert kafka_cluster.topics() == ["from-conftest"]

        def test_factory_sees_the_same_defaults(kafka_cluster_factory):
            assert len(kafka_cluster_factory().brokers) == 3
        """
    )
    pytester.runpytest().assert_outcomes(passed=3)


def test_bad_key_in_options_fixture_names_the_fixture(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
        import pytest

        @pytest.fixture
        def kafka_cluster_options():
            return {"auto_create_topic": True}
        """
    )
    pytester.makepyfile("def test_it(kafka_cluster): pass")
    result = pytester.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "*fixture kafka_cluster_options: unknown option 'auto_create_topic' "
            "(did you mean 'auto_create_topics'?)*"
        ]
    )


def test_markers_and_ini_options_are_registered(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.kafka_cluster(brokers=1)
        def test_strict(kafka_cluster):
            pass
        """
    )
    pytester.runpytest("--strict-markers").assert_outcomes(passed=1)
    markers = pytester.runpytest("--markers")
    markers.stdout.fnmatch_lines(["@pytest.mark.kafka_cluster(**options):*", "*kafka_scenario*"])
    help_ = pytester.runpytest("--help")
    help_.stdout.fnmatch_lines(["*--kafka-traffic=DIR*", "*kafka_topics*", "*kafka_brokers*"])

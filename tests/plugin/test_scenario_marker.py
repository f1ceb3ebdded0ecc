"""``@pytest.mark.kafka_scenario`` with a path, and ``--kafka-backend=kafka`` refusing a
cluster bigger than the real one: the same test gives the same outcome from any folder,
and a marker asks for brokers the way a scenario does."""

from __future__ import annotations

import pytest

import mockkafka

STORY = "name: local\ncluster: {brokers: 1}\ntopics: {orders: {}}\n"


def test_a_relative_scenario_path_is_found_from_the_test_file_in_any_folder(
    pytester: pytest.Pytester,
) -> None:
    tests = pytester.mkdir("suite")
    (tests / "stories").mkdir()
    (tests / "stories" / "local.yaml").write_text(STORY)
    (tests / "test_story.py").write_text(
        "import pytest\n\n"
        '@pytest.mark.kafka_scenario("stories/local.yaml")\n'
        "def test_story(kafka_cluster):\n"
        '    assert kafka_cluster.topics() == ["orders"]\n'
    )
    # the current directory holds a different file of the same relative name: not used
    (pytester.path / "stories").mkdir()
    (pytester.path / "stories" / "local.yaml").write_text("name: [broken\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "suite")
    result.assert_outcomes(passed=1)
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(tests)
        result = pytester.runpytest("-p", "no:cacheprovider", "test_story.py")
    result.assert_outcomes(passed=1)


def test_a_missing_relative_scenario_path_names_the_folder_it_was_resolved_against(
    pytester: pytest.Pytester,
) -> None:
    # found in the current directory only: still refused, naming the test file's folder
    (pytester.path / "stories").mkdir()
    (pytester.path / "stories" / "local.yaml").write_text(STORY)
    tests = pytester.mkdir("suite")
    (tests / "test_story.py").write_text(
        "import pytest\n\n"
        '@pytest.mark.kafka_scenario("stories/local.yaml")\n'
        "def test_story(kafka_cluster):\n"
        "    pass\n"
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "suite")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            f"*no such scenario file: {tests}/stories/local.yaml ('stories/local.yaml' is "
            f"resolved against the test file's folder, {tests})*"
        ]
    )


def test_a_marker_asking_for_more_brokers_than_kafka_has_skips_as_a_scenario_does(
    pytester: pytest.Pytester,
) -> None:
    # --kafka-proxy-upstream runs the fixtures through the proxy on any Kafka cluster; a
    # one-broker mockkafka stands in for a one-broker Kafka
    (pytester.path / "three.yaml").write_text("name: three\ncluster: {brokers: 3}\n")
    pytester.makepyfile(
        test_user="""
import pytest

@pytest.mark.kafka_cluster(brokers=3)
def test_marker(kafka_cluster):
    pass

@pytest.mark.kafka_scenario("three.yaml")
def test_scenario(kafka_cluster):
    pass

@pytest.mark.kafka_cluster(brokers=1, topics={"orders": 2})
def test_one_broker(kafka_cluster):
    pass
"""
    )
    with mockkafka.Cluster(brokers=1) as upstream:
        result = pytester.runpytest(
            "-p", "no:cacheprovider", "-rs", f"--kafka-proxy-upstream={upstream.bootstrap_servers}"
        )
    result.assert_outcomes(passed=1, skipped=2)
    reason = "the upstream has 1 broker(s); point the proxy at a cluster with as many"
    result.stdout.fnmatch_lines(
        [
            f"SKIPPED*--kafka-backend=kafka: @pytest.mark.kafka_cluster: brokers=3: {reason}",
            # a scenario lists every problem a proxy has with it, the brokers among them
            "SKIPPED*--kafka-backend=kafka: scenario 'three' cannot run against a proxy*",
            f"*three.yaml: cluster: brokers: 3: {reason}",
        ],
        consecutive=False,
    )

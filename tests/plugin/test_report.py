"""What a failing test shows: the traffic timeline, the JSONL file, broker errors."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.timeout(60)

# Inner-test helper: a fault rule whose custom handler raises, as a broker bug would.
BREAK_METADATA = """
import pytest

def break_metadata(cluster):
    def boom(request, ctx):
        raise ZeroDivisionError("bug in the metadata handler")

    cluster.faults.on("Metadata").every_time().handler(boom)
"""

FAILING_PRODUCE = """
import pytest
from confluent_kafka import Producer

@pytest.mark.kafka_cluster(topics={"orders": 1})
def test_produce_then_fail(kafka_cluster):
    kafka_cluster.faults.on("Produce").named("not-leader").times(1).error(
        "NOT_LEADER_OR_FOLLOWER"
    )
    producer = Producer({
        "bootstrap.servers": kafka_cluster.bootstrap_servers,
        "client.id": "report-test",
        "retry.backoff.ms": 10,
    })
    try:
        producer.produce("orders", b"v")
        assert producer.flush(10) == 0
    finally:
        producer.flush(1)
        del producer  # the failure's traceback would keep it alive, retrying a dead cluster
    assert False, "the test's own failure"

def test_passes(kafka_cluster):
    kafka_cluster.create_topic("quiet")
"""


def test_failure_report_shows_traffic_timeline_and_faults(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(FAILING_PRODUCE)
    result = pytester.runpytest()
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*AssertionError: the test's own failure*",
            "*- mockkafka traffic -*",
            "columns: +Nms since the first exchange | bN broker N | cN connection N |*",
            "kafka_cluster (127.0.0.1:*): * exchanges",
            "*b1 c* report-test ApiVersions v*",
            "*report-test Metadata v* orders-0 *",
            "*report-test Produce v* orders-0 errors=NOT_LEADER_OR_FOLLOWER faults=not-leader*",
            "*report-test Produce v* orders-0>0 [0-9]*ms",
            "  fault rules:",
            "    not-leader (fired 1x*",
            "full traffic as JSON lines: pytest --kafka-traffic=DIR",
        ]
    )
    # Only the failing test gets a section.
    assert result.stdout.str().count("mockkafka traffic") == 1


def test_report_is_compact_newest_exchanges_only(pytester: pytest.Pytester) -> None:
    pytester.makeini(
        """
        [pytest]
        kafka_report_lines = 2
        """
    )
    pytester.makepyfile(FAILING_PRODUCE)
    result = pytester.runpytest("-k", "fail")
    result.stdout.fnmatch_lines(["kafka_cluster (127.0.0.1:*): * exchanges, last 2 shown"])
    lines = result.stdout.str().split("mockkafka traffic")[1].splitlines()
    assert sum(1 for line in lines if " report-test " in line) == 2


def test_kafka_traffic_dir_gets_full_jsonl_for_failing_tests_only(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(FAILING_PRODUCE)
    result = pytester.runpytest("--kafka-traffic=traffic")
    result.assert_outcomes(passed=1, failed=1)
    out = pytester.path / "traffic"
    files = sorted(p.name for p in out.iterdir())
    assert files == [
        "test_kafka_traffic_dir_gets_full_jsonl_for_failing_tests_only.py_"
        "test_produce_then_fail.jsonl"
    ]
    result.stdout.fnmatch_lines([f"full traffic: {out / files[0]}"])
    rows = [json.loads(line) for line in (out / files[0]).read_text().splitlines()]
    apis = [r["api"] for r in rows]
    assert apis[0] == "ApiVersions" and "Metadata" in apis and apis.count("Produce") >= 2
    produce = [r for r in rows if r["api"] == "Produce"]
    assert produce[0]["faults"] == ["not-leader"]
    assert produce[0]["request"]["topic_data"][0]["name"] == "orders"
    assert all(r["client_id"] == "report-test" for r in rows)


def test_jsonl_holds_every_cluster_of_the_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        from confluent_kafka.admin import AdminClient

        def test_two_clusters(kafka_cluster, kafka_cluster_factory):
            other = kafka_cluster_factory(brokers=2)
            for c in (kafka_cluster, other):
                AdminClient({"bootstrap.servers": c.bootstrap_servers}).list_topics(timeout=10)
            assert False
        """
    )
    result = pytester.runpytest("--kafka-traffic", str(pytester.path / "out"))
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "kafka_cluster (127.0.0.1:*): * exchanges",
            "*Metadata v*",
            "kafka_cluster_factory #1 (127.0.0.1:*,*",
            "*Metadata v*",
        ]
    )
    names = sorted(p.name for p in (pytester.path / "out").iterdir())
    assert names == [
        "test_jsonl_holds_every_cluster_of_the_test.py_test_two_clusters.2.jsonl",
        "test_jsonl_holds_every_cluster_of_the_test.py_test_two_clusters.jsonl",
    ]


def test_report_adds_no_section_for_clusters_without_traffic_or_rules(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        """
        def test_quiet_cluster(kafka_cluster, kafka_cluster_factory):
            kafka_cluster_factory(brokers=2)
            assert False, "nothing talked to the clusters"
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*nothing talked to the clusters*"])
    result.stdout.no_fnmatch_line("*mockkafka traffic*")
    result.stdout.no_fnmatch_line("*0 exchanges*")


def test_timeline_explains_its_columns_once_and_names_rules_per_test(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        """
        import pytest
        from confluent_kafka import Producer

        @pytest.mark.parametrize("run", range(2))
        @pytest.mark.kafka_cluster(topics={"orders": 2})
        def test_fails(kafka_cluster, kafka_cluster_factory, run):
            other = kafka_cluster_factory()
            other.faults.on("Metadata").every_time().delay(ms=1)
            kafka_cluster.faults.on("Produce", partition=1).once().error("NOT_LEADER_OR_FOLLOWER")
            producer = Producer({
                "bootstrap.servers": kafka_cluster.bootstrap_servers,
                "retry.backoff.ms": 10,
            })
            producer.produce("orders", b"a", partition=1)
            producer.produce("orders", b"b", partition=1)
            assert producer.flush(10) == 0
            assert False
        """
    )
    # In a subprocess: in this one, pytester's record of the failure would keep the
    # producer (and its librdkafka threads, retrying the stopped cluster) alive.
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(failed=2)
    out = result.stdout.str()
    # Both runs name their rules rule-1 (per cluster), whatever ran before them.
    result.stdout.fnmatch_lines(
        [
            "*test_fails?0?*",
            "columns: *",
            "*Produce v* orders-1 errors=NOT_LEADER_OR_FOLLOWER faults=rule-1 *",
            "*Produce v* orders-1>0 *",
            "    rule-1 (fired 1x*",
            "kafka_cluster_factory #1 *: 0 exchanges",
            "    rule-1 (fired 0x*",
            "*test_fails?1?*",
            "*faults=rule-1 *",
        ]
    )
    assert out.count("columns: ") == 2  # once per failing test, not per cluster
    assert "rule-2" not in out and "rule-3" not in out


def test_broker_error_fails_a_test_that_otherwise_passed(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        BREAK_METADATA
        + """
from confluent_kafka.admin import AdminClient
from confluent_kafka import KafkaException

def test_client_shrugs_off_the_error(kafka_cluster):
    break_metadata(kafka_cluster)
    admin = AdminClient({"bootstrap.servers": kafka_cluster.bootstrap_servers})
    with pytest.raises(KafkaException):
        admin.list_topics(timeout=5)
"""
    )
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)  # a failure of the test itself, not a teardown error
    result.stdout.fnmatch_lines(
        [
            "*def boom(request, ctx):",
            '*raise ZeroDivisionError("bug in the metadata handler")',
            "E       ZeroDivisionError: bug in the metadata handler",
            "*The above exception was the direct cause of the following exception:*",
            "E   mockkafka.errors.BrokerError: error inside the broker during this test*",
            "*- mockkafka traffic -*",
            "*Metadata v* errors=UNKNOWN_SERVER_ERROR*",
        ]
    )


def test_broker_error_in_a_failing_test_is_shown_beside_its_failure(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        BREAK_METADATA
        + """
from confluent_kafka.admin import AdminClient

def test_client_fails(kafka_cluster):
    break_metadata(kafka_cluster)
    AdminClient({"bootstrap.servers": kafka_cluster.bootstrap_servers}).list_topics(timeout=5)
"""
    )
    result = pytester.runpytest_subprocess()  # see the timeline test: the client dies with it
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "E   *KafkaException: *",
            "*- mockkafka broker errors -*",
            "*Traceback (most recent call last):",
            "ZeroDivisionError: bug in the metadata handler",
            "*- mockkafka traffic -*",
        ]
    )
    result.stdout.no_fnmatch_line("*ERROR at teardown*")


def test_broker_error_after_the_test_body_is_a_teardown_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        BREAK_METADATA
        + """
from confluent_kafka.admin import AdminClient

@pytest.fixture
def late_bug(kafka_cluster):
    yield
    break_metadata(kafka_cluster)
    admin = AdminClient({"bootstrap.servers": kafka_cluster.bootstrap_servers})
    try:
        admin.list_topics(timeout=5)
    except Exception:
        pass

def test_body_passes(late_bug):
    pass
"""
    )
    result = pytester.runpytest()
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        ["*ERROR at teardown of test_body_passes*", "*BrokerError: error inside the broker*"]
    )


def test_broker_error_fails_a_trio_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        BREAK_METADATA
        + """
import trio
from mockkafka.protocol.framing import NEED_DATA, ClientConnection

@pytest.mark.trio
async def test_trio_client(kafka_cluster_trio):
    break_metadata(kafka_cluster_trio)
    conn = ClientConnection(client_id="raw")
    stream = await trio.open_tcp_stream("127.0.0.1", kafka_cluster_trio.brokers[0].port)
    async with stream:
        await stream.send_all(conn.send_request("Metadata", 12, {"topics": None}))
        with trio.fail_after(10):
            while True:
                conn.receive_data(await stream.receive_some(65536))
                if conn.next_event() is not NEED_DATA:
                    break
"""
    )
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*ZeroDivisionError: bug in the metadata handler*", "*BrokerError*", "*Metadata v12*"]
    )


def test_the_report_says_why_a_rule_did_not_act(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest
        from tests.robustness._wire import fetch_partition

        @pytest.mark.kafka_cluster(topics={"t": 1})
        def test_cut(kafka_cluster):
            kafka_cluster.produce("t", b"only")
            kafka_cluster.faults.on("Fetch", topic="t").partial_trailing_batch()
            kafka_cluster.faults.on("Fetch", topic="t", client_id="billing").corrupt_batch()
            fetch_partition(kafka_cluster.bootstrap_servers, "t")
            assert False
        """
    )
    result = pytester.runpytest("-W", "ignore::mockkafka.UnfiredRuleWarning")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "  fault rules:",
            "    rule-1 (fired 0x, matched 1x, declined 1x): Rule(*) -- matched 1x, declined 1x "
            "because: 1x partial_trailing_batch: the answer held a single batch*KIP-74*",
            "    rule-2 (fired 0x, matched 0x): Rule(*) -- 1 Fetch request matched all but "
            "client_id='billing': it had client ids 'hostile'",
        ]
    )

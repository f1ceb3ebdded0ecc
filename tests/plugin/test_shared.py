"""The shared cluster (one per session or module, reset before each test), fixed ports, the
marker's misuse warning, strict_faults."""

from __future__ import annotations

import socket

import pytest

pytestmark = pytest.mark.timeout(90)


def _free_port_block(n: int) -> int:
    """A port p with p..p+n-1 free right now (bounded tries)."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port + n - 1 > 65535:
            continue
        socks = []
        try:
            for i in range(n):
                t = socket.socket()
                socks.append(t)
                t.bind(("127.0.0.1", port + i))
        except OSError:
            continue
        finally:
            for t in socks:
                t.close()
        return port
    raise AssertionError("no free block of ports")


def test_shared_cluster_is_reset_between_tests_on_the_same_ports(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
        import pytest
        from confluent_kafka import Producer

        @pytest.fixture(scope="session")
        def app_producer(kafka_bootstrap_shared):
            # An application that reads the address once, for the whole session.
            p = Producer({"bootstrap.servers": kafka_bootstrap_shared, "client.id": "app"})
            yield p
            p.flush(5)
        """
    )
    pytester.makepyfile(
        """
        import pytest

        SEEN = []

        @pytest.mark.kafka_cluster(topics={"orders": 2})
        def test_first(kafka_cluster_shared, app_producer, kafka_bootstrap_shared):
            assert kafka_cluster_shared.bootstrap_servers == kafka_bootstrap_shared
            SEEN.append(kafka_bootstrap_shared)
            kafka_cluster_shared.faults.on("Produce").every_time().delay(ms=1)
            app_producer.produce("orders", b"one", partition=1)
            assert app_producer.flush(10) == 0
            kafka_cluster_shared.commit_offsets("g", {("orders", 1): 1})
            assert kafka_cluster_shared.topic("orders").partition(1).high_watermark == 1

        @pytest.mark.kafka_cluster(topics={"orders": 2})
        def test_second_starts_clean(kafka_cluster_shared, app_producer, kafka_bootstrap_shared):
            assert SEEN == [kafka_bootstrap_shared]  # same ports, same address
            assert kafka_cluster_shared.topics() == ["orders"]  # created again, empty
            assert kafka_cluster_shared.topic("orders").partition(1).high_watermark == 0
            assert kafka_cluster_shared.groups() == []
            assert kafka_cluster_shared.faults.rules() == []
            assert kafka_cluster_shared.traffic.requests("Produce") == []
            # The session's producer keeps working across the reset.
            app_producer.produce("orders", b"two", partition=1)
            assert app_producer.flush(10) == 0
            records = kafka_cluster_shared.topic("orders").partition(1).records()
            assert [r.value for r in records] == [b"two"]

        def test_without_marker_gets_no_topics(kafka_cluster_shared):
            assert kafka_cluster_shared.topics() == []
        """
    )
    result = pytester.runpytest("-p", "no:randomly", "-W", "error::UserWarning")
    result.assert_outcomes(passed=3)


def test_shared_cluster_options_and_ini_topics_come_back_after_each_reset(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini(
        """
        [pytest]
        kafka_topics =
            audit:1
        """
    )
    pytester.makeconftest(
        """
        import pytest

        @pytest.fixture(scope="session")
        def kafka_cluster_shared_options():
            return {"brokers": 2}
        """
    )
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.parametrize("run", range(2))
        def test_each(kafka_cluster_shared, run):
            assert len(kafka_cluster_shared.brokers) == 2
            assert kafka_cluster_shared.topics() == ["audit"]
            kafka_cluster_shared.produce("audit", b"x")
            assert kafka_cluster_shared.topic("audit").partition(0).high_watermark == 1

        @pytest.mark.kafka_cluster(brokers=3)
        def test_marker_cannot_reshape_the_shared_cluster(kafka_cluster_shared):
            pass
        """
    )
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*mockkafka usage error: @pytest.mark.kafka_cluster(brokers=...) cannot change "
            "kafka_cluster_shared*"
        ]
    )


def test_shared_scope_module_gives_each_module_its_own_cluster(pytester: pytest.Pytester) -> None:
    pytester.makeini(
        """
        [pytest]
        kafka_shared_scope = module
        """
    )
    pytester.makepyfile(
        test_a="""
        ADDRESSES = []

        def test_a1(kafka_bootstrap_shared):
            ADDRESSES.append(kafka_bootstrap_shared)

        def test_a2(kafka_bootstrap_shared):
            assert ADDRESSES == [kafka_bootstrap_shared]
            with open("a.txt", "w") as fp:
                fp.write(kafka_bootstrap_shared)
        """,
        test_b="""
        def test_b(kafka_bootstrap_shared):
            with open("b.txt", "w") as fp:
                fp.write(kafka_bootstrap_shared)
        """,
    )
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(passed=3)
    assert (pytester.path / "a.txt").read_text() != (pytester.path / "b.txt").read_text()


def test_bad_shared_scope_stops_the_run(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nkafka_shared_scope = class\n")
    pytester.makepyfile("def test_x(): pass")
    result = pytester.runpytest()
    result.stderr.fnmatch_lines(["*kafka_shared_scope must be one of session, package, module*"])
    assert result.ret != 0


def test_fixed_port_from_marker_and_ini(pytester: pytest.Pytester) -> None:
    ini_port = _free_port_block(1)
    marker_port = _free_port_block(3)
    pytester.makeini(f"[pytest]\nkafka_port = {ini_port}\n")
    pytester.makepyfile(
        f"""
        import pytest

        def test_ini_port(kafka_bootstrap):
            assert kafka_bootstrap == "127.0.0.1:{ini_port}"

        @pytest.mark.kafka_cluster(brokers=3, port={marker_port})
        def test_marker_port(kafka_cluster):
            assert [b.port for b in kafka_cluster.brokers] == [
                {marker_port}, {marker_port + 1}, {marker_port + 2}
            ]
        """
    )
    pytester.runpytest().assert_outcomes(passed=2)


def test_fixed_port_in_use_is_a_usage_error_naming_the_port(pytester: pytest.Pytester) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        pytester.makepyfile(
            f"""
            import pytest

            @pytest.mark.kafka_cluster(port={port})
            def test_port_taken(kafka_cluster):
                pass
            """
        )
        result = pytester.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            f"*mockkafka usage error: broker 1 cannot listen on 127.0.0.1:{port}: "
            "*(port set by @pytest.mark.kafka_cluster)*"
        ]
    )
    result.stdout.no_fnmatch_line("*ExceptionGroup*")


@pytest.mark.parametrize("bad", ["-1", "70000", "x"])
def test_bad_port_option_is_refused(pytester: pytest.Pytester, bad: str) -> None:
    pytester.makeini(f"[pytest]\nkafka_port = {bad}\n")
    pytester.makepyfile("def test_x(kafka_cluster): pass")
    result = pytester.runpytest()
    assert result.ret != 0
    out = result.stdout.str() + result.stderr.str()
    assert "port" in out and "Traceback" not in out


def test_marker_on_a_test_without_a_cluster_fixture_warns(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        pytestmark = pytest.mark.kafka_cluster(brokers=1)  # module-wide: no warning

        @pytest.mark.kafka_cluster(brokers=3)
        def test_forgot_the_fixture():
            pass

        @pytest.mark.kafka_cluster(brokers=3)
        def test_uses_it(kafka_bootstrap):
            pass

        def test_plain():
            pass
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(
        [
            "*MockKafkaWarning: @pytest.mark.kafka_cluster on test_forgot_the_fixture, which "
            "uses no mockkafka cluster fixture*"
        ]
    )
    assert result.stdout.str().count("MockKafkaWarning") == 1


STRICT_TESTS = """
import pytest

def test_rule_fires(kafka_cluster):
    from confluent_kafka.admin import AdminClient
    kafka_cluster.faults.on("Metadata").once().delay(ms=1)
    AdminClient({"bootstrap.servers": kafka_cluster.bootstrap_servers}).list_topics(timeout=10)

def test_rule_never_fires(kafka_cluster):
    kafka_cluster.faults.on("Produce").once().error("NOT_LEADER_OR_FOLLOWER")

def test_failing_test_is_not_blamed_twice(kafka_cluster):
    kafka_cluster.faults.on("Fetch").once().delay(ms=1)
    assert False, "own failure"
"""


def test_unfired_rules_are_reported_as_a_warning_by_default(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(STRICT_TESTS)
    result = pytester.runpytest()
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*UnfiredRuleWarning: fault rules that never fired (strict_faults=True makes this "
            "a failure):",
            "*kafka_cluster: rule-1 (fired 0x*Produce*",
        ]
    )
    assert result.stdout.str().count("never fired") == 1


@pytest.mark.parametrize(
    ("where", "text"),
    [
        ("ini", "[pytest]\nkafka_strict_faults = true\n"),
        ("marker", 'pytestmark = __import__("pytest").mark.kafka_cluster(strict_faults=True)\n'),
        (
            "fixture",
            "import pytest\n\n@pytest.fixture\ndef kafka_cluster_options():\n"
            '    return {"strict_faults": True}\n',
        ),
    ],
)
def test_strict_faults_fails_a_test_whose_rule_never_fired(
    pytester: pytest.Pytester, where: str, text: str
) -> None:
    if where == "ini":
        pytester.makeini(text)
        pytester.makepyfile(STRICT_TESTS)
    elif where == "marker":
        pytester.makepyfile(text + STRICT_TESTS)
    else:
        pytester.makeconftest(text)
        pytester.makepyfile(STRICT_TESTS)
    result = pytester.runpytest()
    # The passing test with an unfired rule errors at teardown; the failing one only fails.
    result.assert_outcomes(passed=2, failed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*ERROR at teardown of test_rule_never_fires*",
            "*mockkafka strict_faults: fault rules that never fired:",
            "*kafka_cluster: rule-1 (fired 0x*",
        ]
    )
    result.stdout.no_fnmatch_line("*ERROR at teardown of test_failing_test_is_not_blamed_twice*")


def test_strict_faults_on_the_shared_cluster_is_per_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.kafka_cluster(strict_faults=True)
        def test_strict(kafka_cluster_shared):
            kafka_cluster_shared.faults.on("Produce").once().delay(ms=1)

        def test_lenient(kafka_cluster_shared):
            assert kafka_cluster_shared.faults.rules() == []  # reset dropped the old rule
            kafka_cluster_shared.faults.on("Produce").once().delay(ms=1)
        """
    )
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["*ERROR at teardown of test_strict*", "*UnfiredRuleWarning*"])


def test_trio_fixture_exists_only_with_pytest_trio(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.trio
        async def test_trio(kafka_cluster_trio):
            assert kafka_cluster_trio.brokers
        """
    )
    pytester.runpytest().assert_outcomes(passed=1)
    result = pytester.runpytest("-p", "no:trio", "-W", "ignore::pytest.PytestUnknownMarkWarning")
    result.stdout.fnmatch_lines(["*fixture 'kafka_cluster_trio' not found*"])

"""The fixtures as a user sees them: fresh clusters, bootstrap string, factory, trio."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.timeout(60)


def test_kafka_cluster_is_fresh_for_every_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import mockkafka

        def test_first(kafka_cluster):
            assert isinstance(kafka_cluster, mockkafka.Cluster)
            kafka_cluster.create_topic("leaky", partitions=2)
            kafka_cluster.produce("leaky", b"v")

        def test_second(kafka_cluster):
            assert kafka_cluster.topics() == []
        """
    )
    pytester.runpytest().assert_outcomes(passed=2)


def test_kafka_bootstrap_serves_a_real_client_on_localhost(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest
        from confluent_kafka.admin import AdminClient

        @pytest.mark.kafka_cluster(brokers=3, topics={"orders": 6})
        def test_metadata(kafka_bootstrap, kafka_cluster):
            assert kafka_bootstrap == kafka_cluster.bootstrap_servers
            hosts = [hp.rsplit(":", 1)[0] for hp in kafka_bootstrap.split(",")]
            assert hosts == ["127.0.0.1"] * 3
            md = AdminClient({"bootstrap.servers": kafka_bootstrap}).list_topics(timeout=10)
            assert sorted(md.brokers) == [1, 2, 3]
            assert len(md.topics["orders"].partitions) == 6
        """
    )
    pytester.runpytest().assert_outcomes(passed=1)


def test_cluster_is_stopped_after_the_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import socket
        import pytest

        PORTS = []

        def test_uses_cluster(kafka_cluster):
            PORTS.extend(b.port for b in kafka_cluster.brokers)
            socket.create_connection(("127.0.0.1", PORTS[0]), timeout=5).close()

        def test_port_is_closed_afterwards():
            with pytest.raises(OSError):
                socket.create_connection(("127.0.0.1", PORTS[0]), timeout=5).close()
        """
    )
    pytester.runpytest().assert_outcomes(passed=2)


def test_factory_starts_independent_clusters_with_their_own_options(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.kafka_cluster(brokers=2)
        def test_two(kafka_cluster_factory):
            a = kafka_cluster_factory(topics={"src": 3})
            b = kafka_cluster_factory(brokers=1, auto_create_topics=True)
            assert len(a.brokers) == 2  # from the marker
            assert len(b.brokers) == 1  # the call wins over the marker
            assert a.bootstrap_servers != b.bootstrap_servers
            assert a.topics() == ["src"] and b.topics() == []
            assert b.state.config.auto_create_topics
            assert len(kafka_cluster_factory.clusters) == 2

        def test_bad_option(kafka_cluster_factory):
            kafka_cluster_factory(partitons=3)
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["*mockkafka usage error: kafka_cluster_factory(...): unknown option 'partitons'*"]
    )


def test_trio_fixture_runs_on_the_test_loop(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import threading
        import pytest
        import trio
        import mockkafka
        from mockkafka.protocol.framing import ClientConnection

        # pytester runs in this process: threads other tests left are not this test's
        BEFORE = {t.ident for t in threading.enumerate() if t.name == "mockkafka"}

        @pytest.mark.trio
        @pytest.mark.kafka_cluster(brokers=2, topics={"t": 4})
        async def test_trio(kafka_cluster_trio):
            assert isinstance(kafka_cluster_trio, mockkafka.AsyncCluster)
            # no broker thread was started for it: the cluster runs on the test's trio loop
            started = {t.ident for t in threading.enumerate() if t.name == "mockkafka"} - BEFORE
            assert not started
            assert len(kafka_cluster_trio.brokers) == 2
            assert len(kafka_cluster_trio.topic("t").partitions) == 4
            stream = await trio.open_tcp_stream("127.0.0.1", kafka_cluster_trio.brokers[0].port)
            await stream.aclose()
        """
    )
    pytester.runpytest().assert_outcomes(passed=1)


# asyncio (aiokafka) with the sync fixture: tests/examples/test_readme_examples.py runs it in
# a plain session (inside pytester's in-process runs aiokafka's sender task gets cancelled).


def test_a_cluster_whose_loop_is_stuck_fails_teardown_naming_the_request_and_the_others_stop(
    pytester: pytest.Pytester,
) -> None:
    """Regression (a run that never ended): teardown waited for a stuck loop unbounded (the
    rule check went through it), and a cluster that did not stop left the others running."""
    pytester.makepyfile(
        """
        import socket
        import threading

        import pytest

        import mockkafka.server.runner as runner
        from mockkafka.protocol.framing import ClientConnection

        runner.STOP_TIMEOUT_S = 0.5
        started, release = threading.Event(), threading.Event()
        kept = []

        def stuck_handler(request, ctx):
            started.set()
            release.wait(30)  # blocks the loop of cluster b

        @pytest.fixture
        def stuck_after_the_test(kafka_cluster_factory):
            a = kafka_cluster_factory()
            b = kafka_cluster_factory()  # newest: stopped first
            b.faults.on("Metadata").handler(stuck_handler)
            yield
            # torn down before the clusters: a client's request meets the blocking handler
            broker = b.brokers[0]
            sock = socket.create_connection((broker.host, broker.port), timeout=5)
            kept.extend([a, sock])
            request = ClientConnection(client_id="stuck-client").send_request(
                "Metadata", 1, {"topics": []}
            )
            sock.sendall(request)
            assert started.wait(10)

        def test_stuck(stuck_after_the_test):
            pass

        def test_the_other_cluster_was_stopped():
            release.set()
            a, sock = kept
            sock.close()
            assert not a._runner.running
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*the cluster's loop thread did not stop within 0.5 s*",
            "*(client id 'stuck-client'): Metadata v1 (correlation id 0) in flight for*",
        ]
    )

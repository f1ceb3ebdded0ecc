"""Waits as a user meets them: the first wait of a fresh process, with a client at its
defaults (README "Groups and transactions", docs/vocabulary.md "Waits")."""

from __future__ import annotations

from tests.first_use._clients import GroupConsumer, ShareMember, produce
from tests.first_use.registry import probe


@probe()
def wait_for_group(client: str) -> None:
    import mockkafka

    with (
        mockkafka.Cluster(topics={"payments": 3}) as cluster,
        GroupConsumer(client, cluster.bootstrap_servers, "payments", "g0"),
    ):
        view = cluster.wait_for_group("g0", state="Stable", members=1, timeout=20)
        assert view.state == "Stable" and len(view.members) == 1, view


@probe(clients=("confluent",))  # the Python client that speaks KIP-848
def wait_for_group_kip848(client: str) -> None:
    import mockkafka

    with (
        mockkafka.Cluster(topics={"payments": 3}) as cluster,
        GroupConsumer(
            client, cluster.bootstrap_servers, "payments", "g0", **{"group.protocol": "consumer"}
        ),
    ):
        view = cluster.wait_for_group("g0", members=1, timeout=20)
        assert view.type == "consumer", view


@probe(clients=("confluent",))
def wait_for_group_any_state(client: str) -> None:
    import mockkafka

    with (
        mockkafka.Cluster(topics={"payments": 3}) as cluster,
        GroupConsumer(client, cluster.bootstrap_servers, "payments", "g0"),
    ):
        cluster.wait_for_group("g0", state=None, timeout=20)
        cluster.wait_for_group("g0", where=lambda g: len(g.assignments) == 1, timeout=20)


@probe()
def wait_for_group_asyncio(client: str) -> None:
    import asyncio

    import mockkafka

    async def main(cluster: mockkafka.Cluster) -> None:
        view = await cluster.wait_for_group_async("g0", members=1, timeout=20)
        assert view.state == "Stable"

    with (
        mockkafka.Cluster(topics={"payments": 3}) as cluster,
        GroupConsumer(client, cluster.bootstrap_servers, "payments", "g0"),
    ):
        asyncio.run(main(cluster))


@probe()
def wait_for_group_trio_cluster(client: str) -> None:
    """``open_cluster`` on trio; the client runs on a thread; waited from a trio task and
    from a thread (``trio.from_thread``)."""
    import trio

    import mockkafka

    async def main() -> None:
        async with mockkafka.open_cluster(topics={"payments": 3}) as cluster:

            def member() -> None:
                with GroupConsumer(client, cluster.bootstrap_servers, "payments", "g0"):
                    view = trio.from_thread.run(
                        lambda: cluster.wait_for_group("g0", members=1, timeout=20)
                    )
                    assert view.state == "Stable", view

            await trio.to_thread.run_sync(member)
            await cluster.wait_for_group("g0", state=None, timeout=20)

    trio.run(main)


@probe()
def wait_for_committed(client: str) -> None:
    import mockkafka

    with mockkafka.Cluster(topics={"orders": 1}) as cluster:
        produce(client, cluster.bootstrap_servers, "orders", [b"a", b"b", b"c"])
        with GroupConsumer(client, cluster.bootstrap_servers, "orders", "billing", commit=True):
            assert cluster.wait_for_committed("billing", "orders", 0, offset=3, timeout=20) == 3


@probe()
def wait_for_committed_asyncio(client: str) -> None:
    import asyncio

    import mockkafka

    with mockkafka.Cluster(topics={"orders": 1}) as cluster:
        produce(client, cluster.bootstrap_servers, "orders", [b"a"])
        with GroupConsumer(client, cluster.bootstrap_servers, "orders", "billing", commit=True):
            got = asyncio.run(
                cluster.wait_for_committed_async("billing", "orders", 0, offset=1, timeout=20)
            )
            assert got == 1


@probe(seconds=90)
def wait_for_committed_in_pytest(client: str) -> None:
    """The same in a user's pytest test with the ``kafka_cluster`` fixture (the plugin as
    installed), in its own fresh pytest session."""
    import tempfile
    import textwrap
    from pathlib import Path

    import pytest

    test = textwrap.dedent(
        f"""
        import pytest
        from tests.first_use._clients import GroupConsumer, produce

        @pytest.mark.kafka_cluster(topics={{"orders": 1}})
        def test_commits(kafka_cluster):
            produce({client!r}, kafka_cluster.bootstrap_servers, "orders", [b"a", b"b"])
            with GroupConsumer({client!r}, kafka_cluster.bootstrap_servers, "orders",
                               "billing", commit=True):
                assert kafka_cluster.wait_for_committed(
                    "billing", "orders", 0, offset=2, timeout=20) == 2
        """
    )
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "test_user.py"
        path.write_text(test)
        code = pytest.main(
            [
                "-q",
                "-p",
                "no:cacheprovider",
                "-W",
                "error::pytest.PytestUnknownMarkWarning",
                "--rootdir",
                d,
                str(path),
            ]
        )
    assert code == 0, f"the user's pytest session exited {code}"


@probe(clients=("confluent",))
def wait_for_share_group(client: str) -> None:
    import mockkafka

    with (
        mockkafka.Cluster(topics={"jobs": 1}) as cluster,
        ShareMember(cluster.bootstrap_servers, "jobs", "q"),
    ):
        view = cluster.wait_for_share_group("q", members=1, timeout=20)
        assert len(view.members) == 1, view


@probe(clients=("confluent",))
def wait_for_share_group_asyncio(client: str) -> None:
    import asyncio

    import mockkafka

    with (
        mockkafka.Cluster(topics={"jobs": 1}) as cluster,
        ShareMember(cluster.bootstrap_servers, "jobs", "q"),
    ):
        view = asyncio.run(cluster.wait_for_share_group_async("q", members=1, timeout=20))
        assert len(view.members) == 1, view


@probe()
def wait_for_records(client: str) -> None:
    import mockkafka

    with mockkafka.Cluster(topics={"orders": 2}) as cluster:
        produce(client, cluster.bootstrap_servers, "orders", [b"1", b"2", b"3"])
        got = cluster.wait_for_records("orders", count=3, timeout=20)
        assert sorted(r.value for r in got) == [b"1", b"2", b"3"], got


@probe(clients=("confluent", "kafka-python", "aiokafka"))
def wait_for_transaction(client: str) -> None:
    import mockkafka

    with mockkafka.Cluster(topics={"orders": 1}) as cluster:
        bs = cluster.bootstrap_servers
        if client == "confluent":
            from confluent_kafka import Producer

            p = Producer({"bootstrap.servers": bs, "transactional.id": "tx-1"})
            p.init_transactions(30)
            p.begin_transaction()
            p.produce("orders", b"x")
            p.commit_transaction(30)
        elif client == "kafka-python":
            from kafka import KafkaProducer

            kp = KafkaProducer(bootstrap_servers=bs, transactional_id="tx-1")
            kp.init_transactions()
            kp.begin_transaction()
            kp.send("orders", b"x")
            kp.commit_transaction()
            kp.close(timeout=10)
        else:
            import asyncio

            from aiokafka import AIOKafkaProducer

            async def run() -> None:
                ap = AIOKafkaProducer(bootstrap_servers=bs, transactional_id="tx-1")
                await ap.start()
                try:
                    async with ap.transaction():
                        await ap.send("orders", b"x")
                finally:
                    await ap.stop()

            asyncio.run(run())
        view = cluster.wait_for_transaction(
            "tx-1", where=lambda t: t.committed_count >= 1, timeout=20
        )
        assert view.committed_count == 1, view


@probe(clients=("confluent",))
def wait_for_broker(client: str) -> None:
    import mockkafka

    with mockkafka.Cluster(brokers=3, topics={"orders": 3}) as cluster:
        produce(client, cluster.bootstrap_servers, "orders", [b"1"])
        cluster.stop_broker(2)
        cluster.wait_for_broker(2, up=False, timeout=10)
        cluster.start_broker(2)
        cluster.wait_for_broker(2, timeout=10)
        produce(client, cluster.bootstrap_servers, "orders", [b"2"] * 3)


@probe()
def traffic_wait_for(client: str) -> None:
    import mockkafka

    with mockkafka.Cluster(topics={"orders": 1}) as cluster:
        produce(client, cluster.bootstrap_servers, "orders", [b"1"])
        got = cluster.traffic.wait_for("Produce", topic="orders", timeout=20)
        assert got, "traffic.wait_for returned no exchange"


@probe()
def rule_wait_fired(client: str) -> None:
    import mockkafka

    with mockkafka.Cluster(topics={"orders": 1}) as cluster:
        rule = cluster.faults.on("Produce", topic="orders").once().error("NOT_LEADER_OR_FOLLOWER")
        produce(client, cluster.bootstrap_servers, "orders", [b"1"])
        rule.wait_fired(timeout=20)
        assert rule.fired == 1
        assert [r.value for r in cluster.wait_for_records("orders", count=1, timeout=20)] == [b"1"]

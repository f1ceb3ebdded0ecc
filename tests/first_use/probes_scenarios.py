"""Every library scenario (scenarios/*.yaml) as docs/scenarios.md shows it --
``Scenario.load(name)``, ``start(cluster)``, the app's clients, ``run.wait()``,
``run.check()`` -- with the workload the story is written for (the topic ``orders``, the
group ``billing``, the transactional id ``orders-tx``), each Python client family.

The clients run at their defaults except where a story says what it expects of the app:
the stories that check ``no_duplicates`` (and isr-shrink's NOT_ENOUGH_REPLICAS, an
acks=all answer) say "an idempotent producer", so the producer enables idempotence
(kafka-python 3 does at its defaults); unclean-leader-election produces without it, as
its library test does (an idempotent producer stops with a fatal OUT_OF_ORDER_SEQUENCE
once the log it wrote to is truncated, as against Kafka). The consumer commits after
what it read and lets a refused commit go (its next commit covers it), as an app does.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from tests.first_use._clients import GroupConsumer, KeptProducer, txn_producer
from tests.first_use.registry import CLIENTS, probe

if TYPE_CHECKING:
    import mockkafka

TOPIC, GROUP, TRANSACTIONAL_ID = "orders", "billing", "orders-tx"

IDEMPOTENT = {
    "confluent": {"enable.idempotence": True},
    "kafka-python": {},
    "aiokafka": {"enable_idempotence": True},
}
NOT_IDEMPOTENT = {
    "confluent": {},
    "kafka-python": {"enable_idempotence": False},
    "aiokafka": {},
}


#: aiokafka 0.14 retries an offset reset (ListOffsets) that a moved leader refused on the
#: same, cached leader without refreshing its metadata (``Fetcher._update_fetch_positions``
#: logs "Failed fetch offsets from N: NotLeaderForPartitionError" and sleeps), so at its
#: default ``metadata_max_age_ms`` (5 minutes) a member whose reset meets a leader move is
#: stuck for minutes, against Kafka as here. Its consumer refreshes metadata every second.
CONSUMER = {"aiokafka": {"metadata_max_age_ms": 1000}}


def _values(n: int, tag: str = "app") -> list[bytes]:
    return [f"{tag}-{i:04d}".encode() for i in range(n)]


def _finish(run: object, cluster: mockkafka.Cluster, *, group: bool = True) -> None:
    """Every step ran; with a group, its commits reached the end of the topic (bounded;
    ``check`` reports it when not); then ``expect:`` holds."""
    from mockkafka import WaitTimeout

    assert run.wait(30), "the scenario's steps did not all run within 30 s"  # type: ignore[attr-defined]
    if group:
        for p in cluster.topic(TOPIC).partitions:
            hw = cluster.topic(TOPIC).partition(p.partition).high_watermark
            try:
                cluster.wait_for_committed(GROUP, TOPIC, p.partition, offset=hw, timeout=15)
            except WaitTimeout:
                break  # run.check() says what was committed
    run.check()  # type: ignore[attr-defined]


def _pipeline(client: str, cluster: mockkafka.Cluster, run: object, seeded: int) -> None:
    """An idempotent producer writes 200 records in 10 sends while a member of ``billing``
    reads everything (seed data too) and commits."""
    bs = cluster.bootstrap_servers
    with (
        KeptProducer(client, bs, **IDEMPOTENT[client]) as p,
        GroupConsumer(
            client,
            bs,
            TOPIC,
            GROUP,
            commit=True,
            tolerate_commit_errors=True,
            **CONSUMER.get(client, {}),
        ) as c,
    ):
        values = _values(200)
        for i in range(10):
            p.send(TOPIC, values[i * 20 : (i + 1) * 20])
            time.sleep(0.05)
        c.wait_records(seeded + 200, timeout=40)
        _finish(run, cluster)


def _consume_only(client: str, cluster: mockkafka.Cluster, run: object, seeded: int) -> None:
    """offset-out-of-range: the group's member reads what retention left (40 records)."""
    bs = cluster.bootstrap_servers
    with GroupConsumer(client, bs, TOPIC, GROUP, commit=True, tolerate_commit_errors=True) as c:
        c.wait_records(40, timeout=30)
        _finish(run, cluster)
    offsets = [o for _p, o, _v in c.records]
    assert min(offsets) == 60, f"the consumer did not reset to the log start: {offsets[:5]}"


def _produce_only(client: str, cluster: mockkafka.Cluster, run: object, seeded: int) -> None:
    """unclean-leader-election: a producer without idempotence writes 100 records in sends
    of 10; the log is truncated under it."""
    with KeptProducer(client, cluster.bootstrap_servers, **NOT_IDEMPOTENT[client]) as p:
        values = _values(100)
        for i in range(10):
            p.send(TOPIC, values[i * 10 : (i + 1) * 10])
            time.sleep(0.02)
    _finish(run, cluster, group=False)


def _transactions(client: str, cluster: mockkafka.Cluster, run: object, seeded: int) -> None:
    """transaction-coordinator-failure: five transactions of 10 records with ``orders-tx``."""
    tx = txn_producer(client, cluster.bootstrap_servers, TRANSACTIONAL_ID)
    try:
        for t in range(5):
            tx.begin()
            tx.send(TOPIC, _values(10, f"tx{t}"))
            time.sleep(0.1)  # the story moves the coordinator while one is Ongoing
            tx.commit()
    finally:
        tx.close()
    _finish(run, cluster, group=False)


Workload = Callable[[str, "mockkafka.Cluster", object, int], None]


def _scenario_probe(name: str, workload: Workload, seconds: float = 90.0) -> None:
    def play(client: str) -> None:
        import mockkafka

        sc = mockkafka.Scenario.load(name)
        seeded = sum(s.count for s in sc.seed)
        with mockkafka.Cluster(brokers=sc.cluster.brokers, **dict(sc.cluster.options)) as cluster:
            run = sc.start(cluster)
            try:
                workload(client, cluster, run, seeded)
            finally:
                run.stop()
                cluster.faults.clear()

    play.__name__ = "scenario_" + name.replace("-", "_")
    play.__doc__ = f"The library scenario {name!r}, played against the {workload.__doc__}"
    probe(clients=CLIENTS, seconds=seconds)(play)


SCENARIOS: dict[str, Workload] = {
    "broker-crash": _pipeline,
    "coordinator-loading": _pipeline,
    "coordinator-moves-mid-commit": _pipeline,
    "flapping-connections": _pipeline,
    "isr-shrink": _pipeline,
    "leader-failover": _pipeline,
    "offset-out-of-range": _consume_only,
    "older-kafka-version": _pipeline,
    "partial-trailing-batches": _pipeline,
    "rebalance-storm": _pipeline,
    "rolling-restart": _pipeline,
    "slow-broker": _pipeline,
    "throttled-cluster": _pipeline,
    "transaction-coordinator-failure": _transactions,
    "unclean-leader-election": _produce_only,
}

for _name, _workload in SCENARIOS.items():
    _scenario_probe(_name, _workload)


@probe(clients=("-",), seconds=10)
def scenario_library_is_covered(client: str) -> None:
    """Every story in the library has a probe here (a new story needs its workload)."""
    from mockkafka.scenario.loader import library

    assert sorted(library()) == sorted(SCENARIOS), sorted(set(library()) ^ set(SCENARIOS))


@probe(clients=("confluent",), seconds=90)
def scenario_marker_leader_failover(client: str) -> None:
    """The pytest marker form: ``@pytest.mark.kafka_scenario("leader-failover",
    topic="payments", group="ledger")`` in a user's own fresh pytest session; the steps play
    alongside the test and ``expect:`` is checked when it returns."""
    import tempfile
    import textwrap
    from pathlib import Path

    import pytest

    test = textwrap.dedent(
        """
        import time
        import pytest
        from tests.first_use._clients import GroupConsumer, KeptProducer

        @pytest.mark.kafka_scenario("leader-failover", topic="payments", group="ledger")
        def test_ledger_survives_failover(kafka_cluster):
            bs = kafka_cluster.bootstrap_servers
            with KeptProducer("confluent", bs, **{"enable.idempotence": True}) as p, \\
                    GroupConsumer("confluent", bs, "payments", "ledger", commit=True,
                                  tolerate_commit_errors=True) as c:
                for i in range(10):
                    p.send("payments", [b"pay-%d-%d" % (i, j) for j in range(20)])
                    time.sleep(0.05)
                c.wait_records(300, timeout=40)
                for part in kafka_cluster.topic("payments").partitions:
                    kafka_cluster.wait_for_committed(
                        "ledger", "payments", part.partition,
                        offset=part.high_watermark, timeout=20)
        """
    )
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "test_user.py"
        path.write_text(test)
        code = pytest.main(["-q", "-p", "no:cacheprovider", "--rootdir", d, str(path)])
    assert code == 0, f"the user's pytest session exited {code}"

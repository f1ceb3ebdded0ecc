"""A three-node Apache Kafka 4.4 cluster behind ``mockkafka.Proxy``, clients continuing.

``move_leader`` is done the way Kafka does it (the Admin API: AlterPartitionReassignments
puts the new leader first in the replica list, ElectLeaders elects the preferred replica),
and ``stop_broker`` is the proxy's emulation (that broker's listener drops and refuses every
client connection, while Kafka moves the leaderships off it). A confluent-kafka idempotent
producer and a consumer group keep going through both; at the end every acknowledged record
is in Kafka once (read directly, bypassing the proxy) and the group consumed them all.

Three JVMs (~1 GB): behind ``--run-kafka-three-brokers`` (``.ci/run`` runs it as a bounded
extended step); skips without Java and the Kafka jars.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer

import mockkafka
from mockkafka.kafka_broker import KafkaCluster, KafkaUnavailable, request_to
from tests.interop.conftest import unique
from tests.oracle._proxy_helpers import create_topic, read_partitions

pytestmark = [
    pytest.mark.kafka_oracle,
    pytest.mark.kafka_three_brokers,
    pytest.mark.interop,
    pytest.mark.timeout(240),
]

PARTITIONS = 3


@pytest.fixture(scope="module")
def kafka3() -> Iterator[KafkaCluster]:
    try:
        cluster = KafkaCluster(3).start()
    except KafkaUnavailable as exc:
        pytest.skip(f"three-node Kafka cluster: {exc}")
    yield cluster
    cluster.stop()


@pytest.fixture
def proxy(kafka3: KafkaCluster) -> Iterator[mockkafka.Proxy]:
    with mockkafka.Proxy(upstream=kafka3.nodes[0].bootstrap_servers) as p:
        yield p


def admin(kafka: KafkaCluster, api: str, version: int, body: dict[str, Any]) -> dict[str, Any]:
    node = kafka.nodes[0]
    return request_to("127.0.0.1", node.port, api, version, body)


def leaders(kafka: KafkaCluster, topic: str) -> dict[int, tuple[int, list[int]]]:
    """partition -> (leader, replicas), asked of Kafka directly."""
    meta = admin(kafka, "Metadata", 12, {"topics": [{"name": topic, "topic_id": None}]})
    (t,) = meta["topics"]
    return {p["partition_index"]: (p["leader_id"], p["replica_nodes"]) for p in t["partitions"]}


def move_leader(kafka: KafkaCluster, topic: str, partition: int, to: int) -> None:
    """Make ``to`` the leader of ``topic``/``partition`` as an operator would with the Admin
    API: ``to`` first in the replica list, then a preferred-leader election."""
    _leader, replicas = leaders(kafka, topic)[partition]
    order = [to, *[r for r in replicas if r != to]]
    body = {
        "timeout_ms": 30000,
        "topics": [
            {"name": topic, "partitions": [{"partition_index": partition, "replicas": order}]}
        ],
    }
    answer = admin(kafka, "AlterPartitionReassignments", 0, body)
    assert answer["error_code"] == 0, answer
    assert all(p["error_code"] == 0 for t in answer["responses"] for p in t["partitions"]), answer
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        elect = {
            "election_type": 0,
            "topic_partitions": [{"topic": topic, "partitions": [partition]}],
            "timeout_ms": 30000,
        }
        answer = admin(kafka, "ElectLeaders", 2, elect)
        codes = {
            r["error_code"]
            for t in answer["replica_election_results"]
            for r in t["partition_result"]
        }
        if leaders(kafka, topic)[partition][0] == to:
            return
        assert codes <= {0, 84, 83}, answer  # ELECTION_NOT_NEEDED / PREFERRED_LEADER_NOT_AVAILABLE
        time.sleep(0.2)
    raise AssertionError(f"{topic}/{partition}: leader is not {to} after 30 s")


def coordinator(kafka: KafkaCluster, group: str) -> int:
    answer = admin(kafka, "FindCoordinator", 4, {"key_type": 0, "coordinator_keys": [group]})
    (c,) = answer["coordinators"]
    assert c["error_code"] == 0, answer
    node: int = c["node_id"]
    return node


class Traffic:
    """An idempotent producer and a consumer group through the proxy, on threads, until
    :meth:`finish`; what was acknowledged and consumed."""

    def __init__(self, proxy: mockkafka.Proxy, topic: str, group: str) -> None:
        self.topic, self.group = topic, group
        self.acked: list[str] = []
        self.consumed: list[str] = []
        self.stop = threading.Event()
        self.sent = 0
        conf = {
            "bootstrap.servers": proxy.bootstrap_servers,
            "topic.metadata.refresh.interval.ms": 500,
        }
        self.producer = Producer(
            {**conf, "enable.idempotence": True, "linger.ms": 5, "retry.backoff.ms": 50}
        )
        self.consumer = Consumer(
            {**conf, "group.id": group, "auto.offset.reset": "earliest", "enable.auto.commit": True}
            | {"auto.commit.interval.ms": 200}
        )
        self.consumer.subscribe([topic])
        self.threads = [
            threading.Thread(target=self._produce, daemon=True),
            threading.Thread(target=self._consume, daemon=True),
        ]
        for t in self.threads:
            t.start()

    def _produce(self) -> None:
        deadline = time.monotonic() + 120
        while not self.stop.is_set() and time.monotonic() < deadline:
            value = f"v{self.sent}"
            self.producer.produce(
                self.topic,
                value.encode(),
                partition=self.sent % PARTITIONS,
                on_delivery=lambda err, msg: (
                    err is None and self.acked.append(msg.value().decode())
                ),
            )
            self.sent += 1
            self.producer.poll(0.01)
        self.producer.flush(60)

    def _consume(self) -> None:
        deadline = time.monotonic() + 150
        while time.monotonic() < deadline:
            msg = self.consumer.poll(0.2)
            if msg is not None and msg.error() is None:
                self.consumed.append(msg.value().decode())
            elif self.stop.is_set() and set(self.acked) <= set(self.consumed):
                break
        self.consumer.close()

    def wait_for(self, n: int, timeout: float = 30) -> None:
        """Until ``n`` more records were acknowledged and consumed than now."""
        acked, consumed = len(self.acked) + n, len(self.consumed) + n
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if len(self.acked) >= acked and len(self.consumed) >= consumed:
                return
            time.sleep(0.05)
        raise AssertionError(
            f"stalled: acked {len(self.acked)}/{acked}, consumed {len(self.consumed)}/{consumed}"
        )

    def finish(self) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(120)
        assert not any(t.is_alive() for t in self.threads), "the clients did not finish"


def check_nothing_lost(kafka: KafkaCluster, traffic: Traffic) -> None:
    stored = read_partitions(
        kafka.bootstrap_servers, traffic.topic, PARTITIONS, expect=len(traffic.acked)
    )
    every = [v.decode() for vals in stored.values() for v in vals]
    assert not [v for v, n in Counter(every).items() if n > 1], "a record was written twice"
    assert set(traffic.acked) <= set(every), "an acknowledged record is not in Kafka"
    assert set(traffic.acked) <= set(traffic.consumed), "the group missed a record"
    assert len(traffic.acked) == traffic.sent, "a record was never acknowledged"


def test_clients_follow_a_leader_moved_by_the_admin_api(
    proxy: mockkafka.Proxy, kafka3: KafkaCluster
) -> None:
    topic, group = unique("px3lead"), unique("px3g")
    create_topic(kafka3.bootstrap_servers, topic, partitions=PARTITIONS, replication=3)
    assert sorted(proxy.brokers) == [1, 2, 3]
    traffic = Traffic(proxy, topic, group)
    try:
        traffic.wait_for(50)
        old, _ = leaders(kafka3, topic)[0]
        new = next(n for n in (1, 2, 3) if n != old)
        moved_at = proxy.traffic.requests()[-1].time_ms
        move_leader(kafka3, topic, 0, new)
        traffic.wait_for(100)
    finally:
        traffic.finish()
    check_nothing_lost(kafka3, traffic)
    produced = proxy.traffic.requests("Produce", topic=topic, partition=0, broker=new)
    assert [e for e in produced if e.time_ms > moved_at], "partition 0 never went to its new leader"


def test_clients_carry_on_when_the_proxy_stops_a_broker(
    proxy: mockkafka.Proxy, kafka3: KafkaCluster
) -> None:
    topic, group = unique("px3stop"), unique("px3sg")
    create_topic(kafka3.bootstrap_servers, topic, partitions=PARTITIONS, replication=3)
    traffic = Traffic(proxy, topic, group)
    try:
        traffic.wait_for(50)
        keep = coordinator(kafka3, group)
        victim = next(n for n in (3, 2, 1) if n != keep)
        survivor = next(n for n in (1, 2, 3) if n not in (keep, victim))
        assert proxy.traffic.requests(broker=victim), "the clients never used that broker"
        proxy.stop_broker(victim)
        stopped_at = proxy.traffic.requests()[-1].time_ms
        # What Kafka's controller does when a broker goes: its leaderships move.
        for p, (leader, _replicas) in leaders(kafka3, topic).items():
            if leader == victim:
                move_leader(kafka3, topic, p, survivor)
        traffic.wait_for(100)
        relayed = [e for e in proxy.traffic.requests() if e.time_ms > stopped_at + 50]
        assert relayed and all(e.broker_id != victim for e in relayed)
        proxy.start_broker(victim)
        traffic.wait_for(30)
    finally:
        traffic.finish()
    check_nothing_lost(kafka3, traffic)
    with pytest.raises(mockkafka.KafkaApiError, match=r"no broker 7; it has \[1, 2, 3\]"):
        proxy.stop_broker(7)

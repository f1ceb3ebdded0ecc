"""``Cluster.reset()``: a shared cluster becomes a fresh one, on the same ports."""

from __future__ import annotations

from confluent_kafka import Consumer, Producer, TopicPartition

import mockkafka
from tests.api.conftest import commit_one_transaction
from tests.interop.conftest import unique


def test_reset_clears_what_a_test_left_and_keeps_the_ports() -> None:
    with mockkafka.Cluster(brokers=3) as cluster:
        ports = [b.port for b in cluster.brokers]
        topic = unique("t")
        cluster.create_topic(topic, replication_factor=3)
        commit_one_transaction(cluster, topic)
        cluster.commit_offsets("g", {(topic, 0): 1})
        cluster.faults.on("Fetch").every_time().delay(ms=1)
        cluster.cap_api_versions({"Fetch": 4})
        cluster.stop_broker(3)
        mark = cluster.traffic.mark()

        cluster.reset()

        assert [b.port for b in cluster.brokers] == ports
        assert all(b.running for b in cluster.brokers)
        assert cluster.topics() == [] and cluster.groups() == []
        assert cluster.transactions() == [] and cluster.faults.rules() == []
        # Only what the still-open producer sent since is in the traffic log.
        assert all(ex.seq > mark for ex in cluster.traffic)
        assert cluster.state.api_version_caps == {}
        # The same name starts empty, and new clients work against the same address.
        cluster.create_topic(topic, replication_factor=3)
        p2 = Producer({"bootstrap.servers": cluster.bootstrap_servers})
        p2.produce(topic, b"fresh")
        assert p2.flush(10) == 0
        c = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": "g2"})
        try:
            c.assign([TopicPartition(topic, 0, 0)])
            got = None
            for _ in range(100):
                m = c.poll(0.1)
                if m is not None and m.error() is None:
                    got = m.value()
                    break
        finally:
            c.close()
        assert got == b"fresh"
        assert [r.value for r in cluster.topic(topic).records()] == [b"fresh"]

"""Views are frozen snapshots with useful reprs; ``records()`` is a live query."""

from __future__ import annotations

import dataclasses

import pytest

import mockkafka
from tests.api.conftest import commit_one_transaction
from tests.interop.conftest import unique


def test_topic_and_partition_views_are_snapshots_and_records_reads_now() -> None:
    with mockkafka.Cluster(brokers=3) as cluster:
        topic = unique("t")
        created = cluster.create_topic(
            topic, partitions=2, replication_factor=3, config={"retention.ms": 1000}
        )
        assert isinstance(created, mockkafka.TopicView)
        before = cluster.topic(topic)
        cluster.produce(topic, b"a", partition=1)
        after = cluster.topic(topic)
        assert before.partition(1).high_watermark == 0  # taken before the produce
        assert after.partition(1).high_watermark == 1
        assert [r.value for r in before.partition(1).records()] == [b"a"]  # reads now
        assert [r.value for r in before.records()] == [b"a"]
        p1 = after.partition(1)
        assert (p1.topic, p1.partition, p1.isr, p1.replicas[0]) == (
            topic,
            1,
            p1.replicas,
            p1.leader,
        )
        assert after.configs == {"retention.ms": "1000"}
        with pytest.raises(dataclasses.FrozenInstanceError):
            p1.leader = 2  # type: ignore[misc]
        with pytest.raises(mockkafka.KafkaApiError, match=r"partitions 0\.\.1, not 5"):
            after.partition(5)
        text = repr(after)
        assert topic in text and "offsets=0..1" in text and "retention.ms" in text
        assert "high_watermark=1" in repr(p1)


def test_group_and_transaction_views_have_readable_reprs() -> None:
    with mockkafka.Cluster() as cluster:
        topic = unique("t")
        cluster.create_topic(topic)
        cluster.commit_offsets("g", {(topic, 0): 0})
        assert "group 'g' Empty" in repr(cluster.group("g"))
        tid = commit_one_transaction(cluster, topic)
        view = cluster.wait_for_transaction(tid, state="CompleteCommit")
        text = repr(view)
        assert tid in text and "CompleteCommit" in text and "1 committed" in text


def test_cluster_repr_shows_brokers_ports_and_topics() -> None:
    with mockkafka.Cluster(brokers=2) as cluster:
        cluster.create_topic("orders", partitions=3)
        cluster.stop_broker(2)
        text = repr(cluster)
        port = cluster.brokers[0].port
        assert f"1@127.0.0.1:{port}" in text and "(stopped)" in text and "'orders': 3" in text

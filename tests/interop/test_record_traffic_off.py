"""``record_traffic=False`` keeps no exchanges (regression: an empty, falsy TrafficLog was
replaced by a recording one, so every request and its records blob stayed in memory)."""

from __future__ import annotations

import pytest
from confluent_kafka import Producer

import mockkafka

pytestmark = [pytest.mark.interop, pytest.mark.timeout(30)]


def test_record_traffic_false_keeps_no_requests_in_memory() -> None:
    with mockkafka.Cluster(brokers=1, record_traffic=False) as cluster:
        cluster.create_topic("t", partitions=1)
        p = Producer({"bootstrap.servers": cluster.bootstrap_servers})
        for i in range(5):
            p.produce("t", b"v%d" % i)
        assert p.flush(10) == 0
        assert cluster.topic("t").partition(0).high_watermark == 5
        assert len(cluster.traffic) == 0

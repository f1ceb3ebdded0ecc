"""Traffic timelines name the topics a client fetched by id (Fetch v13+), deleted ones too."""

from __future__ import annotations

import pytest

import mockkafka
from tests.robustness._wire import Raw

pytestmark = pytest.mark.timeout(30)


def test_a_fetch_by_topic_id_shows_the_topic_name_in_the_timeline_also_once_deleted() -> None:
    with mockkafka.Cluster(topics={"orders": 1}) as cluster:
        cluster.produce("orders", b"v")
        topic_id = cluster.topic("orders").topic_id
        host, port = cluster.bootstrap_servers.rsplit(":", 1)
        part = {"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20}
        body = {
            "replica_id": -1,
            "max_wait_ms": 0,
            "min_bytes": 1,
            "max_bytes": 1 << 20,
            "topics": [{"topic_id": topic_id, "partitions": [part]}],
        }
        with Raw(host, int(port)) as raw:
            raw.request("Fetch", 17, body)
        (line,) = [x for x in cluster.traffic.timeline().splitlines() if " Fetch v17 " in x]
        assert " orders-0@0 hw1 " in line
        assert topic_id.hex[:8] not in line
        cluster.delete_topic("orders")
        (line,) = [x for x in cluster.traffic.timeline().splitlines() if " Fetch v17 " in x]
        assert " orders-0@0 hw1 " in line

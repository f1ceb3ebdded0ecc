"""Traffic timelines name the topics a client fetched by id (Fetch v13+), deleted ones too."""

from __future__ import annotations

import pytest

import mockkafka
from tests.robustness._wire import fetch_partition

pytestmark = pytest.mark.timeout(30)


def test_a_fetch_by_topic_id_shows_the_topic_name_in_the_timeline_also_once_deleted() -> None:
    with mockkafka.Cluster(topics={"orders": 1}) as cluster:
        cluster.produce("orders", b"v")
        topic_id = cluster.topic("orders").topic_id
        fetch_partition(cluster.bootstrap_servers, "orders", version=17, topic_id=topic_id)
        (line,) = [x for x in cluster.traffic.timeline().splitlines() if " Fetch v17 " in x]
        assert " orders-0@0 hw1 " in line
        assert topic_id.hex[:8] not in line
        cluster.delete_topic("orders")
        (line,) = [x for x in cluster.traffic.timeline().splitlines() if " Fetch v17 " in x]
        assert " orders-0@0 hw1 " in line

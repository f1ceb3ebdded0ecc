"""KIP-932 share groups with franz-go's share consumer (kgo ``ShareGroup``) and
``kadm.DescribeShareGroups``: franz-go speaks the GA share APIs (ShareGroupHeartbeat v1,
ShareFetch/ShareAcknowledge v2) as against Kafka 4.2+. ``go/share.go`` runs two share consumers of one group with explicit
acknowledgement (the same scenario as the Java tier). Skips without Go or the modules."""

from __future__ import annotations

import pytest

import mockkafka
from tests.interop._build import Program, build_go
from tests.interop._share_helpers import run_share_consumers
from tests.interop.conftest import unique

pytestmark = [pytest.mark.go, pytest.mark.interop]


@pytest.fixture(scope="session")
def go() -> Program:
    return build_go()


def test_two_franz_go_share_consumers_split_records_release_and_reject(
    go: Program, cluster: mockkafka.Cluster
) -> None:
    topic, group = unique("gshare"), unique("gsg")
    cluster.create_topic(topic, partitions=2, replication_factor=3)
    result = run_share_consumers(go, cluster, topic, group, 40, prefix=("kgo-share",))
    assert len(result["seen"]) == 2, f"both consumers should receive records: {result['seen']}"
    assert cluster.traffic.requests("ShareAcknowledge", client_id="share-*")
    versions = {
        api: max(e.version for e in cluster.traffic.requests(api, client_id="share-*"))
        for api in ("ShareGroupHeartbeat", "ShareFetch")
    }
    assert versions == {"ShareGroupHeartbeat": 1, "ShareFetch": 2}


def test_franz_go_share_consumers_ride_out_errors_and_a_dropped_connection(
    go: Program, cluster: mockkafka.Cluster
) -> None:
    topic, group = unique("gsharef"), unique("gsgf")
    cluster.create_topic(topic, partitions=2, replication_factor=3)
    heartbeat = (
        cluster.faults.on("ShareGroupHeartbeat", group=group)
        .nth(3)
        .error("COORDINATOR_NOT_AVAILABLE")
    )
    fetch = (
        cluster.faults.on("ShareFetch", group=group, topic=topic, partition=1)
        .once()
        .error("NOT_LEADER_OR_FOLLOWER")
    )
    dropped = cluster.faults.on("ShareFetch", group=group).nth(4).drop_connection()
    run_share_consumers(go, cluster, topic, group, 20, prefix=("kgo-share",))
    assert (heartbeat.fired, fetch.fired, dropped.fired) == (1, 1, 1)
    assert cluster.traffic.requests("ShareFetch", fault=fetch)

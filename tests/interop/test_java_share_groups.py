"""KIP-932 share groups with the Java client's KafkaShareConsumer: kafka-clients 4.4.0 (GA:
ShareGroupHeartbeat v1, ShareFetch/ShareAcknowledge v2) and 4.0.2 (early access, v0).

``java/share-src/ShareInterop.java`` runs two share consumers of one group with explicit
acknowledgement; the test produces once both are members with their assignments, then checks
what each consumer received against the broker's share-partition state. Skips, saying what
is missing, without Java, Maven or the kafka-clients jars.
"""

from __future__ import annotations

import pytest

import mockkafka
from tests.interop._build import (
    KAFKA_CLIENTS_SHARE_VERSIONS,
    Program,
    build_java_share,
    build_java_share_admin,
)
from tests.interop._share_helpers import run_share_consumers
from tests.interop.conftest import unique

pytestmark = [pytest.mark.java, pytest.mark.interop]


@pytest.fixture(
    scope="session", params=KAFKA_CLIENTS_SHARE_VERSIONS, ids=lambda v: f"kafka-clients-{v}"
)
def java_share(request: pytest.FixtureRequest) -> Program:
    return build_java_share(request.param)


def test_two_share_consumers_split_records_release_redelivers_reject_does_not(
    java_share: Program, cluster: mockkafka.Cluster
) -> None:
    topic, group = unique("jshare"), unique("jsg")
    cluster.create_topic(topic, partitions=2, replication_factor=3)
    result = run_share_consumers(java_share, cluster, topic, group, 40)
    assert len(result["seen"]) == 2, f"both consumers should receive records: {result['seen']}"
    assert cluster.traffic.requests("ShareAcknowledge")  # commitSync / close acknowledged
    newest = {"4.4.0": 2, "4.1.1": 1}.get(java_share.name.split()[-1].rstrip(")"), 0)
    assert max(e.version for e in cluster.traffic.requests("ShareFetch")) == newest
    for error in ("INVALID_SHARE_SESSION_EPOCH", "SHARE_SESSION_NOT_FOUND", "INVALID_RECORD_STATE"):
        assert not cluster.traffic.requests(with_error=error), error


def test_share_consumers_ride_out_faults_on_the_share_apis(
    java_share: Program, cluster: mockkafka.Cluster
) -> None:
    topic, group = unique("jsharef"), unique("jsgf")
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
    run_share_consumers(java_share, cluster, topic, group, 20)
    assert (heartbeat.fired, fetch.fired) == (1, 1)
    assert cluster.traffic.requests("ShareFetch", fault=fetch)


def test_the_admin_client_lists_alters_and_deletes_share_group_offsets(
    cluster: mockkafka.Cluster,
) -> None:
    java = build_java_share(KAFKA_CLIENTS_SHARE_VERSIONS[0])
    admin = build_java_share_admin(KAFKA_CLIENTS_SHARE_VERSIONS[0])
    topic, group = unique("jshareadm"), unique("jsga")
    cluster.create_topic(topic, partitions=2, replication_factor=3)
    run_share_consumers(java, cluster, topic, group, 10)  # leaves SPSO 6 on both partitions
    result = admin.run(cluster.bootstrap_servers, topic, group)
    assert result["before"] == {"0": [6, 0], "1": [6, 0]}
    # reset partition 0 to the start: all six records are to be delivered again
    assert result["after_alter"] == {"0": [0, 6], "1": [6, 0]}
    assert result["after_delete"] == {}  # no share state left for the topic
    assert result["delete_unknown_group"] == "GroupIdNotFoundException"
    assert result["groups_after"] == 0
    with pytest.raises(mockkafka.KafkaApiError):
        cluster.share_group(group)

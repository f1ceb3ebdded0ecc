"""KIP-932 share groups with the Java client's KafkaShareConsumer (kafka-clients 4.0.x, the
early-access release that speaks the v0 share APIs mockkafka serves).

``java/share-src/ShareInterop.java`` runs two share consumers of one group with explicit
acknowledgement; the test produces once both are members with their assignments, then checks
what each consumer received against the broker's share-partition state. Skips, saying what
is missing, without Java, Maven or the kafka-clients 4.0.x jars.
"""

from __future__ import annotations

from typing import Any

import pytest

import mockkafka
from tests.interop._build import KAFKA_CLIENTS_SHARE_VERSION, Program, build_java_share
from tests.interop.conftest import unique

pytestmark = [pytest.mark.java, pytest.mark.interop]


@pytest.fixture(scope="session")
def java_share() -> Program:
    return build_java_share(KAFKA_CLIENTS_SHARE_VERSION)


def run_share_consumers(
    java: Program, cluster: mockkafka.Cluster, topic: str, group: str, n: int
) -> dict[str, Any]:
    """Start the two share consumers, produce ``n`` records plus "release-me" and
    "reject-me" once both hold their assignment, and check what they received."""
    proc = java.start(cluster.bootstrap_servers, topic, group, str(n))
    try:
        view = cluster.wait_for_share_group(
            group,
            members=2,
            where=lambda v: (
                all(m.assignment for m in v.members)
                and all(m.member_epoch == v.assignment_epoch for m in v.members)
            ),
            timeout=60,
        )
    except mockkafka.WaitTimeout:
        proc.kill()
        raise
    assignments = [set(m.assignment[topic]) for m in view.members if m.assignment]
    assert sorted(p for a in assignments for p in a) == [0, 1]  # one partition each
    for i in range(n):
        cluster.produce(topic, f"v{i}", partition=i % 2)
    cluster.produce(topic, "release-me", partition=0)
    cluster.produce(topic, "reject-me", partition=1)
    result = java.finish(proc, timeout=120)

    seen = result["seen"]
    everything = [v for values in seen.values() for v in values]
    assert sorted(everything) == sorted([f"v{i}" for i in range(n)] + ["release-me"])
    assert result["release_delivery_counts"] == [1, 2]  # released once, then delivered again
    assert result["max_plain_delivery_count"] == 1  # nothing else was delivered twice
    assert result["reject_deliveries"] == 1  # rejected: archived, never redelivered
    assert result["described_members"] == 2 and result["described_state"] == "Stable"
    share = cluster.share_group(group)
    assert share.state == "Empty"  # both consumers closed and left
    for p in (0, 1):
        sp = share.partition(topic, p)
        assert sp.start_offset == n // 2 + 1 and sp.records == {}  # everything done
    return result


def test_two_share_consumers_split_records_release_redelivers_reject_does_not(
    java_share: Program, cluster: mockkafka.Cluster
) -> None:
    topic, group = unique("jshare"), unique("jsg")
    cluster.create_topic(topic, partitions=2, replication_factor=3)
    result = run_share_consumers(java_share, cluster, topic, group, 40)
    assert len(result["seen"]) == 2, f"both consumers should receive records: {result['seen']}"
    assert cluster.traffic.requests("ShareAcknowledge")  # commitSync / close acknowledged
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

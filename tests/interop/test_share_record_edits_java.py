"""The Java client's KafkaShareConsumer (kafka-clients 4.4.0, ShareFetch v2) reading
ShareFetch answers whose batches a record-editing fault action re-encoded.

The Java consumer checks every batch's CRC (``check.crcs`` is on by default), so it pins
that the re-encoded batches are valid Kafka on a share fetch; ``ShareInterop`` then
acknowledges, releases and rejects as without the fault, and the share-partition state ends
as it would. (``skew_timestamps`` leaves the values the program checks alone; the edited
values themselves are pinned with confluent-kafka in
test_share_record_edits_confluent.py.) Skips without Java, Maven or the jars.
"""

from __future__ import annotations

import pytest

import mockkafka
from tests.interop._build import KAFKA_CLIENTS_SHARE_VERSIONS, build_java_share
from tests.interop._share_helpers import run_share_consumers
from tests.interop.conftest import unique

pytestmark = [pytest.mark.java, pytest.mark.interop]


def test_java_share_consumers_accept_reencoded_batches(cluster: mockkafka.Cluster) -> None:
    java = build_java_share(KAFKA_CLIENTS_SHARE_VERSIONS[0])
    topic, group = unique("jshedit"), unique("jshe")
    cluster.create_topic(topic, partitions=2, replication_factor=3)
    rule = (
        cluster.faults.on("ShareFetch", group=group, topic=topic)
        .every_time()
        .skew_timestamps(ms=-3_600_000)
    )
    # every record delivered once (release-me twice), acknowledged, the state all done
    run_share_consumers(java, cluster, topic, group, 20)
    carried = [
        e
        for e in cluster.traffic.requests("ShareFetch", group=group)
        if any(
            p.get("records")
            for t in (e.response or {}).get("responses") or []
            for p in t.get("partitions") or []
        )
    ]
    assert carried and all(rule.name in e.faults for e in carried)
    assert rule.fired == len(carried)

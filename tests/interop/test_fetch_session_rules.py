"""A Fetch rule naming a topic or partition sees every fetch of an incremental fetch session
(KIP-227) that can carry its records -- not only those whose request names the partition.

A caught-up consumer in a session sends fetches that name no partition (nothing changed);
the answer still carries the records that land meanwhile. kafka-python and the Java client
fetch this way. (A traffic filter on a topic still lists the fetches that named it.)"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from kafka import KafkaConsumer, TopicPartition

import mockkafka
from mockkafka.protocol.records import decode_records
from tests.interop.conftest import unique
from tests.robustness._wire import Raw

pytestmark = [pytest.mark.interop, pytest.mark.timeout(60)]


@pytest.fixture
def cluster() -> Iterator[mockkafka.Cluster]:
    with mockkafka.Cluster(brokers=1) as c:
        yield c


def _poll(c: KafkaConsumer, n: int, timeout: float = 15.0) -> list[Any]:
    out: list[Any] = []
    deadline = time.monotonic() + timeout
    while len(out) < n and time.monotonic() < deadline:
        for recs in c.poll(timeout_ms=100).values():
            out.extend(recs)
    return out


def test_a_topic_rule_edits_the_records_a_caught_up_session_fetch_carries(
    cluster: mockkafka.Cluster,
) -> None:
    topic = unique("orders")
    cluster.create_topic(topic, partitions=1)
    cluster.produce(topic, b"before")
    c = KafkaConsumer(
        bootstrap_servers=cluster.bootstrap_servers,
        group_id=None,
        enable_auto_commit=False,
        fetch_max_wait_ms=200,
        check_crcs=True,
    )
    try:
        tp = TopicPartition(topic, 0)
        c.assign([tp])
        c.seek(tp, 0)
        assert [r.value for r in _poll(c, 1)] == [b"before"]
        # Installed now, so that the fetch parked when the record lands has seen it (a rule
        # is picked when a request arrives); fetches with nothing to edit do not count.
        rule = cluster.faults.on("Fetch", topic=topic, partition=0).once().schema_id(id=42)
        # caught up: the session's next fetches name no partition
        seen = len(cluster.traffic.requests("Fetch"))
        deadline = time.monotonic() + 10
        while len(cluster.traffic.requests("Fetch")) < seen + 3 and time.monotonic() < deadline:
            _poll(c, 1, timeout=0.2)
        idle = cluster.traffic.requests("Fetch")[-1].request
        assert idle["session_epoch"] > 0 and not idle["topics"], idle
        assert rule.fired == 0
        cluster.produce(topic, b"\x00\x00\x00\x00\x07payload")
        got = _poll(c, 1)
        assert [r.value for r in got] == [b"\x00\x00\x00\x00\x2apayload"]
        assert rule.fired == 1
        carried = cluster.traffic.requests("Fetch", fault=rule)
        assert len(carried) == 1
        assert not carried[0].request["topics"]  # the request named no partition
    finally:
        c.close()


def test_by_topic_id_a_session_fetch_naming_nothing_is_matched_and_edited(
    cluster: mockkafka.Cluster,
) -> None:
    """Fetch v17 names topics by id, as the Java client sends it: the session's later fetch
    names no partition, and the rule on the topic's name still edits the records it carries;
    a rule on another topic does not fire."""
    topic = unique("ids")
    cluster.create_topic(topic, partitions=1)
    topic_id = cluster.topic(topic).topic_id
    host, port = cluster.bootstrap_servers.rsplit(":", 1)
    with Raw(host, int(port)) as raw:
        base = {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20}
        part = {"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20}
        opened = raw.request(
            "Fetch",
            17,
            {**base, "session_id": 0, "session_epoch": 0,
             "topics": [{"topic_id": topic_id, "partitions": [part]}]},
        )  # fmt: skip
        session = opened["session_id"]
        assert session > 0
        other = cluster.faults.on("Fetch", topic="not-" + topic).schema_id(id=1)
        rule = cluster.faults.on("Fetch", topic=topic).once().schema_id(id=42)
        cluster.produce(topic, b"\x00\x00\x00\x00\x07payload")
        later = raw.request(
            "Fetch", 17, {**base, "session_id": session, "session_epoch": 1, "topics": []}
        )
        (t,) = later["responses"]
        (p,) = t["partitions"]
        values = [r.value for r in decode_records(p["records"])]
        assert values == [b"\x00\x00\x00\x00\x2apayload"]
        assert (rule.fired, other.fired) == (1, 0)
    other.remove()
    assert cluster.topic(topic).records()[0].value == b"\x00\x00\x00\x00\x07payload"

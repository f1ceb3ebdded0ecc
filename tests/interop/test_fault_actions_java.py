"""The Java client (newest kafka-clients) under the fault actions ``duplicate``,
``corrupt_payload``, ``schema_id``, ``skew_timestamps``, ``lost_ack`` and ``blackhole``.

``java/actions-src/FaultActions.java`` reads partition 0 (values base64-encoded, so garbage
survives the trip) or runs one group member; ``lost_ack`` uses ``Interop``'s producer. Skips
without Java, Maven or the kafka-clients jars, as the rest of the Java tier.
"""

from __future__ import annotations

import base64
import json
import struct
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer

import mockkafka
from mockkafka.protocol.records import decode_records
from tests.interop._build import (
    KAFKA_CLIENTS_VERSIONS,
    Program,
    build_java,
    build_java_actions,
    held_values,
)
from tests.interop.conftest import unique

pytestmark = [pytest.mark.java, pytest.mark.interop, pytest.mark.timeout(180)]


@pytest.fixture(scope="module")
def actions() -> Program:
    return build_java_actions(KAFKA_CLIENTS_VERSIONS[0])


@pytest.fixture(scope="module")
def interop() -> Program:
    return build_java(KAFKA_CLIENTS_VERSIONS[0])


@pytest.fixture
def cluster() -> Iterator[mockkafka.Cluster]:
    with mockkafka.Cluster() as c:
        yield c


def _bytes(values: list[str | None]) -> list[bytes | None]:
    return [None if v is None else base64.b64decode(v) for v in values]


def _read(actions: Program, cluster: mockkafka.Cluster, topic: str, n: int, **kw: Any) -> Any:
    max_bytes = str(kw.get("max_bytes", 1048576))
    return actions.run("read", cluster.bootstrap_servers, topic, str(n), max_bytes)


def test_duplicate_batches_are_dropped_below_the_fetch_position(
    actions: Program, cluster: mockkafka.Cluster
) -> None:
    """The Java client skips records below its fetch position: each is delivered once."""
    topic = unique("jdup")
    cluster.create_topic(topic)
    for i in range(12):
        cluster.produce(topic, f"v-{i}")  # one batch per record
    rule = cluster.faults.on("Fetch", topic=topic).times(4).duplicate()
    # max.partition.fetch.bytes=1: one batch per fetch, so every fetch after the first
    # carries records and a batch before its fetch offset to repeat
    got = _read(actions, cluster, topic, 12, max_bytes=1)
    assert got["offsets"] == list(range(12))
    assert _bytes(got["values"]) == [f"v-{i}".encode() for i in range(12)]
    assert rule.fired == 4
    for ex in cluster.traffic.requests("Fetch", fault=rule):
        (part,) = [p for t in (ex.response or {})["responses"] for p in t["partitions"]]
        offsets = [r.offset for r in decode_records(part["records"])]
        assert offsets == sorted(offsets) and offsets[0] < offsets[-1]  # a repeat, then new


def test_corrupt_payload_passes_the_java_crc_check(
    actions: Program, cluster: mockkafka.Cluster
) -> None:
    topic = unique("jcorrupt")
    cluster.create_topic(topic)
    values = [json.dumps({"n": i}).encode() for i in range(5)]
    for v in values:
        cluster.produce(topic, v, key=b"k", headers=[("h", b"x")])
    rule = cluster.faults.on("Fetch", topic=topic).once().corrupt_payload(seed=3)
    got = _read(actions, cluster, topic, 5)  # check.crcs=true: a bad CRC would throw
    assert rule.fired == 1 and got["offsets"] == list(range(5))
    assert _bytes(got["keys"]) == [b"k"] * 5
    for seen, v in zip(_bytes(got["values"]), values, strict=True):
        assert seen is not None and len(seen) == len(v) and seen != v
        with pytest.raises(ValueError):
            json.loads(seen)
    assert got["headers"] == [[["h", base64.b64encode(b"x").decode()]]] * 5


def test_schema_id_is_what_the_java_deserializer_reads(
    actions: Program, cluster: mockkafka.Cluster
) -> None:
    topic = unique("jschema")
    cluster.create_topic(topic)
    for i in range(3):
        cluster.produce(topic, struct.pack(">bI", 0, 1) + b"avro-%d" % i)
    cluster.faults.on("Fetch", topic=topic).once().schema_id(id=424242)
    got = _bytes(_read(actions, cluster, topic, 3)["values"])
    assert [struct.unpack_from(">bI", v) for v in got if v] == [(0, 424242)] * 3
    assert [v[5:] for v in got if v] == [b"avro-%d" % i for i in range(3)]


def test_skew_timestamps_reaches_the_java_record(
    actions: Program, cluster: mockkafka.Cluster
) -> None:
    topic = unique("jskew")
    cluster.create_topic(topic)
    ts = 1_700_000_000_000
    cluster.produce(topic, "a", timestamp=ts)
    cluster.produce(topic, "b", timestamp=ts + 7)
    cluster.faults.on("Fetch", topic=topic).once().skew_timestamps(ms=-86_400_000)
    got = _read(actions, cluster, topic, 2)
    assert got["timestamps"] == [ts - 86_400_000, ts + 7 - 86_400_000]
    assert got["types"] == ["CreateTime"] * 2


@pytest.mark.parametrize("idempotent", ["false", "true"])
def test_lost_ack_duplicates_only_without_idempotence(
    interop: Program, cluster: mockkafka.Cluster, idempotent: str
) -> None:
    topic = unique("jlost")
    cluster.create_topic(topic)
    rule = cluster.faults.on("Produce", topic=topic).nth(2).lost_ack()
    assert interop.run("produce", cluster.bootstrap_servers, topic, "200", idempotent) == {
        "acked": 200
    }
    assert rule.fired == 1
    (lost,) = cluster.traffic.requests("Produce", fault=rule)
    assert lost.closed_connection and lost.response is not None
    resent = [
        r.value.decode()
        for t in lost.request["topic_data"]
        for p in t["partition_data"]
        for r in decode_records(p["records"])
        if r.value is not None
    ]
    assert resent
    expected = Counter(f"v{i}" for i in range(200))
    if idempotent == "false":
        expected.update(resent)  # the retried batch is in the log twice
    assert Counter(held_values(cluster, topic)) == expected


def test_blackholed_java_member_is_evicted_and_rejoins_after_the_rule_ends(
    actions: Program, cluster: mockkafka.Cluster
) -> None:
    topic, group = unique("jbh"), unique("jg")
    cluster.create_topic(topic, partitions=2)
    proc = actions.start("member", cluster.bootstrap_servers, topic, group, "java-member", "10")
    other = Consumer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "group.id": group,
            "client.id": "python-member",
            "session.timeout.ms": 1500,
            "heartbeat.interval.ms": 200,
            "partition.assignment.strategy": "range",
        }
    )
    try:
        other.subscribe([topic])

        def members() -> list[str]:
            view = cluster.group(group) if group in cluster.groups() else None
            if view is None or view.state != "Stable":
                return []
            return sorted(m.client_id for m in view.members if m.assignment)

        def poll_until(want: list[str], timeout: float = 20.0) -> list[str]:
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline and members() != want:
                other.poll(0.05)
            return members()

        assert poll_until(["java-member", "python-member"]) == ["java-member", "python-member"]
        rule = cluster.faults.on(client_id="java-member").blackhole().for_ms(3000)
        assert poll_until(["python-member"]) == ["python-member"]
        view = cluster.group(group)
        assert view.members[0].assignment == {topic: [0, 1]}
        swallowed = cluster.traffic.requests(client_id="java-member", fault=rule)
        assert swallowed and all(ex.no_response and not ex.closed_connection for ex in swallowed)
        # once the rule ends the Java member is answered again and rejoins
        assert poll_until(["java-member", "python-member"]) == ["java-member", "python-member"]
    finally:
        other.close()
        result = actions.finish(proc, timeout=60)
    # the member ran to its end without an error (no answer out of order after the
    # swallowed request) and held a partition before and after its eviction
    assert all(isinstance(h, list) for h in result["history"]), result
    assert sum(1 for h in result["history"] if h) >= 1

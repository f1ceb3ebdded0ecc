"""Java kafka-clients (newest 4.x and newest 3.x) against mockkafka, driven from pytest.

``java/src/Interop.java`` is compiled once per session per client version (cached under
``.cache/java``) and run as a subprocess per scenario; it prints a JSON summary and the test
checks it against what the brokers hold. Skips, saying what is missing, without Java, Maven
or the kafka-clients jars.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import mockkafka
from tests.interop._build import KAFKA_CLIENTS_OLD, KAFKA_CLIENTS_VERSIONS, Program, build_java
from tests.interop._build import held_values as values
from tests.interop.conftest import unique

pytestmark = [pytest.mark.java, pytest.mark.interop]


@pytest.fixture(scope="session", params=KAFKA_CLIENTS_VERSIONS, ids=lambda v: f"kafka-clients-{v}")
def java(request: pytest.FixtureRequest) -> Program:
    return build_java(request.param)


@pytest.fixture(scope="session")
def java_newest() -> Program:
    """Only the newest client for the fault-reaction tests (they exercise the broker)."""
    return build_java(KAFKA_CLIENTS_VERSIONS[0])


def test_every_codec_round_trips(java: Program, cluster: mockkafka.Cluster) -> None:
    topic = unique("jcodec")
    cluster.create_topic(topic, partitions=2, replication_factor=3)
    result = java.run("codecs", cluster.bootstrap_servers, topic, "20")
    assert result == {c: 20 for c in ("none", "gzip", "snappy", "lz4", "zstd")}
    assert len(values(cluster, topic)) == 100


def test_idempotent_producer_with_five_in_flight_survives_errors_and_lost_acks(
    java: Program, cluster: mockkafka.Cluster
) -> None:
    topic = unique("jidem")
    cluster.create_topic(topic, partitions=1, replication_factor=3)
    errors = cluster.faults.on("Produce", topic=topic).nth(3).error("NOT_LEADER_OR_FOLLOWER")
    lost = cluster.faults.on("Produce", topic=topic).nth(6).drop_connection(after_processing=True)
    result = java.run("produce", cluster.bootstrap_servers, topic, "400", "true")
    assert result == {"acked": 400}
    assert errors.fired == 1 and lost.fired == 1
    assert len(cluster.traffic.requests("Produce", with_error="NOT_LEADER_OR_FOLLOWER")) == 1
    held = values(cluster, topic)
    assert sorted(held, key=lambda v: int(v[1:])) == [f"v{i}" for i in range(400)]
    assert held == [f"v{i}" for i in range(400)]  # in order despite 5 requests in flight
    if "4.4.0" in java.name:  # KIP-1242: reconnecting, the client names the cluster and node
        named = {
            (e.request["cluster_id"], e.request["node_id"], e.broker_id)
            for e in cluster.traffic.requests("ApiVersions", version=5)
            if e.request.get("cluster_id") is not None
        }
        assert named and all(n == b for _c, n, b in named)
        assert len({c for c, _n, _b in named}) == 1
        assert not cluster.traffic.requests("ApiVersions", with_error="REBOOTSTRAP_REQUIRED")


def test_consume_transform_produce_in_transactions(
    java: Program, cluster: mockkafka.Cluster
) -> None:
    src, dst, group, txn = unique("jin"), unique("jout"), unique("jg"), unique("jtx")
    cluster.create_topic(src, partitions=2, replication_factor=3)
    cluster.create_topic(dst, partitions=2, replication_factor=3)
    for i in range(60):
        cluster.produce(src, f"m{i}", key=f"k{i}", partition=i % 2)
    result = java.run("txn", cluster.bootstrap_servers, src, dst, group, txn, "60")
    assert result["copied"] == 60 and result["transactions"] >= 1
    committed = [r.value for r in cluster.topic(dst).records() if r.value is not None]
    assert sorted(v.decode() for v in committed if v != b"aborted") == sorted(
        f"M{i}" for i in range(60)
    )
    offsets = cluster.committed_offsets(group)
    assert offsets[(src, 0)] + offsets[(src, 1)] == 60
    if "4.4.0" in java.name:
        # transaction version 2 (KIP-890 part 2): Produce and TxnOffsetCommit add partitions
        # and groups themselves, and every EndTxn bumps the epoch the markers carry
        assert not cluster.traffic.requests(["AddPartitionsToTxn", "AddOffsetsToTxn"])
        assert {e.version for e in cluster.traffic.requests("EndTxn")} == {5}
        assert {e.version for e in cluster.traffic.requests("TxnOffsetCommit")} == {6}
        epochs = [t.producer_epoch for t in cluster.transaction(txn).history]
        assert epochs == sorted(set(epochs)) and len(epochs) >= 2
    else:  # kafka-clients 3.x: the v1 flow on the same cluster
        assert cluster.traffic.requests("AddPartitionsToTxn")
    # A read_committed reader sees neither the aborted record nor uncommitted data.
    seen = java.run("consume", cluster.bootstrap_servers, dst, "60", "read_committed")["seen"]
    assert sorted(seen) == sorted(f"M{i}" for i in range(60))


def test_second_instance_fences_the_first(java: Program, cluster: mockkafka.Cluster) -> None:
    topic, txn = unique("jfence"), unique("jtx")
    cluster.create_topic(topic, partitions=1, replication_factor=3)
    result = java.run("fence", cluster.bootstrap_servers, topic, txn)
    assert result["first_error"] in {"ProducerFencedException", "InvalidProducerEpochException"}
    seen = java.run("consume", cluster.bootstrap_servers, topic, "1", "read_committed")["seen"]
    assert seen == ["from-second"]


@pytest.mark.parametrize("protocol", ["eager", "cooperative", "consumer"])
def test_two_members_share_a_topic_and_commit(
    java: Program, cluster: mockkafka.Cluster, protocol: str
) -> None:
    topic, group = unique("jgrp"), unique("jg")
    cluster.create_topic(topic, partitions=4, replication_factor=3)
    for i in range(200):
        cluster.produce(topic, f"v{i}", partition=i % 4)
    result = java.run("group", cluster.bootstrap_servers, topic, group, protocol, "200")
    assert result["consumed"] >= 200
    parts = [set(p) for p in result["assignments"].values()]
    assert len(parts) == 2 and all(parts) and not (parts[0] & parts[1]), result
    assert sum(cluster.committed_offsets(group).values()) == 200
    api = "ConsumerGroupHeartbeat" if protocol == "consumer" else "JoinGroup"
    assert cluster.traffic.requests(api)


def test_admin_everyday_calls(java: Program, cluster: mockkafka.Cluster) -> None:
    result = java.run("admin", cluster.bootstrap_servers, unique("jadm"))
    assert result == {
        "cluster_nodes": 3,
        "listed": True,
        "partitions": 4,
        "replicas": 3,
        "cleanup.policy": "compact,delete",
        "retention.ms": "3600000",
        "earliest": 4,
        "latest": 10,
        "group_offset": 7,
        "group_described": True,
        "deleted": True,
    }


def test_consumer_follows_a_leader_move_mid_stream(
    java_newest: Program, cluster: mockkafka.Cluster
) -> None:
    topic = unique("jmove")
    cluster.create_topic(topic, partitions=1, replication_factor=3)
    for i in range(50):
        cluster.produce(topic, f"a{i}")
    proc = java_newest.start("consume", cluster.bootstrap_servers, topic, "100", "read_uncommitted")
    cluster.traffic.wait_for("Fetch", count=2, timeout=30)  # the only topic
    old = cluster.topic(topic).partition(0).leader
    cluster.move_leader(topic, 0, to=old % 3 + 1)
    for i in range(50):
        cluster.produce(topic, f"b{i}")
    seen = java_newest.finish(proc)["seen"]
    assert Counter(seen) == Counter([f"a{i}" for i in range(50)] + [f"b{i}" for i in range(50)])
    assert cluster.traffic.requests("Fetch", broker=old % 3 + 1)


@pytest.mark.parametrize(
    "fault",
    ["error", "throttle", "drop_connection"],
)
def test_consumer_rides_out_fetch_faults(
    java_newest: Program, cluster: mockkafka.Cluster, fault: str
) -> None:
    topic = unique("jfault")
    cluster.create_topic(topic, partitions=2, replication_factor=3)
    for i in range(80):
        cluster.produce(topic, f"v{i}", partition=i % 2)
    on = cluster.faults.on("Fetch", topic=topic).times(2)
    if fault == "error":
        rule = on.error("NOT_LEADER_OR_FOLLOWER")
    elif fault == "throttle":
        rule = on.throttle(ms=300)
    else:
        rule = on.drop_connection()
    seen = java_newest.run("consume", cluster.bootstrap_servers, topic, "80", "read_uncommitted")[
        "seen"
    ]
    assert sorted(seen) == sorted(f"v{i}" for i in range(80))
    assert rule.fired == 2
    # fired counts only faults that reached the client: one exchange per firing (with
    # the error in its response for error rules, through the consumer's fetch session)
    assert len(cluster.traffic.requests("Fetch", fault=rule)) == rule.fired
    if fault == "error":
        carrying = cluster.traffic.requests("Fetch", with_error="NOT_LEADER_OR_FOLLOWER")
        assert len(carrying) == rule.fired


def test_producer_rides_out_throttling(java_newest: Program, cluster: mockkafka.Cluster) -> None:
    topic = unique("jthr")
    cluster.create_topic(topic, partitions=1, replication_factor=3)
    rule = cluster.faults.on("Produce", topic=topic).times(3).throttle(ms=200)
    assert java_newest.run("produce", cluster.bootstrap_servers, topic, "100", "true") == {
        "acked": 100
    }
    assert rule.fired == 3
    assert len(values(cluster, topic)) == 100
    throttled = cluster.traffic.requests("Produce", fault=rule)
    assert len(throttled) == 3


@pytest.mark.parametrize(
    ("security_protocol", "mechanism"),
    [("SSL", None), ("SASL_SSL", "SCRAM-SHA-512"), ("SASL_PLAINTEXT", "PLAIN")],
)
def test_java_client_with_the_settings_client_config_gives(
    java_newest: Program, tmp_path: Path, security_protocol: str, mechanism: str | None
) -> None:
    """The Java client's own property names from ``client_config("java")`` (PEM truststore
    and keystore, ``sasl.jaas.config``) carry an idempotent producer and a consumer."""
    extra: dict[str, Any] = (
        {"ssl_client_auth": "required"}
        if mechanism is None
        else {"users": {"alice": "alice-secret"}}
    )
    with mockkafka.Cluster(brokers=3, security_protocol=security_protocol, **extra) as cluster:
        topic = unique("jsec")
        cluster.create_topic(topic, partitions=2, replication_factor=3)
        kw: dict[str, Any] = {"user": "alice", "mechanism": mechanism} if mechanism else {}
        settings = cluster.client_config("java", **kw)
        props = tmp_path / "client.properties"
        props.write_text(
            "".join(f"{k}={v}\n" for k, v in settings.items() if k != "bootstrap.servers")
        )
        env = {"INTEROP_CLIENT_PROPERTIES": str(props)}
        assert java_newest.run(
            "produce", cluster.bootstrap_servers, topic, "50", "true", env=env
        ) == {"acked": 50}
        seen = java_newest.run(
            "consume", cluster.bootstrap_servers, topic, "50", "read_uncommitted", env=env
        )["seen"]
        assert sorted(seen, key=lambda v: int(v[1:])) == [f"v{i}" for i in range(50)]
        if mechanism:
            assert {
                ex.request["mechanism"] for ex in cluster.traffic.requests("SaslHandshake")
            } == {mechanism}


def test_a_client_older_than_kafka_17011_produces_and_consumes(cluster: mockkafka.Cluster) -> None:
    """kafka-clients 3.4.1 (Spark 3.5's) dies in its I/O thread on a supported feature whose
    range starts at 0; below ApiVersions v4 the broker leaves such features out, as Kafka does."""
    old = build_java(KAFKA_CLIENTS_OLD)
    topic = unique("jold")
    cluster.create_topic(topic, partitions=2, replication_factor=3)
    assert old.run("produce", cluster.bootstrap_servers, topic, "40", "true") == {"acked": 40}
    seen = old.run("consume", cluster.bootstrap_servers, topic, "40", "read_uncommitted")["seen"]
    assert sorted(seen, key=lambda v: int(v[1:])) == [f"v{i}" for i in range(40)]
    asked = {ex.version for ex in cluster.traffic.requests("ApiVersions")}
    assert asked == {3}

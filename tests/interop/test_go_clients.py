"""Go clients against mockkafka: franz-go (kgo, kadm) and IBM sarama, newest versions.

``go/`` is a small Go module built once per session (cached under ``.cache/go``); each test
runs one subcommand and checks its JSON summary against what the brokers hold. Skips, saying
what is missing, without Go or the modules.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import mockkafka
from tests.interop._build import Program, build_go
from tests.interop._build import held_values as values
from tests.interop.conftest import unique

pytestmark = [pytest.mark.go, pytest.mark.interop]


@pytest.fixture(scope="session")
def go() -> Program:
    return build_go()


@pytest.mark.parametrize("client", ["kgo", "sarama"])
def test_idempotent_produce_survives_a_retriable_error(
    go: Program, cluster: mockkafka.Cluster, client: str
) -> None:
    topic = unique(f"go{client}")
    cluster.create_topic(topic, partitions=1, replication_factor=3)
    rule = cluster.faults.on("Produce", topic=topic).once().error("NOT_LEADER_OR_FOLLOWER")
    assert go.run(f"{client}-produce", cluster.bootstrap_servers, topic, "300") == {"acked": 300}
    assert rule.fired == 1
    assert sorted(values(cluster, topic)) == sorted(f"v{i}" for i in range(300))
    assert cluster.traffic.requests("InitProducerId")


def test_kgo_group_members_consume_and_commit(go: Program, cluster: mockkafka.Cluster) -> None:
    topic, group = unique("gogrp"), unique("gog")
    cluster.create_topic(topic, partitions=4, replication_factor=3)
    for i in range(200):
        cluster.produce(topic, f"v{i}", partition=i % 4)
    result = go.run("kgo-group", cluster.bootstrap_servers, topic, group, "200")
    assert result["consumed"] >= 200
    assert sum(cluster.committed_offsets(group).values()) == 200


def test_sarama_group_consumes_and_commits(go: Program, cluster: mockkafka.Cluster) -> None:
    topic, group = unique("gosgrp"), unique("gosg")
    cluster.create_topic(topic, partitions=3, replication_factor=3)
    for i in range(90):
        cluster.produce(topic, f"v{i}", partition=i % 3)
    assert go.run("sarama-group", cluster.bootstrap_servers, topic, group, "90") == {"consumed": 90}
    assert sum(cluster.committed_offsets(group).values()) == 90


def test_kgo_group_transact_session_copies_exactly_once(
    go: Program, cluster: mockkafka.Cluster
) -> None:
    src, dst, group, txn = unique("goin"), unique("goout"), unique("gotg"), unique("gotx")
    cluster.create_topic(src, partitions=2, replication_factor=3)
    cluster.create_topic(dst, partitions=2, replication_factor=3)
    for i in range(60):
        cluster.produce(src, f"m{i}", partition=i % 2)
    result = go.run("kgo-txn", cluster.bootstrap_servers, src, dst, group, txn, "60")
    assert result["copied"] == 60 and result["transactions"] >= 1
    copied = [v for v in values(cluster, dst) if v != "aborted"]
    assert sorted(copied) == sorted(f"M{i}" for i in range(60))
    assert sum(cluster.committed_offsets(group).values()) == 60
    assert cluster.traffic.requests("TxnOffsetCommit")
    assert cluster.transaction(txn).state in {"CompleteCommit", "Empty"}


def test_sarama_transactions_commit_and_abort(go: Program, cluster: mockkafka.Cluster) -> None:
    topic, txn = unique("gostx"), unique("gostxid")
    cluster.create_topic(topic, partitions=1, replication_factor=3)
    assert go.run("sarama-txn", cluster.bootstrap_servers, topic, txn) == {"transactions": 2}
    partition = cluster.topic(topic).partition(0)
    assert partition.last_stable_offset == partition.high_watermark
    # Both transactions are in the log; their control markers say which one counts.
    assert sorted(values(cluster, topic)) == sorted(
        [f"aborted-{i}" for i in range(3)] + [f"committed-{i}" for i in range(3)]
    )
    assert len(cluster.traffic.requests("EndTxn")) == 2


def test_kadm_everyday_calls(go: Program, cluster: mockkafka.Cluster) -> None:
    result = go.run("kadm", cluster.bootstrap_servers, unique("gokadm"))
    assert result == {
        "brokers": 3,
        "partitions": 4,
        "cleanup.policy": "compact,delete",
        "retention.ms": "3600000",
        "earliest": 4,
        "latest": 10,
        "group_offset": 7,
        "deleted": True,
    }


def test_sarama_cluster_admin_everyday_calls(go: Program, cluster: mockkafka.Cluster) -> None:
    topic = unique("goadm")
    result = go.run("sarama-admin", cluster.bootstrap_servers, topic)
    assert result == {"partitions": 3, "retention.ms": "86400000", "groups": 0}
    assert topic not in cluster.topics()


@pytest.mark.parametrize(
    ("client", "security_protocol", "mechanism"),
    [
        ("kgo", "SSL", None),
        ("kgo", "SASL_SSL", "SCRAM-SHA-512"),
        ("kgo", "SASL_PLAINTEXT", "SCRAM-SHA-256"),
        ("sarama", "SASL_SSL", "PLAIN"),
        ("sarama", "SSL", None),
    ],
)
def test_go_clients_over_tls_and_sasl(
    go: Program, tmp_path: Path, client: str, security_protocol: str, mechanism: str | None
) -> None:
    """Each Go client with the CA file, client certificate and SASL user that
    ``client_config()`` hands out: an idempotent producer, then a group that commits."""
    extra: dict[str, Any] = (
        {"ssl_client_auth": "required"}
        if mechanism is None
        else {"users": {"alice": "alice-secret"}}
    )
    with mockkafka.Cluster(brokers=3, security_protocol=security_protocol, **extra) as cluster:
        topic, group = unique(f"gosec{client}"), unique("gosecg")
        cluster.create_topic(topic, partitions=2, replication_factor=3)
        kw: dict[str, Any] = {"user": "alice", "mechanism": mechanism} if mechanism else {}
        conf = tmp_path / "client.json"
        conf.write_text(json.dumps(cluster.client_config("confluent", **kw)))
        env = {"INTEROP_CLIENT_CONFIG": str(conf)}
        boot = cluster.bootstrap_servers
        assert go.run(f"{client}-produce", boot, topic, "60", env=env) == {"acked": 60}
        consumed = go.run(f"{client}-group", boot, topic, group, "60", env=env)["consumed"]
        assert consumed >= 60
        assert sorted(values(cluster, topic)) == sorted(f"v{i}" for i in range(60))
        assert sum(cluster.committed_offsets(group).values()) == 60
        if mechanism:
            handshakes = cluster.traffic.requests("SaslHandshake")
            assert {h.request["mechanism"] for h in handshakes} == {mechanism}

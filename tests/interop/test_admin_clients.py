"""Real admin clients against mockkafka over sockets on 127.0.0.1: confluent-kafka's
AdminClient, kafka-python's KafkaAdminClient and aiokafka's AIOKafkaAdminClient.

Each test checks what the client got back and what the broker now holds.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewPartitions,
    NewTopic,
)

import mockkafka
from tests.interop.conftest import unique

pytestmark = [pytest.mark.interop, pytest.mark.timeout(60)]

T = 10  # seconds a single admin call may take


def _admin(cluster: mockkafka.Cluster) -> AdminClient:
    return AdminClient({"bootstrap.servers": cluster.bootstrap_servers})


# -- confluent-kafka ----------------------------------------------------------------------------


def test_confluent_create_topics_with_configs_validate_only_and_errors(
    cluster: mockkafka.Cluster,
) -> None:
    a = _admin(cluster)
    name, dry, bad = unique("ck-create"), unique("ck-dry"), unique("ck-bad")
    fs = a.create_topics(
        [
            NewTopic(name, 4, 3, config={"retention.ms": "60000", "cleanup.policy": "compact"}),
            NewTopic(bad, 1, 1, config={"retention.ms": "later"}),
        ],
        operation_timeout=5,
    )
    assert fs[name].result(T) is None
    with pytest.raises(KafkaException) as err:
        fs[bad].result(T)
    assert err.value.args[0].code() == KafkaError.INVALID_CONFIG
    t = cluster.topic(name)
    assert t.configs == {"retention.ms": "60000", "cleanup.policy": "compact"}
    assert [len(p.replicas) for p in t.partitions] == [3, 3, 3, 3]
    assert bad not in cluster.topics()

    fs = a.create_topics([NewTopic(dry, 2, 1)], validate_only=True)
    assert fs[dry].result(T) is None
    assert dry not in cluster.topics()

    fs = a.create_topics([NewTopic(name, 1, 1)])
    with pytest.raises(KafkaException) as err:
        fs[name].result(T)
    assert err.value.args[0].code() == KafkaError.TOPIC_ALREADY_EXISTS
    fs = a.create_topics([NewTopic(unique("ck-rf"), 1, 5)])
    with pytest.raises(KafkaException) as err:
        next(iter(fs.values())).result(T)
    assert err.value.args[0].code() == KafkaError.INVALID_REPLICATION_FACTOR


def test_confluent_delete_topics_and_list_topics(cluster: mockkafka.Cluster) -> None:
    a = _admin(cluster)
    keep, gone = unique("ck-keep"), unique("ck-gone")
    cluster.create_topic(keep, partitions=2, replication_factor=2)
    cluster.create_topic(gone, partitions=3)
    md = a.list_topics(timeout=T)
    assert {keep, gone} <= set(md.topics)
    assert len(md.topics[gone].partitions) == 3
    assert md.controller_id == 1 and sorted(md.brokers) == [1, 2, 3]
    assert a.delete_topics([gone], operation_timeout=5)[gone].result(T) is None
    assert gone not in cluster.topics() and keep in cluster.topics()
    assert gone not in a.list_topics(timeout=T).topics
    missing = unique("ck-missing")
    with pytest.raises(KafkaException) as err:
        a.delete_topics([missing])[missing].result(T)
    assert err.value.args[0].code() == KafkaError.UNKNOWN_TOPIC_OR_PART


def test_confluent_create_partitions_with_assignment(cluster: mockkafka.Cluster) -> None:
    a = _admin(cluster)
    name = unique("ck-grow")
    cluster.create_topic(name, partitions=2, replication_factor=2)
    fs = a.create_partitions([NewPartitions(name, 4, replica_assignment=[[3, 1], [2, 3]])])
    assert fs[name].result(T) is None
    t = cluster.topic(name)
    assert [p.replicas for p in t.partitions[2:]] == [(3, 1), (2, 3)]
    assert [p.leader for p in t.partitions[2:]] == [3, 2]
    with pytest.raises(KafkaException) as err:
        a.create_partitions([NewPartitions(name, 3)])[name].result(T)
    assert err.value.args[0].code() == KafkaError.INVALID_PARTITIONS
    assert len(cluster.topic(name).partitions) == 4


@pytest.mark.filterwarnings("ignore:alter_configs has been deprecated:DeprecationWarning")
def test_confluent_describe_and_alter_configs_take_effect_at_once(
    cluster: mockkafka.Cluster,
) -> None:
    a = _admin(cluster)
    name = unique("ck-cfg")
    cluster.create_topic(name, partitions=1, config={"retention.ms": "1000"})
    res = ConfigResource("topic", name)
    cfg = a.describe_configs([res])[res].result(T)
    assert cfg["retention.ms"].value == "1000"
    assert cfg["retention.ms"].source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value
    assert cfg["max.message.bytes"].value == "1048588"
    assert cfg["max.message.bytes"].is_default

    # legacy AlterConfigs replaces every dynamic config of the topic
    res = ConfigResource("topic", name, set_config={"max.message.bytes": "200"})
    assert a.alter_configs([res])[res].result(T) is None
    assert cluster.topic(name).configs == {"max.message.bytes": "200"}
    p = Producer({"bootstrap.servers": cluster.bootstrap_servers, "linger.ms": 0})
    errors: list[Any] = []
    try:
        p.produce(name, b"x" * 1000, on_delivery=lambda err, msg: errors.append(err))
        p.flush(T)
    finally:
        p.flush(1)
    assert errors and errors[0] is not None
    assert errors[0].code() == KafkaError.MSG_SIZE_TOO_LARGE

    res = ConfigResource(
        "topic",
        name,
        incremental_configs=[
            ConfigEntry(
                "cleanup.policy", "compact", incremental_operation=AlterConfigOpType.APPEND
            ),
            ConfigEntry("max.message.bytes", None, incremental_operation=AlterConfigOpType.DELETE),
        ],
    )
    assert a.incremental_alter_configs([res])[res].result(T) is None
    assert cluster.topic(name).configs == {"cleanup.policy": "delete,compact"}

    bad = ConfigResource("topic", name, set_config={"retention.ms": "soon"})
    with pytest.raises(KafkaException) as err:
        a.alter_configs([bad])[bad].result(T)
    assert err.value.args[0].code() == KafkaError.INVALID_CONFIG
    assert cluster.topic(name).configs == {"cleanup.policy": "delete,compact"}


def test_confluent_broker_configs(cluster: mockkafka.Cluster) -> None:
    a = _admin(cluster)
    res = ConfigResource("broker", "2")
    cfg = a.describe_configs([res])[res].result(T)
    assert cfg["broker.id"].value == "2"
    assert cfg["auto.create.topics.enable"].is_read_only
    res = ConfigResource(
        "broker",
        "2",
        incremental_configs=[
            ConfigEntry("log.retention.ms", "5000", incremental_operation=AlterConfigOpType.SET)
        ],
    )
    assert a.incremental_alter_configs([res])[res].result(T) is None
    assert cluster.brokers[1].configs == {"log.retention.ms": "5000"}
    res = ConfigResource("broker", "2")
    cfg = a.describe_configs([res])[res].result(T)
    assert cfg["log.retention.ms"].value == "5000"
    assert cfg["log.retention.ms"].source == ConfigSource.DYNAMIC_BROKER_CONFIG.value


def test_confluent_delete_records_moves_log_start_for_consumers(
    cluster: mockkafka.Cluster,
) -> None:
    a = _admin(cluster)
    name = unique("ck-dr")
    cluster.create_topic(name, partitions=1, replication_factor=3)
    for i in range(10):
        cluster.produce(name, f"v{i}")
    fs = a.delete_records([TopicPartition(name, 0, 4)])
    [f] = fs.values()
    deleted = f.result(T)
    assert deleted.low_watermark == 4
    assert cluster.topic(name).partition(0).log_start_offset == 4
    c = Consumer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "group.id": unique("ck-dr-g"),
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    try:
        c.subscribe([name])
        got: list[int] = []
        deadline = time.monotonic() + T
        while len(got) < 6 and time.monotonic() < deadline:
            m = c.poll(0.2)
            if m is not None and not m.error():
                got.append(m.offset())
        assert got == [4, 5, 6, 7, 8, 9]
        low, high = c.get_watermark_offsets(TopicPartition(name, 0), timeout=T)
        assert (low, high) == (4, 10)
    finally:
        c.close()


def test_confluent_describe_cluster(cluster: mockkafka.Cluster) -> None:
    a = _admin(cluster)
    d = a.describe_cluster(include_authorized_operations=True).result(T)
    assert d.cluster_id == cluster.state.cluster_id
    assert d.controller.id == 1
    assert sorted((n.id, n.port) for n in d.nodes) == sorted(
        (b.node_id, b.port) for b in cluster.brokers
    )
    assert d.authorized_operations


def test_confluent_consumer_validates_position_after_leader_change(
    cluster: mockkafka.Cluster,
) -> None:
    """KIP-320: after a leader change the consumer asks OffsetForLeaderEpoch and, with no
    truncation, carries on from where it was without losing or repeating records."""
    name = unique("ck-epoch")
    cluster.create_topic(name, partitions=1, replication_factor=3)
    for i in range(5):
        cluster.produce(name, f"a{i}")
    c = Consumer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "group.id": unique("ck-epoch-g"),
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "topic.metadata.refresh.interval.ms": 200,
        }
    )
    try:
        c.subscribe([name])
        got: list[bytes] = []

        def poll_until(n: int) -> None:
            deadline = time.monotonic() + T
            while len(got) < n and time.monotonic() < deadline:
                m = c.poll(0.1)
                if m is not None and not m.error():
                    got.append(m.value())

        poll_until(5)
        leader = cluster.topic(name).partition(0).leader
        cluster.move_leader(name, 0, to=next(b for b in (1, 2, 3) if b != leader))
        for i in range(3):
            cluster.produce(name, f"b{i}")
        poll_until(8)
        assert got == [b"a0", b"a1", b"a2", b"a3", b"a4", b"b0", b"b1", b"b2"]
        exchanges = cluster.traffic.wait_for("OffsetForLeaderEpoch")
        answered = [
            p
            for ex in exchanges
            for t in (ex.response or {}).get("topics") or []
            for p in t["partitions"]
        ]
        assert any(p["error_code"] == 0 and p["end_offset"] == 5 for p in answered)
    finally:
        c.close()


# -- kafka-python -------------------------------------------------------------------------------


def _kp_admin(cluster: mockkafka.Cluster) -> Any:
    from kafka.admin import KafkaAdminClient

    return KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers, request_timeout_ms=5000)


def test_kafka_python_create_describe_alter_delete(cluster: mockkafka.Cluster) -> None:
    from kafka.admin import ConfigResource as KpResource
    from kafka.admin import ConfigResourceType, NewPartitions
    from kafka.admin import NewTopic as KpTopic
    from kafka.errors import TopicAlreadyExistsError

    name = unique("kp-admin")
    a = _kp_admin(cluster)
    try:
        resp = a.create_topics([KpTopic(name, 2, 2, topic_configs={"retention.ms": "1000"})])
        [t] = resp["topics"]
        assert (t["error_code"], t["num_partitions"], t["replication_factor"]) == (0, 2, 2)
        assert t["configs"]["retention.ms"]["config_source"] == "DYNAMIC_TOPIC_CONFIG"
        assert cluster.topic(name).configs == {"retention.ms": "1000"}
        with pytest.raises(TopicAlreadyExistsError):
            a.create_topics([KpTopic(name, 1, 1)])

        cfg = a.describe_configs([KpResource(ConfigResourceType.TOPIC, name)])
        assert cfg["topic"][name]["retention.ms"]["value"] == "1000"
        cfg = a.describe_configs([KpResource(ConfigResourceType.BROKER, "3")], config_filter="all")
        assert cfg["broker"]["3"]["broker.id"]["value"] == "3"

        resp = a.alter_configs(
            [KpResource(ConfigResourceType.TOPIC, name, configs={"segment.ms": "3600000"})]
        )
        assert resp == {"topic": {name: "OK"}}
        # kafka-python 3 alters incrementally when the broker offers IncrementalAlterConfigs
        assert cluster.traffic.requests("IncrementalAlterConfigs")
        assert cluster.topic(name).configs == {"retention.ms": "1000", "segment.ms": "3600000"}

        a.create_partitions({name: NewPartitions(5)})
        assert len(cluster.topic(name).partitions) == 5

        resp = a.delete_topics([name])
        assert [(t["name"], t["error_code"]) for t in resp["topics"]] == [(name, 0)]
        assert name not in cluster.topics()
    finally:
        a.close()


def test_kafka_python_delete_records_cluster_and_leaders(cluster: mockkafka.Cluster) -> None:
    from kafka import TopicPartition as KpPartition

    name = unique("kp-dr")
    cluster.create_topic(name, partitions=2, replication_factor=3)
    for i in range(6):
        cluster.produce(name, f"v{i}", partition=1)
    a = _kp_admin(cluster)
    try:
        resp = a.delete_records({KpPartition(name, 1): 4})
        assert resp[KpPartition(name, 1)]["low_watermark"] == 4
        assert cluster.topic(name).partition(1).log_start_offset == 4

        d = a.describe_cluster()
        assert d["cluster_id"] == cluster.state.cluster_id and d["controller_id"] == 1
        assert sorted(b["broker_id"] for b in d["brokers"]) == [1, 2, 3]

        first = cluster.topic(name).partition(0).replicas[0]
        other = next(r for r in cluster.topic(name).partition(0).replicas if r != first)
        cluster.move_leader(name, 0, to=other)
        resp = a.elect_leaders(0, {name: [0]})
        codes = [p.error_code for r in resp.replica_election_results for p in r.partition_result]
        assert codes == [0]
        assert cluster.topic(name).partition(0).leader == first
    finally:
        a.close()


# -- aiokafka -----------------------------------------------------------------------------------


def test_aiokafka_create_describe_delete_topics(cluster: mockkafka.Cluster) -> None:
    from aiokafka.admin import AIOKafkaAdminClient
    from aiokafka.admin import NewPartitions as AioPartitions
    from aiokafka.admin import NewTopic as AioTopic
    from aiokafka.admin.config_resource import ConfigResource as AioResource
    from aiokafka.admin.config_resource import ConfigResourceType as AioType

    name = unique("aio-admin")

    async def run() -> None:
        a = AIOKafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
        await a.start()
        try:
            resp = await a.create_topics(
                [AioTopic(name, 3, 2, topic_configs={"cleanup.policy": "compact"})]
            )
            assert [t[1] for t in resp.topic_errors] == [0]
            assert cluster.topic(name).configs == {"cleanup.policy": "compact"}
            [resp] = await a.describe_configs([AioResource(AioType.TOPIC, name)])
            [(err, _msg, _rtype, rname, entries)] = resp.resources
            assert (err, rname) == (0, name)
            values = {e[0]: e[1] for e in entries}
            assert values["cleanup.policy"] == "compact"
            assert values["max.message.bytes"] == "1048588"
            await a.alter_configs(
                [AioResource(AioType.TOPIC, name, configs={"retention.ms": "5000"})]
            )
            assert cluster.topic(name).configs == {"retention.ms": "5000"}
            await a.create_partitions({name: AioPartitions(4)})
            assert len(cluster.topic(name).partitions) == 4
            resp = await a.delete_topics([name])
            assert [t[1] for t in resp.topic_error_codes] == [0]
            assert name not in cluster.topics()
        finally:
            await a.close()

    asyncio.run(asyncio.wait_for(run(), 30))

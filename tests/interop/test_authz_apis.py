"""ACLs on the admin APIs, with real clients: a user without the ACL an API needs gets the
error Kafka answers (as the client raises it), and succeeds once a super user grants it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import (
    ConsumerGroupTopicPartitions,
    KafkaError,
    KafkaException,
    TopicCollection,
    TopicPartition,
)
from confluent_kafka.admin import (
    AclOperation,
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewPartitions,
    NewTopic,
    OffsetSpec,
    ResourceType,
)

import mockkafka
from tests.interop._acl import ANY_ACL, T, acl_cluster, grant, kafka_python_topic_filter

pytestmark = pytest.mark.interop


@pytest.fixture(scope="module")
def cluster() -> Iterator[mockkafka.Cluster]:
    with acl_cluster() as c:
        yield c


@pytest.fixture
def admin(cluster: mockkafka.Cluster) -> Iterator[AdminClient]:
    a = AdminClient(cluster.client_config("confluent", user="admin"))
    yield a
    # Each test starts from no ACLs and the two topics.
    for f in a.delete_acls([ANY_ACL]).values():
        f.result(T)
    cluster.reset()


@pytest.fixture
def alice(cluster: mockkafka.Cluster, admin: AdminClient) -> AdminClient:
    cluster.create_topic("orders", partitions=2)
    cluster.create_topic("secret")
    return AdminClient(cluster.client_config("confluent", user="alice"))


def code(future: Any) -> int:
    """The Kafka error code a confluent-kafka future fails with (0 when it succeeds)."""
    try:
        future.result(T)
    except KafkaException as exc:
        err: KafkaError = exc.args[0]
        return int(err.code())
    return 0


TOPIC_FAILED = KafkaError.TOPIC_AUTHORIZATION_FAILED
GROUP_FAILED = KafkaError.GROUP_AUTHORIZATION_FAILED
CLUSTER_FAILED = KafkaError.CLUSTER_AUTHORIZATION_FAILED


def test_topic_admin_apis_need_create_alter_delete_describe(
    cluster: mockkafka.Cluster, admin: AdminClient, alice: AdminClient
) -> None:
    (f,) = alice.create_topics([NewTopic("fresh", 1, 1)]).values()
    assert code(f) == TOPIC_FAILED and "fresh" not in cluster.topics()
    grant(admin, ResourceType.TOPIC, "fresh", AclOperation.CREATE)
    (f,) = alice.create_topics([NewTopic("fresh", 1, 1)]).values()
    assert code(f) == 0 and "fresh" in cluster.topics()

    (f,) = alice.create_partitions([NewPartitions("orders", 3)]).values()
    assert code(f) == TOPIC_FAILED
    grant(admin, ResourceType.TOPIC, "orders", AclOperation.ALTER)
    (f,) = alice.create_partitions([NewPartitions("orders", 3)]).values()
    assert code(f) == 0 and len(cluster.topic("orders").partitions) == 3

    cluster.produce("orders", b"a")
    cluster.produce("orders", b"b")
    (f,) = alice.delete_records([TopicPartition("orders", 0, 1)]).values()
    assert code(f) == TOPIC_FAILED
    grant(admin, ResourceType.TOPIC, "orders", AclOperation.DELETE)
    (f,) = alice.delete_records([TopicPartition("orders", 0, 1)]).values()
    assert code(f) == 0 and cluster.topic("orders").partition(0).log_start_offset == 1

    # ListOffsets needs DESCRIBE (which ALTER and DELETE imply on orders, not on secret).
    got = alice.list_offsets(
        {
            TopicPartition("orders", 0): OffsetSpec.latest(),
            TopicPartition("secret", 0): OffsetSpec.latest(),
        }
    )
    assert code(got[TopicPartition("orders", 0)]) == 0
    assert code(got[TopicPartition("secret", 0)]) == TOPIC_FAILED

    (f,) = alice.delete_topics(["secret"]).values()
    assert code(f) == TOPIC_FAILED and "secret" in cluster.topics()
    (f,) = alice.delete_topics(["orders"]).values()
    assert code(f) == 0 and "orders" not in cluster.topics()


def test_config_apis_need_describe_and_alter_configs(
    cluster: mockkafka.Cluster, admin: AdminClient, alice: AdminClient
) -> None:
    topic = ConfigResource(ConfigResource.Type.TOPIC, "orders")
    broker = ConfigResource(ConfigResource.Type.BROKER, "1")
    got = alice.describe_configs([topic, broker])
    assert code(got[topic]) == TOPIC_FAILED
    assert code(got[broker]) == CLUSTER_FAILED
    grant(admin, ResourceType.TOPIC, "orders", AclOperation.DESCRIBE_CONFIGS)
    assert code(alice.describe_configs([topic])[topic]) == 0

    change = ConfigResource(
        ConfigResource.Type.TOPIC,
        "orders",
        incremental_configs=[
            ConfigEntry("retention.ms", "1000", incremental_operation=AlterConfigOpType.SET)
        ],
    )
    assert code(alice.incremental_alter_configs([change])[change]) == TOPIC_FAILED
    grant(admin, ResourceType.TOPIC, "orders", AclOperation.ALTER_CONFIGS)
    assert code(alice.incremental_alter_configs([change])[change]) == 0
    assert cluster.topic("orders").configs["retention.ms"] == "1000"


def test_group_apis_need_describe_and_delete_on_the_group(
    cluster: mockkafka.Cluster, admin: AdminClient, alice: AdminClient
) -> None:
    cluster.commit_offsets("mine", {("orders", 0): 3, ("secret", 0): 4})
    cluster.commit_offsets("theirs", {("orders", 0): 1})
    listed = alice.list_consumer_groups().result(T)
    assert listed.valid == []  # ListGroups leaves out what alice may not describe
    grant(admin, ResourceType.GROUP, "mine", AclOperation.DESCRIBE)
    grant(admin, ResourceType.TOPIC, "orders", AclOperation.DESCRIBE)
    listed = alice.list_consumer_groups().result(T)
    assert [g.group_id for g in listed.valid] == ["mine"]

    described = alice.describe_consumer_groups(["mine", "theirs"])
    assert code(described["mine"]) == 0
    assert code(described["theirs"]) == GROUP_FAILED

    (f,) = alice.list_consumer_group_offsets([ConsumerGroupTopicPartitions("theirs")]).values()
    assert code(f) == GROUP_FAILED
    (f,) = alice.list_consumer_group_offsets([ConsumerGroupTopicPartitions("mine")]).values()
    offsets = {(tp.topic, tp.partition): tp.offset for tp in f.result(T).topic_partitions}
    assert offsets == {("orders", 0): 3}  # secret is left out: alice may not describe it

    (f,) = alice.delete_consumer_groups(["mine"]).values()
    assert code(f) == GROUP_FAILED
    grant(admin, ResourceType.GROUP, "mine", AclOperation.DELETE)
    (f,) = alice.delete_consumer_groups(["mine"]).values()
    assert code(f) == 0 and "mine" not in cluster.groups()


def test_cluster_apis_need_cluster_acls_and_report_authorized_operations(
    admin: AdminClient, alice: AdminClient
) -> None:
    # (confluent-kafka 2.16 hides DescribeAcls' top-level error and aborts reading a refused
    # DescribeUserScramCredentials: kafka-python checks DescribeAcls below, the sans-IO tests
    # the rest.)
    mine = alice.describe_cluster(include_authorized_operations=True).result(T)
    assert not mine.authorized_operations  # 0: no DESCRIBE on the cluster
    grant(admin, ResourceType.BROKER, "kafka-cluster", AclOperation.DESCRIBE)
    mine = alice.describe_cluster(include_authorized_operations=True).result(T)
    assert mine.authorized_operations == [AclOperation.DESCRIBE]
    full = admin.describe_cluster(include_authorized_operations=True).result(T)
    assert AclOperation.ALTER in full.authorized_operations

    grant(admin, ResourceType.TOPIC, "orders", AclOperation.READ)
    topics = alice.describe_topics(TopicCollection(["orders"]), include_authorized_operations=True)
    desc = topics["orders"].result(T)
    assert sorted(desc.authorized_operations, key=lambda o: o.value) == [
        AclOperation.READ,
        AclOperation.DESCRIBE,
    ]
    assert code(alice.describe_topics(TopicCollection(["secret"]))["secret"]) == TOPIC_FAILED


def test_kafka_python_admin_gets_authorization_errors(
    cluster: mockkafka.Cluster, admin: AdminClient, alice: AdminClient
) -> None:
    from kafka.admin import KafkaAdminClient
    from kafka.admin import NewTopic as KpNewTopic
    from kafka.errors import ClusterAuthorizationFailedError, TopicAuthorizationFailedError

    kp = KafkaAdminClient(**cluster.client_config("kafka-python", user="alice"))
    try:
        with pytest.raises(TopicAuthorizationFailedError):
            kp.create_topics([KpNewTopic("fresh", 1, 1)])
        grant(admin, ResourceType.TOPIC, "fresh", AclOperation.CREATE)
        kp.create_topics([KpNewTopic("fresh", 1, 1)])
        assert "fresh" in cluster.topics()

        with pytest.raises(ClusterAuthorizationFailedError):
            kp.list_config_resources()  # DESCRIBE_CONFIGS on the cluster
        cluster.commit_offsets("theirs", {("orders", 0): 1})
        assert list(kp.list_groups()) == []  # ListGroups leaves out what alice may not describe
        with pytest.raises(ClusterAuthorizationFailedError):
            kp.describe_acls(kafka_python_topic_filter(None))
    finally:
        kp.close()


def test_aiokafka_admin_gets_authorization_errors(
    cluster: mockkafka.Cluster, admin: AdminClient, alice: AdminClient
) -> None:
    from aiokafka.admin import AIOKafkaAdminClient
    from aiokafka.admin import NewPartitions as AioNewPartitions
    from aiokafka.admin import NewTopic as AioNewTopic
    from aiokafka.errors import TopicAuthorizationFailedError as AioTopicFailed

    async def run() -> Any:
        client = AIOKafkaAdminClient(**cluster.client_config("aiokafka", user="alice"))
        await client.start()
        try:
            created = await client.create_topics([AioNewTopic("fresh", 1, 1)])
            with pytest.raises(AioTopicFailed):
                await client.create_partitions({"orders": AioNewPartitions(total_count=3)})
            return created
        finally:
            await client.close()

    created = asyncio.run(run())
    assert [(t[0], t[1]) for t in created.topic_errors] == [("fresh", TOPIC_FAILED)]
    assert "fresh" not in cluster.topics()
    assert len(cluster.topic("orders").partitions) == 2

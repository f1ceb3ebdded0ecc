"""ACLs with real clients: AdminClients create, describe and delete them; a client is
denied (TOPIC_AUTHORIZATION_FAILED) and then allowed once an ACL lets it in."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from confluent_kafka import KafkaError, Producer
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AdminClient,
    ResourceType,
)

import mockkafka
from tests.interop._acl import (
    ANY_ACL,
    acl_cluster,
    allow,
    consume_orders,
    grant,
    kafka_python_topic_filter,
)

pytestmark = pytest.mark.interop


@pytest.fixture
def cluster() -> Iterator[mockkafka.Cluster]:
    with acl_cluster() as c:
        c.create_topic("orders")
        c.create_topic("secret")
        yield c


def _produce(cluster: mockkafka.Cluster, user: str, topic: str) -> KafkaError | None:
    errors: list[KafkaError | None] = []
    p = Producer(
        {
            **cluster.client_config("confluent", user=user),
            "message.timeout.ms": 5000,
        }
    )
    p.produce(topic, b"v", on_delivery=lambda err, _msg: errors.append(err))
    p.flush(10)
    assert len(errors) == 1
    return errors[0]


def _write_acl(principal: str = "User:alice") -> AclBinding:
    return allow(ResourceType.TOPIC, "orders", AclOperation.WRITE, principal)


def test_confluent_admin_creates_acls_and_a_denied_producer_is_then_allowed(
    cluster: mockkafka.Cluster,
) -> None:
    denied = _produce(cluster, "alice", "orders")
    assert denied is not None and denied.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    admin = AdminClient(cluster.client_config("confluent", user="admin"))
    for f in admin.create_acls([_write_acl()]).values():
        assert f.result(10) is None
    assert _produce(cluster, "alice", "orders") is None
    assert [r.value for r in cluster.topic("orders").records()] == [b"v"]

    # alice sees only the topic she may describe (WRITE implies DESCRIBE).
    alice_admin = AdminClient(cluster.client_config("confluent", user="alice"))
    assert set(alice_admin.list_topics(timeout=10).topics) == {"orders"}

    any_filter = ANY_ACL
    described = admin.describe_acls(any_filter).result(10)
    assert [(b.name, b.principal, b.operation) for b in described] == [
        ("orders", "User:alice", AclOperation.WRITE)
    ]
    # alice may not manage ACLs (ALTER on the cluster).
    (mine,) = alice_admin.create_acls([_write_acl("User:bob")]).values()
    with pytest.raises(Exception, match=r"CLUSTER_AUTHORIZATION_FAILED|[Aa]uthoriz"):
        mine.result(10)

    (deleted,) = admin.delete_acls([any_filter]).values()
    assert [b.name for b in deleted.result(10)] == ["orders"]
    again = _produce(cluster, "alice", "orders")
    assert again is not None and again.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


def test_kafka_python_admin_creates_and_describes_acls(cluster: mockkafka.Cluster) -> None:
    from kafka.admin import (
        ACL,
        ACLOperation,
        ACLPermissionType,
        ACLResourcePatternType,
        KafkaAdminClient,
        ResourcePattern,
    )
    from kafka.admin import ResourceType as KpResourceType

    admin = KafkaAdminClient(**cluster.client_config("kafka-python", user="admin"))
    try:
        acl = ACL(
            principal="User:alice",
            host="*",
            operation=ACLOperation.WRITE,
            permission_type=ACLPermissionType.ALLOW,
            resource_pattern=ResourcePattern(
                KpResourceType.TOPIC, "orders", ACLResourcePatternType.LITERAL
            ),
        )
        result = admin.create_acls([acl])
        assert result["failed"] == [] and len(result["succeeded"]) == 1
        flt = kafka_python_topic_filter("orders", match=True)
        acls, error = admin.describe_acls(flt)
        assert error.errno == 0
        assert [(a.principal, a.operation) for a in acls] == [("User:alice", ACLOperation.WRITE)]
    finally:
        admin.close()
    assert _produce(cluster, "alice", "orders") is None


def test_without_an_authorizer_acl_requests_answer_security_disabled() -> None:
    with mockkafka.Cluster() as cluster:
        admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
        (f,) = admin.create_acls([_write_acl()]).values()
        with pytest.raises(Exception, match=r"SECURITY_DISABLED|No Authorizer"):
            f.result(10)


def test_a_consumer_needs_read_on_its_group_and_the_topic(cluster: mockkafka.Cluster) -> None:

    cluster.produce("orders", b"a")
    cluster.produce("orders", b"b")
    admin = AdminClient(cluster.client_config("confluent", user="admin"))
    grant(admin, ResourceType.TOPIC, "orders", AclOperation.READ)

    def consume() -> tuple[list[bytes], set[int]]:
        return consume_orders(cluster, "alice", "billing", 2)

    got, errors = consume()
    assert got == [] and KafkaError.GROUP_AUTHORIZATION_FAILED in errors
    grant(admin, ResourceType.GROUP, "billing", AclOperation.READ)
    got, errors = consume()
    assert got == [b"a", b"b"] and not errors

"""The ACL verbs with real clients over SASL/PLAIN, as a test author would write them:
``cluster.allow`` lets a denied producer in on its next request, ``cluster.deny`` beats an
allow, ``cluster.remove_acls`` takes the permission away again, a consumer needs READ on its
topic and its group, and an admin client's DescribeAcls / DeleteAcls share the verbs' store."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from confluent_kafka import KafkaError, Producer
from confluent_kafka.admin import AclOperation, AclPermissionType, AdminClient, ResourceType

import mockkafka
from tests.interop._acl import ANY_ACL, acl_cluster, allow, consume_orders

pytestmark = pytest.mark.interop


@pytest.fixture
def cluster() -> Iterator[mockkafka.Cluster]:
    with acl_cluster() as c:
        c.create_topic("orders")
        yield c


def produce(cluster: mockkafka.Cluster, user: str, value: bytes) -> KafkaError | None:
    """One record to ``orders`` as ``user`` with a new producer: its delivery error or None."""
    errors: list[KafkaError | None] = []
    p = Producer({**cluster.client_config("confluent", user=user), "message.timeout.ms": 5000})
    p.produce("orders", value, on_delivery=lambda err, _msg: errors.append(err))
    p.flush(10)
    assert len(errors) == 1
    return errors[0]


def refused(err: KafkaError | None) -> bool:
    return err is not None and err.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


def test_allow_lets_a_producer_in_deny_beats_it_and_remove_acls_takes_it_back(
    cluster: mockkafka.Cluster,
) -> None:
    assert refused(produce(cluster, "alice", b"before"))

    cluster.allow("User:alice", "write", topic="orders")
    assert produce(cluster, "alice", b"allowed") is None
    assert refused(produce(cluster, "bob", b"not bob"))  # only alice

    cluster.deny("User:alice", "write", topic="ord", prefixed=True)
    assert refused(produce(cluster, "alice", b"denied"))  # a DENY beats the ALLOW

    assert cluster.remove_acls("User:alice", permission="DENY") == 1
    assert produce(cluster, "alice", b"allowed again") is None

    assert cluster.remove_acls("User:alice", topic="orders") == 1
    assert refused(produce(cluster, "alice", b"after"))
    assert produce(cluster, "admin", b"super user") is None  # super users need no ACL
    assert [r.value for r in cluster.topic("orders").records()] == [
        b"allowed",
        b"allowed again",
        b"super user",
    ]


def test_a_connected_producer_meets_a_deny_on_its_next_request(cluster: mockkafka.Cluster) -> None:
    """No new client needed: the ACL is checked on the next Produce of a connected producer."""
    cluster.allow("User:alice", ["write"], topic="*")
    errors: list[KafkaError | None] = []
    p = Producer({**cluster.client_config("confluent", user="alice"), "message.timeout.ms": 5000})
    p.produce("orders", b"allowed", on_delivery=lambda err, _msg: errors.append(err))
    p.flush(10)
    assert errors == [None]
    seq = cluster.traffic.requests("Produce")[-1].seq
    cluster.deny("User:alice", "write", topic="orders")
    p.produce("orders", b"denied", on_delivery=lambda err, _msg: errors.append(err))
    p.flush(10)
    assert len(errors) == 2 and refused(errors[1])
    (after,) = cluster.traffic.requests("Produce", since_seq=seq)
    assert after.response is not None
    assert after.response["responses"][0]["partition_responses"][0]["error_code"] == 29
    assert [r.value for r in cluster.topic("orders").records()] == [b"allowed"]
    # librdkafka now holds the topic as failed; a new producer is let in once the DENY goes.
    assert cluster.remove_acls(permission="DENY") == 1
    assert produce(cluster, "alice", b"allowed again") is None


def test_a_consumer_needs_read_on_the_topic_and_its_group(cluster: mockkafka.Cluster) -> None:
    cluster.produce("orders", b"a")
    cluster.produce("orders", b"b")

    got, errors = consume_orders(cluster, "bob", "billing-eu", 2)
    assert got == [] and errors  # neither the topic nor the group

    cluster.allow("User:bob", ["read"], topic="orders")
    got, errors = consume_orders(cluster, "bob", "billing-eu", 2)
    assert got == [] and KafkaError.GROUP_AUTHORIZATION_FAILED in errors

    cluster.allow("User:bob", ["read"], group="billing-", prefixed=True)
    got, errors = consume_orders(cluster, "bob", "billing-eu", 2)
    assert (got, errors) == ([b"a", b"b"], set())
    assert cluster.committed_offsets("billing-eu") in ({}, {("orders", 0): 2})

    got, errors = consume_orders(cluster, "bob", "audit", 2)  # not a billing- group
    assert got == [] and KafkaError.GROUP_AUTHORIZATION_FAILED in errors

    cluster.remove_acls("User:bob", group="billing-")
    got, errors = consume_orders(cluster, "bob", "billing-us", 2)
    assert got == [] and KafkaError.GROUP_AUTHORIZATION_FAILED in errors


def test_an_admin_client_shares_the_store_with_the_verbs(cluster: mockkafka.Cluster) -> None:
    admin = AdminClient(cluster.client_config("confluent", user="admin"))
    cluster.allow("User:alice", ["write", "describe"], topic="orders")
    cluster.deny("User:bob", "read", group="billing-", prefixed=True)

    described = admin.describe_acls(ANY_ACL).result(10)
    assert sorted(
        (b.restype, b.name, b.resource_pattern_type.name, b.principal, b.operation, b.permission_type)
        for b in described
    ) == sorted(
        [
            (ResourceType.TOPIC, "orders", "LITERAL", "User:alice", AclOperation.WRITE, AclPermissionType.ALLOW),
            (ResourceType.TOPIC, "orders", "LITERAL", "User:alice", AclOperation.DESCRIBE, AclPermissionType.ALLOW),
            (ResourceType.GROUP, "billing-", "PREFIXED", "User:bob", AclOperation.READ, AclPermissionType.DENY),
        ]
    )  # fmt: skip

    # ... and the verbs see what an admin client made.
    for f in admin.create_acls([allow(ResourceType.GROUP, "billing", AclOperation.READ)]).values():
        assert f.result(10) is None
    assert cluster.acls(group="billing") == (
        mockkafka.AclView("User:alice", "*", "READ", "ALLOW", "GROUP", "billing", "LITERAL"),
    )
    assert len(cluster.acls()) == 4

    # DeleteAcls removes verb-made ACLs.
    (deleted,) = admin.delete_acls([ANY_ACL]).values()
    assert len(deleted.result(10)) == 4
    assert cluster.acls() == ()
    assert refused(produce(cluster, "alice", b"gone"))

"""The ACL verbs (allow, deny, remove_acls, acls): what they store, how their filters select,
and the ConfigError a test author gets for each kind of mistake. Real clients meeting these
ACLs: tests/interop/test_acl_verbs.py."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import trio

import mockkafka
from mockkafka.cluster.acls import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
)

ALLOW, DENY = AclPermissionType.ALLOW, AclPermissionType.DENY
LIT, PRE = PatternType.LITERAL, PatternType.PREFIXED


@pytest.fixture
def cluster() -> Iterator[mockkafka.Cluster]:
    with mockkafka.Cluster(authorizer=True, super_users=["User:admin"]) as c:
        yield c


def stored(cluster: mockkafka.Cluster) -> list[AclBinding]:
    return cluster.call(lambda st: list(st.acls.acls))


def authorized(
    cluster: mockkafka.Cluster, principal: str, op: AclOperation, rtype: ResourceType, name: str
) -> bool:
    return cluster.call(lambda st: st.acls.authorize(principal, "127.0.0.1", op, rtype, name))


def test_allow_stores_one_literal_acl_per_operation_any_case(cluster: mockkafka.Cluster) -> None:
    cluster.allow("User:alice", ["read", "WRITE", "Describe-Configs", AclOperation.READ], topic="t")
    assert stored(cluster) == [
        AclBinding(ResourceType.TOPIC, "t", LIT, "User:alice", "*", op, ALLOW)
        for op in (AclOperation.READ, AclOperation.WRITE, AclOperation.DESCRIBE_CONFIGS)
    ]
    cluster.allow("User:alice", "read", topic="t")  # again: stored once, as in Kafka
    assert len(stored(cluster)) == 3


def test_each_target_names_its_resource_type(cluster: mockkafka.Cluster) -> None:
    cluster.allow("User:bob", "read", group="billing-", prefixed=True)
    cluster.allow("User:bob", "write", transactional_id="*", host="10.0.0.1")
    cluster.deny("User:*", "all", cluster=True)
    assert stored(cluster) == [
        AclBinding(ResourceType.GROUP, "billing-", PRE, "User:bob", "*", AclOperation.READ, ALLOW),
        AclBinding(
            ResourceType.TRANSACTIONAL_ID,
            "*",
            LIT,
            "User:bob",
            "10.0.0.1",
            AclOperation.WRITE,
            ALLOW,
        ),
        AclBinding(
            ResourceType.CLUSTER, "kafka-cluster", LIT, "User:*", "*", AclOperation.ALL, DENY
        ),
    ]


def test_the_authorizer_decides_with_verb_made_acls(cluster: mockkafka.Cluster) -> None:
    T = ResourceType.TOPIC
    assert not authorized(cluster, "User:alice", AclOperation.WRITE, T, "orders")
    cluster.allow("User:alice", "write", topic="orders")
    assert authorized(cluster, "User:alice", AclOperation.WRITE, T, "orders")
    assert authorized(cluster, "User:alice", AclOperation.DESCRIBE, T, "orders")  # implied
    assert not authorized(cluster, "User:alice", AclOperation.READ, T, "orders")
    cluster.deny("User:alice", "write", topic="ord", prefixed=True)
    assert not authorized(cluster, "User:alice", AclOperation.WRITE, T, "orders")  # deny wins
    assert authorized(cluster, "User:admin", AclOperation.WRITE, T, "orders")  # super user
    assert cluster.remove_acls(permission="DENY") == 1
    assert authorized(cluster, "User:alice", AclOperation.WRITE, T, "orders")


def test_acls_are_views_in_creation_order(cluster: mockkafka.Cluster) -> None:
    cluster.allow("User:alice", "write", topic="orders")
    cluster.deny("User:bob", "read", group="g", prefixed=True, host="10.0.0.2")
    views = cluster.acls()
    assert views == (
        mockkafka.AclView("User:alice", "*", "WRITE", "ALLOW", "TOPIC", "orders", "LITERAL"),
        mockkafka.AclView("User:bob", "10.0.0.2", "READ", "DENY", "GROUP", "g", "PREFIXED"),
    )
    assert views[1].summary() == "DENY User:bob READ on GROUP g (PREFIXED) from 10.0.0.2"
    with pytest.raises(AttributeError):
        views[0].principal = "User:eve"  # type: ignore[misc]


@pytest.fixture
def many(cluster: mockkafka.Cluster) -> mockkafka.Cluster:
    cluster.allow("User:alice", ["read", "write"], topic="orders")
    cluster.allow("User:alice", "read", topic="ord", prefixed=True)
    cluster.allow("User:alice", "read", topic="*")
    cluster.allow("User:bob", "read", group="billing", host="10.0.0.1")
    cluster.deny("User:bob", "write", topic="orders")
    cluster.allow("User:carol", "idempotent_write", cluster=True)
    return cluster


def _ids(views: tuple[mockkafka.AclView, ...]) -> list[str]:
    return [f"{v.principal[5:]} {v.operation} {v.resource_name}" for v in views]


@pytest.mark.parametrize(
    ("filters", "selected"),
    [
        ({}, 7),
        ({"principal": "User:alice"}, 4),
        ({"topic": "orders"}, 3),  # names "orders" literally: not "ord" nor "*"
        ({"topic": "ord"}, 1),
        ({"topic": "*"}, 1),
        ({"topic": "orders", "prefixed": True}, 0),
        ({"prefixed": True}, 1),
        ({"prefixed": False}, 6),
        ({"operations": "write"}, 2),
        ({"operations": ["write", "idempotent_write"]}, 3),
        ({"permission": "deny"}, 1),
        ({"permission": AclPermissionType.ALLOW}, 6),
        ({"host": "10.0.0.1"}, 1),
        ({"group": "billing"}, 1),
        ({"cluster": True}, 1),
        ({"principal": "User:bob", "operations": "write", "topic": "orders"}, 1),
    ],
)
def test_filters_select_as_kafka_filters_do(
    many: mockkafka.Cluster, filters: dict[str, Any], selected: int
) -> None:
    views = many.acls(**filters)
    assert len(views) == selected, _ids(views)
    assert many.remove_acls(**filters) == selected
    assert len(many.acls()) == 7 - selected
    assert many.acls(**filters) == ()


def test_filter_results_keep_creation_order(many: mockkafka.Cluster) -> None:
    assert _ids(many.acls(operations="read")) == [
        "alice READ orders",
        "alice READ ord",
        "alice READ *",
        "bob READ billing",
    ]


def test_remove_acls_without_a_filter_removes_every_acl(many: mockkafka.Cluster) -> None:
    assert many.remove_acls() == 7
    assert many.acls() == ()
    assert many.remove_acls() == 0


def test_reset_forgets_acls(many: mockkafka.Cluster) -> None:
    many.reset()
    assert many.acls() == ()


BAD_ALLOWS: list[tuple[str, tuple[Any, ...], dict[str, Any], str]] = [
    ("no type in principal", ("alice", "write"), {"topic": "t"},
     "allow: principal='alice' has no type: write 'User:alice'"),
    ("principal not a str", (None, "write"), {"topic": "t"},
     "principal must be a str like 'User:alice'"),
    ("unknown operation", ("User:a", "wirte"), {"topic": "t"},
     "unknown operation 'wirte' (did you mean 'write'?); use one of all, read, write"),
    ("ANY is a filter, not an operation", ("User:a", AclOperation.ANY), {"topic": "t"},
     "unknown operation <AclOperation.ANY: 1>"),
    ("no operation", ("User:a", []), {"topic": "t"},
     "operations must be an operation name or a list of them"),
    ("operation of another resource", ("User:a", "write"), {"group": "g"},
     "write is not an operation on a group: group= takes read, delete, describe, "
     "describe_configs, alter_configs or all (write is an operation on topic=, transactional_id=)"),
    ("operation of no target", ("User:a", "create_tokens"), {"topic": "t"},
     "create_tokens is not an operation on a topic: topic= takes read, write"),
    ("no target", ("User:a", "read"), {},
     "give the resource: one of topic=, group=, transactional_id= (a name, or '*' for every "
     "one) or cluster=True"),
    ("two targets", ("User:a", "read"), {"topic": "t", "group": "g"},
     "give one resource, not topic= and group=: call allow(...) once per resource"),
    ("target and cluster", ("User:a", "describe"), {"topic": "t", "cluster": True},
     "give one resource, not topic= and cluster="),
    ("empty name", ("User:a", "read"), {"topic": ""},
     "Resource name should not be empty: give a topic name, or '*' for every topic"),
    ("name not a str", ("User:a", "read"), {"group": 3},
     "group must be a str (a name, or '*' for every one), got 3"),
    ("prefixed cluster", ("User:a", "alter"), {"cluster": True, "prefixed": True},
     "the cluster resource is one name: drop prefixed=True"),
    ("prefixed wildcard", ("User:a", "read"), {"topic": "*", "prefixed": True},
     "topic='*' already covers every topic: drop prefixed=True"),
    ("prefixed not a bool", ("User:a", "read"), {"topic": "t", "prefixed": "yes"},
     "prefixed must be True or False"),
    ("cluster not a bool", ("User:a", "alter"), {"cluster": "yes"},
     "cluster must be True or False, got 'yes'"),
    ("empty host", ("User:a", "read"), {"topic": "t", "host": ""},
     "host must be an IP address or '*' (any host)"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("what", "args", "kwargs", "message"), BAD_ALLOWS, ids=[b[0] for b in BAD_ALLOWS]
)
def test_a_bad_allow_says_what_to_write_instead(
    cluster: mockkafka.Cluster,
    what: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    message: str,
) -> None:
    with pytest.raises(mockkafka.ConfigError) as info:
        cluster.allow(*args, **kwargs)
    assert message in str(info.value)
    with pytest.raises(mockkafka.ConfigError) as info:
        cluster.deny(*args, **kwargs)
    assert message.replace("allow", "deny") in str(info.value)
    assert cluster.acls() == ()


BAD_FILTERS: list[tuple[dict[str, Any], str]] = [
    ({"permission": "maybe"}, "permission must be 'ALLOW', 'DENY' or None (either), got 'maybe'"),
    ({"principal": "bob"}, "principal='bob' has no type: write 'User:bob'"),
    ({"operations": "reed"}, "unknown operation 'reed' (did you mean 'read'?)"),
    ({"topic": "t", "group": "g"}, "give one resource, not topic= and group=: call remove_acls"),
    ({"prefixed": 1}, "prefixed must be True or False"),
]


@pytest.mark.parametrize(("kwargs", "message"), BAD_FILTERS)
def test_a_bad_filter_is_named(
    many: mockkafka.Cluster, kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(mockkafka.ConfigError, match=r"^remove_acls: ") as info:
        many.remove_acls(**kwargs)
    assert message in str(info.value)
    with pytest.raises(mockkafka.ConfigError, match=r"^acls: "):
        many.acls(**kwargs)
    assert len(many.acls()) == 7


def test_without_an_authorizer_allow_says_how_to_turn_it_on() -> None:
    with mockkafka.Cluster() as cluster:
        with pytest.raises(
            mockkafka.ConfigError,
            match=r"allow: this cluster has no authorizer, so no ACL would be checked: make it "
            r"with mockkafka.Cluster\(authorizer=True",
        ):
            cluster.allow("User:alice", "write", topic="t")
        with pytest.raises(mockkafka.ConfigError, match=r"^deny: this cluster has no authorizer"):
            cluster.deny("User:alice", "write", topic="t")
        assert cluster.acls() == () and cluster.remove_acls() == 0


def test_the_trio_cluster_has_the_same_verbs() -> None:
    async def main() -> None:
        async with mockkafka.open_cluster(authorizer=True) as c:
            c.allow("User:alice", "read", topic="t")
            c.deny("User:alice", "read", topic="t", host="10.0.0.9")
            assert [v.permission for v in c.acls(topic="t")] == ["ALLOW", "DENY"]
            assert c.remove_acls(host="10.0.0.9") == 1
            assert len(c.acls()) == 1

    trio.run(main)

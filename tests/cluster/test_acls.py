"""The ACL store and Kafka's StandardAuthorizer decision, without a server."""

from __future__ import annotations

from mockkafka.cluster.acls import (
    AclBinding,
    AclFilter,
    AclOperation,
    AclPermissionType,
    AclStore,
    PatternType,
    ResourceType,
    binding_problem,
)

T, LIT, PRE = ResourceType.TOPIC, PatternType.LITERAL, PatternType.PREFIXED
ALLOW, DENY = AclPermissionType.ALLOW, AclPermissionType.DENY
R, W, D = AclOperation.READ, AclOperation.WRITE, AclOperation.DESCRIBE


def acl(name: str, op: AclOperation, perm: AclPermissionType = ALLOW, **kw: object) -> AclBinding:
    fields: dict[str, object] = {
        "resource_type": T,
        "resource_name": name,
        "pattern_type": LIT,
        "principal": "User:alice",
        "host": "*",
        "operation": op,
        "permission_type": perm,
    }
    fields.update(kw)
    return AclBinding(**fields)  # type: ignore[arg-type]


def test_no_acl_denies_unless_allow_everyone_if_no_acl_found() -> None:
    assert not AclStore().authorize("User:alice", "1.2.3.4", R, T, "orders")
    assert AclStore(allow_everyone_if_no_acl_found=True).authorize("User:bob", "h", R, T, "x")
    store = AclStore(allow_everyone_if_no_acl_found=True)
    store.create(acl("orders", R))  # an ACL names the topic: bob is no longer let in
    assert not store.authorize("User:bob", "h", R, T, "orders")


def test_super_users_may_do_anything() -> None:
    store = AclStore(super_users=("User:admin",))
    store.create(acl("orders", AclOperation.ALL, DENY, principal="User:*"))
    assert store.authorize("User:admin", "h", W, T, "orders")


def test_deny_wins_and_write_implies_describe_but_not_read() -> None:
    store = AclStore()
    store.create(acl("orders", W))
    assert store.authorize("User:alice", "h", W, T, "orders")
    assert store.authorize("User:alice", "h", D, T, "orders")
    assert not store.authorize("User:alice", "h", R, T, "orders")
    store.create(acl("orders", W, DENY, host="10.0.0.1"))
    assert not store.authorize("User:alice", "10.0.0.1", W, T, "orders")
    assert store.authorize("User:alice", "10.0.0.2", W, T, "orders")


def test_prefixed_and_wildcard_patterns() -> None:
    store = AclStore()
    store.create(acl("pay-", R, pattern_type=PRE))
    store.create(acl("*", D, principal="User:*"))
    assert store.authorize("User:alice", "h", R, T, "pay-in")
    assert not store.authorize("User:alice", "h", R, T, "orders")
    assert store.authorize("User:bob", "h", D, T, "anything")


def test_filters_any_match_literal_prefixed_and_delete() -> None:
    store = AclStore()
    lit, pre, star = acl("pay-in", R), acl("pay-", R, pattern_type=PRE), acl("*", R)
    for a in (lit, pre, star):
        store.create(a)
    store.create(lit)  # twice: stored once
    assert store.describe(AclFilter()) == [lit, pre, star]
    assert store.describe(AclFilter(resource_name="pay-", pattern_type=PatternType.ANY)) == [pre]
    match = AclFilter(resource_name="pay-in", pattern_type=PatternType.MATCH)
    assert store.describe(match) == [lit, pre, star]
    assert store.describe(AclFilter(pattern_type=PRE)) == [pre]
    assert store.delete(AclFilter(pattern_type=LIT, resource_name="pay-in")) == [lit]
    assert store.acls == [pre, star]


def test_invalid_bindings_are_named() -> None:
    assert "patternType" in (binding_problem(acl("x", R, pattern_type=PatternType.MATCH)) or "")
    assert "operation" in (binding_problem(acl("x", AclOperation.ANY)) or "")
    assert "principal" in (binding_problem(acl("x", R, principal="alice")) or "")
    assert binding_problem(acl("x", R)) is None

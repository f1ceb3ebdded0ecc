"""ACL helpers for the interop tests: a super user's AdminClient grants a user operations."""

from __future__ import annotations

import time
from typing import Any

from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)

import mockkafka

T = 10  # seconds for an admin future
USERS = {"admin": "admin-secret", "alice": "alice-secret", "bob": "bob-secret"}


def acl_cluster(**options: Any) -> mockkafka.Cluster:
    """A SASL/PLAIN cluster with an authorizer: ``admin`` is a super user, ``alice`` and
    ``bob`` may do only what ACLs allow; no topic is created behind a client's back."""
    return mockkafka.Cluster(
        security_protocol="SASL_PLAINTEXT",
        users=USERS,
        authorizer=True,
        super_users=["User:admin"],
        auto_create_topics=False,
        **options,
    )


def allow(
    rtype: ResourceType, name: str, op: AclOperation, principal: str = "User:alice"
) -> AclBinding:
    """A LITERAL ALLOW ACL from any host."""
    return AclBinding(
        rtype, name, ResourcePatternType.LITERAL, principal, "*", op, AclPermissionType.ALLOW
    )


#: Every ACL (DescribeAcls / DeleteAcls).
ANY_ACL = AclBindingFilter(
    ResourceType.ANY,
    None,
    ResourcePatternType.ANY,
    None,
    None,
    AclOperation.ANY,
    AclPermissionType.ANY,
)


def grant(admin: AdminClient, rtype: ResourceType, name: str, *ops: AclOperation) -> None:
    """Create ``allow`` ACLs for alice with ``admin`` and wait for them."""
    for f in admin.create_acls([allow(rtype, name, op) for op in ops]).values():
        f.result(T)


def kafka_python_topic_filter(name: str | None, *, match: bool = False) -> Any:
    """kafka-python's ACLFilter for topic ACLs: every ACL applying to topic ``name``
    (``match``), or those naming it literally (None: any topic)."""
    from kafka.admin import (
        ACLFilter,
        ACLOperation,
        ACLPermissionType,
        ACLResourcePatternType,
        ResourcePatternFilter,
    )
    from kafka.admin import ResourceType as KpResourceType

    pattern = ACLResourcePatternType.MATCH if match else ACLResourcePatternType.ANY
    return ACLFilter(
        principal=None,
        host="*",
        operation=ACLOperation.ANY,
        permission_type=ACLPermissionType.ANY,
        resource_pattern=ResourcePatternFilter(KpResourceType.TOPIC, name, pattern),
    )


def consume_orders(
    cluster: mockkafka.Cluster, user: str, group: str, want: int
) -> tuple[list[bytes], set[int]]:
    """Read ``orders`` as ``user`` in ``group`` with confluent-kafka until ``want`` records
    or an error (10 s at most): (values read, error codes met)."""
    from confluent_kafka import Consumer

    c = Consumer(
        {
            **cluster.client_config("confluent", user=user),
            "group.id": group,
            "auto.offset.reset": "earliest",
        }
    )
    got: list[bytes] = []
    errors: set[int] = set()
    try:
        c.subscribe(["orders"])
        deadline = time.monotonic() + 10
        while len(got) < want and not errors and time.monotonic() < deadline:
            m = c.poll(0.2)
            if m is None:
                continue
            if m.error():
                errors.add(m.error().code())
            else:
                got.append(m.value())
    finally:
        c.close()
    return got, errors

"""ACLs: the store behind CreateAcls / DescribeAcls / DeleteAcls, and the authorize decision.

Sans-IO. The codes are Kafka's (``org.apache.kafka.common.resource.ResourceType``,
``PatternType``, ``acl.AclOperation``, ``acl.AclPermissionType``). The decision follows
Kafka's StandardAuthorizer: a super user is allowed everything; a matching DENY wins over
any ALLOW; READ, WRITE, DELETE and ALTER imply DESCRIBE, ALTER_CONFIGS implies
DESCRIBE_CONFIGS; an ACL applies to a resource when its pattern is LITERAL with the same
name or ``*``, or PREFIXED with a prefix of the name; principal ``User:*`` and host ``*``
match anyone. When no ACL names the resource at all, ``allow_everyone_if_no_acl_found``
decides (Kafka's ``allow.everyone.if.no.acl.found``, false by default).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum


class ResourceType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class AclOperation(IntEnum):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14


class AclPermissionType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


#: The operations Kafka reports in KIP-430 ``authorized_operations`` per resource type
#: (``AclEntry.supportedOperations``).
SUPPORTED_OPERATIONS: dict[ResourceType, tuple[AclOperation, ...]] = {
    ResourceType.TOPIC: (
        AclOperation.READ,
        AclOperation.WRITE,
        AclOperation.CREATE,
        AclOperation.DELETE,
        AclOperation.ALTER,
        AclOperation.DESCRIBE,
        AclOperation.DESCRIBE_CONFIGS,
        AclOperation.ALTER_CONFIGS,
    ),
    ResourceType.GROUP: (
        AclOperation.READ,
        AclOperation.DELETE,
        AclOperation.DESCRIBE,
        AclOperation.DESCRIBE_CONFIGS,
        AclOperation.ALTER_CONFIGS,
    ),
    ResourceType.CLUSTER: (
        AclOperation.CREATE,
        AclOperation.ALTER,
        AclOperation.DESCRIBE,
        AclOperation.CLUSTER_ACTION,
        AclOperation.DESCRIBE_CONFIGS,
        AclOperation.ALTER_CONFIGS,
        AclOperation.IDEMPOTENT_WRITE,
    ),
    ResourceType.TRANSACTIONAL_ID: (AclOperation.WRITE, AclOperation.DESCRIBE),
    ResourceType.DELEGATION_TOKEN: (AclOperation.DESCRIBE,),
    ResourceType.USER: (AclOperation.CREATE_TOKENS, AclOperation.DESCRIBE_TOKENS),
}


def operations_bit_field(ops: tuple[AclOperation, ...]) -> int:
    """KIP-430's encoding: bit ``op.value`` set for each operation."""
    bits = 0
    for op in ops:
        bits |= 1 << op
    return bits


WILDCARD = "*"
WILDCARD_PRINCIPAL = "User:*"
CLUSTER_NAME = "kafka-cluster"  # the one CLUSTER resource's name

# An ALLOW of the key implies an ALLOW of these (Kafka's implied operations).
_IMPLIED = {
    AclOperation.DESCRIBE: {
        AclOperation.DESCRIBE,
        AclOperation.READ,
        AclOperation.WRITE,
        AclOperation.DELETE,
        AclOperation.ALTER,
    },
    AclOperation.DESCRIBE_CONFIGS: {AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS},
}


@dataclass(frozen=True, slots=True)
class AclBinding:
    """One ACL: ``principal`` from ``host`` is allowed/denied ``operation`` on a resource."""

    resource_type: ResourceType
    resource_name: str
    pattern_type: PatternType
    principal: str
    host: str
    operation: AclOperation
    permission_type: AclPermissionType

    def applies_to(self, resource_type: ResourceType, name: str) -> bool:
        """True when this ACL's resource pattern covers resource ``name``."""
        if self.resource_type != resource_type:
            return False
        if self.pattern_type == PatternType.LITERAL:
            return self.resource_name in (name, WILDCARD)
        return self.pattern_type == PatternType.PREFIXED and name.startswith(self.resource_name)


@dataclass(frozen=True, slots=True)
class AclFilter:
    """What DescribeAcls / DeleteAcls select (None / ANY: any value)."""

    resource_type: ResourceType = ResourceType.ANY
    resource_name: str | None = None
    pattern_type: PatternType = PatternType.ANY
    principal: str | None = None
    host: str | None = None
    operation: AclOperation = AclOperation.ANY
    permission_type: AclPermissionType = AclPermissionType.ANY

    def matches(self, acl: AclBinding) -> bool:
        if self.resource_type not in (ResourceType.ANY, acl.resource_type):
            return False
        if self.pattern_type == PatternType.MATCH:
            # Every ACL that would apply to the named resource (or any, without a name).
            if self.resource_name is not None and not acl.applies_to(
                acl.resource_type, self.resource_name
            ):
                return False
        else:
            if self.pattern_type not in (PatternType.ANY, acl.pattern_type):
                return False
            if self.resource_name is not None and self.resource_name != acl.resource_name:
                return False
        return (
            self.principal in (None, acl.principal)
            and self.host in (None, acl.host)
            and self.operation in (AclOperation.ANY, acl.operation)
            and self.permission_type in (AclPermissionType.ANY, acl.permission_type)
        )


def binding_problem(acl: AclBinding) -> str | None:
    """Why Kafka would refuse to create ``acl`` (INVALID_REQUEST), or None."""
    if acl.resource_type in (ResourceType.ANY, ResourceType.UNKNOWN):
        return f"Invalid resourceType {acl.resource_type.name}"
    if acl.pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED):
        return f"Invalid patternType {acl.pattern_type.name}"
    if acl.operation in (AclOperation.ANY, AclOperation.UNKNOWN):
        return f"Invalid operation {acl.operation.name}"
    if acl.permission_type not in (AclPermissionType.ALLOW, AclPermissionType.DENY):
        return f"Invalid permissionType {acl.permission_type.name}"
    if not acl.resource_name:
        return "Resource name should not be empty"
    kind, sep, _name = acl.principal.partition(":")
    if not kind or not sep:
        return f"Could not parse principal from `{acl.principal}` (no colon is present)."
    if acl.resource_type == ResourceType.CLUSTER and acl.resource_name != CLUSTER_NAME:
        return f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}"
    return None


class AclStore:
    """The cluster's ACLs in creation order, and the authorize decision."""

    def __init__(
        self, super_users: tuple[str, ...] = (), allow_everyone_if_no_acl_found: bool = False
    ) -> None:
        self.acls: list[AclBinding] = []
        self.super_users = frozenset(super_users)
        self.allow_everyone_if_no_acl_found = allow_everyone_if_no_acl_found

    def create(self, acl: AclBinding) -> None:
        """Add ``acl`` (creating an existing ACL again changes nothing, as in Kafka)."""
        if acl not in self.acls:
            self.acls.append(acl)

    def describe(self, *filters: AclFilter) -> list[AclBinding]:
        """The ACLs any of ``filters`` matches, in creation order."""
        return [a for a in self.acls if any(f.matches(a) for f in filters)]

    def delete(self, *filters: AclFilter) -> list[AclBinding]:
        """Remove and return every ACL any of ``filters`` matches."""
        gone = self.describe(*filters)
        self.acls = [a for a in self.acls if a not in gone]
        return gone

    def authorize(
        self,
        principal: str,
        host: str,
        operation: AclOperation,
        resource_type: ResourceType,
        name: str,
    ) -> bool:
        """May ``principal`` connecting from ``host`` do ``operation`` on the resource?"""
        if principal in self.super_users:
            return True
        relevant = [a for a in self.acls if a.applies_to(resource_type, name)]
        if not relevant:
            return self.allow_everyone_if_no_acl_found
        mine = [
            a
            for a in relevant
            if a.principal in (principal, WILDCARD_PRINCIPAL) and a.host in (host, WILDCARD)
        ]
        for a in mine:
            if a.permission_type == AclPermissionType.DENY and a.operation in (
                operation,
                AclOperation.ALL,
            ):
                return False
        allowed_by = _IMPLIED.get(operation, {operation})
        return any(
            a.permission_type == AclPermissionType.ALLOW
            and (a.operation == AclOperation.ALL or a.operation in allowed_by)
            for a in mine
        )

"""What the three ACL handlers share: reading bindings and filters off the wire, writing
them back, and the answer of a broker without an authorizer."""

from __future__ import annotations

from typing import Any

from mockkafka.cluster.acls import (
    AclBinding,
    AclFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
)
from mockkafka.errors import ErrorCode
from mockkafka.handlers.authz import cluster_allowed
from mockkafka.handlers.base import RequestContext
from mockkafka.protocol.codec import Message

NO_AUTHORIZER = "No Authorizer is configured."
NOT_AUTHORIZED = "Cluster authorization failed."


def _enum(cls: Any, value: Any) -> Any:
    try:
        return cls(int(value))
    except ValueError:
        return cls.UNKNOWN


def binding(creation: Message) -> AclBinding:
    """A CreateAcls creation (pattern type LITERAL before v1)."""
    return AclBinding(
        _enum(ResourceType, creation.get("resource_type", 0)),
        str(creation.get("resource_name") or ""),
        _enum(PatternType, creation.get("resource_pattern_type", PatternType.LITERAL)),
        str(creation.get("principal") or ""),
        str(creation.get("host") or ""),
        _enum(AclOperation, creation.get("operation", 0)),
        _enum(AclPermissionType, creation.get("permission_type", 0)),
    )


def acl_filter(f: Message) -> AclFilter:
    """A DescribeAcls request or DeleteAcls filter (null strings match anything)."""
    return AclFilter(
        _enum(ResourceType, f.get("resource_type_filter", 0)),
        f.get("resource_name_filter"),
        _enum(PatternType, f.get("pattern_type_filter", PatternType.LITERAL)),
        f.get("principal_filter"),
        f.get("host_filter"),
        _enum(AclOperation, f.get("operation", 0)),
        _enum(AclPermissionType, f.get("permission_type", 0)),
    )


def filter_problem(f: AclFilter) -> str | None:
    """Why Kafka refuses a filter (INVALID_REQUEST), or None."""
    for value in (f.resource_type, f.pattern_type, f.operation, f.permission_type):
        if value == 0:
            return f"Invalid filter: {type(value).__name__} UNKNOWN"
    return None


def acl_entry(acl: AclBinding) -> dict[str, Any]:
    """The principal/host/operation/permission part of an ACL on the wire."""
    return {
        "principal": acl.principal,
        "host": acl.host,
        "operation": int(acl.operation),
        "permission_type": int(acl.permission_type),
    }


def refusal(ctx: RequestContext, op: AclOperation) -> tuple[ErrorCode, str] | None:
    """(error, message) answering every part of an ACL request, or None to serve it: no
    authorizer (SECURITY_DISABLED), or the principal lacks ``op`` on the cluster."""
    if not ctx.cluster.config.authorizer:
        return ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER
    if not cluster_allowed(ctx, op):
        return ErrorCode.CLUSTER_AUTHORIZATION_FAILED, NOT_AUTHORIZED
    return None

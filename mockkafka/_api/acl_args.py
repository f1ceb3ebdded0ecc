"""The arguments of the ACL verbs (``allow`` / ``deny`` / ``remove_acls`` / ``acls``):
names of operations, principals and resources turned into the ACLs and filters of
:mod:`mockkafka.cluster.acls`. Shared by the verbs and the scenario model, which checks a
file's ACL steps when it loads; every error names the argument at fault and what to write.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from mockkafka.cluster.acls import (
    CLUSTER_NAME,
    SUPPORTED_OPERATIONS,
    WILDCARD,
    AclBinding,
    AclFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
    binding_problem,
)
from mockkafka.errors import ConfigError

if TYPE_CHECKING:
    from mockkafka.views import AclView


class AclArgumentError(ConfigError):
    """A bad argument of ``allow`` / ``deny`` / ``remove_acls`` / ``acls``: ``arg`` names it
    (None: the combination), ``detail`` says what to write instead."""

    def __init__(self, verb: str, arg: str | None, detail: str) -> None:
        self.verb, self.arg, self.detail = verb, arg, detail
        super().__init__(f"{verb}: {detail}")


#: The resource arguments, in signature order, and the resource type each names.
ACL_TARGETS: dict[str, ResourceType] = {
    "topic": ResourceType.TOPIC,
    "group": ResourceType.GROUP,
    "transactional_id": ResourceType.TRANSACTIONAL_ID,
    "cluster": ResourceType.CLUSTER,
}
_OPERATION_NAMES = {
    op.name.lower(): op for op in AclOperation if op not in (AclOperation.ANY, AclOperation.UNKNOWN)
}


def _target_arg(rtype: ResourceType) -> str:
    return next(a for a, t in ACL_TARGETS.items() if t == rtype)


def _ops_text(rtype: ResourceType) -> str:
    names = [op.name.lower() for op in SUPPORTED_OPERATIONS[rtype]]
    return ", ".join(names) + " or all"


def _acl_operations(verb: str, operations: Any) -> tuple[AclOperation, ...]:
    """The operations named by ``operations``: one name or a list (any case, ``-`` for
    ``_``), or AclOperation members."""
    items = [operations] if isinstance(operations, str | AclOperation) else operations
    if not isinstance(items, list | tuple) or not items:
        raise AclArgumentError(
            verb,
            "operations",
            f'operations must be an operation name or a list of them (e.g. "write" or '
            f'["read", "describe"]), got {operations!r}',
        )
    out: list[AclOperation] = []
    for item in items:
        if isinstance(item, AclOperation):
            op: AclOperation | None = item if item.name.lower() in _OPERATION_NAMES else None
        elif isinstance(item, str):
            op = _OPERATION_NAMES.get(item.strip().lower().replace("-", "_").replace(" ", "_"))
        else:
            op = None
        if op is None:
            close = difflib.get_close_matches(str(item).lower(), list(_OPERATION_NAMES), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise AclArgumentError(
                verb,
                "operations",
                f"unknown operation {item!r}{hint}; use one of "
                f"{', '.join(_OPERATION_NAMES)} (any case)",
            )
        if op not in out:
            out.append(op)
    return tuple(out)


def _acl_resource(
    verb: str, targets: Mapping[str, Any], *, required: bool
) -> tuple[str, ResourceType, str] | None:
    """(argument, resource type, name) of the one target given, None when none is (and
    none is ``required``)."""
    given = []
    for arg, value in targets.items():
        if arg == "cluster":
            if not isinstance(value, bool):
                raise AclArgumentError(verb, arg, f"cluster must be True or False, got {value!r}")
            if value:
                given.append((arg, ResourceType.CLUSTER, CLUSTER_NAME))
        elif value is not None:
            if not isinstance(value, str):
                raise AclArgumentError(
                    verb, arg, f"{arg} must be a str (a name, or '*' for every one), got {value!r}"
                )
            given.append((arg, ACL_TARGETS[arg], value))
    if len(given) > 1:
        names = " and ".join(f"{a}=" for a, _t, _n in given)
        raise AclArgumentError(
            verb,
            given[1][0],
            f"give one resource, not {names}: call {verb}(...) once per resource",
        )
    if not given:
        if required:
            raise AclArgumentError(
                verb,
                None,
                "give the resource: one of topic=, group=, transactional_id= "
                "(a name, or '*' for every one) or cluster=True",
            )
        return None
    return given[0]


def _acl_principal(verb: str, principal: Any) -> str:
    if not isinstance(principal, str):
        raise AclArgumentError(
            verb, "principal", f"principal must be a str like 'User:alice', got {principal!r}"
        )
    kind, sep, _name = principal.partition(":")
    if not kind or not sep:
        name = principal or "alice"
        raise AclArgumentError(
            verb,
            "principal",
            f"principal={principal!r} has no type: write 'User:{name}' ('User:*' for every user)",
        )
    return principal


def _acl_host(verb: str, host: Any) -> str:
    if not isinstance(host, str) or not host:
        raise AclArgumentError(
            verb, "host", f"host must be an IP address or '*' (any host), got {host!r}"
        )
    return host


def _acl_prefixed(verb: str, prefixed: Any) -> None:
    if prefixed is not None and not isinstance(prefixed, bool):
        raise AclArgumentError(
            verb, "prefixed", f"prefixed must be True or False, got {prefixed!r}"
        )


def acl_bindings(
    verb: str,
    permission: AclPermissionType,
    principal: Any,
    operations: Any,
    *,
    topic: Any = None,
    group: Any = None,
    transactional_id: Any = None,
    cluster: Any = False,
    prefixed: Any = False,
    host: Any = WILDCARD,
) -> tuple[AclBinding, ...]:
    """The ACLs ``allow`` / ``deny`` create, one per operation; AclArgumentError (a
    ConfigError) names the argument at fault and what to write instead."""
    who = _acl_principal(verb, principal)
    ops = _acl_operations(verb, operations)
    _acl_prefixed(verb, prefixed)
    targets = {"topic": topic, "group": group, "transactional_id": transactional_id}
    found = _acl_resource(verb, {**targets, "cluster": cluster}, required=True)
    assert found is not None
    arg, rtype, name = found
    where = _acl_host(verb, host)
    if prefixed and rtype == ResourceType.CLUSTER:
        raise AclArgumentError(
            verb, "prefixed", "the cluster resource is one name: drop prefixed=True"
        )
    if prefixed and name == WILDCARD:
        raise AclArgumentError(
            verb, "prefixed", f"{arg}='*' already covers every {arg}: drop prefixed=True"
        )
    for op in ops:
        if op != AclOperation.ALL and op not in SUPPORTED_OPERATIONS[rtype]:
            elsewhere = [
                f"{_target_arg(t)}=" for t in ACL_TARGETS.values() if op in SUPPORTED_OPERATIONS[t]
            ]
            on = (
                f" ({op.name.lower()} is an operation on {', '.join(elsewhere)})"
                if elsewhere
                else ""
            )
            raise AclArgumentError(
                verb,
                "operations",
                f"{op.name.lower()} is not an operation on a {arg.replace('_', ' ')}: {arg}= "
                f"takes {_ops_text(rtype)}{on}",
            )
    pattern = PatternType.PREFIXED if prefixed else PatternType.LITERAL
    out = tuple(AclBinding(rtype, name, pattern, who, where, op, permission) for op in ops)
    for acl in out:
        problem = binding_problem(acl)
        if problem is not None:
            raise AclArgumentError(
                verb, arg, f"{problem}: give a {arg} name, or '*' for every {arg}"
            )
    return out


def acl_filters(
    verb: str,
    principal: Any = None,
    operations: Any = None,
    *,
    topic: Any = None,
    group: Any = None,
    transactional_id: Any = None,
    cluster: Any = False,
    prefixed: Any = None,
    host: Any = None,
    permission: Any = None,
) -> tuple[AclFilter, ...]:
    """The filters of ``remove_acls`` / ``acls`` (an ACL matching any of them is selected;
    None: any value); AclArgumentError names the argument at fault."""
    who = None if principal is None else _acl_principal(verb, principal)
    ops = (AclOperation.ANY,) if operations is None else _acl_operations(verb, operations)
    _acl_prefixed(verb, prefixed)
    targets = {"topic": topic, "group": group, "transactional_id": transactional_id}
    found = _acl_resource(verb, {**targets, "cluster": cluster}, required=False)
    rtype, name = (ResourceType.ANY, None) if found is None else found[1:]
    where = None if host is None else _acl_host(verb, host)
    pattern = {None: PatternType.ANY, True: PatternType.PREFIXED, False: PatternType.LITERAL}[
        prefixed
    ]
    perm = AclPermissionType.ANY
    if permission is not None:
        text = permission.name if isinstance(permission, AclPermissionType) else permission
        if not isinstance(text, str) or text.upper() not in ("ALLOW", "DENY"):
            raise AclArgumentError(
                verb,
                "permission",
                f"permission must be 'ALLOW', 'DENY' or None (either), got {permission!r}",
            )
        perm = AclPermissionType[text.upper()]
    return tuple(AclFilter(rtype, name, pattern, who, where, op, perm) for op in ops)


__all__ = ["ACL_TARGETS", "AclArgumentError", "acl_bindings", "acl_filters"]


class AclVerbs:
    """``allow`` / ``deny`` / ``remove_acls`` / ``acls`` of a Cluster and of a Proxy: the
    arguments are checked here, the one that holds the ACLs does the rest
    (:meth:`_add_acls`, :meth:`_delete_acls`, :meth:`_describe_acls`): the fake's ACL
    store, or the upstream through CreateAcls / DeleteAcls / DescribeAcls."""

    def _add_acls(self, bindings: tuple[AclBinding, ...], verb: str) -> None:
        raise NotImplementedError  # pragma: no cover - provided by the cluster or proxy

    def _delete_acls(self, filters: tuple[AclFilter, ...]) -> int:
        raise NotImplementedError  # pragma: no cover - provided by the cluster or proxy

    def _describe_acls(self, filters: tuple[AclFilter, ...]) -> tuple[AclView, ...]:
        raise NotImplementedError  # pragma: no cover - provided by the cluster or proxy

    def allow(
        self,
        principal: str,
        operations: str | AclOperation | Sequence[str | AclOperation],
        *,
        topic: str | None = None,
        group: str | None = None,
        transactional_id: str | None = None,
        cluster: bool = False,
        prefixed: bool = False,
        host: str = "*",
    ) -> None:
        """Let ``principal`` (``"User:alice"``, ``"User:*"``: everyone) do ``operations``
        (``"write"``, ``["read", "describe"]``, ``"all"``; any case) on one resource:
        ``topic=``, ``group=``, ``transactional_id=`` (a name, ``"*"`` for every one,
        ``prefixed=True`` for every name starting so) or ``cluster=True``, from ``host``.

        ALLOW ACLs, as CreateAcls from a super user's admin client would make: the next
        request is authorized with them (a Cluster needs ``authorizer=True``; on a Proxy
        they are created upstream, and Kafka answers SECURITY_DISABLED, raised, when it
        runs no authorizer). READ, WRITE, DELETE and ALTER imply DESCRIBE. A consumer
        needs READ on its topics and on its group; an idempotent producer of old clients
        IDEMPOTENT_WRITE on the cluster. See them with :meth:`acls`, take them back with
        :meth:`remove_acls`.
        """
        bindings = acl_bindings(
            "allow",
            AclPermissionType.ALLOW,
            principal,
            operations,
            topic=topic,
            group=group,
            transactional_id=transactional_id,
            cluster=cluster,
            prefixed=prefixed,
            host=host,
        )
        self._add_acls(bindings, "allow")

    def deny(
        self,
        principal: str,
        operations: str | AclOperation | Sequence[str | AclOperation],
        *,
        topic: str | None = None,
        group: str | None = None,
        transactional_id: str | None = None,
        cluster: bool = False,
        prefixed: bool = False,
        host: str = "*",
    ) -> None:
        """Forbid ``principal`` ``operations`` on one resource: DENY ACLs, with the
        arguments of :meth:`allow`. A matching DENY beats every ALLOW (``deny("User:*",
        "write", topic="audit")`` shuts every writer out but super users); undo it with
        ``remove_acls(..., permission="DENY")``."""
        bindings = acl_bindings(
            "deny",
            AclPermissionType.DENY,
            principal,
            operations,
            topic=topic,
            group=group,
            transactional_id=transactional_id,
            cluster=cluster,
            prefixed=prefixed,
            host=host,
        )
        self._add_acls(bindings, "deny")

    def remove_acls(
        self,
        principal: str | None = None,
        operations: str | AclOperation | Sequence[str | AclOperation] | None = None,
        *,
        topic: str | None = None,
        group: str | None = None,
        transactional_id: str | None = None,
        cluster: bool = False,
        prefixed: bool | None = None,
        host: str | None = None,
        permission: str | AclPermissionType | None = None,
    ) -> int:
        """Delete every ACL matching the filter, as DeleteAcls would; returns how many went.

        Each argument left at None matches any value: ``remove_acls()`` removes every ACL,
        ``remove_acls("User:alice", topic="orders")`` alice's ACLs naming topic ``orders``
        (LITERAL or PREFIXED; ``prefixed=False`` / ``True`` for one kind; ACLs for ``"*"``
        are those of ``topic="*"``), ``permission="DENY"`` only DENY ACLs. Check what is
        left with :meth:`acls`.
        """
        filters = acl_filters(
            "remove_acls",
            principal,
            operations,
            topic=topic,
            group=group,
            transactional_id=transactional_id,
            cluster=cluster,
            prefixed=prefixed,
            host=host,
            permission=permission,
        )
        return self._delete_acls(filters)

    def acls(
        self,
        principal: str | None = None,
        operations: str | AclOperation | Sequence[str | AclOperation] | None = None,
        *,
        topic: str | None = None,
        group: str | None = None,
        transactional_id: str | None = None,
        cluster: bool = False,
        prefixed: bool | None = None,
        host: str | None = None,
        permission: str | AclPermissionType | None = None,
    ) -> tuple[AclView, ...]:
        """The ACLs matching the filter of :meth:`remove_acls` (no argument: every ACL), as
        frozen :class:`~mockkafka.AclView` -- on a Cluster in creation order, those made by
        :meth:`allow` / :meth:`deny` and by clients' CreateAcls alike (one store); on a
        Proxy as Kafka's DescribeAcls lists them."""
        filters = acl_filters(
            "acls",
            principal,
            operations,
            topic=topic,
            group=group,
            transactional_id=transactional_id,
            cluster=cluster,
            prefixed=prefixed,
            host=host,
            permission=permission,
        )
        return self._describe_acls(filters)

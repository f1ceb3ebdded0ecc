"""The authorize checks handlers make when ``Cluster(authorizer=True)``: the request's
principal (SASL user, TLS certificate subject or ``User:ANONYMOUS``) and host against the
cluster's ACLs (``cluster/acls.py``). Every check is True when the authorizer is off."""

from __future__ import annotations

from mockkafka.cluster.acls import CLUSTER_NAME, AclOperation, ResourceType
from mockkafka.handlers.base import RequestContext


def allowed(ctx: RequestContext, op: AclOperation, rtype: ResourceType, name: str) -> bool:
    """May this request's principal do ``op`` on resource ``rtype``/``name``?"""
    if not ctx.cluster.config.authorizer:
        return True
    host = ctx.peer.rsplit(":", 1)[0] if ":" in ctx.peer else ctx.peer
    return ctx.cluster.acls.authorize(ctx.principal, host, op, rtype, name)


def topic_allowed(ctx: RequestContext, op: AclOperation, topic: str) -> bool:
    return allowed(ctx, op, ResourceType.TOPIC, topic)


def group_allowed(ctx: RequestContext, op: AclOperation, group: str) -> bool:
    return allowed(ctx, op, ResourceType.GROUP, group)


def cluster_allowed(ctx: RequestContext, op: AclOperation) -> bool:
    return allowed(ctx, op, ResourceType.CLUSTER, CLUSTER_NAME)

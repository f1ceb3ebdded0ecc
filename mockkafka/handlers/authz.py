"""The authorize checks handlers make when ``Cluster(authorizer=True)``: the request's
principal (SASL user, TLS certificate subject or ``User:ANONYMOUS``) and host against the
cluster's ACLs (``cluster/acls.py``). Every check is True when the authorizer is off."""

from __future__ import annotations

from mockkafka.cluster.acls import CLUSTER_NAME, AclOperation, ResourceType
from mockkafka.errors import ErrorCode
from mockkafka.handlers.base import RequestContext
from mockkafka.protocol.codec import Message


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


_G, _T, _C = ResourceType.GROUP, ResourceType.TRANSACTIONAL_ID, ResourceType.CLUSTER
_R, _W, _D = AclOperation.READ, AclOperation.WRITE, AclOperation.DELETE
#: Requests Kafka refuses whole when the principal lacks an operation on the one resource
#: they name: API -> (resource type, operation, request field naming the resource).
WHOLE_REQUEST: dict[str, tuple[ResourceType, AclOperation, str]] = {
    "JoinGroup": (_G, _R, "group_id"),
    "SyncGroup": (_G, _R, "group_id"),
    "Heartbeat": (_G, _R, "group_id"),
    "LeaveGroup": (_G, _R, "group_id"),
    "ConsumerGroupHeartbeat": (_G, _R, "group_id"),
    "OffsetCommit": (_G, _R, "group_id"),
    "OffsetDelete": (_G, _D, "group_id"),
    "TxnOffsetCommit": (_T, _W, "transactional_id"),
    "AddOffsetsToTxn": (_T, _W, "transactional_id"),
    "EndTxn": (_T, _W, "transactional_id"),
    "AddPartitionsToTxn": (_T, _W, "v3_and_below_transactional_id"),
    "ElectLeaders": (_C, AclOperation.ALTER, ""),
    "AlterPartitionReassignments": (_C, AclOperation.ALTER, ""),
    "ListPartitionReassignments": (_C, AclOperation.DESCRIBE, ""),
    "DescribeCluster": (_C, AclOperation.DESCRIBE, ""),
    "WriteTxnMarkers": (_C, AclOperation.CLUSTER_ACTION, ""),
    "DescribeUserScramCredentials": (_C, AclOperation.DESCRIBE, ""),
    "AlterUserScramCredentials": (_C, AclOperation.ALTER, ""),
}
_FAILED = {
    _G: ErrorCode.GROUP_AUTHORIZATION_FAILED,
    _T: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
    _C: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
    ResourceType.TOPIC: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
}


def failed_code(rtype: ResourceType) -> ErrorCode:
    """The error Kafka answers when ``rtype`` is not authorized."""
    return _FAILED[rtype]


def refused(ctx: RequestContext, request: Message) -> ErrorCode | None:
    """The error to answer the whole request with, or None to let the handler run.

    Covers the APIs of :data:`WHOLE_REQUEST` and InitProducerId (WRITE on the transactional
    id; without one, IDEMPOTENT_WRITE on the cluster or WRITE on some topic, as Kafka 3.x).
    Topic-level checks (Metadata, Produce, Fetch) are made per topic by their handlers.
    """
    if not ctx.cluster.config.authorizer:
        return None
    api = ctx.api.name
    if api == "InitProducerId":
        txn = request.get("transactional_id")
        if txn:
            ok = allowed(ctx, _W, _T, txn)
            return None if ok else ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        if cluster_allowed(ctx, AclOperation.IDEMPOTENT_WRITE) or any(
            topic_allowed(ctx, _W, t) for t in ctx.cluster.topics
        ):
            return None
        return ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    rule = WHOLE_REQUEST.get(api)
    if rule is None:
        return None
    rtype, op, key = rule
    if rtype == _C:
        name = CLUSTER_NAME
    else:
        value = request.get(key)
        if not value:  # e.g. AddPartitionsToTxn v4+ (a broker-to-broker batch)
            return None
        name = str(value)
    return None if allowed(ctx, op, rtype, name) else _FAILED[rtype]

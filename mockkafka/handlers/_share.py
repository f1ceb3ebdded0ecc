"""What ShareFetch and ShareAcknowledge share: the share-session step, finding a partition by
topic id, and applying one partition's acknowledgement batches (``cluster/share_groups.py``
holds the state)."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from mockkafka.cluster.acls import AclOperation
from mockkafka.cluster.share_groups import (
    FINAL_SESSION_EPOCH,
    INITIAL_SESSION_EPOCH,
    ShareGroup,
    ShareSession,
)
from mockkafka.cluster.state import Partition
from mockkafka.errors import ErrorCode, error_code
from mockkafka.handlers._common import current_leader, leader_error, node_endpoints
from mockkafka.handlers.authz import group_allowed, topic_allowed
from mockkafka.handlers.base import RequestContext
from mockkafka.protocol.codec import Message

INT32_MAX = 2**31 - 1


def top_error(code: ErrorCode, message: str | None) -> Message:
    """A ShareFetch / ShareAcknowledge response refusing the whole request."""
    return {"error_code": code, "error_message": message, "responses": []}


def group_and_session(
    ctx: RequestContext, request: Message, *, bind_connection: bool = False
) -> tuple[ShareGroup, ShareSession, str, int] | Message:
    """The share group, the member's session on this broker (moved on to the next epoch),
    the member id and the request's epoch; or the response refusing the request. With
    ``bind_connection`` (ShareFetch v1+) a session opened here closes with the connection."""
    member_id = request.get("member_id") or ""
    found = share_group_for(ctx, request.get("group_id"), member_id)
    if isinstance(found, tuple):
        return top_error(*found)
    epoch: int = request.get("share_session_epoch", 0)
    session = session_step(ctx, found, member_id, epoch, bind_connection=bind_connection)
    if isinstance(session, tuple):
        return top_error(*session)
    return found, session, member_id, epoch


def next_epoch(epoch: int) -> int:
    """The session epoch after ``epoch`` (wraps to 1, as Kafka's fetch sessions do)."""
    return 1 if epoch >= INT32_MAX else epoch + 1


def share_group_for(
    ctx: RequestContext, group_id: str | None, member_id: str | None
) -> ShareGroup | tuple[ErrorCode, str]:
    """The share group a ShareFetch/ShareAcknowledge names, or the top-level error."""
    if not group_id:
        return ErrorCode.INVALID_REQUEST, "GroupId must be set."
    if not member_id:
        return ErrorCode.INVALID_REQUEST, "MemberId must be set."
    if not group_allowed(ctx, AclOperation.READ, group_id):
        return ErrorCode.GROUP_AUTHORIZATION_FAILED, f"Not authorized to read group {group_id}."
    g = ctx.cluster.groups.share_group(group_id, create=True)
    if isinstance(g, ErrorCode):
        return g, f"Group {group_id} is not a share group."
    return g


def session_step(
    ctx: RequestContext, g: ShareGroup, member_id: str, epoch: int, *, bind_connection: bool
) -> ShareSession | tuple[ErrorCode, str]:
    """Check ``epoch`` against the member's share session on this broker and move it on.

    Epoch 0 opens a new session (replacing an old one); -1 finds the session to close (the
    caller closes it after acknowledging); any other epoch must be the session's next one.
    """
    if epoch == INITIAL_SESSION_EPOCH:
        cid = ctx.connection_id if bind_connection else None
        return g.open_session(ctx.broker_id, member_id, cid)
    s = g.session(ctx.broker_id, member_id)
    if s is None:
        return ErrorCode.SHARE_SESSION_NOT_FOUND, f"No share session for member {member_id}."
    if epoch == FINAL_SESSION_EPOCH:
        return s
    if epoch != s.epoch:
        return (
            ErrorCode.INVALID_SHARE_SESSION_EPOCH,
            f"Share session epoch {epoch} is not the expected epoch {s.epoch}.",
        )
    s.epoch = next_epoch(epoch)
    return s


@dataclass(slots=True)
class Target:
    """A partition a share request names: the partition, or the error to answer for it."""

    topic: str
    partition: Partition | None
    error: ErrorCode = ErrorCode.NONE


def find(ctx: RequestContext, topic_id: uuid.UUID, index: int) -> Target:
    """The partition ``topic_id``/``index`` led by this broker, or why not."""
    t = ctx.cluster.topics_by_id.get(topic_id)
    if t is None:
        return Target("", None, ErrorCode.UNKNOWN_TOPIC_ID)
    if not topic_allowed(ctx, AclOperation.READ, t.name):
        return Target(t.name, None, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    if not 0 <= index < len(t.partitions):
        return Target(t.name, None, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    p = t.partitions[index]
    injected = ctx.fault_partitions.get((t.name, index))
    if injected is not None:  # a fault rule answers it: leave its records alone
        return Target(t.name, p, error_code(injected))
    return Target(t.name, p, leader_error(ctx, p))


def leader_fields(target: Target, leaders: set[int]) -> dict[str, Any]:
    """``current_leader`` for a partition answer, noting NOT_LEADER_OR_FOLLOWER leaders."""
    p = target.partition
    if p is None:
        return {"current_leader": {"leader_id": -1, "leader_epoch": -1}}
    if target.error == ErrorCode.NOT_LEADER_OR_FOLLOWER and p.leader >= 0:
        leaders.add(p.leader)
    return {"current_leader": current_leader(p)}


def acknowledge(
    ctx: RequestContext,
    g: ShareGroup,
    member_id: str,
    topic_id: uuid.UUID,
    index: int,
    batches: Iterable[Mapping[str, Any]],
    *,
    renew: bool = False,
) -> tuple[Target, ErrorCode, str | None]:
    """Apply one partition's acknowledgement batches; returns (target, error, message).
    ``renew``: the request's ``is_renew_ack`` (RENEW acknowledgements allowed)."""
    target = find(ctx, topic_id, index)
    if target.error != ErrorCode.NONE or target.partition is None:
        return target, target.error, None
    sp = g.share_partition(target.topic, index, topic_id)
    err, msg = sp.acknowledge(member_id, batches, renew=renew)
    return target, err, msg


def session_partitions(
    s: ShareSession, topics: Iterable[Mapping[str, Any]], forgotten: Iterable[Mapping[str, Any]]
) -> None:
    """Add the request's partitions to the session and drop its forgotten ones."""
    for t in topics:
        for p in t.get("partitions") or []:
            s.partitions[(t["topic_id"], p["partition_index"])] = None
    for t in forgotten:
        for idx in t.get("partitions") or []:
            s.partitions.pop((t["topic_id"], idx), None)


def share_response(
    ctx: RequestContext, parts: dict[tuple[uuid.UUID, int], dict[str, Any]], leaders: set[int]
) -> Message:
    """A ShareFetch / ShareAcknowledge response: partition answers grouped by topic id, and
    the endpoints of the leaders named in NOT_LEADER_OR_FOLLOWER answers."""
    by_topic: dict[uuid.UUID, list[dict[str, Any]]] = {}
    for (tid, _), out in parts.items():
        by_topic.setdefault(tid, []).append(out)
    resp: dict[str, Any] = {
        "error_code": 0,
        "responses": [{"topic_id": tid, "partitions": ps} for tid, ps in by_topic.items()],
    }
    if leaders:
        resp["node_endpoints"] = node_endpoints(ctx, leaders)
    return resp

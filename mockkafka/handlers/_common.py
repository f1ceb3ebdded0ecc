"""Checks shared by the partition-level handlers (Produce, Fetch, ListOffsets, ...)."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import TypeVar

from mockkafka.cluster.state import Partition, Topic
from mockkafka.errors import ErrorCode
from mockkafka.handlers.base import RequestContext
from mockkafka.protocol.codec import ZERO_UUID


def find_topic(
    ctx: RequestContext, name: str | None, topic_id: uuid.UUID | None = None
) -> tuple[Topic | None, ErrorCode]:
    """The topic named by ``name`` or (when set) ``topic_id``, or the error to answer."""
    c = ctx.cluster
    if topic_id is not None and topic_id != ZERO_UUID:
        t = c.topics_by_id.get(topic_id)
        return (t, ErrorCode.NONE) if t else (None, ErrorCode.UNKNOWN_TOPIC_ID)
    t = c.topics.get(name or "")
    return (t, ErrorCode.NONE) if t else (None, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)


def find_partition(topic: Topic, index: int) -> Partition | None:
    if 0 <= index < len(topic.partitions):
        return topic.partitions[index]
    return None


def leader_error(ctx: RequestContext, p: Partition, current_leader_epoch: int = -1) -> ErrorCode:
    """NONE when this broker leads ``p`` at the client's epoch; else the code to answer."""
    if p.leader == -1:
        return (
            ErrorCode.LEADER_NOT_AVAILABLE
            if ctx.api.name == "Metadata"
            else ErrorCode.NOT_LEADER_OR_FOLLOWER
        )
    if p.leader != ctx.broker_id:
        return ErrorCode.NOT_LEADER_OR_FOLLOWER
    if current_leader_epoch >= 0:
        if current_leader_epoch < p.leader_epoch:
            return ErrorCode.FENCED_LEADER_EPOCH
        if current_leader_epoch > p.leader_epoch:
            return ErrorCode.UNKNOWN_LEADER_EPOCH
    return ErrorCode.NONE


def current_leader(p: Partition) -> dict[str, int]:
    """The ``current_leader`` tagged struct (KIP-951) telling a client where to go."""
    return {"leader_id": p.leader, "leader_epoch": p.leader_epoch}


def node_endpoints(ctx: RequestContext, ids: set[int]) -> list[dict[str, object]]:
    """``node_endpoints`` entries (KIP-951) for the given broker ids."""
    out = []
    for i in sorted(ids):
        b = ctx.cluster.brokers.get(i)
        if b is not None and b.running:
            out.append({"node_id": b.node_id, "host": b.host, "port": b.port, "rack": b.rack})
    return out


T = TypeVar("T")
K = TypeVar("K", bound=Hashable)


def distinct_entries(items: Iterable[T], key: Callable[[T], K]) -> Iterator[tuple[T, K, bool]]:
    """Each distinct key of a request's entries once, in order: ``(first entry, key,
    repeated)``. Admin APIs answer a repeated entry once, with an error (INVALID_REQUEST or
    DUPLICATE_RESOURCE), instead of acting on it twice."""
    entries = list(items)
    counts = Counter(key(e) for e in entries)
    seen: set[K] = set()
    for e in entries:
        k = key(e)
        if k not in seen:
            seen.add(k)
            yield e, k, counts[k] > 1

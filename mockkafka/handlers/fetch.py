"""Fetch (key 1), versions 0-18.

Long polling: with fewer than ``min_bytes`` available the request parks until data arrives
in any requested partition or ``max_wait_ms`` passes. ``max_bytes`` bounds the response and
``partition_max_bytes`` each partition, but the first non-empty partition always gets at
least one whole batch (KIP-74). Fetch sessions (KIP-227) via ``cluster/fetch_sessions.py``.
Topic ids from v13. read_committed stops at the last stable offset and lists aborted
transactions; v0-v3 get message format v0/v1 (down-converted); zstd data to a Fetch older
than v10 is UNSUPPORTED_COMPRESSION_TYPE, as in Kafka. Leader epochs (KIP-320):
FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH, and ``diverging_epoch`` when
``last_fetched_epoch`` does not match the log (v12+). Not implemented: follower fetching and
preferred read replicas (always -1), tiered storage. The partition read rules live in
``cluster/fetch.py``; this module parses the request, long-polls and shapes the response.

The broker bounds every request (cluster/limits.py): ``max_bytes`` is capped by the
broker's ``fetch.max.bytes`` (v0-v2, which have no ``max_bytes``, too) and ``max_wait_ms``
by ``mockkafka.max.wait.ms``.
"""

from __future__ import annotations

from typing import Any

from mockkafka.cluster.acls import AclOperation
from mockkafka.cluster.fetch import read_partition
from mockkafka.cluster.fetch_sessions import FetchSessionCache, SessionPartition
from mockkafka.cluster.limits import limits
from mockkafka.errors import ErrorCode
from mockkafka.handlers._common import (
    current_leader,
    find_partition,
    find_topic,
    leader_error,
    node_endpoints,
)
from mockkafka.handlers.authz import topic_allowed
from mockkafka.handlers.base import Park, RequestContext, Result, handler
from mockkafka.protocol.codec import Message

READ_COMMITTED = 1


def _magic_for(version: int) -> int:
    if version <= 1:
        return 0
    if version <= 3:
        return 1
    return 2


def sessions(ctx: RequestContext) -> FetchSessionCache:
    caches = ctx.cluster.fetch_sessions
    cache = caches.get(ctx.broker_id)
    if cache is None:
        cache = caches[ctx.broker_id] = FetchSessionCache()
    return cache


@handler("Fetch", versions=(0, 18))
def handle(ctx: RequestContext, request: Message) -> Result:
    v = ctx.version
    use_ids = v >= 13
    upd = sessions(ctx).update(
        request.get("session_id", 0) if v >= 7 else 0,
        request.get("session_epoch", -1) if v >= 7 else -1,
        request.get("topics") or [],
        request.get("forgotten_topics_data") or [],
        use_ids=use_ids,
    )
    if upd.error != ErrorCode.NONE:
        return {"error_code": upd.error, "session_id": 0, "responses": []}
    session_id = upd.session.id if upd.session is not None else 0
    isolation = request.get("isolation_level", 0) if v >= 4 else 0
    # The broker's fetch.max.bytes and max wait bound what any request may ask for.
    lim = limits(ctx.cluster)
    max_bytes = min(
        request.get("max_bytes", 0x7FFFFFFF) if v >= 3 else 0x7FFFFFFF, lim.fetch_max_bytes
    )
    min_bytes = request.get("min_bytes", 1)
    max_wait = min(max(0, request.get("max_wait_ms", 0)), lim.max_wait_ms)
    deadline = ctx.now_ms + max_wait
    keys = tuple(
        ("partition", sp.topic or _name_of(ctx, sp), k[1]) for k, sp in upd.partitions.items()
    )

    def build(timed_out: bool) -> Result:
        responses, total, leaders, sent = _read_all(
            ctx, upd.partitions, isolation, max_bytes, use_ids, upd.incremental
        )
        has_error = any(p["error_code"] for t in responses for p in t["partitions"])
        if total < min_bytes and not timed_out and not has_error and max_wait > 0:
            return Park(keys or (("never",),), deadline, build)
        for sp, out in sent:  # what the session's next incremental response compares with
            sp.last_hw = out["high_watermark"]
            sp.last_lso = out["last_stable_offset"]
            sp.last_log_start = out["log_start_offset"]
        resp: dict[str, Any] = {"error_code": 0, "session_id": session_id, "responses": responses}
        if leaders and v >= 16:
            resp["node_endpoints"] = node_endpoints(ctx, leaders)
        return resp

    return build(False)


def _name_of(ctx: RequestContext, sp: SessionPartition) -> str:
    t = ctx.cluster.topics_by_id.get(sp.topic_id) if sp.topic_id is not None else None
    return t.name if t is not None else ""


def _read_all(
    ctx: RequestContext,
    partitions: dict[tuple[str, int], SessionPartition],
    isolation: int,
    max_bytes: int,
    use_ids: bool,
    incremental: bool,
) -> tuple[list[dict[str, Any]], int, set[int], list[tuple[SessionPartition, dict[str, Any]]]]:
    v = ctx.version
    magic = _magic_for(v)
    by_topic: dict[str, dict[str, Any]] = {}
    order: list[dict[str, Any]] = []
    total = 0
    leaders: set[int] = set()
    sent: list[tuple[SessionPartition, dict[str, Any]]] = []
    for (tkey, idx), sp in partitions.items():
        req = sp.request
        out: dict[str, Any] = {
            "partition_index": idx,
            "error_code": 0,
            "high_watermark": -1,
            "last_stable_offset": -1,
            "log_start_offset": -1,
            "aborted_transactions": None,
            "preferred_read_replica": -1,
            # Kafka sends empty (never null) records: librdkafka rejects a null set.
            "records": b"",
        }
        topic, terr = find_topic(ctx, sp.topic, sp.topic_id if use_ids else None)
        p = find_partition(topic, idx) if topic is not None else None
        name = topic.name if topic is not None else sp.topic
        injected = ctx.fault_partitions.get((name or "", idx))
        if not topic_allowed(ctx, AclOperation.READ, name or ""):
            out["error_code"] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            out["aborted_transactions"] = []  # refused before the read: Kafka's defaults
        elif injected is not None:  # a fault rule's error: nothing read, always sent
            out["error_code"] = injected
            out["aborted_transactions"] = []
        elif topic is None:
            # v13+ names topics by id only: a zero id is an unknown id too, as in Kafka.
            out["error_code"] = ErrorCode.UNKNOWN_TOPIC_ID if use_ids else terr
            out["aborted_transactions"] = []
        elif p is None:
            out["error_code"] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            out["aborted_transactions"] = []
        else:
            err = leader_error(ctx, p, req.get("current_leader_epoch", -1) if v >= 9 else -1)
            out["high_watermark"] = p.log.high_watermark
            out["last_stable_offset"] = p.log.last_stable_offset
            out["log_start_offset"] = p.log.log_start_offset
            if err != ErrorCode.NONE:
                out["error_code"] = err
                if err == ErrorCode.NOT_LEADER_OR_FOLLOWER and v >= 12:
                    out["current_leader"] = current_leader(p)
                    if p.leader >= 0:
                        leaders.add(p.leader)
            else:
                read = read_partition(
                    p,
                    fetch_offset=req.get("fetch_offset", 0),
                    last_fetched_epoch=req.get("last_fetched_epoch", -1) if v >= 12 else -1,
                    read_committed=isolation == READ_COMMITTED,
                    list_aborted=isolation == READ_COMMITTED and v >= 4,
                    partition_max_bytes=req.get("partition_max_bytes", 1 << 20),
                    budget=max_bytes - total,
                    first=not total,
                    magic=magic,
                    zstd_allowed=v >= 10,
                )
                out["error_code"] = read.error
                if read.error:  # Kafka's error read result carries no offsets
                    out["high_watermark"] = out["last_stable_offset"] = -1
                    out["log_start_offset"] = -1
                if read.diverging_epoch is not None:
                    epoch, end = read.diverging_epoch
                    out["diverging_epoch"] = {"epoch": epoch, "end_offset": end}
                if read.chunks:
                    out["records"] = read.chunks
                    total += read.size
                if read.aborted is not None:
                    out["aborted_transactions"] = [
                        {"producer_id": pid, "first_offset": first} for pid, first in read.aborted
                    ]
        if incremental:
            changed = (
                out["error_code"] != 0
                or bool(out["records"])
                or out["high_watermark"] != sp.last_hw
                or out["last_stable_offset"] != sp.last_lso
                or out["log_start_offset"] != sp.last_log_start
                or "diverging_epoch" in out
            )
            if not changed:
                continue
        sent.append((sp, out))
        t = by_topic.get(tkey)
        if t is None:
            t = {"topic": sp.topic, "topic_id": sp.topic_id, "partitions": []}
            by_topic[tkey] = t
            order.append(t)
        t["partitions"].append(out)
    return order, total, leaders, sent

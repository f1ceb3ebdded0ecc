"""ShareFetch (key 78), versions 0-2 (KIP-932: v0 as Kafka 4.0's early access spoke it, v1
the GA version of Kafka 4.1+, v2 adds the acquire mode and RENEW acknowledgements).

A member of a share group fetches records it *acquires* (``cluster/share_groups.py``): each
partition answer carries whole record batches plus ``acquired_records`` ranges with their
delivery counts; the client hands out only the acquired offsets and acknowledges them
(ACCEPT=1, RELEASE=2, REJECT=3, GAP=0), piggy-backed on its next ShareFetch or with
ShareAcknowledge. Unacknowledged records return to Available when the acquisition lock
(``share.record.lock.duration.ms``) expires.

Share sessions: epoch 0 opens a session on this broker with the request's partitions (no
acknowledgements allowed: INVALID_REQUEST), later requests carry the next epoch
(INVALID_SHARE_SESSION_EPOCH otherwise; SHARE_SESSION_NOT_FOUND without a session), add
partitions or forget them (``forgotten_topics_data``) and fetch from every partition of the
session; -1 acknowledges, closes the session and releases what the member still holds here
(fetching in it is INVALID_REQUEST). Long polling: with nothing to acquire the request parks
until records arrive or are released, or ``max_wait_ms`` (capped by ``mockkafka.max.wait.ms``)
passes. Per partition: UNKNOWN_TOPIC_ID, UNKNOWN_TOPIC_OR_PARTITION,
TOPIC_AUTHORIZATION_FAILED, NOT_LEADER_OR_FOLLOWER (with ``current_leader`` and
``node_endpoints``); acknowledgement errors (INVALID_RECORD_STATE) in
``acknowledge_error_code``. v0: each partition acquires at most ``MAX_FETCH_RECORDS`` records
per request (Kafka 4.0's default of the broker's share fetch record limit); ``max_bytes`` and
``partition_max_bytes`` bound the new batches read (at least one batch, as KIP-74).

v1+: ``max_records`` caps the records acquired per partition (rounded up to whole batches in
the batch-optimized ``share_acquire_mode`` 0; exact in the record-limit mode 1, v2),
``batch_size`` caps each ``acquired_records`` run, ``max_bytes`` bounds the batches read
(``partition_max_bytes`` is gone), and the response carries ``acquisition_lock_timeout_ms``.
A session opened at v1+ closes with its connection (the member's records are released).
v2 ``is_renew_ack``: the acknowledgements may RENEW (type 4: the records stay acquired and
their lock restarts) and nothing is fetched; a RENEW without it is INVALID_REQUEST.
"""

from __future__ import annotations

import uuid
from typing import Any

from mockkafka.cluster.limits import limits
from mockkafka.cluster.share_groups import FINAL_SESSION_EPOCH, INITIAL_SESSION_EPOCH
from mockkafka.errors import ErrorCode
from mockkafka.handlers._share import (
    Target,
    acknowledge,
    find,
    group_and_session,
    leader_fields,
    session_partitions,
    share_response,
    top_error,
)
from mockkafka.handlers.base import Park, RequestContext, Result, handler
from mockkafka.protocol.codec import Message

MAX_FETCH_RECORDS = 500


#: ``share_acquire_mode`` (v2): whole batches even past ``max_records`` / exactly that many.
BATCH_OPTIMIZED, RECORD_LIMIT = 0, 1


@handler("ShareFetch", versions=(0, 2))
def handle(ctx: RequestContext, request: Message) -> Result:
    v = ctx.version
    epoch: int = request.get("share_session_epoch", 0)
    renew = v >= 2 and bool(request.get("is_renew_ack"))
    mode = request.get("share_acquire_mode", BATCH_OPTIMIZED) if v >= 2 else BATCH_OPTIMIZED
    if mode not in (BATCH_OPTIMIZED, RECORD_LIMIT):
        return top_error(ErrorCode.INVALID_REQUEST, f"Unknown ShareAcquireMode {mode}.")
    topics = request.get("topics") or []
    acks = [
        (t["topic_id"], p["partition_index"], p["acknowledgement_batches"])
        for t in topics
        for p in t.get("partitions") or []
        if p.get("acknowledgement_batches")
    ]
    if epoch == INITIAL_SESSION_EPOCH and acks:
        return top_error(
            ErrorCode.INVALID_REQUEST, "Acknowledgements are not allowed when opening a session."
        )
    if (
        v == 0
        and epoch == FINAL_SESSION_EPOCH
        and any(
            p.get("partition_max_bytes", 0) > 0 for t in topics for p in t.get("partitions") or []
        )
    ):
        return top_error(ErrorCode.INVALID_REQUEST, "A final share fetch may not fetch records.")
    found = group_and_session(ctx, request, bind_connection=v >= 1)
    if isinstance(found, dict):
        return found
    g, session, member_id, _ = found
    if epoch != FINAL_SESSION_EPOCH:
        session_partitions(session, topics, request.get("forgotten_topics_data") or [])

    # Acknowledgements are applied once, before any waiting.
    answers: dict[tuple[uuid.UUID, int], dict[str, Any]] = {}
    leaders: set[int] = set()
    for topic_id, idx, batches in acks:
        target, err, msg = acknowledge(ctx, g, member_id, topic_id, idx, batches, renew=renew)
        out = _partition(idx, target, leaders)
        out["acknowledge_error_code"] = err
        out["acknowledge_error_message"] = msg
        answers[(topic_id, idx)] = out
    lock_ms = {"acquisition_lock_timeout_ms": g.lock_duration_ms} if v >= 1 else {}
    if epoch == FINAL_SESSION_EPOCH:
        g.close_session(ctx.broker_id, member_id)
        return {**share_response(ctx, answers, leaders), **lock_ms}
    if renew:  # renewing locks only: nothing is acquired (KIP-1222)
        return {**share_response(ctx, answers, leaders), **lock_ms}

    lim = limits(ctx.cluster)
    max_wait = min(max(0, request.get("max_wait_ms", 0)), lim.max_wait_ms)
    max_bytes = min(request.get("max_bytes", 0x7FFFFFFF), lim.fetch_max_bytes)
    max_records = MAX_FETCH_RECORDS
    if v >= 1 and request.get("max_records", 0) > 0:
        max_records = request["max_records"]
    batch_size = max(0, request.get("batch_size", 0)) if v >= 1 else 0
    partition_max = {
        (t["topic_id"], p["partition_index"]): (
            p.get("partition_max_bytes", 1 << 20) if v == 0 else max_bytes
        )
        for t in topics
        for p in t.get("partitions") or []
    }
    deadline = ctx.now_ms + max_wait
    keys: tuple[Any, ...] = (
        ("share", g.group_id),
        *(
            ("partition", t.name, idx)
            for tid, idx in session.partitions
            if (t := ctx.cluster.topics_by_id.get(tid)) is not None
        ),
    )

    def build(timed_out: bool) -> Result:
        if g.dead or g.session(ctx.broker_id, member_id) is not session:
            # the group or session went away
            return {**share_response(ctx, answers, leaders), **lock_ms}
        got = False
        budget = max_bytes
        fetched: dict[tuple[uuid.UUID, int], dict[str, Any]] = {}
        for tid, idx in list(session.partitions):
            target = find(ctx, tid, idx)
            out = dict(answers.get((tid, idx)) or _partition(idx, target, leaders))
            if target.error != ErrorCode.NONE or target.partition is None:
                out["error_code"] = target.error
                fetched[(tid, idx)] = out
                got = True
                continue
            p = target.partition
            sp = g.share_partition(target.topic, idx, tid)
            limit = min(partition_max.get((tid, idx), 1 << 20), budget)
            acquired = sp.acquire(
                member_id,
                p,
                max_records=max_records,
                max_bytes=max(limit, 1),
                record_limit=mode == RECORD_LIMIT,
                batch_size=batch_size,
            )
            if acquired:
                chunks = sp.batches_for(p, acquired)
                budget -= sum(len(c) for c in chunks)
                out["records"] = chunks
                out["acquired_records"] = [
                    {
                        "first_offset": a.first_offset,
                        "last_offset": a.last_offset,
                        "delivery_count": a.delivery_count,
                    }
                    for a in acquired
                ]
                got = True
            if acquired or (tid, idx) in answers or epoch == INITIAL_SESSION_EPOCH:
                fetched[(tid, idx)] = out
        if not got and not answers and not timed_out and max_wait > 0:
            return Park(keys, deadline, build)
        return {**share_response(ctx, fetched, leaders), **lock_ms}

    return build(False)


def _partition(idx: int, target: Target, leaders: set[int]) -> dict[str, Any]:
    return {
        "partition_index": idx,
        "error_code": target.error,
        "acknowledge_error_code": 0,
        # Kafka sends empty (never null) records: librdkafka rejects a null set.
        "records": b"",
        "acquired_records": [],
        **leader_fields(target, leaders),
    }

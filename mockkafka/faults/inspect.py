"""Reading and editing decoded messages for the fault engine (sans-IO).

Requests and responses of the partition-level APIs share a shape: an array of topics (named
``topics``, ``topic_data``, ``responses``...), each with a name or topic id and an array of
partitions (``partitions``, ``partition_data``, ``partition_indexes``...) keyed by a
partition index. This module walks that shape generically, so one piece of code serves
Produce, Fetch, ListOffsets, OffsetCommit, OffsetFetch, OffsetForLeaderEpoch, Metadata...:

* :func:`request_info` -- the facts a rule matches on (topics, partitions, groups, ...);
* :func:`split_request` -- the request without the partitions a rule claims;
* :func:`partition_entries` -- every (topic, index, entry) of a response, for editing;
* :func:`partition_offsets` -- ``orders-0@12 hw15`` per partition, for traffic timelines;
* :func:`cut_trailing_batch` / :func:`corrupt_first_batch` -- record data edits.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from mockkafka.faults.match import RequestInfo
from mockkafka.protocol import records as rec
from mockkafka.protocol.layout import PARTITION_ARRAYS, PARTITION_KEYS, TOPIC_ARRAYS, TOPIC_KEYS

TopicResolver = Callable[[uuid.UUID], str | None]


def _topic_name(entry: dict[str, Any], resolve: TopicResolver | None) -> str | None:
    for k in TOPIC_KEYS:
        v = entry.get(k)
        if isinstance(v, str) and v:
            return v
    tid = entry.get("topic_id")
    if isinstance(tid, uuid.UUID) and tid.int and resolve is not None:
        return resolve(tid)
    return None


def _partition_index(p: Any) -> int | None:
    if isinstance(p, int) and not isinstance(p, bool):
        return p
    if isinstance(p, dict):
        for k in PARTITION_KEYS:
            v = p.get(k)
            if isinstance(v, int):
                return v
    return None


def _partition_array(entry: dict[str, Any]) -> tuple[str, list[Any]] | None:
    for k in PARTITION_ARRAYS:
        v = entry.get(k)
        if isinstance(v, list):
            return k, v
    return None


def _topic_arrays(msg: Any) -> Iterator[list[Any]]:
    """Every topic array in ``msg``, also nested (OffsetFetch v8 groups[].topics)."""
    if isinstance(msg, dict):
        for k, v in msg.items():
            if isinstance(v, list):
                if k in TOPIC_ARRAYS and any(
                    isinstance(e, dict) and _partition_array(e) is not None for e in v
                ):
                    yield v
                else:
                    for e in v:
                        yield from _topic_arrays(e)
    elif isinstance(msg, list):
        for e in msg:
            yield from _topic_arrays(e)


def partition_entries(
    msg: dict[str, Any], resolve: TopicResolver | None = None
) -> Iterator[tuple[str | None, int, Any, list[Any], int]]:
    """(topic, index, entry, the partition array, position) for every partition in ``msg``."""
    for arr in _topic_arrays(msg):
        for t in arr:
            if not isinstance(t, dict):
                continue
            name = _topic_name(t, resolve)
            pa = _partition_array(t)
            if pa is None:
                continue
            for i, p in enumerate(pa[1]):
                idx = _partition_index(p)
                if idx is not None:
                    yield name, idx, p, pa[1], i


def _groups(request: dict[str, Any]) -> set[str]:
    out: set[str] = set()
    g = request.get("group_id")
    if isinstance(g, str):
        out.add(g)
    for key in ("groups", "group_ids"):
        v = request.get(key)
        if isinstance(v, list):
            for e in v:
                if isinstance(e, str):
                    out.add(e)
                elif isinstance(e, dict) and isinstance(e.get("group_id"), str):
                    out.add(e["group_id"])
    if request.get("key_type", 0) == 0:
        k = request.get("key")
        if isinstance(k, str) and k:
            out.add(k)
        keys = request.get("coordinator_keys")
        if isinstance(keys, list):
            out.update(k for k in keys if isinstance(k, str))
    return out


def request_info(
    api: str,
    version: int,
    request: dict[str, Any] | None,
    *,
    broker_id: int = 1,
    connection_id: int = 0,
    client_id: str | None = None,
    resolve: TopicResolver | None = None,
) -> RequestInfo:
    """The facts of a decoded request that rules match on."""
    req = request or {}
    topics: set[str] = set()
    parts: set[tuple[str, int]] = set()
    for name, idx, _p, _arr, _i in partition_entries(req, resolve):
        if name is not None:
            topics.add(name)
            parts.add((name, idx))
    all_topics = False
    if api == "Metadata":
        mt = req.get("topics")
        if mt is None:
            all_topics = True
        else:
            for t in mt:
                if isinstance(t, dict):
                    n = _topic_name(t, resolve)
                    if n:
                        topics.add(n)
    else:
        for key in ("topics", "topic_names"):
            v = req.get(key)
            if isinstance(v, list):
                for t in v:
                    if isinstance(t, str):
                        topics.add(t)
                    elif isinstance(t, dict):
                        n = _topic_name(t, resolve)
                        if n:
                            topics.add(n)
    tx = req.get("transactional_id")
    return RequestInfo(
        api=api,
        version=version,
        broker_id=broker_id,
        connection_id=connection_id,
        client_id=client_id,
        topics=_shared(frozenset(topics)),
        partitions=_shared(frozenset(parts)),
        all_topics=all_topics,
        groups=_shared(frozenset(_groups(req))),
        transactional_id=tx if isinstance(tx, str) else None,
        contexts=_contexts(api, version, req),
    )


#: APIs whose partitions may carry the client's current leader epoch (KIP-320).
_LEADER_EPOCH_APIS = frozenset({"Fetch", "ListOffsets", "OffsetForLeaderEpoch"})


def _contexts(api: str, version: int, req: dict[str, Any]) -> frozenset[str]:
    """The request contexts (``faults.match.REQUEST_CONTEXTS``) of a decoded request, as
    Kafka tells them apart: ``FetchMetadata.isFull`` (session epoch 0 or -1) has no session
    to fail; ``Partition.checkCurrentLeaderEpoch`` checks only an epoch that was sent;
    ``Partition.appendRecordsToLeader`` and ``DelayedProduce`` wait for replicas only for
    acks=-1; ``TransactionCoordinator.handleInitProducerId`` asks no coordinator for a null
    transactional id."""
    out: list[str] = []
    if api == "Fetch" and version >= 7:
        epoch = req.get("session_epoch", -1)
        if isinstance(epoch, int) and epoch > 0:
            out.append("fetch_session")
    if api in _LEADER_EPOCH_APIS and any(
        isinstance(p, dict)
        and isinstance(p.get("current_leader_epoch"), int)
        and p["current_leader_epoch"] >= 0
        for _t, _i, p, _arr, _pos in partition_entries(req)
    ):
        out.append("leader_epoch")
    if api == "Produce" and req.get("acks") == -1:
        out.append("acks_all")
    tx = req.get("transactional_id")
    if isinstance(tx, str) and tx:
        out.append("transactional")
    return _shared(frozenset(out))


#: One frozenset object per value seen lately (see :func:`_shared`).
_SHARED: dict[frozenset[Any], frozenset[Any]] = {}
_SHARED_MAX = 4096
_SHARED_SIZE = 64  # elements: bigger sets are not kept


def _shared(value: frozenset[Any]) -> frozenset[Any]:
    """``value``, or an equal frozenset made earlier. Every recorded exchange keeps its
    RequestInfo, and a client asks about the same topics and partitions again and again:
    sharing the sets keeps the traffic log from holding three new tracked objects per
    request, which every full garbage collection of a long ``serve`` had to walk."""
    if not value:
        return _EMPTY
    if len(value) > _SHARED_SIZE:
        return value  # rare, and not to be kept alive (a Metadata of 60,000 names)
    found = _SHARED.get(value)
    if found is not None:
        return found
    if len(_SHARED) >= _SHARED_MAX:
        _SHARED.clear()
    _SHARED[value] = value
    return value


_EMPTY: frozenset[Any] = frozenset()


def split_request(
    request: dict[str, Any],
    claimed: Callable[[str, int], bool],
    resolve: TopicResolver | None = None,
) -> tuple[dict[str, Any], int]:
    """A copy of ``request`` without the partitions ``claimed(topic, index)`` says are
    taken, and how many partitions remain (topics left with none are dropped)."""
    out = copy.copy(request)
    remaining = 0

    def walk(msg: dict[str, Any]) -> dict[str, Any]:
        nonlocal remaining
        new = dict(msg)
        for k, v in msg.items():
            if not isinstance(v, list):
                continue
            if k in TOPIC_ARRAYS and any(
                isinstance(e, dict) and _partition_array(e) is not None for e in v
            ):
                topics = []
                for t in v:
                    if not isinstance(t, dict):
                        continue
                    name = _topic_name(t, resolve)
                    pa = _partition_array(t)
                    if pa is None:
                        topics.append(t)
                        continue
                    keep = [
                        p
                        for p in pa[1]
                        if name is None
                        or (idx := _partition_index(p)) is None
                        or not claimed(name, idx)
                    ]
                    remaining += len(keep)
                    if keep:
                        topics.append({**t, pa[0]: keep})
                new[k] = topics
            elif any(isinstance(e, dict) for e in v):
                new[k] = [walk(e) if isinstance(e, dict) else e for e in v]
        return new

    out = walk(out)
    return out, remaining


# -- record data edits -------------------------------------------------------------------


def _as_bytes(records: Any) -> bytes:
    if records is None:
        return b""
    if isinstance(records, list | tuple):
        return b"".join(bytes(r) for r in records)
    return bytes(records)


def _entries(data: bytes) -> list[tuple[int, int]]:
    """(start, end) of each complete entry of a records blob."""
    out = []
    pos = 0
    n = len(data)
    while pos + rec.LOG_OVERHEAD <= n:
        length = int.from_bytes(data[pos + 8 : pos + 12], "big", signed=True)
        end = pos + rec.LOG_OVERHEAD + length
        if length <= 0 or end > n:
            break
        out.append((pos, end))
        pos = end
    return out


def complete_batches(records: Any) -> int:
    """How many complete batches (or legacy messages) a records blob holds."""
    return len(_entries(_as_bytes(records)))


def _cut(entry: bytes) -> bytes:
    """An entry cut mid-way: header complete, records section half there."""
    head = min(rec.V2_HEADER_SIZE, len(entry) - 1)
    return entry[: head + max(1, (len(entry) - head) // 2)][: len(entry) - 1]


def cut_trailing_batch(
    records: Any, next_batch: bytes | None = None, *, keep_complete: bool = False
) -> bytes | None:
    """``records`` ending in a partial batch, or None when there is nothing to cut.

    With two or more batches the last is cut mid-record; with one, a cut copy of
    ``next_batch`` (the batch that follows in the log) is appended, so the client always
    receives at least one complete batch, as from a real broker. ``keep_complete=True``
    (ShareFetch: every batch holds records the answer says were acquired, and Kafka acquires
    only from complete batches) never cuts one of ``records``: only a cut copy of
    ``next_batch`` is appended (None without one).
    """
    data = _as_bytes(records)
    ents = _entries(data)
    if keep_complete:
        return data[: ents[-1][1]] + _cut(next_batch) if ents and next_batch else None
    if len(ents) >= 2:
        s, e = ents[-1]
        return data[:s] + _cut(data[s:e])
    if len(ents) == 1 and next_batch:
        return data[: ents[0][1]] + _cut(next_batch)
    return None


def corrupt_first_batch(records: Any) -> bytes | None:
    """``records`` with one byte of the first batch's CRC-covered part flipped (the
    batch's max timestamp for v2, the message's last byte for v0/v1), or None if empty."""
    data = bytearray(_as_bytes(records))
    ents = _entries(bytes(data))
    if not ents:
        return None
    s, e = ents[0]
    magic = data[s + 16] if e - s > 16 else 2
    pos = s + 42 if magic >= 2 and e - s > 42 else e - 1
    data[pos] ^= 0xFF
    return bytes(data)


# Offsets worth showing in a one-line summary of an exchange (traffic.SUMMARY_LEGEND).
_SENT_OFFSETS = ("fetch_offset", "committed_offset", "offset")  # in the request
_RETURNED_OFFSETS = ("base_offset", "offset", "committed_offset", "end_offset", "low_watermark")


def partition_offsets(
    request: dict[str, Any] | None,
    response: dict[str, Any] | None,
    resolve: TopicResolver | None = None,
    *,
    limit: int = 4,
) -> str:
    """``orders-0@12 hw15 orders-1>7``: the partitions of an exchange with their offsets.

    Reads the request (offsets the client sent) and the response (offsets the broker
    returned); topics sent by id are named through ``resolve`` (else the id's first 8 hex
    digits). At most ``limit`` partitions, then ``+N more``. Empty for APIs without
    partitions.
    """
    shown: dict[tuple[str, int], str] = {}
    for msg, keys, sign in ((request, _SENT_OFFSETS, "@"), (response, _RETURNED_OFFSETS, ">")):
        for arr in _topic_arrays(msg) if msg else ():
            for t in arr:
                pa = _partition_array(t) if isinstance(t, dict) else None
                if pa is None:
                    continue
                name = _topic_name(t, resolve)
                if name is None:
                    tid = t.get("topic_id")
                    name = tid.hex[:8] if isinstance(tid, uuid.UUID) else "?"
                for p in pa[1]:
                    idx = _partition_index(p)
                    if idx is None:
                        continue
                    text = shown.setdefault((name, idx), "")
                    if isinstance(p, dict):
                        text += _offset_text(p, keys, sign)
                    shown[(name, idx)] = text
    out = [f"{t}-{p}{text}" for (t, p), text in list(shown.items())[:limit]]
    if len(shown) > limit:
        out.append(f"+{len(shown) - limit} more")
    return " ".join(out)


def _offset_text(entry: dict[str, Any], keys: tuple[str, ...], sign: str) -> str:
    text = ""
    for k in keys:
        v = entry.get(k)
        if isinstance(v, int) and not isinstance(v, bool) and v >= 0:
            text = f"{sign}{v}"
            break
    hw = entry.get("high_watermark") if sign == ">" else None
    if isinstance(hw, int) and not isinstance(hw, bool) and hw >= 0:
        text += f" hw{hw}"
    return text

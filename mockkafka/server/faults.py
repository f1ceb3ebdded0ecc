"""The fault executor: the server's ``fault_hook``, applying the actions of fired rules.

Theory of operation
-------------------
For each request :func:`apply_faults` asks the cluster's
:class:`~mockkafka.faults.engine.FaultEngine` which rules match, decides their triggers, and
applies the actions of those that fire, in phases:

1. before processing: ``Delay(before_processing=True)`` sleeps; ``DropConnection()``
   closes the connection (request lost); ``NeverRespond()`` waits until the client closes
   the connection (the request is never processed, nothing more is answered on it);
2. the response: a request-level ``Error`` answers every part of the request with the code
   (nothing is processed); a ``CustomHandler`` may answer instead; otherwise the handler
   runs -- on the request minus the partitions a partition-level ``Error`` claims for
   APIs that change state (Produce, OffsetCommit, ...), whose claimed partitions then get
   the error; for read-only APIs the claimed partitions of the real response are edited;
3. record data: ``PartialTrailingBatch`` / ``CorruptBatch`` rules are decided only now, for
   responses that carry records they can edit;
4. after processing: ``Throttle`` sets ``throttle_time_ms`` and mutes the connection
   (KIP-219: nothing more is read from it until the time has passed), ``Delay`` sleeps,
   ``DropConnection(after_processing=True)`` closes the connection without sending the
   (recorded) response.

Only one response-replacing rule fires per request (the first added); the names of the
rules that fired are recorded in the exchange's ``faults``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import trio

from mockkafka.errors import ErrorCode
from mockkafka.faults import coverage, record_edits
from mockkafka.faults.engine import FaultEngine, Rule
from mockkafka.faults.error_facts import APPLIED_FIRST
from mockkafka.faults.inspect import (
    corrupt_first_batch,
    cut_trailing_batch,
    partition_entries,
    request_info,
    split_request,
)
from mockkafka.faults.model import (
    Blackhole,
    CorruptBatch,
    CorruptPayload,
    CustomHandler,
    Delay,
    DropConnection,
    Duplicate,
    Error,
    LostAck,
    NeverRespond,
    PartialTrailingBatch,
    SchemaId,
    SkewTimestamps,
    Throttle,
)
from mockkafka.handlers.base import NO_RESPONSE, RequestContext, error_response
from mockkafka.protocol import records as rec
from mockkafka.protocol.codec import field_names
from mockkafka.protocol.framing import Request
from mockkafka.server.connection import RECEIVE_SIZE, CloseConnection
from mockkafka.server.traffic import Exchange

if TYPE_CHECKING:
    from mockkafka.cluster.state import ClusterState
    from mockkafka.server.connection import Connection
    from mockkafka.server.runtime import ClusterServer

#: APIs whose partition-level errors must keep the claimed partitions from being applied.
STATE_CHANGING = frozenset(
    {
        "Produce",
        "OffsetCommit",
        "TxnOffsetCommit",
        "DeleteRecords",
        "AddPartitionsToTxn",
        "WriteTxnMarkers",
        "AlterPartitionReassignments",
        "ElectLeaders",
        "OffsetDelete",
    }
)

_MISSING: Any = object()


#: APIs whose partitions a split request cannot leave out (their session carries them
#: between requests): the handler is told which partitions a rule answers with an error
#: (``RequestContext.fault_partitions``) and leaves their state alone. For Fetch this also
#: puts the partition in an incremental fetch session's response, which would otherwise
#: leave an unchanged partition out (and the error with it), as Kafka always includes a
#: partition with an error.
SESSION_STATE_CHANGING = frozenset({"ShareFetch", "ShareAcknowledge", "Fetch"})


def topic_resolver(state: ClusterState) -> Callable[[uuid.UUID], str | None]:
    """Topic id -> name in ``state`` (None for an unknown id)."""

    def resolve(tid: uuid.UUID) -> str | None:
        t = state.topics_by_id.get(tid)
        return t.name if t is not None else None

    return resolve


async def apply_faults(
    server: ClusterServer, conn: Connection, ctx: RequestContext, req: Request, ex: Exchange
) -> bytes | None:
    """The server's fault hook: run the request through the fault rules (see module doc)."""
    spec = server.handlers[ctx.header.api_key]
    body: dict[str, Any] = req.body or {}
    engine: FaultEngine = server.state.faults
    if not engine:
        return server.finish(ex, ctx, await server.run_handler(spec, ctx, body))
    resolve = topic_resolver(server.state)
    info = ex.info or request_info(
        ctx.api.name,
        ctx.version,
        body,
        broker_id=conn.broker_id,
        connection_id=conn.id,
        client_id=ctx.client_id,
        resolve=resolve,
    )
    fired, deferred = engine.select(info)
    if not fired and not deferred:
        return server.finish(ex, ctx, await server.run_handler(spec, ctx, body))
    ex.faults.extend(r.name for r in fired)
    coverage.note_fired(ctx.api.name, fired)
    actions = [(r, a) for r in fired for a in r.actions]

    # 1. before processing
    for _r, a in actions:
        if isinstance(a, Delay) and a.before_processing:
            await server.flush(conn)
            await trio.sleep(a.ms / 1000)
    for _r, a in actions:
        if isinstance(a, DropConnection) and not a.after_processing:
            ex.closed_connection = True
            ex.response_time_ms = server.state.now_ms()
            server.traffic.completed(ex)
            raise CloseConnection(f"fault: drop connection before {ctx.api.name}")
        if isinstance(a, Blackhole):
            # Swallowed: nothing processed, nothing answered, the connection read on.
            return server.finish(ex, ctx, NO_RESPONSE)
        if isinstance(a, NeverRespond):
            ex.no_response = True
            server.traffic.completed(ex)
            await server.flush(conn)
            await _wait_until_closed(conn)

    # 2. the response
    response: Any = _MISSING
    partition_errors: list[tuple[Rule, Error]] = []
    applied_errors: list[tuple[Rule, Error]] = []
    for r, a in actions:
        if isinstance(a, Error) and (ctx.api.name, a.code) in APPLIED_FIRST:
            applied_errors.append((r, a))  # Kafka says this after applying the request
        elif isinstance(a, Error):
            level = a.level
            if level == "auto":
                targeted = info.partitions or info.topics or info.all_topics
                level = "partition" if r.match.targets_partitions and targeted else "request"
            if level == "partition":
                partition_errors.append((r, a))
            elif response is _MISSING:
                response = _error_reply(ctx, body, a.error_code)
        elif isinstance(a, CustomHandler) and response is _MISSING:
            try:
                out = a.fn(body, ctx)
            except Exception as exc:
                server._record_error(exc)
                out = error_response(ctx, body, ErrorCode.UNKNOWN_SERVER_ERROR)
            if out is not None:
                response = out
    if response is _MISSING:
        if partition_errors and ctx.api.name in SESSION_STATE_CHANGING:
            for t, i in info.partitions:
                claim = _claim(partition_errors, t, i)
                if claim is not None:
                    ctx.fault_partitions[(t, i)] = int(claim.error_code)
        if partition_errors and ctx.api.name in STATE_CHANGING:
            response = await _run_split(server, spec, ctx, body, partition_errors, resolve)
        else:
            response = await server.run_handler(spec, ctx, body)
            if partition_errors and isinstance(response, dict):
                _edit_partitions(ctx, response, partition_errors, resolve)

    if applied_errors and isinstance(response, dict):
        _edit_applied(info, response, applied_errors, resolve)

    # 3. record data edits
    if deferred and isinstance(response, dict):
        for rule in deferred:
            if _edit_data(server, ctx, body, response, rule, engine, resolve):
                ex.faults.append(rule.name)
                fired.append(rule)
                coverage.note_fired(ctx.api.name, (rule,))

    # 4. after processing
    drop_after = False
    for _r, a in actions:
        if isinstance(a, Throttle):
            if isinstance(response, dict) and "throttle_time_ms" in field_names(
                ctx.api.response_name, ctx.version
            ):
                response["throttle_time_ms"] = a.ms
            conn.muted_until = max(conn.muted_until, trio.current_time() + a.ms / 1000)
        elif isinstance(a, Delay) and not a.before_processing:
            await server.flush(conn)
            await trio.sleep(a.ms / 1000)
        elif isinstance(a, DropConnection) and a.after_processing:
            drop_after = True
        elif isinstance(a, LostAck):
            drop_after = True  # applied; the answer never leaves
    ex.closed_connection = drop_after  # before finish(): the exchange completes once
    out = server.finish(ex, ctx, response)
    if drop_after:
        raise CloseConnection(f"fault: drop connection after {ctx.api.name}")
    return out


async def _wait_until_closed(conn: Connection) -> None:
    """Park a never-answered request until the client hangs up (reading and dropping
    whatever else it sends on this connection), then close."""
    while True:
        try:
            data = await conn.stream.receive_some(RECEIVE_SIZE)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            data = b""
        if not data:
            raise CloseConnection("fault: never respond; client closed the connection")


def _error_reply(ctx: RequestContext, body: dict[str, Any], code: ErrorCode) -> Any:
    if ctx.api.name == "Produce" and body.get("acks", 1) == 0:
        return NO_RESPONSE
    return error_response(ctx, body, code)


def _claim(errors: list[tuple[Rule, Error]], topic: str | None, idx: int) -> Error | None:
    if topic is None:
        return None
    for r, a in errors:
        if r.match.partition_matches(topic, idx):
            return a
    return None


async def _run_split(
    server: ClusterServer,
    spec: Any,
    ctx: RequestContext,
    body: dict[str, Any],
    errors: list[tuple[Rule, Error]],
    resolve: Any,
) -> Any:
    """Process the unclaimed partitions; answer the claimed ones with their error."""
    reduced, remaining = split_request(body, lambda t, i: _claim(errors, t, i) is not None, resolve)
    real: Any = await server.run_handler(spec, ctx, reduced) if remaining else None
    if real is NO_RESPONSE or (ctx.api.name == "Produce" and body.get("acks", 1) == 0):
        return NO_RESPONSE
    merged: dict[str, Any] = error_response(ctx, body, errors[0][1].error_code)
    real_entries: dict[tuple[str | None, int], Any] = {}
    if isinstance(real, dict):
        for t, i, entry, _arr, _pos in partition_entries(real, resolve):
            real_entries[(t, i)] = entry
    for t, i, _entry, arr, pos in partition_entries(merged, resolve):
        claim = _claim(errors, t, i)
        if claim is not None:
            arr[pos]["error_code"] = int(claim.error_code)
        elif (t, i) in real_entries:
            arr[pos] = real_entries[(t, i)]
    if isinstance(real, dict):
        for k, v in real.items():
            if not (k in merged and isinstance(v, list)):
                merged[k] = v
    return merged


def _edit_partitions(
    ctx: RequestContext, response: dict[str, Any], errors: list[tuple[Rule, Error]], resolve: Any
) -> None:
    for t, i, entry, _arr, _pos in partition_entries(response, resolve):
        claim = _claim(errors, t, i)
        if claim is not None and isinstance(entry, dict):
            entry["error_code"] = int(claim.error_code)
            if "records" in entry:
                # Empty, never null: Kafka sends an empty set with a partition error, and
                # librdkafka rejects a null one ("invalid MessageSetSize -1").
                entry["records"] = b""
    if ctx.api.name == "Metadata":
        for topic in response.get("topics") or []:
            name = topic.get("name")
            for r, a in errors:
                if (
                    r.match.partition is None
                    and name is not None
                    and r.match.partition_matches(name, 0)
                ):
                    topic["error_code"] = int(a.error_code)
                    break


def _edit_applied(
    info: Any, response: dict[str, Any], errors: list[tuple[Rule, Error]], resolve: Any
) -> None:
    """Answer an error Kafka sends only after applying the request (the batch is stored:
    DUPLICATE_SEQUENCE_NUMBER, NOT_ENOUGH_REPLICAS_AFTER_APPEND, REQUEST_TIMED_OUT) on the
    partitions the handler applied without error: the state is as the answer says."""
    for t, i, entry, _arr, _pos in partition_entries(response, resolve):
        if not isinstance(entry, dict) or entry.get("error_code", 0) != 0:
            continue
        for r, a in errors:
            per_partition = a.level == "partition" or (
                a.level == "auto"
                and r.match.targets_partitions
                and (info.partitions or info.topics or info.all_topics)
            )
            if per_partition and (t is None or not r.match.partition_matches(t, i)):
                continue
            entry["error_code"] = int(a.error_code)
            if "base_offset" in entry:
                entry["base_offset"] = -1
            break


def _magic_for(fetch_version: int) -> int:
    return 0 if fetch_version <= 1 else 1 if fetch_version <= 3 else 2


def _edit_data(
    server: ClusterServer,
    ctx: RequestContext,
    body: dict[str, Any],
    response: dict[str, Any],
    rule: Rule,
    engine: FaultEngine,
    resolve: Any,
) -> bool:
    """Apply a data-editing rule to the first partition it can edit; True if it fired."""
    edits_empty = any(a.edits_empty for a in rule.actions)
    for t, i, entry, _arr, _pos in partition_entries(response, resolve):
        if t is None or not isinstance(entry, dict) or entry.get("error_code", 0):
            continue
        if not entry.get("records") and not (edits_empty and "records" in entry):
            continue
        if not rule.match.partition_matches(t, i):
            continue
        edited = entry["records"]
        for a in rule.actions:
            new: bytes | None = None
            if isinstance(a, PartialTrailingBatch):
                if edited:
                    new = cut_trailing_batch(edited, _next_batch(server, ctx, body, t, i, edited))
            elif isinstance(a, CorruptBatch):
                if edited:
                    new = corrupt_first_batch(edited)
            elif isinstance(a, Duplicate):
                previous = _previous_batch(server, ctx, body, t, i, resolve)
                if previous is not None:
                    new = record_edits.prepend_batch(edited or b"", previous)
            elif edited:
                new = _edit_records(a, edited)
            if new is not None:
                edited = new
        if edited is entry["records"]:
            continue  # nothing this rule can edit here
        if not engine.decide(rule):
            return False
        entry["records"] = edited
        return True
    return False


def _edit_records(action: Any, data: Any) -> bytes | None:
    """The record-editing actions that need nothing but the records (CRC-valid edits)."""
    if isinstance(action, CorruptPayload):
        return record_edits.corrupt_payload(data, part=action.part, seed=action.seed)
    if isinstance(action, SchemaId):
        return record_edits.rewrite_schema_id(data, schema_id=action.id, magic=action.magic)
    if isinstance(action, SkewTimestamps):
        return record_edits.skew_timestamps(data, ms=action.ms)
    return None


def _previous_batch(
    server: ClusterServer,
    ctx: RequestContext,
    body: dict[str, Any],
    topic: str,
    idx: int,
    resolve: Any,
) -> bytes | None:
    """Fetch: the batch holding the offset just before this partition's fetch offset (what
    the consumer read last), at its original offsets; None at the log start."""
    t = server.state.topics.get(topic)
    if t is None or idx >= len(t.partitions):
        return None
    fetch_offset = None
    for rt, ri, entry, _arr, _pos in partition_entries(body, resolve):
        if rt == topic and ri == idx and isinstance(entry, dict):
            fetch_offset = entry.get("fetch_offset")
    log = t.partitions[idx].log
    if not isinstance(fetch_offset, int) or fetch_offset - 1 < log.log_start_offset:
        return None
    if fetch_offset > log.high_watermark:
        return None
    got = log.read(fetch_offset - 1, 1, upto=fetch_offset, magic=_magic_for(ctx.version))
    return got[0] if got else None


def _next_batch(
    server: ClusterServer,
    ctx: RequestContext,
    body: dict[str, Any],
    topic: str,
    idx: int,
    data: Any,
) -> bytes | None:
    """The batch after the last one in ``data`` (Fetch), if the log has it for this reader."""
    t = server.state.topics.get(topic)
    if t is None or idx >= len(t.partitions):
        return None
    raw = b"".join(data) if isinstance(data, list | tuple) else bytes(data)
    last = None
    for header, _raw in rec.iter_batches(raw):
        last = header
    if last is None:
        return None
    log = t.partitions[idx].log
    upto = log.last_stable_offset if body.get("isolation_level", 0) == 1 else log.high_watermark
    got = log.read(last.next_offset, 1, upto=upto, magic=_magic_for(ctx.version))
    return got[0] if got else None

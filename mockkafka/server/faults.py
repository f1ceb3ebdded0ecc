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
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, NoReturn

import trio

from mockkafka.errors import ErrorCode
from mockkafka.faults import coverage
from mockkafka.faults.actions import AFTER, BEFORE, CONNECTION, INSTEAD, PHASES, Action
from mockkafka.faults.engine import FaultEngine, Rule
from mockkafka.faults.inspect import partition_entries, request_info, split_request
from mockkafka.faults.model import Match, RequestInfo
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
#: ``connection_state`` key of a connection that answers nothing more (``FaultCall.silence``):
#: the names of the rules that silenced it.
SILENCED = "fault.silenced"


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


class ServerCall:
    """The :class:`~mockkafka.faults.actions.FaultCall` of one request on this server."""

    def __init__(
        self,
        server: ClusterServer,
        conn: Connection,
        ctx: RequestContext,
        ex: Exchange,
        body: dict[str, Any],
        info: RequestInfo,
        resolve: Callable[[uuid.UUID], str | None],
    ) -> None:
        self.server = server
        self.conn = conn
        self.context = ctx
        self.ex = ex
        self.api = ctx.api.name
        self.version = ctx.version
        self.request = body
        self.info = info
        self.resolve = resolve
        self.response: Any = _MISSING
        self.claims: list[tuple[Match, ErrorCode]] = []
        self.drop_after = False

    @property
    def answered(self) -> bool:
        return self.response is not _MISSING

    def error_response(self, code: ErrorCode) -> Any:
        return _error_reply(self.context, self.request, code)

    def claim(self, match: Match, code: ErrorCode) -> None:
        self.claims.append((match, code))

    def claimed(self, topic: str | None, index: int) -> ErrorCode | None:
        """The error the first claim covering this partition gives it, if any."""
        if topic is None:
            return None
        for m, code in self.claims:
            if m.partition_matches(topic, index):
                return code
        return None

    def partitions(self) -> Iterator[tuple[str | None, int, Any]]:
        if isinstance(self.response, dict):
            for t, i, entry, _arr, _pos in partition_entries(self.response, self.resolve):
                yield t, i, entry

    async def flush(self) -> None:
        await self.server.flush(self.conn)

    async def sleep(self, seconds: float) -> None:
        await trio.sleep(seconds)

    def close(self, reason: str) -> NoReturn:
        self.ex.closed_connection = True
        self.ex.response_time_ms = self.server.state.now_ms()
        self.server.traffic.completed(self.ex)
        raise CloseConnection(reason)

    def close_after_response(self) -> None:
        self.drop_after = True

    async def never_respond(self) -> NoReturn:
        self.ex.no_response = True
        self.server.traffic.completed(self.ex)
        await self.server.flush(self.conn)
        await _wait_until_closed(self.conn)

    def mute(self, seconds: float) -> None:
        self.conn.muted_until = max(self.conn.muted_until, trio.current_time() + seconds)

    def has_field(self, name: str) -> bool:
        return name in field_names(self.context.api.response_name, self.version)

    def next_batch(self, topic: str, index: int, records: Any) -> bytes | None:
        return _next_batch(self.server, self.context, self.request, topic, index, records)

    def previous_batch(self, topic: str, index: int) -> bytes | None:
        return _previous_batch(self.server, self.context, self.request, topic, index, self.resolve)

    def silence(self) -> None:
        self.context.connection_state[SILENCED] = tuple(self.ex.faults)

    def record_error(self, exc: BaseException) -> None:
        self.server._record_error(exc)


async def apply_faults(
    server: ClusterServer, conn: Connection, ctx: RequestContext, req: Request, ex: Exchange
) -> bytes | None:
    """The server's fault hook: run the request through the fault rules (see module doc)."""
    spec = server.handlers[ctx.header.api_key]
    body: dict[str, Any] = req.body or {}
    engine: FaultEngine = server.state.faults
    silenced = ctx.connection_state.get(SILENCED) if ctx.connection_state else None
    if silenced is not None:  # a blackhole swallowed a request on this connection
        ex.faults.extend(silenced)
        return server.finish(ex, ctx, NO_RESPONSE)
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
    api = ctx.api.name
    phased: dict[str, list[tuple[Rule, Action]]] = {p: [] for p in PHASES}
    for r in fired:
        for a in r.actions:
            phased[a.phase_on(api)].append((r, a))
    call = ServerCall(server, conn, ctx, ex, body, info, resolve)

    for r, a in phased[BEFORE]:
        await a.apply(call, r.match)
    for r, a in phased[INSTEAD]:
        await a.apply(call, r.match)
    if not call.answered:
        call.response = await _run_handler(server, spec, call)
    for r, a in phased[AFTER]:
        await a.apply(call, r.match)
    if deferred and isinstance(call.response, dict):
        for rule in deferred:
            if _edit_data(call, rule, engine):
                ex.faults.append(rule.name)
                fired.append(rule)
                coverage.note_fired(api, (rule,))
    for r, a in phased[CONNECTION]:
        await a.apply(call, r.match)
    ex.closed_connection = call.drop_after  # before finish(): the exchange completes once
    out = server.finish(ex, ctx, call.response)
    if call.drop_after:
        raise CloseConnection(f"fault: drop connection after {api}")
    return out


async def _run_handler(server: ClusterServer, spec: Any, call: ServerCall) -> Any:
    """The handler on the request, minus (or marking) the partitions claimed with errors."""
    ctx, body = call.context, call.request
    if call.claims and call.api in SESSION_STATE_CHANGING:
        for t, i in call.info.partitions:
            code = call.claimed(t, i)
            if code is not None:
                ctx.fault_partitions[(t, i)] = int(code)
    if call.claims and call.api in STATE_CHANGING:
        return await _run_split(server, spec, call)
    response = await server.run_handler(spec, ctx, body)
    if call.claims and isinstance(response, dict):
        _edit_partitions(call, response)
    return response


async def _wait_until_closed(conn: Connection) -> NoReturn:
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


async def _run_split(server: ClusterServer, spec: Any, call: ServerCall) -> Any:
    """Process the unclaimed partitions; answer the claimed ones with their error."""
    ctx, body = call.context, call.request
    reduced, remaining = split_request(
        body, lambda t, i: call.claimed(t, i) is not None, call.resolve
    )
    real: Any = await server.run_handler(spec, ctx, reduced) if remaining else None
    if real is NO_RESPONSE or (ctx.api.name == "Produce" and body.get("acks", 1) == 0):
        return NO_RESPONSE
    merged: dict[str, Any] = error_response(ctx, body, call.claims[0][1])
    real_entries: dict[tuple[str | None, int], Any] = {}
    if isinstance(real, dict):
        for t, i, entry, _arr, _pos in partition_entries(real, call.resolve):
            real_entries[(t, i)] = entry
    for t, i, _entry, arr, pos in partition_entries(merged, call.resolve):
        code = call.claimed(t, i)
        if code is not None:
            arr[pos]["error_code"] = int(code)
        elif (t, i) in real_entries:
            arr[pos] = real_entries[(t, i)]
    if isinstance(real, dict):
        for k, v in real.items():
            if not (k in merged and isinstance(v, list)):
                merged[k] = v
    return merged


def _edit_partitions(call: ServerCall, response: dict[str, Any]) -> None:
    for t, i, entry, _arr, _pos in partition_entries(response, call.resolve):
        code = call.claimed(t, i)
        if code is not None and isinstance(entry, dict):
            entry["error_code"] = int(code)
            if "records" in entry:
                # Empty, never null: Kafka sends an empty set with a partition error, and
                # librdkafka rejects a null one ("invalid MessageSetSize -1").
                entry["records"] = b""
    if call.api == "Metadata":
        for topic in response.get("topics") or []:
            name = topic.get("name")
            for m, code in call.claims:
                if m.partition is None and name is not None and m.partition_matches(name, 0):
                    topic["error_code"] = int(code)
                    break


def _magic_for(fetch_version: int) -> int:
    return 0 if fetch_version <= 1 else 1 if fetch_version <= 3 else 2


def _edit_data(call: ServerCall, rule: Rule, engine: FaultEngine) -> bool:
    """Apply a data-editing rule to the first partition it can edit; True if it fired."""
    edits_empty = any(type(a).EDITS_EMPTY for a in rule.actions)
    for t, i, entry in call.partitions():
        if t is None or not isinstance(entry, dict):
            continue
        if not entry.get("records") and not (
            edits_empty and "records" in entry and not entry.get("error_code")
        ):
            continue
        if not rule.match.partition_matches(t, i):
            continue
        edited = entry["records"]
        for a in rule.actions:
            new = a.edit_records(call, t, i, edited)
            if new is not None:
                edited = new
        if edited is entry["records"]:
            continue  # nothing this rule can edit here
        if not engine.decide(rule):
            return False
        entry["records"] = edited
        return True
    return False


def _previous_batch(
    server: ClusterServer,
    ctx: RequestContext,
    body: dict[str, Any],
    topic: str,
    idx: int,
    resolve: Callable[[uuid.UUID], str | None],
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
    if not isinstance(fetch_offset, int) or not log.log_start_offset < fetch_offset:
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

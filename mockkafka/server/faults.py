"""The fault stage of dispatch: the rules that fire on a request, their actions by phase.

Theory of operation
-------------------
``server/dispatch.py`` calls into this module at two points of its pipeline and never the
other way round (this module imports neither the dispatch nor the runtime):

- :func:`select` (stage ``faults_before``) asks the server's
  :class:`~mockkafka.faults.engine.FaultEngine` which rules fire (their firings are only
  *reserved*), and :func:`before` runs the ``BEFORE`` and ``INSTEAD`` actions through a
  :class:`ServerCall` -- the :class:`~mockkafka.faults.actions.FaultCall` an action sees:
  sleep, close the connection, never answer, answer with an error or a custom handler's
  dict, or claim partitions with an error code.
- the handler stage runs the handler on the request minus the claimed partitions for APIs
  that change state (:func:`split` / :func:`merge_split`), or on the whole request with the
  claimed partitions' entries edited (:func:`edit_claimed`); APIs with sessions (Fetch,
  ShareFetch) are told which partitions carry an error (:func:`mark_session_partitions`),
  so an incremental fetch response includes them, as Kafka does.
- :func:`after` (stage ``faults_after``) runs ``AFTER`` actions, decides the ``DATA``
  rules on the response's record data, then ``CONNECTION`` actions.
- the finish stage calls :func:`commit`: a rule counts as fired only when its effect
  reached the wire -- an answer sent carrying it, a connection closed or left silent by it.
  A claim that found no partition to put its error on, or a request whose connection died
  first, gives its reservation back (:func:`release`).

Only one response-replacing rule fires per request (the first added); the names of the
rules that fired are recorded in the exchange's ``faults``.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Awaitable, Callable, Iterable, Iterator
from typing import Any, NoReturn, Protocol

import trio

from mockkafka.cluster.state import ClusterState
from mockkafka.errors import ErrorCode, error_code
from mockkafka.faults import coverage
from mockkafka.faults.actions import AFTER, BEFORE, CONNECTION, DATA, INSTEAD, PHASES, Action
from mockkafka.faults.engine import FaultEngine, Rule
from mockkafka.faults.inspect import partition_entries, request_info, split_request
from mockkafka.faults.model import Match, RequestInfo
from mockkafka.handlers.base import NO_RESPONSE, RequestContext, error_response
from mockkafka.protocol import records as rec
from mockkafka.protocol.codec import field_names
from mockkafka.server.connection import RECEIVE_SIZE, CloseConnection, Connection
from mockkafka.server.traffic import Exchange, TrafficLog

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

#: APIs whose partitions a split request cannot leave out (their session carries them
#: between requests): the handler is told which partitions a rule answers with an error
#: (``RequestContext.fault_partitions``) and leaves their state alone. For Fetch this also
#: puts the partition in an incremental fetch session's response, which would otherwise
#: leave an unchanged partition out (and the error with it), as Kafka always includes a
#: partition with an error.
SESSION_STATE_CHANGING = frozenset({"ShareFetch", "ShareAcknowledge", "Fetch"})

#: ``ServerCall.response`` before anyone answered.
MISSING: Any = object()
#: ``connection_state`` key of a connection that answers nothing more (``FaultCall.silence``,
#: a blackhole): the names of the rules that silenced it.
SILENCED = "fault.silenced"


class Server(Protocol):
    """What the fault stage needs from the server (``ClusterServer`` is one)."""

    state: ClusterState
    traffic: TrafficLog

    async def flush(self, conn: Connection | int) -> None: ...
    def record_error(self, exc: BaseException) -> None: ...


def answers(api: str, body: dict[str, Any]) -> bool:
    """Whether a request gets a response at all (a Produce with acks=0 does not): the one
    place dispatch and faults decide it."""
    return not (api == "Produce" and body.get("acks", 1) == 0)


def topic_resolver(state: ClusterState) -> Callable[[uuid.UUID], str | None]:
    """Topic id -> name in ``state`` (None for an unknown id)."""

    def resolve(tid: uuid.UUID) -> str | None:
        t = state.topics_by_id.get(tid)
        return t.name if t is not None else None

    return resolve


class FaultCallBase:
    """What every :class:`~mockkafka.faults.actions.FaultCall` of this package shares: the
    rules reserved for the request, their actions by phase, the claims, the answer. The
    broker's :class:`ServerCall` and the proxy's ``ProxyCall`` add the I/O."""

    api: str
    version: int
    context: Any

    def __init__(
        self,
        engine: FaultEngine,
        ex: Exchange,
        body: dict[str, Any],
        info: RequestInfo,
        fired: list[Rule],
        deferred: list[Rule],
        resolve: Callable[[uuid.UUID], str | None],
    ) -> None:
        self._engine = engine
        self.ex = ex
        self.request = body
        self.info = info
        self.resolve = resolve
        self.response: Any = MISSING
        #: (match, code, rule) of each partition-level error.
        self.claims: list[tuple[Match, ErrorCode, Rule]] = []
        self.drop_after = False
        #: Rules whose firing is reserved and not yet committed or released.
        self.reserved: list[Rule] = list(fired)
        self.deferred = deferred
        #: Whether the data rules (``deferred``) saw the answer (``after`` ran).
        self.deferred_seen = False
        self.phased: dict[str, list[tuple[Rule, Action]]] = {p: [] for p in PHASES}
        for r in fired:
            for a in r.actions:
                self.phased[a.phase_on(info.api)].append((r, a))
        self._current: Rule | None = None

    @property
    def answered(self) -> bool:
        return self.response is not MISSING

    def error_body(self, body: dict[str, Any], code: ErrorCode) -> dict[str, Any]:
        """The answer to ``body`` with ``code`` in every error field."""
        raise NotImplementedError

    # I/O: each front end (broker, proxy) says what these mean for its connections.
    async def flush(self) -> None:
        raise NotImplementedError

    def close(self, reason: str) -> NoReturn:
        raise NotImplementedError

    async def never_respond(self) -> NoReturn:
        raise NotImplementedError

    def mute(self, seconds: float) -> None:
        raise NotImplementedError

    def next_batch(self, topic: str, index: int, records: Any) -> bytes | None:
        raise NotImplementedError

    def previous_batch(self, topic: str, index: int) -> bytes | None:
        return None  # only a front end holding the log has one

    def silence(self) -> None:
        raise NotImplementedError

    def record_error(self, exc: BaseException) -> None:
        raise NotImplementedError

    def error_response(self, code: ErrorCode) -> Any:
        if not answers(self.info.api, self.request):
            return NO_RESPONSE
        return self.error_body(self.request, code)

    def claim(self, match: Match, code: ErrorCode) -> None:
        assert self._current is not None
        self.claims.append((match, code, self._current))

    def partitions(self) -> Iterator[tuple[str | None, int, Any]]:
        if isinstance(self.response, dict):
            for t, i, entry, _arr, _pos in partition_entries(self.response, self.resolve):
                yield t, i, entry

    async def sleep(self, seconds: float) -> None:
        await trio.sleep(seconds)

    def close_after_response(self) -> None:
        self.drop_after = True

    def has_field(self, name: str) -> bool:
        from mockkafka.protocol.apis import api as lookup_api

        return name in field_names(lookup_api(self.info.api).response_name, self.info.version)

    def claimed(self, topic: str | None, index: int) -> tuple[ErrorCode, Rule] | None:
        """The error (and rule) of the first claim covering this partition, if any."""
        if topic is None:
            return None
        for m, code, rule in self.claims:
            if m.partition_matches(topic, index):
                return code, rule
        return None

    async def run(self, phase: str) -> None:
        """Apply the actions of ``phase`` of every rule that fired, in the order added."""
        for r, a in self.phased[phase]:
            self._current = r
            await a.apply(self, r.match)
        self._current = None


class ServerCall(FaultCallBase):
    """The :class:`~mockkafka.faults.actions.FaultCall` of one request on this server, and
    the fault stage's record of it (rules reserved, claims, drop-after)."""

    def __init__(
        self,
        server: Server,
        engine: FaultEngine,
        conn: Connection,
        ctx: RequestContext,
        ex: Exchange,
        body: dict[str, Any],
        info: RequestInfo,
        fired: list[Rule],
        deferred: list[Rule],
    ) -> None:
        super().__init__(engine, ex, body, info, fired, deferred, topic_resolver(ctx.cluster))
        self._server = server
        self._flush: Callable[[Connection | int], Awaitable[None]] = server.flush
        self.conn = conn
        self.context = ctx
        self.api = ctx.api.name
        self.version = ctx.version

    def error_body(self, body: dict[str, Any], code: ErrorCode) -> dict[str, Any]:
        out: dict[str, Any] = error_response(self.context, body, code)
        return out

    async def flush(self) -> None:
        await self._flush(self.conn)

    def close(self, reason: str) -> NoReturn:
        self.ex.closed_connection = True
        self.ex.response_time_ms = self._server.state.now_ms()
        self._server.traffic.completed(self.ex)
        commit(self)  # the client sees the connection close: the fault reached the wire
        raise CloseConnection(reason)

    async def never_respond(self) -> NoReturn:
        self.ex.no_response = True
        self._server.traffic.completed(self.ex)
        commit(self)  # silence is the effect; it is in force from now on
        await self._flush(self.conn)
        await _wait_until_closed(self.conn)

    def mute(self, seconds: float) -> None:
        self.conn.muted_until = max(self.conn.muted_until, trio.current_time() + seconds)

    def next_batch(self, topic: str, index: int, records: Any) -> bytes | None:
        return _next_batch(self.context, self.request, topic, index, records)

    def previous_batch(self, topic: str, index: int) -> bytes | None:
        return _previous_batch(self.context, self.request, topic, index, self.resolve)

    def silence(self) -> None:
        names = [r.name for r in self.reserved]
        self.context.connection_state[SILENCED] = tuple(names)

    def record_error(self, exc: BaseException) -> None:
        self._server.record_error(exc)


def select(
    engine: FaultEngine,
    conn: Connection,
    ctx: RequestContext,
    ex: Exchange,
    body: dict[str, Any],
    server: Server,
) -> ServerCall | None:
    """The rules that fire on this request (reserved), as a call; None when none does.
    On a silenced connection (a blackhole swallowed a request on it) the call answers
    nothing, whatever the rules say."""
    silenced = ctx.connection_state.get(SILENCED)
    if silenced is not None:
        ex.faults.extend(silenced)
        call = ServerCall(server, engine, conn, ctx, ex, body, RequestInfo(ctx.api.name), [], [])
        call.response = NO_RESPONSE
        return call
    if not engine.watches(ctx.api.name):
        return None  # no rule names this API: nothing to work out for it
    info = ex._info  # (the fault stage resolves topic ids among the live topics only)
    if info is None:
        info = ex.info = request_info(
            ctx.api.name,
            ctx.version,
            body,
            broker_id=conn.broker_id,
            connection_id=conn.id,
            client_id=ctx.client_id,
            resolve=topic_resolver(ctx.cluster),
        )
    if ctx.api.name == "ShareFetch":
        info = ex.info = share_session_info(ctx, body, info)
    elif ctx.api.name == "Fetch":
        info = fetch_session_info(ctx, body, info)
    fired, deferred = engine.select(info, reserve=True)
    if not fired and not deferred:
        return None
    return ServerCall(server, engine, conn, ctx, ex, body, info, fired, deferred)


def fetch_session_info(ctx: RequestContext, body: dict[str, Any], info: RequestInfo) -> RequestInfo:
    """``info`` with the partitions of the incremental fetch session (KIP-227) this Fetch
    continues: a caught-up consumer's session fetch names no partition, yet its answer
    carries the records that land meanwhile, so a rule on a topic or partition must see it.
    (For rules only: a traffic filter on a topic lists the fetches that named it.)"""
    session_id = body.get("session_id", 0) if ctx.version >= 7 else 0
    if not session_id or body.get("session_epoch", 0) in (0, -1):
        return info  # sessionless, opening (it names them all) or closing
    cache = ctx.cluster.fetch_sessions.get(ctx.broker_id)
    session = cache.sessions.get(session_id) if cache is not None else None
    if session is None:
        return info
    return _with_partitions(
        info,
        (
            (sp.topic or _topic_name(ctx, sp.topic_id), idx)
            for (_k, idx), sp in session.partitions.items()
        ),
    )


def _topic_name(ctx: RequestContext, topic_id: Any) -> str | None:
    t = ctx.cluster.topics_by_id.get(topic_id) if topic_id is not None else None
    return t.name if t is not None else None


def _with_partitions(info: RequestInfo, named: Iterable[tuple[str | None, int]]) -> RequestInfo:
    """``info`` whose topics and partitions include ``named`` (a session's partitions)."""
    parts = {(name, idx) for name, idx in named if name is not None}
    if parts <= info.partitions:
        return info
    return dataclasses.replace(
        info,
        topics=info.topics | {name for name, _ in parts},
        partitions=info.partitions | parts,
    )


def share_session_info(ctx: RequestContext, body: dict[str, Any], info: RequestInfo) -> RequestInfo:
    """``info`` with the partitions of the member's share session on this broker: a
    ShareFetch in an open session fetches from all of them though it names only those it
    adds or acknowledges, so a rule on a topic or partition (``topic=``, ``partition=``)
    must see every answer that can carry its records, not only the session's first, and a
    traffic filter every exchange that fetched from it (the traffic stage asks too)."""
    if body.get("share_session_epoch", 0) in (0, -1):
        return info  # opening: the request names them all; closing: it fetches nothing
    group_id, member_id = body.get("group_id"), body.get("member_id")
    if not isinstance(group_id, str) or not isinstance(member_id, str):
        return info
    g = ctx.cluster.groups.share_group(group_id, create=False)
    session = None if isinstance(g, ErrorCode) else g.session(ctx.broker_id, member_id)
    if session is None:
        return info
    return _with_partitions(info, ((_topic_name(ctx, tid), idx) for tid, idx in session.partitions))


async def before(call: ServerCall) -> None:
    """``BEFORE`` then ``INSTEAD`` actions."""
    await call.run(BEFORE)
    await call.run(INSTEAD)


def mark_session_partitions(call: ServerCall) -> None:
    """Tell a session API's handler which partitions a rule answers with an error."""
    if call.api not in SESSION_STATE_CHANGING:
        return
    for t, i in call.info.partitions:
        got = call.claimed(t, i)
        if got is not None:
            call.context.fault_partitions[(t, i)] = int(got[0])


def splits(call: FaultCallBase) -> bool:
    """Whether the claimed partitions are kept back from the handler (state-changing)."""
    return call.info.api in STATE_CHANGING


def split(call: FaultCallBase, body: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """``body`` minus the claimed partitions, and how many partitions remain."""
    return split_request(body, lambda t, i: call.claimed(t, i) is not None, call.resolve)


def merge_split(call: FaultCallBase, body: dict[str, Any], real: Any) -> Any:
    """The answer to a split request: the claimed partitions with their error, the others
    as the handler answered them (``real``, None when nothing remained)."""
    if real is NO_RESPONSE or not answers(call.info.api, body):
        return NO_RESPONSE
    merged: dict[str, Any] = call.error_body(body, call.claims[0][1])
    real_entries: dict[tuple[str | None, int], Any] = {}
    if isinstance(real, dict):
        for t, i, entry, _arr, _pos in partition_entries(real, call.resolve):
            real_entries[(t, i)] = entry
    hit: set[int] = set()
    for t, i, _entry, arr, pos in partition_entries(merged, call.resolve):
        got = call.claimed(t, i)
        if got is not None:
            arr[pos]["error_code"] = int(got[0])
            hit.add(id(got[1]))
        elif (t, i) in real_entries:
            arr[pos] = real_entries[(t, i)]
    if isinstance(real, dict):
        for k, v in real.items():
            if not (k in merged and isinstance(v, list)):
                merged[k] = v
    _release_missed_claims(call, hit)
    return merged


def edit_claimed(call: FaultCallBase, response: Any) -> None:
    """Put each claim's error on its partitions of the handler's answer."""
    hit: set[int] = set()
    if isinstance(response, dict):
        for t, i, entry, _arr, _pos in partition_entries(response, call.resolve):
            got = call.claimed(t, i)
            if got is not None and isinstance(entry, dict):
                entry["error_code"] = int(got[0])
                hit.add(id(got[1]))
                if "records" in entry:
                    # Empty, never null: Kafka sends an empty set with a partition error,
                    # and librdkafka rejects a null one ("invalid MessageSetSize -1").
                    entry["records"] = b""
        if call.info.api == "Metadata":
            for topic in response.get("topics") or []:
                name = topic.get("name")
                for m, code, rule in call.claims:
                    if m.partition is None and name is not None and m.partition_matches(name, 0):
                        topic["error_code"] = int(code)
                        hit.add(id(rule))
                        break
    if response is not NO_RESPONSE:
        _release_missed_claims(call, hit)


def _release_missed_claims(call: FaultCallBase, hit: set[int]) -> None:
    """A rule whose only effect was claims that found no partition in the answer did not
    reach the wire: give its firing back."""
    for rule in {id(r): r for _m, _c, r in call.claims}.values():
        if id(rule) in hit or rule not in call.reserved:
            continue
        if all(a.phase_on(call.info.api) == INSTEAD and _is_claim(a, call) for a in rule.actions):
            call.reserved.remove(rule)
            call._engine.release(
                rule,
                f"the answer held no partition of {_where(rule.match)} to put the error on",
                call.info.api,
            )


def _is_claim(action: Action, call: FaultCallBase) -> bool:
    return any(a is action for _r, a in call.phased[INSTEAD]) and not action.replaces_response


async def after(call: FaultCallBase, engine: FaultEngine) -> None:
    """``AFTER`` actions, the ``DATA`` rules on the answer's records, ``CONNECTION``."""
    await call.run(AFTER)
    call.deferred_seen = True
    if not isinstance(call.response, dict):
        for rule in call.deferred:
            engine.saw(rule)
            engine.decline(
                rule,
                "the request got no answer to edit (another rule held it back)",
                call.info.api,
            )
    else:
        for rule in call.deferred:
            engine.saw(rule)
            why = _edit_data(call, rule, engine.decide)
            if why is None:
                call.reserved.append(rule)
            elif why:
                engine.decline(rule, why, call.info.api)
        # a rule that fired for its other actions edits what records it finds too
        for rule in {id(r): r for r, _a in call.phased[DATA]}.values():
            _edit_data(call, rule, None)
    await call.run(CONNECTION)


def commit(call: FaultCallBase) -> None:
    """The answer (or the close, or the silence) is on its way: count the reserved rules
    as fired, name them in the exchange, note them for coverage."""
    if not call.reserved:
        return
    for rule in call.reserved:
        call._engine.commit(rule)
    call.ex.faults.extend(r.name for r in call.reserved if r.name not in call.ex.faults)
    coverage.note_fired(call.info.api, call.reserved)
    call.reserved = []


def release(
    call: FaultCallBase, reason: str = "the connection closed before the answer was sent"
) -> None:
    """The request ended before its answer reached the wire: give the firings back (the
    rules' ``declined`` says why)."""
    for rule in call.reserved:
        call._engine.release(rule, reason, call.info.api)
    call.reserved = []
    if not call.deferred_seen:  # the data rules never saw an answer: say so once
        call.deferred_seen = True
        for rule in call.deferred:
            call._engine.saw(rule)
            call._engine.decline(rule, reason, call.info.api)


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


def _edit_data(call: FaultCallBase, rule: Rule, decide: Callable[..., bool] | None) -> str | None:
    """Apply a rule's data edits to the first partition it can edit. None if it fired
    (``decide``: the engine's, reserving the firing until the answer is sent, the match
    counted already; None: the rule already fired); else why not: ``""`` when the trigger
    said no, else the reason it found nothing to edit (the first action's, or that no
    partition it names carried records)."""
    edits_empty = any(type(a).EDITS_EMPTY for a in rule.actions)
    why: str | None = None
    errors: set[int] = set()
    for t, i, entry in call.partitions():
        if t is None or not isinstance(entry, dict):
            continue
        if not rule.match.partition_matches(t, i):
            continue
        if entry.get("error_code"):
            errors.add(int(entry["error_code"]))
        if not entry.get("records") and not (
            edits_empty and "records" in entry and not entry.get("error_code")
        ):
            continue
        edited = entry["records"]
        for a in rule.actions:
            if a.phase_on(call.info.api) != DATA:
                continue
            new = a.edit_records(call, t, i, edited)
            if new is not None:
                edited = new
            elif why is None:
                why = f"{a.NAME}: {a.why_not(call, t, i, edited)}"
        if edited is entry["records"]:
            continue  # nothing this rule can edit here
        if decide is not None and not decide(rule, reserve=True, seen=False):
            return ""
        entry["records"] = edited
        return None
    if why is not None:
        return why
    where = _where(rule.match)
    if errors:
        names = ", ".join(sorted(_error_name(e) for e in errors))
        return f"the answer carried no records of {where}: it answered {names}"
    return f"the answer carried no records of {where}"


def _where(match: Match) -> str:
    """``topic 'orders' partition 1``: what a rule's match names of a partition."""
    if match.topic is None:
        return "any partition" if match.partition is None else f"partition {match.partition}"
    where = f"topic {match.topic!r}"
    if match.partition is not None:
        parts = match.partition
        where += f" partition {parts[0]}" if len(parts) == 1 else f" partitions {list(parts)}"
    return where


def _error_name(code: int) -> str:
    try:
        return error_code(code).name
    except ValueError:
        return str(code)


def _magic_for(fetch_version: int) -> int:
    return 0 if fetch_version <= 1 else 1 if fetch_version <= 3 else 2


def _previous_batch(
    ctx: RequestContext,
    body: dict[str, Any],
    topic: str,
    idx: int,
    resolve: Callable[[uuid.UUID], str | None],
) -> bytes | None:
    """Fetch: the batch holding the offset just before this partition's fetch offset (what
    the consumer read last), at its original offsets; None at the log start."""
    t = ctx.cluster.topics.get(topic)
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
    ctx: RequestContext, body: dict[str, Any], topic: str, idx: int, data: Any
) -> bytes | None:
    """The batch after the last one in ``data`` (Fetch, ShareFetch), if the log has it for
    this reader."""
    t = ctx.cluster.topics.get(topic)
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
    # ShareFetch (any version) reads record batches v2, as Fetch v4+ does.
    magic = 2 if ctx.api.name == "ShareFetch" else _magic_for(ctx.version)
    got = log.read(last.next_offset, 1, upto=upto, magic=magic)
    return got[0] if got else None

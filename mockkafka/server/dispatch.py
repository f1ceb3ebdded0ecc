"""Dispatch of one request as a pipeline of named stages.

Theory of operation
-------------------
:func:`dispatch` runs one request read from a connection through these stages, in order;
each is a function of the request's :class:`Dispatch` record, and none calls another (only
:func:`dispatch` sequences them, so a reader sees the whole path here):

1. ``version_gate``: a stopped broker answers nothing; ApiVersions with a version the
   broker does not serve gets the v0 UNSUPPORTED_VERSION answer; any other request at a
   version not advertised closes the connection (a protocol violation is noted).
2. ``authenticate``: on a SASL listener only ApiVersions/SaslHandshake/SaslAuthenticate
   before authentication, and nothing after the session expired (KIP-368).
   ``authorize``: with an authorizer, the ACL gate says whether the request is refused
   (answered by the handler stage) or which of its parts the handler may see.
3. ``traffic``: the exchange is opened in the traffic log (and a KIP-219 mute or a quota
   throttle from an earlier answer is waited out first).
4. ``faults_before``: the fault engine picks the rules that fire; their actions of the
   ``BEFORE`` and ``INSTEAD`` phases run (sleep, close, never answer, an error or a custom
   handler's answer, partitions claimed with an error).
5. ``handler``: unless answered, the handler runs (parks are followed) on the request minus
   the partitions faults or ACLs took out; the claimed partitions get their errors.
6. ``quotas``: client quotas count the request and throttle the answer.
7. ``faults_after``: ``AFTER``, ``DATA`` and ``CONNECTION`` actions (edit the answer, its
   record data, throttle, delay it, drop it after).
8. ``finish``: the answer is recorded in traffic and encoded; the rules whose effect
   reached the wire are counted as fired (:meth:`FaultEngine.commit`), the others are
   given back (:meth:`FaultEngine.release`).

The stages get what they need from the server through :class:`Host` (a protocol that
``ClusterServer`` implements), so this module does not import the runtime; the fault stage
talks to actions only through :class:`~mockkafka.server.faults.ServerCall`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import trio

from mockkafka.cluster.state import ClusterState
from mockkafka.cluster.violations import note as note_violation
from mockkafka.errors import ErrorCode
from mockkafka.faults.engine import FaultEngine
from mockkafka.handlers._quotas import THROTTLED_UNTIL, apply_quotas
from mockkafka.handlers.authz import gate
from mockkafka.handlers.base import (
    NO_RESPONSE,
    HandlerSpec,
    Park,
    RequestContext,
    error_response,
    served_versions,
)
from mockkafka.handlers.sasl_handshake import PRINCIPAL, SESSION_EXPIRES
from mockkafka.protocol.apis import API_BY_NAME, API_VERSIONS_KEY
from mockkafka.protocol.framing import Request
from mockkafka.server import faults as fault_stage
from mockkafka.server.connection import CloseConnection, Connection
from mockkafka.server.limits import costly_blobs, validate_produce_off_loop
from mockkafka.server.traffic import Exchange, TrafficLog

NEGOTIATED = "api_versions_negotiated"
"""``Connection.state`` key: the ranges this connection's ApiVersions answer listed."""

#: What a client may send on a SASL listener before it is authenticated (as in Kafka).
BEFORE_AUTH = frozenset(
    API_BY_NAME[n].key for n in ("ApiVersions", "SaslHandshake", "SaslAuthenticate")
)
PRODUCE_KEY = API_BY_NAME["Produce"].key
SHARE_FETCH_KEY = API_BY_NAME["ShareFetch"].key


class Host(Protocol):
    """What the stages need from the server (``ClusterServer`` is one)."""

    state: ClusterState
    traffic: TrafficLog
    faults: FaultEngine
    handlers: dict[int, HandlerSpec]
    sasl: bool

    def principal(self, conn: Connection) -> str: ...
    async def flush(self, conn: Connection | int) -> None: ...
    async def park(self, ctx: RequestContext, park: Park) -> bool: ...
    def notify(self) -> None: ...
    def record_error(self, exc: BaseException) -> None: ...
    def encode(self, ex: Exchange, ctx: RequestContext, response: Any) -> bytes: ...
    def unsupported_api_versions(self, conn: Connection, req: Request) -> bytes: ...


@dataclass(slots=True)
class Dispatch:
    """One request on its way through the stages."""

    host: Host
    conn: Connection
    req: Request
    spec: HandlerSpec | None = None
    ctx: RequestContext | None = None
    ex: Exchange | None = None
    body: dict[str, Any] = field(default_factory=dict)
    #: The body the handler may see (the ACL gate may take refused parts out) ...
    allowed: dict[str, Any] = field(default_factory=dict)
    #: ... and what puts the refused parts back into the answer.
    authz_finish: Callable[[Any], Any] | None = None
    refusal: Any = None
    call: fault_stage.ServerCall | None = None
    response: Any = fault_stage.MISSING
    #: An answer that ends the pipeline early (the version gate's own).
    early: bytes | None = None
    #: The handler ran (quotas count only what it processed).
    ran_handler: bool = False


# -- 1. version gate ------------------------------------------------------------------------


def version_gate(d: Dispatch) -> bool:
    """True when the request may go on; False when ``d.early`` is the whole answer."""
    host, conn, req = d.host, d.conn, d.req
    state = host.state
    if not state.brokers[conn.broker_id].running:
        # Stopped while this request was already read: its connection is being
        # cancelled; a stopped broker answers nothing more.
        raise CloseConnection(f"broker {conn.broker_id} is stopped")
    hdr = req.header
    spec = host.handlers.get(hdr.api_key)
    advertised = served_versions(state).get(hdr.api_key)
    if hdr.api_key == API_VERSIONS_KEY and advertised is None:
        # A release preset older than 0.10 has no ApiVersions: close, as those brokers did.
        raise CloseConnection(f"ApiVersions is not served by Kafka {state.config.kafka_version}")
    if hdr.api_key == API_VERSIONS_KEY and (
        req.body is None
        or advertised is None
        or not advertised[0] <= hdr.api_version <= advertised[1]
    ):
        d.early = host.unsupported_api_versions(conn, req)
        return False
    if req.body is None or spec is None or advertised is None:
        raise CloseConnection(str(req.error or f"no handler for {req.api_name}"))
    if not advertised[0] <= hdr.api_version <= advertised[1]:
        negotiated: dict[int, tuple[int, int]] | None = conn.state.get(NEGOTIATED)
        told = None if negotiated is None else negotiated.get(hdr.api_key)
        if told is None or not told[0] <= hdr.api_version <= told[1]:
            # (A version this connection was told, since capped, is not the client's fault.)
            note_violation(
                state,
                "version-not-served" if negotiated is None else "version-not-negotiated",
                f"{req.api_name} v{hdr.api_version}, but "
                + (
                    f"the broker serves v{advertised[0]}-v{advertised[1]}"
                    if negotiated is None
                    else "this connection's ApiVersions answer listed "
                    + (f"v{told[0]}-v{told[1]}" if told else f"no {req.api_name}")
                ),
                api=req.api_name,
                version=hdr.api_version,
                broker_id=conn.broker_id,
                connection_id=conn.id,
                client_id=hdr.client_id,
            )
        raise CloseConnection(
            f"{req.api_name} v{hdr.api_version} not served (advertised {advertised})"
        )
    d.spec = spec
    d.body = req.body
    return True


# -- 2. authentication and authorization --------------------------------------------------------


def authenticate(d: Dispatch) -> None:
    """SASL: nothing but the handshake before authentication, nothing after expiry."""
    host, conn, req = d.host, d.conn, d.req
    hdr = req.header
    if not host.sasl or hdr.api_key in BEFORE_AUTH:
        return
    if PRINCIPAL not in conn.state:
        note_violation(
            host.state,
            "request-before-sasl",
            f"{req.api_name} before SASL authentication completed (Kafka closes the "
            "connection: ILLEGAL_SASL_STATE)",
            api=req.api_name,
            version=hdr.api_version,
            broker_id=conn.broker_id,
            connection_id=conn.id,
            client_id=hdr.client_id,
        )
        raise CloseConnection(f"{req.api_name} before SASL authentication")
    expires = conn.state.get(SESSION_EXPIRES)
    if expires is not None and host.state.now_ms() > expires:  # KIP-368: not re-authenticated
        raise CloseConnection(f"{req.api_name} after the SASL session expired")


def authorize(d: Dispatch) -> None:
    """With ACLs on: the refusal (answered by the handler stage unless a fault answers
    first), or the request the handler may see and how to put the refused parts back."""
    assert d.spec is not None
    ctx = RequestContext(
        cluster=d.host.state,
        broker_id=d.conn.broker_id,
        connection_id=d.conn.id,
        header=d.req.header,
        api=d.spec.api,
        now_ms=d.host.state.now_ms(),
        connection_state=d.conn.state,
        peer=d.conn.peer,
        principal=d.host.principal(d.conn),
    )
    d.ctx = ctx
    d.allowed = d.body
    if d.host.state.config.authorizer:  # the one check per request when ACLs are off
        d.refusal, d.allowed, d.authz_finish = gate(ctx, d.body)


# -- 3. traffic ---------------------------------------------------------------------------------


async def traffic(d: Dispatch) -> None:
    """Wait out a mute (KIP-219) or a quota throttle, then open the exchange."""
    host, conn, req = d.host, d.conn, d.req
    if conn.muted_until:
        # KIP-219: a throttled connection is not read until its throttle time is over.
        wait = conn.muted_until - trio.current_time()
        if wait > 0:
            await host.flush(conn)
            await trio.sleep(wait)
        conn.muted_until = 0.0
    quota_until = conn.state.pop(THROTTLED_UNTIL, None)
    if quota_until is not None and quota_until > host.state.now_ms():
        await trio.sleep((quota_until - host.state.now_ms()) / 1000)  # over quota
    assert d.spec is not None and d.ctx is not None
    hdr = req.header
    now = host.state.now_ms()
    d.ctx.now_ms = now
    if hdr.api_key == PRODUCE_KEY:
        costly = costly_blobs(d.body)
        if costly:
            await validate_produce_off_loop(d.ctx, costly)
    d.ex = host.traffic.start(
        time_ms=now,
        broker_id=conn.broker_id,
        connection_id=conn.id,
        client_id=hdr.client_id,
        api=d.spec.api.name,
        api_key=hdr.api_key,
        version=hdr.api_version,
        correlation_id=hdr.correlation_id,
        request=d.body,
        size=req.size,
        frame=req.frame or None,
        body_offset=req.body_offset,
        # What traffic filters match on is worked out when one first needs it (or by the
        # fault stage, when a rule is there to see the request): not on every request.
        resolve=host.state.resolve_topic_id,
    )
    if hdr.api_key == SHARE_FETCH_KEY and d.ex.info is not None:
        # a share session's fetch reads partitions its request does not name
        d.ex.info = fault_stage.share_session_info(d.ctx, d.body, d.ex.info)


# -- 4. faults, before the handler ---------------------------------------------------------------


async def faults_before(d: Dispatch) -> None:
    """Pick the rules that fire; run their ``BEFORE`` and ``INSTEAD`` actions."""
    engine = d.host.faults
    if not engine and fault_stage.SILENCED not in d.conn.state:
        return
    assert d.ctx is not None and d.ex is not None
    d.call = fault_stage.select(engine, d.conn, d.ctx, d.ex, d.body, d.host)
    if d.call is not None:
        await fault_stage.before(d.call)
        d.response = d.call.response


# -- 5. the handler ---------------------------------------------------------------------------


async def handler(d: Dispatch) -> None:
    """Run the handler unless a fault answered; claimed partitions get their errors."""
    call = d.call
    if call is not None and call.answered:
        d.response = call.response
        return
    assert d.ctx is not None and d.spec is not None
    ctx = d.ctx
    if d.refusal is not None:
        if not fault_stage.answers(ctx.api.name, d.body):
            # No response to carry the error: Kafka closes the connection.
            raise CloseConnection(f"{ctx.api.name} with acks=0 refused by the authorizer")
        d.response = d.refusal
    elif call is not None and call.claims:
        fault_stage.mark_session_partitions(call)
        if fault_stage.splits(call):
            reduced, remaining = fault_stage.split(call, d.allowed)
            real = await _run(d, reduced) if remaining else None
            d.response = fault_stage.merge_split(call, d.allowed, real)
        else:
            d.response = await _run(d, d.allowed)
            fault_stage.edit_claimed(call, d.response)
    else:
        d.response = await _run(d, d.allowed)
    if d.authz_finish is not None and d.response is not NO_RESPONSE:
        d.response = d.authz_finish(d.response)
    if call is not None:
        call.response = d.response


async def _run(d: Dispatch, body: dict[str, Any]) -> Any:
    """The handler to completion (following Park), a bug becoming an error reply."""
    assert d.spec is not None and d.ctx is not None
    host, ctx = d.host, d.ctx
    d.ran_handler = True
    try:
        result = d.spec.fn(ctx, body)
        host.notify()
        while isinstance(result, Park):
            timed_out = await host.park(ctx, result)
            ctx.now_ms = host.state.now_ms()
            result = result.resume(timed_out)
            host.notify()
    except (trio.Cancelled, CloseConnection):
        raise
    except Exception as exc:
        host.record_error(exc)
        host.notify()
        return error_response(ctx, body, ErrorCode.UNKNOWN_SERVER_ERROR)
    return result


# -- 6. quotas ------------------------------------------------------------------------------------


def quotas(d: Dispatch) -> None:
    """Count the request against client quotas; throttle the answer when over."""
    assert d.ctx is not None
    if d.ran_handler:
        apply_quotas(d.ctx, d.body, d.response)


# -- 7. faults, after the handler ---------------------------------------------------------------


async def faults_after(d: Dispatch) -> None:
    """``AFTER``, ``DATA`` and ``CONNECTION`` actions of the rules that fired."""
    if d.call is not None:
        d.call.response = d.response
        await fault_stage.after(d.call, d.host.faults)
        d.response = d.call.response


# -- 8. finish ------------------------------------------------------------------------------------


def finish(d: Dispatch) -> bytes | None:
    """Record the answer in traffic and encode it (None: no answer). Counts the fault
    rules whose effect is in it; a drop-after fault closes the connection now."""
    assert d.ex is not None and d.ctx is not None
    host, ex, call = d.host, d.ex, d.call
    if call is not None:
        ex.closed_connection = call.drop_after  # before completing: it completes once
        fault_stage.commit(call)  # names the rules in the exchange before it completes
    ex.response_time_ms = host.state.now_ms()
    if d.response is NO_RESPONSE:
        ex.no_response = True
        host.traffic.completed(ex)
        out = None
    else:
        out = host.encode(ex, d.ctx, d.response)
    if call is not None and call.drop_after:
        raise CloseConnection(f"fault: drop connection after {d.ctx.api.name}")
    return out


# -- the pipeline ------------------------------------------------------------------------------


#: The stages in order (names for docs and tests; :func:`dispatch` runs them).
STAGES = (
    "version_gate",
    "authenticate",
    "authorize",
    "traffic",
    "faults_before",
    "handler",
    "quotas",
    "faults_after",
    "finish",
)


async def dispatch(host: Host, conn: Connection, req: Request) -> bytes | None:
    """Handle one request; returns the response frame, or None for no response."""
    d = Dispatch(host, conn, req)
    if not version_gate(d):
        return d.early
    authenticate(d)
    authorize(d)
    await traffic(d)
    try:
        await faults_before(d)
        await handler(d)
        quotas(d)
        await faults_after(d)
        return finish(d)
    except BaseException:
        if d.call is not None:
            fault_stage.release(d.call)
        raise

"""The trio side: listeners per broker, the connection loop, dispatch and parked requests.

Theory of operation
-------------------
:class:`ClusterServer` owns a :class:`~mockkafka.cluster.state.ClusterState` and runs inside
one trio nursery. Each broker gets a listener on 127.0.0.1 inside its own cancel scope, so
stopping a broker closes its listener and every connection to it at once. Each connection is
served by one task that reads bytes into a sans-IO
:class:`~mockkafka.protocol.framing.ServerConnection` and handles the requests it yields
strictly in order, one at a time, as Kafka does; a Produce with acks=0 gets no response.
The answers to requests a client pipelined go out in one write (:meth:`ClusterServer.flush`);
anything that makes a request wait sends the answers held before it first.

A handler that returns :class:`~mockkafka.handlers.base.Park` (long-poll Fetch, JoinGroup)
is resumed when the cluster notifies one of its keys or its deadline passes. A timer task
sleeps until the cluster's next timer and runs it.

An exception raised by handler code is a bug in mockkafka (or in a test's custom fault
handler): it is kept in :attr:`ClusterServer.errors` -- the public API re-raises it in the
test -- and the client gets UNKNOWN_SERVER_ERROR, so the test fails loudly and the broker
keeps serving. Only the first ``MAX_ERRORS`` are kept, with their frames' locals freed.

Limits (``server/limits.py``, values from ``cluster/limits.py``): accept errors such as
EMFILE are survived, ``max.connections`` per broker, ``connections.max.idle.ms``,
``queued.max.request.bytes`` across connections; memory is handed back to the OS after a
big request; a parked request whose client disconnects ends at once (its socket closes).
"""

from __future__ import annotations

import itertools
import logging
import math
import os
import socket
import time
import traceback
from collections.abc import Hashable
from typing import Any

import trio

from mockkafka.cluster.limits import limits
from mockkafka.cluster.security import SASL_PROTOCOLS, TLS_PROTOCOLS
from mockkafka.cluster.state import TIMERS_CHANGED, ClusterState
from mockkafka.cluster.violations import classify
from mockkafka.cluster.violations import note as note_violation
from mockkafka.errors import ErrorCode, ListenError
from mockkafka.faults.engine import engine_of
from mockkafka.handlers.base import (
    Park,
    RequestContext,
    error_response,
    load_handlers,
    served_versions,
)
from mockkafka.handlers.sasl_authenticate import SASL_FAILED, sasl_step
from mockkafka.handlers.sasl_handshake import PRINCIPAL, SASL_EXCHANGE, UNFRAMED
from mockkafka.protocol.apis import API_BY_NAME, API_VERSIONS_KEY
from mockkafka.protocol.errors import ProtocolError
from mockkafka.protocol.framing import NEED_DATA, Request, SaslToken, ServerConnection
from mockkafka.server.connection import RECEIVE_SIZE, CloseConnection, Connection
from mockkafka.server.dispatch import NEGOTIATED, dispatch
from mockkafka.server.limits import (
    BIG_FRAME,
    QueuedBytes,
    accept_connections,
    keep_error,
    release_memory,
)
from mockkafka.server.tls import TLS_PRINCIPAL, TlsMaterial, subject_dn
from mockkafka.server.traffic import Exchange, TrafficLog
from mockkafka.server.waits import StateSignal

log = logging.getLogger("mockkafka.server")

FLUSH_SIZE = 1024 * 1024  # send held responses once they are this large
# A connection's first requests come in a quick chain (ApiVersions, Metadata, then what the
# client connected for). After answering a Metadata among them, the broker reads what has
# arrived before sending (see _receive_nowait); nowhere else (each read is a syscall and,
# in-process, a GIL hand-off, and other clients' timing is left as it was).
PEEK_REQUESTS = 3
METADATA_KEY = API_BY_NAME["Metadata"].key


class ClusterServer:
    """Serves one ClusterState on 127.0.0.1; see the module docstring."""

    def __init__(
        self,
        state: ClusterState,
        *,
        host: str = "127.0.0.1",
        ports: dict[int, int] | None = None,
        traffic: TrafficLog | None = None,
        sockets: dict[int, socket.socket] | None = None,
    ) -> None:
        self.state = state
        #: Listening sockets bound before the server existed (``server/prebind.py``), by
        #: node id: each broker's first start serves its socket instead of binding anew.
        self._prebound = dict(sockets or {})
        self.host = host
        self.ports = dict(ports or {})
        # Not "traffic or ...": an empty TrafficLog is falsy (it has a length).
        self.traffic = traffic if traffic is not None else TrafficLog()
        #: Notified after each request step, timer run and verb: what waits sleep on.
        self.signal = StateSignal()
        self.traffic.signal = self.signal
        self.errors: list[BaseException] = []
        self.errors_dropped = 0  # errors beyond limits.MAX_ERRORS (not kept)
        self.queued = QueuedBytes()
        self._open_per_broker: dict[int, int] = {}
        cfg = state.config
        #: TLS material of an SSL cluster (server/tls.py), else None.
        self.tls = (
            TlsMaterial(host, client_auth=cfg.ssl_client_auth)
            if cfg.security_protocol in TLS_PROTOCOLS
            else None
        )
        self.sasl = cfg.security_protocol in SASL_PROTOCOLS
        #: True once every broker listened (ports are known).
        self.started = False
        self.connections: dict[int, Connection] = {}
        self._conn_ids = itertools.count(1)
        self._waiters: dict[Hashable, set[trio.Event]] = {}
        self._broker_scopes: dict[int, trio.CancelScope] = {}
        self._broker_done: dict[int, trio.Event] = {}
        self._nursery: trio.Nursery | None = None
        self._timer_wake = trio.Event()
        self.handlers = load_handlers()
        #: The fault rules consulted for every request (the server owns the engine; the
        #: cluster's events reach it through the state's notification).
        self.faults = engine_of(state)
        state.add_waker(self._wake)

    # -- lifecycle ----------------------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Start every running broker's listener and serve until cancelled."""
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                for node_id, broker in self.state.brokers.items():
                    if broker.running:
                        await nursery.start(self._serve_broker, node_id)
                nursery.start_soon(self._run_timers)
                nursery.start_soon(self._reap_idle_connections)
                self.started = True
                task_status.started()
        finally:
            for sock in self._prebound.values():  # a broker that never started
                sock.close()
            self._prebound.clear()
            if self.tls is not None:
                self.tls.close()

    async def _serve_broker(
        self, node_id: int, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        broker = self.state.brokers[node_id]
        port = self.ports.get(node_id, broker.port)
        done = self._broker_done[node_id] = trio.Event()
        try:
            try:
                sock = self._prebound.pop(node_id, None)
                listeners = (
                    [trio.SocketListener(trio.socket.from_stdlib_socket(sock))]
                    if sock is not None
                    else await trio.open_tcp_listeners(port, host=self.host)
                )
            except OSError as exc:  # say which broker and port: the caller may have chosen it
                raise ListenError(
                    exc.errno,
                    f"broker {node_id} cannot listen on {self.host}:{port}: {exc.strerror}",
                ) from None
            bound = listeners[0].socket.getsockname()[1]
            broker.host = self.host
            broker.port = bound
            self.ports[node_id] = bound
            with trio.CancelScope() as scope:
                self._broker_scopes[node_id] = scope
                task_status.started()
                try:
                    async with trio.open_nursery() as conns:
                        for listener in listeners:
                            conns.start_soon(self._accept_loop, listener, node_id, conns)
                finally:
                    for listener in listeners:
                        with trio.CancelScope(shield=True):
                            await listener.aclose()
            if self._broker_scopes.get(node_id) is scope:
                del self._broker_scopes[node_id]
        finally:
            done.set()

    async def _accept_loop(
        self, listener: trio.SocketListener, node_id: int, conns: trio.Nursery
    ) -> None:
        def admit() -> bool:
            return self._open_per_broker.get(node_id, 0) < limits(self.state).max_connections

        def serve(stream: trio.SocketStream) -> None:
            self._open_per_broker[node_id] = self._open_per_broker.get(node_id, 0) + 1
            wrapped = self.tls.wrap(stream) if self.tls is not None else stream
            conns.start_soon(self._serve_connection, wrapped, stream, node_id)

        await accept_connections(listener, serve, admit=admit)

    def stop_broker(self, node_id: int) -> None:
        """Close a broker's listener and connections (call on the trio thread)."""
        self.state.stop_broker(node_id)
        scope = self._broker_scopes.pop(node_id, None)
        if scope is not None:
            scope.cancel()
        self.signal.notify()

    async def start_broker(self, node_id: int) -> None:
        """Reopen a stopped broker on its old port (a running broker is left alone)."""
        self.state.broker(node_id)  # KafkaApiError for an unknown broker
        if node_id in self._broker_scopes:
            self.state.start_broker(node_id)
            return
        assert self._nursery is not None
        # The old listener may still be unwinding; its port is free once it is done.
        done = self._broker_done.get(node_id)
        if done is not None:
            await done.wait()
        await self._nursery.start(self._serve_broker, node_id)
        self.state.start_broker(node_id)
        self.signal.notify()

    # -- wake-ups and timers ------------------------------------------------------------------

    def _wake(self, key: Hashable) -> None:
        if key == TIMERS_CHANGED:
            self._timer_wake.set()
            return
        events = self._waiters.pop(key, None)
        if events:
            for ev in events:
                ev.set()

    async def _run_timers(self) -> None:
        while True:
            nxt = self.state.next_timer_at()
            self._timer_wake = trio.Event()
            if nxt is None:
                await self._timer_wake.wait()
                continue
            delay = (nxt - self.state.now_ms()) / 1000.0
            if delay > 0:
                with trio.move_on_after(delay):
                    await self._timer_wake.wait()
                continue
            try:
                self.state.run_timers()
            except Exception as exc:
                self.record_error(exc)
            self.signal.notify()

    async def wait_for_keys(self, keys: tuple[Hashable, ...], deadline_ms: int) -> bool:
        """Wait until one of ``keys`` is notified (False) or ``deadline_ms`` passes (True)."""
        delay = (deadline_ms - self.state.now_ms()) / 1000.0
        if delay <= 0:
            return True
        ev = trio.Event()
        for k in keys:
            self._waiters.setdefault(k, set()).add(ev)
        try:
            with trio.move_on_after(delay):
                await ev.wait()
                return False
            return True
        finally:
            for k in keys:
                s = self._waiters.get(k)
                if s is not None:
                    s.discard(ev)
                    if not s:
                        del self._waiters[k]

    # -- connections --------------------------------------------------------------------------

    async def _serve_connection(
        self, stream: trio.abc.Stream, sock: trio.SocketStream, node_id: int
    ) -> None:
        """Serve one connection; ``stream`` is ``sock`` itself, or TLS over it.

        A plain TCP connection is read and written on its file descriptor directly
        (non-blocking ``os.read``/``os.write``, waiting with ``wait_readable`` only when
        nothing is there): trio's stream wrappers cost a cancel scope, a conflict detector
        and a schedule point per call, a fifth of the broker's time per request. The task
        still yields once per round of requests, so a client that never stops sending does
        not starve the others. ``connections.max.idle.ms`` is enforced by
        :meth:`_reap_idle_connections`, not by a timeout per read."""
        cid = next(self._conn_ids)
        try:
            peer = "{}:{}".format(*sock.socket.getpeername()[:2])
        except OSError:
            peer = "?"
        codec = ServerConnection(max_frame_size=self.state.config.max_request_size)
        conn = Connection(cid, node_id, stream, peer, codec=codec)
        if type(stream) is trio.SocketStream:
            conn.fd = stream.socket.fileno()
        fd = conn.fd
        self.connections[cid] = conn
        big = False
        last_api = -1
        wait = True  # the next read waits for the socket first (nothing is expected yet)
        try:
            async with stream:
                with trio.CancelScope() as scope:
                    conn.scope = scope
                    while True:
                        data: bytes | bytearray
                        if fd >= 0:
                            if wait:
                                conn.idle_since = trio.current_time()
                                await trio.lowlevel.wait_readable(fd)
                            else:
                                await trio.lowlevel.checkpoint()  # bytes kept coming: yield
                            try:
                                data = os.read(fd, RECEIVE_SIZE)
                            except BlockingIOError:
                                wait = True
                                continue
                            except OSError:  # reset by the peer
                                return
                        else:
                            conn.idle_since = trio.current_time()
                            data = await stream.receive_some(RECEIVE_SIZE)
                        conn.idle_since = None
                        if not data:
                            return
                        # A short read means the socket is drained: wait before reading.
                        wait = len(data) < RECEIVE_SIZE
                        codec.receive_data(data)
                        del data
                        if (
                            self.queued.update(cid, codec.buffered)
                            > limits(self.state).queued_max_request_bytes
                        ):
                            log.debug("connection %d: queued.max.request.bytes reached", cid)
                            return
                        while True:
                            req = codec.next_event()
                            if req is NEED_DATA:
                                # Answer what the client pipelined with one write; at the
                                # start of a connection, a request that arrived while
                                # Metadata was being answered joins it (_receive_nowait).
                                if (
                                    conn.out
                                    and conn.requests <= PEEK_REQUESTS
                                    and last_api == METADATA_KEY
                                ):
                                    more = _receive_nowait(stream)
                                    if more:
                                        codec.receive_data(more)
                                        continue
                                break
                            if isinstance(req, SaslToken):
                                reply = self._unframed_sasl(conn, codec, req)
                                if reply is None:
                                    log.debug("connection %d: SASL authentication failed", cid)
                                    await self.flush(conn)
                                    return
                                conn.out += reply
                                continue
                            assert isinstance(req, Request)
                            self.queued.update(cid, codec.buffered)
                            big = big or req.size >= BIG_FRAME
                            conn.requests += 1
                            last_api = req.header.api_key
                            conn.in_flight = req.header
                            conn.in_flight_since = time.monotonic()
                            try:
                                out = await self.dispatch(conn, req)
                            except CloseConnection as close:
                                await self.flush(conn)
                                if close.pending:
                                    await stream.send_all(close.pending)
                                log.debug("closing connection %d: %s", cid, close)
                                return
                            conn.in_flight = None
                            if conn.state.pop(UNFRAMED, False):  # SaslHandshake v0 answered
                                codec.unframed_sasl = True
                            if conn.state.get(SASL_FAILED):  # answered, then closed (Kafka)
                                if out:
                                    conn.out += out
                                await self.flush(conn)
                                return
                            del req
                            if out:
                                big = big or len(out) >= BIG_FRAME
                                conn.out += out
                                if len(conn.out) >= FLUSH_SIZE:
                                    await self.flush(conn)
                            del out
                        await self.flush(conn)
                        if big:
                            release_memory()
                            big = False
                if scope.cancelled_caught:
                    log.debug("connection %d idle past connections.max.idle.ms", cid)
        except ProtocolError as exc:
            log.debug("connection %d from %s: %s; closing", cid, peer, exc)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        except Exception as exc:  # a bug: keep it for the test, drop only this connection
            self.record_error(exc)
        finally:
            self.connections.pop(cid, None)
            groups = self.state.groups_if_made  # a connection that made none has none
            if groups is not None:
                groups.connection_closed(cid)
            self._open_per_broker[node_id] = self._open_per_broker.get(node_id, 1) - 1
            self.queued.forget(cid)
            big = big or codec.buffered >= BIG_FRAME
            codec.clear()
            conn.codec = None
            if big:
                release_memory()

    async def _reap_idle_connections(self) -> None:
        """Close connections that waited for a request, or for the client to read an answer
        (:meth:`_send_blocked`), longer than ``connections.max.idle.ms`` (a connection busy
        with a request is not idle). Sleeps
        until the earliest one could expire; the value is read at every wake-up (Kafka
        reads it at start-up only)."""
        while True:
            idle = limits(self.state).connections_max_idle_ms / 1000
            now = trio.current_time()
            next_check = now + idle
            for conn in list(self.connections.values()):
                since = conn.idle_since
                if since is None or conn.scope is None:
                    continue
                if since + idle <= now:
                    conn.scope.cancel()
                else:
                    next_check = min(next_check, since + idle)
            await trio.sleep_until(next_check)

    async def close_connection(self, conn: Connection) -> None:
        await conn.stream.aclose()

    async def flush(self, conn: Connection | int) -> None:
        """Send the responses ``conn`` holds. Code that makes a request wait (a parked
        handler, a fault's delay) calls it first, so an answered request never waits behind
        a later one."""
        if isinstance(conn, int):
            found = self.connections.get(conn)
            if found is None:
                return
            conn = found
        out = conn.out
        if not out:
            return
        if conn.fd >= 0:  # plain TCP: write directly (see _serve_connection)
            try:
                sent = os.write(conn.fd, out)
            except BlockingIOError:
                sent = 0
            except OSError as exc:
                raise trio.BrokenResourceError(str(exc)) from exc
            if sent == len(out):
                out.clear()
                return
            data = bytes(memoryview(out)[sent:])
            out.clear()
            await self._send_blocked(conn, data)
            return
        data = bytes(out)
        out.clear()
        # TLS: no progress to watch; the wait for the whole answer counts as idle.
        busy = conn.idle_since
        conn.idle_since = trio.current_time()
        conn.send_blocked_since = time.monotonic()
        try:
            await conn.stream.send_all(data)
        finally:
            conn.send_blocked_since = None
            conn.idle_since = busy if busy is None else trio.current_time()

    async def _send_blocked(self, conn: Connection, data: bytes) -> None:
        """Write ``data`` to a plain TCP socket whose buffer is full. The wait for the client
        to read counts as idle: Kafka's idle expiry counts a connection idle while no bytes
        move in either direction (its Selector sees no event for a muted channel whose send
        is stuck), so a client that pipelines requests and never reads its answers is
        closed after ``connections.max.idle.ms``, as Kafka closes it. Each write that moves
        bytes starts the idle time again."""
        busy = conn.idle_since
        view = memoryview(data)
        conn.send_blocked_since = time.monotonic()
        try:
            while view:
                conn.idle_since = trio.current_time()
                await trio.lowlevel.wait_writable(conn.fd)
                try:
                    n = os.write(conn.fd, view)
                except BlockingIOError:
                    continue
                except OSError as exc:
                    raise trio.BrokenResourceError(str(exc)) from exc
                view = view[n:]
        finally:
            view.release()
            conn.send_blocked_since = None
            conn.idle_since = busy if busy is None else trio.current_time()

    # -- dispatch (the stages are in server/dispatch.py) ------------------------------------

    async def dispatch(self, conn: Connection, req: Request) -> bytes | None:
        """Handle one request; returns the response frame, or None for no response."""
        return await dispatch(self, conn, req)

    def notify(self) -> None:
        """Wake waits after a request step changed state (dispatch's Host)."""
        self.signal.notify()

    def _unframed_sasl(
        self, conn: Connection, codec: ServerConnection, token: SaslToken
    ) -> bytes | None:
        """Answer one raw SASL token (after SaslHandshake v0) with the server's token frame;
        None when authentication failed (Kafka closes the connection without an answer).
        Once the exchange completes, frames are Kafka requests again."""
        exchange = conn.state.get(SASL_EXCHANGE)
        if exchange is None:
            return None
        out, failure = sasl_step(conn.state, exchange, token.data)
        if failure is not None:
            return None
        if exchange.principal is not None:
            codec.unframed_sasl = False
        return ServerConnection.encode_sasl_token(out)

    def principal(self, conn: Connection) -> str:
        """Who the client is: ``User:<name>`` after SASL, ``User:<certificate subject>``
        for a TLS client certificate on an SSL listener (Kafka's default principal
        builder, e.g. ``User:CN=client,O=...``), else ``User:ANONYMOUS``."""
        named = conn.state.get(PRINCIPAL) or conn.state.get(TLS_PRINCIPAL)
        if named is not None:
            return str(named)
        if not self.sasl and isinstance(conn.stream, trio.SSLStream):
            try:
                cert = conn.stream.getpeercert()
            except (trio.NeedHandshakeError, ValueError):
                cert = None
            if cert:
                principal = "User:" + subject_dn(cert)
                conn.state[TLS_PRINCIPAL] = principal
                return principal
        return "User:ANONYMOUS"

    async def park(self, ctx: RequestContext, park: Park) -> bool:
        """Wait as ``park`` says, watching the connection: a client that disconnects ends
        the wait at once (CloseConnection), so its socket is not held until data arrives.
        Bytes the client sends meanwhile (a pipelined request) are kept for later; the
        responses held for earlier requests are sent first."""
        await self.flush(ctx.connection_id)
        conn = self.connections.get(ctx.connection_id)
        if conn is None or conn.codec is None:
            return await self.wait_for_keys(park.keys, park.deadline_ms)
        codec = conn.codec
        gone = False
        timed_out = False
        async with trio.open_nursery() as nursery:

            async def watch() -> None:
                nonlocal gone
                try:
                    data = await conn.stream.receive_some(RECEIVE_SIZE)
                    if data:
                        codec.receive_data(data)  # answered after the parked request
                        return
                except (trio.BrokenResourceError, trio.ClosedResourceError, ProtocolError):
                    pass
                gone = True
                nursery.cancel_scope.cancel()

            nursery.start_soon(watch)
            timed_out = await self.wait_for_keys(park.keys, park.deadline_ms)
            nursery.cancel_scope.cancel()
        if gone:
            raise CloseConnection("the client disconnected while its request was parked")
        return timed_out

    def encode(self, ex: Exchange, ctx: RequestContext, response: Any) -> bytes:
        """Record ``response`` in traffic and encode it (dispatch's finish stage)."""
        ex.response = response
        self._note_violations(ex, ctx, response)
        try:
            out = ServerConnection.encode_response(ctx.header, response)
        except Exception as exc:  # a custom fault handler built an unencodable response
            self.record_error(exc)
            ex.response = error_response(ctx, ex.request or {}, ErrorCode.UNKNOWN_SERVER_ERROR)
            out = ServerConnection.encode_response(ctx.header, ex.response)
        self.traffic.completed(ex, len(out), out)
        return out

    def _note_violations(self, ex: Exchange, ctx: RequestContext, response: Any) -> None:
        """Note the protocol violations an answer shows (see ``cluster/violations.py``)."""
        if not isinstance(response, dict):
            return
        if ex.api == "ApiVersions" and not response.get("error_code"):
            ctx.connection_state[NEGOTIATED] = {
                k["api_key"]: (k["min_version"], k["max_version"])
                for k in response.get("api_keys") or []
            }
        if ex.faults:
            return  # the test asked for this answer
        for rule, message in classify(ex.api, ex.request or {}, response):
            note_violation(
                self.state,
                rule,
                message,
                api=ex.api,
                version=ex.version,
                broker_id=ex.broker_id,
                connection_id=ex.connection_id,
                client_id=ex.client_id,
            )

    def unsupported_api_versions(self, conn: Connection, req: Request) -> bytes:
        body = {
            "error_code": ErrorCode.UNSUPPORTED_VERSION,
            "api_keys": [
                {"api_key": k, "min_version": lo, "max_version": hi}
                for k, (lo, hi) in served_versions(self.state).items()
            ],
        }
        now = self.state.now_ms()
        ex = self.traffic.start(
            time_ms=now,
            broker_id=conn.broker_id,
            connection_id=conn.id,
            client_id=req.header.client_id,
            api="ApiVersions",
            api_key=API_VERSIONS_KEY,
            version=req.header.api_version,
            correlation_id=req.header.correlation_id,
            request=req.body,
        )
        ex.response = body
        ex.response_time_ms = now
        self.traffic.completed(ex)
        return ServerConnection.encode_response(req.header, body, version=0)

    def record_error(self, exc: BaseException) -> None:
        """Keep an exception raised inside the broker for the test (see the module doc)."""
        log.error("error inside the broker:\n%s", "".join(traceback.format_exception(exc)))
        if not keep_error(self.errors, exc):
            self.errors_dropped += 1


def _receive_nowait(stream: trio.abc.ReceiveStream) -> bytes:
    """Bytes already waiting on a plain TCP stream, without blocking (b"" if none).

    Why: librdkafka sends FindCoordinator on its bootstrap connection right behind Metadata
    and drops that connection as soon as it has read the Metadata response; a FindCoordinator
    response that arrives in the same read is used, one that arrives later is lost and the
    client waits 500 ms for its coordinator-query timer. Answering both with one write is
    what a fast broker does by accident. A closed connection reads as no data here; the
    next receive_some sees the end of stream.
    """
    if type(stream) is not trio.SocketStream:
        return b""  # e.g. TLS: the bytes on the socket are not the stream's bytes
    try:
        return os.read(stream.socket.fileno(), RECEIVE_SIZE)
    except OSError:  # BlockingIOError (nothing there) or a platform without read() on sockets
        return b""


def deadline_after(state: ClusterState, ms: float) -> int:
    """Cluster time ``ms`` from now (infinite waits become a day)."""
    if math.isinf(ms):
        ms = 86_400_000
    return state.now_ms() + int(ms)

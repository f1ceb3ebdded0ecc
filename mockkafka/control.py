"""The HTTP/JSON control endpoint of ``mockkafka serve`` (h11 on trio, 127.0.0.1 only).

Test suites in other languages script the cluster at run time with the scenario grammar
(``docs/scenarios.md``): a step is ``{"move_leader": {...}}`` or ``{"fault": {...}}``,
a wait is ``{"after": {...}}`` or ``{"when": {...}}``. The OpenAPI 3 document is served at
``/openapi.json`` (``mockkafka/openapi.json``).

======  ====================  ===============================================================
POST    /steps                apply one step now (or, with at/after/when, once it holds: 202)
GET     /faults               the fault rules with their counters
DELETE  /faults               remove every fault rule
POST    /scenario             load (``{"name": ...}`` or ``{"yaml": ...}``) and start one
                              (409 while one plays, unless ``"replace": true``)
GET     /scenario             its progress; ``/scenario/check`` evaluates ``expect:``
POST    /wait                 wait for a condition (``{"after": ...}`` / ``{"when": ...}``)
GET     /traffic              recorded exchanges (``?api=&since_seq=&limit=``)
GET     /state                brokers, topics, groups, transactions
POST    /reset                a fresh cluster on the same ports
POST    /stop                 end ``mockkafka serve`` (exit 0)
======  ====================  ===============================================================

A bad request gets 400 with ``{"error": message}`` -- the message a Python test would get
(the scenario loader's, naming the field with a did-you-mean); a verb the cluster refuses gets
409 with the Kafka error; a wait that times out 408 with what was last seen.

Who may call it (the threat model is in ``docs/scenarios.md``, "Who can drive the control
endpoint"): anything that can open a socket to it can script the cluster, so the endpoint
refuses what a web page in the developer's browser could send, as local development servers
do (:meth:`ControlServer.refusal`): a ``Host`` that is not the listener's address or
``localhost`` (421: DNS rebinding), an ``Origin`` other than the endpoint itself or
``Sec-Fetch-Site: cross-site``/``same-site`` (403: a cross-origin page), a write (POST,
DELETE) whose ``Content-Type`` is not ``application/json`` (415: a form or ``text/plain``
post, which a browser sends cross-site without asking), and, when a token is set
(``serve --control-token TOKEN``, or a random one printed on the ``control=`` line when the
listener is not a loopback address), a request without ``Authorization: Bearer TOKEN`` (401).
A request must arrive whole within ``REQUEST_TIMEOUT`` seconds of its first byte (408, for
slow senders); headers are capped at 16 KiB (431) and bodies at 1 MiB (413). While the process
is out of file descriptors the accept loop backs off quietly, as the broker listeners do.
"""

from __future__ import annotations

import contextlib
import functools
import hmac
import ipaddress
import json
import logging
import secrets
import socket
from collections.abc import Awaitable, Callable
from importlib import resources
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import parse_qs, urlsplit

import trio

from mockkafka.errors import KafkaApiError, MockKafkaError

if TYPE_CHECKING:
    import h11

    from mockkafka._api.cluster import AsyncCluster
    from mockkafka._api.proxy import AsyncProxy
    from mockkafka.scenario.model import (
        DEFAULT_STEP_TIMEOUT_MS,
        Scenario,
        ScenarioError,
        did_you_mean,
        parse_duration_ms,
        start_from_dict,
        start_to_dict,
        step_from_dict,
    )
    from mockkafka.scenario.runner import ScenarioRun


def _load() -> None:
    """Import what serving HTTP and running scenarios need (h11, the scenario machinery, the
    proxy's class), once: a plain ``mockkafka serve`` pays for them on its control
    endpoint's first request, not at start-up (issue 28). Every entry point that uses these
    names calls this first."""
    if "h11" in globals():
        return
    import h11 as http

    from mockkafka._api.proxy import AsyncProxy as proxy_class
    from mockkafka.scenario import model
    from mockkafka.scenario.runner import ScenarioRun as run_class

    globals().update(
        h11=http,
        AsyncProxy=proxy_class,
        ScenarioRun=run_class,
        DEFAULT_STEP_TIMEOUT_MS=model.DEFAULT_STEP_TIMEOUT_MS,
        Scenario=model.Scenario,
        ScenarioError=model.ScenarioError,
        did_you_mean=model.did_you_mean,
        parse_duration_ms=model.parse_duration_ms,
        start_from_dict=model.start_from_dict,
        start_to_dict=model.start_to_dict,
        step_from_dict=model.step_from_dict,
    )


log = logging.getLogger("mockkafka.control")

MAX_BODY = 1 << 20
HOST = "127.0.0.1"
#: Seconds a request may take to arrive once its first byte is in (slow senders get 408).
REQUEST_TIMEOUT = 30.0
#: Connections served at once; more are closed at accept (a client holding many idle ones).
MAX_CONNECTIONS = 256
#: Methods that change the cluster: they must carry ``Content-Type: application/json``.
WRITES = frozenset({"POST", "DELETE", "PUT", "PATCH"})
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or ``localhost``) only accepts connections from this
    machine; a wildcard (``0.0.0.0``, ``::``) or another interface does not."""
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _split_host(value: str) -> tuple[str, int | None]:
    """``host[:port]`` or ``[v6][:port]`` -> (host lower-cased, port or None); raises
    ValueError on a malformed port."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            raise ValueError(value)
        host, rest = value[1:end], value[end + 1 :]
        if rest and not rest.startswith(":"):
            raise ValueError(value)
        return host, int(rest[1:]) if rest else None
    host, sep, port = value.rpartition(":")
    if not sep:
        return value, None
    return host, int(port)


class _SlowRequest(Exception):
    """A request that did not arrive within REQUEST_TIMEOUT of its first byte."""


#: What a caller who used the wrong method most likely wanted.
_METHOD_HINTS = {
    ("POST", "/faults"): '; to add a fault rule, POST /steps {"fault": {"on": API, ...}}',
}


class HttpError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


T = TypeVar("T")
Handler = Callable[[dict[str, Any], dict[str, list[str]]], Awaitable[tuple[int, Any]]]


def openapi() -> dict[str, Any]:
    """The OpenAPI 3 document of this endpoint."""
    text = resources.files("mockkafka").joinpath("openapi.json").read_text()
    doc: dict[str, Any] = json.loads(text)
    return doc


class ControlServer:
    """Serves the control endpoint for one :class:`~mockkafka.AsyncCluster` (or the
    :class:`~mockkafka.AsyncProxy` of ``mockkafka proxy``: the same routes, the steps and
    waits a proxy can run; ``/reset`` needs the fake).

    ``await nursery.start(server.serve)`` binds ``host`` (127.0.0.1 by default; ``port=0``:
    a free port) and hands back the port; ``stopped`` is set by ``POST /stop``.

    ``token``: every request must carry ``Authorization: Bearer TOKEN``. Without one, a
    listener that is not a loopback address gets a random token (``generated_token`` is
    then True: print it for the suite, as ``mockkafka serve`` does on its ``control=`` line).
    """

    def __init__(
        self,
        cluster: AsyncCluster | AsyncProxy,
        nursery: trio.Nursery,
        *,
        host: str = HOST,
        token: str | None = None,
    ) -> None:
        if token is not None and (not token or any(c.isspace() for c in token)):
            raise MockKafkaError(
                "the control token must be a non-empty string without spaces "
                "(it travels as 'Authorization: Bearer TOKEN')"
            )
        self.cluster = cluster
        self.nursery = nursery
        self.host = host
        self.generated_token = token is None and not is_loopback(host)
        self.token = secrets.token_urlsafe(24) if self.generated_token else token
        self.port = 0
        self._open = 0
        self.stopped = trio.Event()
        self._stop_requested = False
        self.scenario_run: ScenarioRun | None = None
        self.background: list[ScenarioRun] = []
        self.routes: dict[tuple[str, str], Handler] = {
            ("GET", "/openapi.json"): self._openapi,
            ("POST", "/steps"): self._steps,
            ("GET", "/faults"): self._faults,
            ("DELETE", "/faults"): self._clear_faults,
            ("POST", "/scenario"): self._scenario,
            ("GET", "/scenario"): self._scenario_status,
            ("POST", "/scenario/check"): self._scenario_check,
            ("POST", "/wait"): self._wait,
            ("GET", "/traffic"): self._traffic,
            ("GET", "/state"): self._state,
            ("POST", "/reset"): self._reset,
            ("POST", "/stop"): self._stop,
        }

    async def serve(
        self, port: int | socket.socket = 0, *, task_status: Any = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Serve on ``port``, or on a socket already listening (``server/prebind.py``)."""
        from mockkafka.server.limits import accept_connections

        listeners = (
            [trio.SocketListener(trio.socket.from_stdlib_socket(port))]
            if isinstance(port, socket.socket)
            else await trio.open_tcp_listeners(port, host=self.host)
        )
        self.port = listeners[0].socket.getsockname()[1]
        task_status.started(self.port)
        async with trio.open_nursery() as conns:

            def serve_one(stream: trio.SocketStream) -> None:
                conns.start_soon(self._connection, stream)

            for listener in listeners:
                conns.start_soon(
                    functools.partial(
                        accept_connections,
                        listener,
                        serve_one,
                        admit=lambda: self._open < MAX_CONNECTIONS,
                        quiet=True,
                    )
                )

    # -- who may call -------------------------------------------------------------------------

    def allowed_host(self, value: str) -> bool:
        """Whether a ``Host`` (or an ``Origin``'s host and port) names this listener: a
        loopback name or the bound address, and the listener's port when a port is given.
        A listener on a wildcard address accepts any host name: its token guards it."""
        try:
            host, port = _split_host(value)
        except ValueError:
            return False
        if port is not None and port != self.port:
            return False
        if host in LOOPBACK_NAMES or host == self.host.lower().strip("[]"):
            return True
        return self.token is not None and not is_loopback(self.host)

    def refusal(self, request: h11.Request) -> tuple[int, str, list[tuple[str, str]]] | None:
        """Why ``request`` is refused before it is read further (status, message, extra
        headers), or None: see the module docstring."""
        _load()
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in request.headers}
        host = headers.get("host")
        if host is None or not self.allowed_host(host):
            return (
                421,
                f"Host {host!r} is not this endpoint; call it as http://127.0.0.1:{self.port} "
                "or http://localhost:PORT (other host names are refused: DNS rebinding)",
                [],
            )
        if self.token is not None:
            auth = headers.get("authorization", "")
            scheme, _sep, given = auth.partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(
                given.strip().encode(), self.token.encode()
            ):
                return (
                    401,
                    "this endpoint needs 'Authorization: Bearer TOKEN' (the token of "
                    "--control-token, or the one printed on the control= line)",
                    [("www-authenticate", 'Bearer realm="mockkafka"')],
                )
        origin = headers.get("origin")
        if origin is not None:
            scheme, _sep, rest = origin.partition("://")
            if scheme.lower() != "http" or not rest or not self.allowed_host(rest.rstrip("/")):
                return (
                    403,
                    f"cross-origin request from {origin!r} refused: a web page may not script "
                    "the cluster",
                    [],
                )
        site = headers.get("sec-fetch-site", "").strip().lower()
        if site in ("cross-site", "same-site"):
            return (
                403,
                f"Sec-Fetch-Site: {site} request refused: a web page may not script the cluster",
                [],
            )
        method = request.method.decode("latin-1").upper()
        if method in WRITES:
            ctype = headers.get("content-type", "").partition(";")[0].strip().lower()
            if ctype != "application/json":
                return (
                    415,
                    f"{method} needs 'Content-Type: application/json' (got "
                    f"{headers.get('content-type')!r}), e.g. curl -H 'Content-Type: "
                    "application/json'",
                    [],
                )
        return None

    # -- HTTP plumbing ------------------------------------------------------------------------

    async def _connection(self, stream: trio.SocketStream) -> None:
        _load()
        self._open += 1
        conn = h11.Connection(h11.SERVER)
        try:
            for _ in range(10_000):  # requests per connection
                head = await self._read_head(conn, stream)
                if head is None:
                    return
                request, deadline = head
                refused = self.refusal(request)
                if refused is not None:
                    status, message, extra = refused
                    await self._send(conn, stream, status, {"error": message}, extra, close=True)
                    return
                body = await self._read_body(conn, stream, deadline)
                if body is None:
                    return
                status, payload = await self._dispatch(request, body)
                await self._send(conn, stream, status, payload)
                if self._stop_requested:
                    self.stopped.set()
                    return
                if conn.our_state is not h11.IDLE or conn.their_state is not h11.DONE:
                    return
                conn.start_next_cycle()
        except (h11.RemoteProtocolError, _SlowRequest) as exc:
            # not HTTP/1.1, headers over 16 KiB, a body over 1 MiB or too slow: answer 4xx
            # when h11 still lets us
            if conn.our_state in (h11.IDLE, h11.SEND_RESPONSE):
                if isinstance(exc, _SlowRequest):
                    status, message = 408, str(exc)
                else:
                    status, message = exc.error_status_hint, f"bad HTTP request: {exc}"
                with contextlib.suppress(
                    trio.BrokenResourceError, trio.ClosedResourceError, h11.LocalProtocolError
                ):
                    await self._send(conn, stream, status, {"error": message}, close=True)
        except (trio.BrokenResourceError, trio.ClosedResourceError, h11.ProtocolError):
            return
        finally:
            self._open -= 1
            with trio.CancelScope(shield=True):
                await stream.aclose()

    async def _send(
        self,
        conn: h11.Connection,
        stream: trio.SocketStream,
        status: int,
        payload: Any,
        extra: list[tuple[str, str]] | None = None,
        *,
        close: bool = False,
    ) -> None:
        data = json.dumps(payload, default=str).encode()
        headers = [
            ("content-type", "application/json"),
            ("content-length", str(len(data))),
            *(extra or []),
        ]
        if close:
            headers.append(("connection", "close"))
        await stream.send_all(
            (conn.send(h11.Response(status_code=status, headers=headers)) or b"")
            + (conn.send(h11.Data(data=data)) or b"")
            + (conn.send(h11.EndOfMessage()) or b"")
        )

    async def _receive(self, conn: h11.Connection, stream: trio.SocketStream) -> bytes:
        data = await stream.receive_some(65536)
        conn.receive_data(data)
        return bytes(data)

    async def _read_head(
        self, conn: h11.Connection, stream: trio.SocketStream
    ) -> tuple[h11.Request, float] | None:
        """The next request's line and headers and the deadline of its body, or None when
        the client closed. Waits as long as it takes for the first byte, then
        REQUEST_TIMEOUT for the rest of the request."""
        deadline: float | None = None
        for _ in range(100_000):
            event = conn.next_event()
            if event is h11.NEED_DATA:
                if deadline is None:
                    data = await self._receive(conn, stream)
                    deadline = trio.current_time() + REQUEST_TIMEOUT
                else:
                    data = await self._receive_by(conn, stream, deadline)
                if not data and conn.their_state is h11.IDLE:
                    return None
                continue
            if isinstance(event, h11.Request):
                if deadline is None:  # pipelined: it was buffered already
                    deadline = trio.current_time() + REQUEST_TIMEOUT
                return event, deadline
            if isinstance(event, h11.ConnectionClosed):
                return None
        return None

    async def _receive_by(
        self, conn: h11.Connection, stream: trio.SocketStream, deadline: float
    ) -> bytes:
        with trio.move_on_at(deadline):
            return await self._receive(conn, stream)
        raise _SlowRequest(
            f"the request did not arrive within {REQUEST_TIMEOUT:g} s of its first byte"
        )

    async def _read_body(
        self, conn: h11.Connection, stream: trio.SocketStream, deadline: float
    ) -> bytes | None:
        body = bytearray()
        for _ in range(100_000):
            event = conn.next_event()
            if event is h11.NEED_DATA:
                data = await self._receive_by(conn, stream, deadline)
                if not data and conn.their_state is h11.IDLE:
                    return None
                continue
            if isinstance(event, h11.Data):
                body += event.data
                if len(body) > MAX_BODY:
                    raise h11.RemoteProtocolError("body over 1 MiB", error_status_hint=413)
            elif isinstance(event, h11.EndOfMessage):
                return bytes(body)
            elif isinstance(event, h11.ConnectionClosed):
                return None
        return None

    async def _dispatch(self, request: h11.Request, body: bytes) -> tuple[int, Any]:
        _load()
        url = urlsplit(request.target.decode())
        method = request.method.decode()
        handler = self.routes.get((method, url.path))
        try:
            if handler is None:
                known = sorted({p for _m, p in self.routes})
                if any(p == url.path for _m, p in self.routes):
                    allowed = [m for m, p in self.routes if p == url.path]
                    raise HttpError(
                        405,
                        f"{method} {url.path}: use {', '.join(allowed)}"
                        + _METHOD_HINTS.get((method, url.path), ""),
                    )
                raise HttpError(404, f"no endpoint {url.path}; endpoints: {', '.join(known)}")
            doc: Any = {}
            if body:
                try:
                    doc = json.loads(body)
                except ValueError as exc:
                    raise HttpError(400, f"the body is not JSON: {exc}") from None
            if not isinstance(doc, dict):
                raise HttpError(400, f"the body must be a JSON object, got {doc!r}")
            return await handler(doc, parse_qs(url.query))
        except HttpError as exc:
            return exc.status, {"error": exc.message}
        except ScenarioError as exc:
            return 400, {"error": exc.message, "field": exc.field}
        except KafkaApiError as exc:
            return 409, {"error": str(exc)}
        except MockKafkaError as exc:
            return 400, {"error": str(exc)}
        except Exception as exc:  # a bug: answer 500 and keep serving (never end serve)
            log.exception("control endpoint: %s %s failed", method, url.path)
            return 500, {"error": f"internal error in mockkafka: {type(exc).__name__}: {exc}"}

    # -- endpoints ----------------------------------------------------------------------------

    async def _openapi(self, doc: dict[str, Any], q: dict[str, list[str]]) -> tuple[int, Any]:
        return 200, openapi()

    async def _steps(self, doc: dict[str, Any], q: dict[str, list[str]]) -> tuple[int, Any]:
        step = step_from_dict(doc, ())
        sc = Scenario(name="http", steps=(step,))
        sc.check_runs_on(self.cluster)  # a proxy names what it cannot do (400)
        run = ScenarioRun(sc, self.cluster)
        if step.start is None:
            await run.play()
            if run.problems:
                raise HttpError(409, run.problems[0])
            return 200, {"applied": step.label, "rules": list(run.rules)}
        self.background.append(run)
        self.nursery.start_soon(run.play)
        return 202, {"scheduled": step.label, "when": start_to_dict(step.start)}

    async def _faults(self, doc: dict[str, Any], q: dict[str, list[str]]) -> tuple[int, Any]:
        return 200, [
            {
                "name": r.name,
                "fired": r.fired,
                "matched": r.matched,
                "declined": dict(r.declined),
                "why_unfired": self.cluster.why_unfired(r).removeprefix(" -- "),
                "rule": repr(r),
            }
            for r in self.cluster.faults.rules()
        ]

    async def _clear_faults(self, doc: dict[str, Any], q: dict[str, list[str]]) -> tuple[int, Any]:
        self.cluster.faults.clear()
        return 200, {"cleared": True}

    async def _scenario(self, doc: dict[str, Any], q: dict[str, list[str]]) -> tuple[int, Any]:
        if ("name" in doc) == ("yaml" in doc) or set(doc) - {
            "name", "yaml", "parameters", "skip_expect", "replace"
        }:  # fmt: skip
            raise HttpError(
                400,
                'give {"name": LIBRARY_NAME_OR_PATH} or {"yaml": TEXT}, optionally with '
                '"parameters": {"topic": "payments", ...}, "skip_expect": ["committed"] and '
                '"replace": true',
            )
        params = doc.get("parameters", {})
        skip = doc.get("skip_expect", [])
        replace = doc.get("replace", False)
        if not isinstance(params, dict) or not isinstance(skip, list):
            raise HttpError(
                400, '"parameters" is an object {"NAME": VALUE}; "skip_expect" a list of checks'
            )
        if not isinstance(replace, bool):
            raise HttpError(400, f'"replace" is true or false, got {replace!r}')
        playing = self.scenario_run
        if playing is not None and not playing.finished and not replace:
            raise HttpError(
                409,
                f"scenario {playing.scenario.name!r} is still playing (step "
                f"{playing.steps_done} of {len(playing.scenario.steps)} done): wait until GET "
                '/scenario says "finished", or send "replace": true to cancel its steps left '
                "and start this one",
            )
        sc = (
            Scenario.load(str(doc["name"]), skip_expect=skip, **params)
            if "name" in doc
            else Scenario.from_yaml(
                str(doc["yaml"]), file="<POST /scenario>", skip_expect=skip, **params
            )
        )
        await self.start_scenario(sc)
        return 202, {"started": sc.name, "steps": len(sc.steps)}

    async def start_scenario(self, sc: Scenario) -> ScenarioRun:
        """Set up ``sc`` and play its steps in the background, in place of the scenario
        loaded before (its steps not yet run are cancelled once ``sc`` is set up)."""
        _load()
        sc.check_runs_on(self.cluster)
        run = ScenarioRun(sc, self.cluster)
        await self._blocking(run.setup)  # a refused setup leaves the scenario before playing
        if self.scenario_run is not None and not self.scenario_run.finished:
            self.scenario_run.cancel()
        self.scenario_run = run
        self.nursery.start_soon(run.play)
        return run

    def _need_run(self) -> ScenarioRun:
        if self.scenario_run is None:
            raise HttpError(409, "no scenario is loaded: POST /scenario first")
        return self.scenario_run

    async def _scenario_status(
        self, doc: dict[str, Any], q: dict[str, list[str]]
    ) -> tuple[int, Any]:
        run = self._need_run()
        return 200, {
            "name": run.scenario.name,
            "steps": len(run.scenario.steps),
            "steps_done": run.steps_done,
            "finished": run.finished,
            "problems": run.problems,
            "log": run.log,
        }

    async def _scenario_check(
        self, doc: dict[str, Any], q: dict[str, list[str]]
    ) -> tuple[int, Any]:
        run = self._need_run()
        failures = await self._blocking(run.failures)
        return 200, {"ok": not failures, "failures": failures}

    async def _wait(self, doc: dict[str, Any], q: dict[str, list[str]]) -> tuple[int, Any]:
        extra = set(doc) - {"after", "when", "timeout"}
        if extra:
            key = sorted(extra)[0]
            raise ScenarioError(
                (key,),
                f"unknown key {key!r}{did_you_mean(key, ('after', 'when', 'timeout'))}; "
                "a wait takes after or when, and timeout",
            )
        cond = start_from_dict(doc, ())
        if cond is None:
            raise HttpError(400, "a wait needs after or when (the start conditions of a step)")
        timeout = (
            parse_duration_ms(doc["timeout"], ("timeout",))
            if "timeout" in doc
            else DEFAULT_STEP_TIMEOUT_MS
        )
        run = ScenarioRun(Scenario(name="wait"), self.cluster)
        run.count_from_beginning()
        seen = await run.wait_for(cond, timeout_ms=timeout)
        if seen is not None:
            return 408, {"error": seen, "condition": start_to_dict(cond)}
        return 200, {"reached": start_to_dict(cond)}

    async def _traffic(self, doc: dict[str, Any], q: dict[str, list[str]]) -> tuple[int, Any]:
        def one(name: str) -> str | None:
            return q[name][-1] if name in q else None

        if not self.cluster.traffic.enabled:
            raise HttpError(409, "traffic recording is off (serve --no-traffic)")
        api = one("api")
        since = one("since_seq")
        limit = one("limit")
        try:
            since_seq = int(since) if since else 0
            n = int(limit) if limit else 1000
        except ValueError:
            raise HttpError(400, "since_seq and limit must be integers") from None
        if api is not None:
            from mockkafka.faults.model import check_api_names

            check_api_names(api, "api")
        items = self.cluster.traffic.requests(api, since_seq=since_seq)
        return 200, [ex.to_json() for ex in items[-n:]]

    async def _blocking(self, fn: Callable[[], T]) -> T:
        """``fn()``: in a worker thread for a proxy (it makes requests to the upstream)."""
        if isinstance(self.cluster, AsyncProxy):
            return await trio.to_thread.run_sync(fn)
        return fn()

    async def _state(self, doc: dict[str, Any], q: dict[str, list[str]]) -> tuple[int, Any]:
        return 200, await self._blocking(self._read_state)

    def _read_state(self) -> dict[str, Any]:
        _load()
        c = self.cluster
        topics = {}
        for name in c.topics():
            t = c.topic(name)
            topics[name] = [
                {
                    "partition": p.partition,
                    "leader": p.leader,
                    "leader_epoch": p.leader_epoch,
                    "replicas": list(p.replicas),
                    "isr": list(p.isr),
                    "log_start_offset": p.log_start_offset,
                    "high_watermark": p.high_watermark,
                }
                for p in t.partitions
            ]
        groups = {}
        for g in c.groups():
            v = c.group(g)
            groups[g] = {
                "state": v.state,
                "generation_id": v.generation_id,
                "members": [m.member_id for m in v.members],
                "committed": {f"{t}:{p}": o for (t, p), o in c.committed_offsets(g).items()},
            }
        if isinstance(c, AsyncProxy):  # the upstream's brokers, each at its listener here
            ports = c._server.ports
            return {
                "bootstrap_servers": c.bootstrap_servers,
                "brokers": [{"node_id": n, "port": ports[n]} for n in sorted(ports)],
                "topics": topics,
                "groups": groups,
                "transactions": {},
            }
        txns = {
            t.transactional_id: {"state": t.state, "committed": t.committed_count}
            for t in c.transactions()
        }
        return {
            "bootstrap_servers": c.bootstrap_servers,
            "brokers": [{"node_id": b.node_id, "port": b.port} for b in c.brokers],
            "topics": topics,
            "groups": groups,
            "transactions": txns,
        }

    async def _reset(self, doc: dict[str, Any], q: dict[str, list[str]]) -> tuple[int, Any]:
        if isinstance(self.cluster, AsyncProxy):
            raise HttpError(
                409,
                "reset needs the in-process fake (mockkafka serve); a proxy keeps Kafka's state",
            )
        for run in [*self.background, self.scenario_run]:
            if run is not None:
                run.cancel()
        self.background.clear()
        self.scenario_run = None
        await self.cluster.reset()
        return 200, {"reset": True}

    async def _stop(self, doc: dict[str, Any], q: dict[str, list[str]]) -> tuple[int, Any]:
        self._stop_requested = True  # set stopped once the answer is sent
        return 200, {"stopping": True}


# -- the OpenAPI document -----------------------------------------------------------------------


def build_openapi() -> dict[str, Any]:
    """The OpenAPI 3 document (shipped as ``openapi.json``; a test checks it is current)."""
    from mockkafka.scenario.schema import build_schema

    scenario = build_schema()
    step = scenario["properties"]["steps"]["items"]
    start = {k: step["properties"][k] for k in ("after", "when", "at")}

    def body(ref: str) -> dict[str, Any]:
        return {
            "required": True,
            "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{ref}"}}},
        }

    def ok(description: str, ref: str = "Any") -> dict[str, Any]:
        return {
            "description": description,
            "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{ref}"}}},
        }

    err = ok("a bad request: the message a Python test would get", "Error")
    paths: dict[str, Any] = {
        "/openapi.json": {
            "get": {"summary": "this document", "responses": {"200": ok("OpenAPI 3")}}
        },
        "/steps": {
            "post": {
                "summary": "apply a step now (a verb or a fault), or once its at/after/when holds",
                "requestBody": body("Step"),
                "responses": {
                    "200": ok("applied"),
                    "202": ok("scheduled: it runs once its start condition holds"),
                    "400": err,
                    "409": ok("the cluster refused the verb (a Kafka error)", "Error"),
                },
            }
        },
        "/faults": {
            "get": {"summary": "fault rules and counters", "responses": {"200": ok("rules")}},
            "delete": {"summary": "remove every fault rule", "responses": {"200": ok("cleared")}},
        },
        "/scenario": {
            "post": {
                "summary": "load a scenario (library name, path or YAML text) and start it",
                "requestBody": body("ScenarioRequest"),
                "responses": {
                    "202": ok("started"),
                    "400": err,
                    "409": ok(
                        "a scenario is still playing (send replace: true), or a topic it "
                        "declares exists with other partitions",
                        "Error",
                    ),
                },
            },
            "get": {
                "summary": "progress of the scenario",
                "responses": {"200": ok("steps done, problems, log"), "409": err},
            },
        },
        "/scenario/check": {
            "post": {
                "summary": "evaluate expect: now",
                "responses": {"200": ok("ok and failures"), "409": err},
            }
        },
        "/wait": {
            "post": {
                "summary": "wait until a condition holds (after/when, as in a step), counting "
                "every request and event since the cluster started",
                "requestBody": body("Wait"),
                "responses": {
                    "200": ok("reached"),
                    "400": err,
                    "408": ok("timed out: what was last seen", "Error"),
                },
            }
        },
        "/traffic": {
            "get": {
                "summary": "recorded exchanges, oldest first",
                "parameters": [
                    {"name": "api", "in": "query", "schema": {"type": "string"}},
                    {"name": "since_seq", "in": "query", "schema": {"type": "integer"}},
                    {"name": "limit", "in": "query", "schema": {"type": "integer"}},
                ],
                "responses": {"200": ok("exchanges"), "400": err},
            }
        },
        "/state": {
            "get": {"summary": "brokers, topics, groups", "responses": {"200": ok("state")}}
        },
        "/reset": {
            "post": {"summary": "a fresh cluster, same ports", "responses": {"200": ok("reset")}}
        },
        "/stop": {"post": {"summary": "end mockkafka serve", "responses": {"200": ok("stopping")}}},
    }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "mockkafka serve control endpoint",
            "version": "1",
            "description": "Script a fake Kafka cluster at run time; see docs/scenarios.md. "
            "Refused before routing: a Host that is not this endpoint (421), a cross-origin "
            "Origin or Sec-Fetch-Site (403), a POST/DELETE without Content-Type: "
            "application/json (415), and, when serve has a control token, a request without "
            "Authorization: Bearer TOKEN (401).",
        },
        "servers": [{"url": "http://127.0.0.1:{port}", "variables": {"port": {"default": "0"}}}],
        "paths": paths,
        "security": [{}, {"bearer": []}],
        "components": {
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "serve --control-token TOKEN, or the token printed on the "
                    "control= line of a listener that is not loopback",
                }
            },
            "schemas": {
                "Any": {},
                "Error": {
                    "type": "object",
                    "properties": {"error": {"type": "string"}, "field": {"type": "string"}},
                    "required": ["error"],
                },
                "Step": step,
                "Wait": {
                    "type": "object",
                    "properties": {
                        "after": start["after"],
                        "when": start["when"],
                        "timeout": step["properties"]["timeout"],
                    },
                    "additionalProperties": False,
                },
                "ScenarioRequest": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "yaml": {"type": "string"},
                        "parameters": {
                            "type": "object",
                            "description": "the scenario's parameters, e.g. {topic: payments}",
                        },
                        "skip_expect": {
                            "type": "array",
                            "items": {"type": "string"},
                            "description": "checks of expect: to leave out, e.g. [committed]",
                        },
                        "replace": {
                            "type": "boolean",
                            "default": False,
                            "description": "cancel the steps left of a scenario still "
                            "playing and start this one (without it: 409 while one plays)",
                        },
                    },
                    "additionalProperties": False,
                },
            },
        },
    }


if __name__ == "__main__":
    print(json.dumps(build_openapi(), indent=1))

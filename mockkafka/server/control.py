"""The HTTP/JSON control endpoint of ``mockkafka serve`` (h11 on trio, 127.0.0.1 only).

Test suites in other languages script the cluster at run time with the scenario grammar
(``docs/scenarios.md``): a step is ``{"move_leader": {...}}`` or ``{"fault": {...}}``,
a wait is ``{"after": {...}}`` or ``{"when": {...}}``. The OpenAPI 3 document is served at
``/openapi.json`` (``mockkafka/server/openapi.json``).

======  ====================  ===============================================================
POST    /steps                apply one step now (or, with at/after/when, once it holds: 202)
GET     /faults               the fault rules with their counters
DELETE  /faults               remove every fault rule
POST    /scenario             load (``{"name": ...}`` or ``{"yaml": ...}``) and start one
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
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlsplit

import h11
import trio

from mockkafka._api.cluster import AsyncCluster
from mockkafka.errors import KafkaApiError, MockKafkaError
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

MAX_BODY = 1 << 20
HOST = "127.0.0.1"
#: What a caller who used the wrong method most likely wanted.
_METHOD_HINTS = {
    ("POST", "/faults"): '; to add a fault rule, POST /steps {"fault": {"on": API, ...}}',
}


class HttpError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


Handler = Callable[[dict[str, Any], dict[str, list[str]]], Awaitable[tuple[int, Any]]]


def openapi() -> dict[str, Any]:
    """The OpenAPI 3 document of this endpoint."""
    text = resources.files("mockkafka.server").joinpath("openapi.json").read_text()
    doc: dict[str, Any] = json.loads(text)
    return doc


class ControlServer:
    """Serves the control endpoint for one :class:`~mockkafka.AsyncCluster`.

    ``await nursery.start(server.serve)`` binds 127.0.0.1 (``port=0``: a free port) and
    hands back the port; ``stopped`` is set by ``POST /stop``.
    """

    def __init__(self, cluster: AsyncCluster, nursery: trio.Nursery) -> None:
        self.cluster = cluster
        self.nursery = nursery
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

    async def serve(self, port: int = 0, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        listeners = await trio.open_tcp_listeners(port, host=HOST)
        task_status.started(listeners[0].socket.getsockname()[1])
        await trio.serve_listeners(self._connection, listeners)

    # -- HTTP plumbing ------------------------------------------------------------------------

    async def _connection(self, stream: trio.SocketStream) -> None:
        conn = h11.Connection(h11.SERVER)
        try:
            for _ in range(10_000):  # requests per connection
                request, body = await self._read_request(conn, stream)
                if request is None:
                    return
                status, payload = await self._dispatch(request, body)
                data = json.dumps(payload, default=str).encode()
                headers = [
                    ("content-type", "application/json"),
                    ("content-length", str(len(data))),
                ]
                await stream.send_all(
                    conn.send(h11.Response(status_code=status, headers=headers)) or b""
                )
                await stream.send_all(conn.send(h11.Data(data=data)) or b"")
                await stream.send_all(conn.send(h11.EndOfMessage()) or b"")
                if self._stop_requested:
                    self.stopped.set()
                    return
                if conn.our_state is not h11.IDLE or conn.their_state is not h11.DONE:
                    return
                conn.start_next_cycle()
        except h11.RemoteProtocolError as exc:
            # not HTTP/1.1 (or a body over 1 MiB): answer 400 when h11 still lets us
            if conn.our_state in (h11.IDLE, h11.SEND_RESPONSE):
                data = json.dumps({"error": f"bad HTTP request: {exc}"}).encode()
                headers = [("content-type", "application/json"), ("content-length", str(len(data)))]
                with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                    await stream.send_all(
                        conn.send(h11.Response(status_code=exc.error_status_hint, headers=headers))
                        + conn.send(h11.Data(data=data))
                        + conn.send(h11.EndOfMessage())
                    )
        except (trio.BrokenResourceError, trio.ClosedResourceError, h11.ProtocolError):
            return
        finally:
            await stream.aclose()

    async def _read_request(
        self, conn: h11.Connection, stream: trio.SocketStream
    ) -> tuple[h11.Request | None, bytes]:
        request: h11.Request | None = None
        body = b""
        for _ in range(100_000):
            event = conn.next_event()
            if event is h11.NEED_DATA:
                data = await stream.receive_some(65536)
                conn.receive_data(data)
                if not data and conn.their_state is h11.IDLE:
                    return None, b""
                continue
            if isinstance(event, h11.Request):
                request = event
            elif isinstance(event, h11.Data):
                body += bytes(event.data)
                if len(body) > MAX_BODY:
                    raise h11.RemoteProtocolError("body over 1 MiB", error_status_hint=413)
            elif isinstance(event, h11.EndOfMessage):
                return request, body
            elif isinstance(event, h11.ConnectionClosed):
                return None, b""
        return None, b""

    async def _dispatch(self, request: h11.Request, body: bytes) -> tuple[int, Any]:
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

    # -- endpoints ----------------------------------------------------------------------------

    async def _openapi(self, doc: dict[str, Any], q: dict[str, list[str]]) -> tuple[int, Any]:
        return 200, openapi()

    async def _steps(self, doc: dict[str, Any], q: dict[str, list[str]]) -> tuple[int, Any]:
        step = step_from_dict(doc, ())
        run = ScenarioRun(Scenario(name="http", steps=(step,)), self.cluster)
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
            {"name": r.name, "fired": r.fired, "matched": r.matched, "rule": repr(r)}
            for r in self.cluster.faults.rules()
        ]

    async def _clear_faults(self, doc: dict[str, Any], q: dict[str, list[str]]) -> tuple[int, Any]:
        self.cluster.faults.clear()
        return 200, {"cleared": True}

    async def _scenario(self, doc: dict[str, Any], q: dict[str, list[str]]) -> tuple[int, Any]:
        if ("name" in doc) == ("yaml" in doc) or set(doc) - {
            "name", "yaml", "parameters", "skip_expect"
        }:  # fmt: skip
            raise HttpError(
                400,
                'give {"name": LIBRARY_NAME_OR_PATH} or {"yaml": TEXT}, optionally with '
                '"parameters": {"topic": "payments", ...} and "skip_expect": ["committed"]',
            )
        params = doc.get("parameters", {})
        skip = doc.get("skip_expect", [])
        if not isinstance(params, dict) or not isinstance(skip, list):
            raise HttpError(
                400, '"parameters" is an object {"NAME": VALUE}; "skip_expect" a list of checks'
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
        """Set up ``sc`` and play its steps in the background."""
        if self.scenario_run is not None and not self.scenario_run.finished:
            self.scenario_run.cancel()
        run = ScenarioRun(sc, self.cluster)
        run.setup()
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
        failures = run.failures()
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

    async def _state(self, doc: dict[str, Any], q: dict[str, list[str]]) -> tuple[int, Any]:
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
        txns = {
            t.transactional_id: {"state": t.state, "committed": t.committed_count}
            for t in c.transactions()
        }
        return 200, {
            "bootstrap_servers": c.bootstrap_servers,
            "brokers": [{"node_id": b.node_id, "port": b.port} for b in c.brokers],
            "topics": topics,
            "groups": groups,
            "transactions": txns,
        }

    async def _reset(self, doc: dict[str, Any], q: dict[str, list[str]]) -> tuple[int, Any]:
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
                "responses": {"202": ok("started"), "400": err},
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
            "description": "Script a fake Kafka cluster at run time; see docs/scenarios.md.",
        },
        "servers": [{"url": "http://127.0.0.1:{port}", "variables": {"port": {"default": "0"}}}],
        "paths": paths,
        "components": {
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
                    },
                    "additionalProperties": False,
                },
            }
        },
    }


if __name__ == "__main__":
    print(json.dumps(build_openapi(), indent=1))

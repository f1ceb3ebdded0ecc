"""Who may drive the control endpoint of ``mockkafka serve``: only a caller on this machine
that is not a web page (Host, Origin, Sec-Fetch-Site, Content-Type), and only with the token
when one is set (``--control-token``, or a random one for a listener that is not loopback).
Raw HTTP over real sockets, so every header is exactly what a browser or an attacker sends."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from tests.cli.test_control import http, serving

pytestmark = pytest.mark.interop

ACL_STEP = json.dumps(
    {"allow": {"principal": "User:alice", "operations": "all", "cluster": True}}
).encode()


def raw(port: int, request: bytes, *, timeout: float = 10) -> tuple[int, dict[str, Any], bytes]:
    """Send ``request`` as bytes; the status, headers and body of the answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(request)
        data = b""
        while b"\r\n\r\n" not in data or len(data) < _length(data):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    head, _sep, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _s, v in (ln.partition(":") for ln in lines[1:])}
    return int(lines[0].split()[1]), headers, body


def _length(data: bytes) -> int:
    head, _sep, _body = data.partition(b"\r\n\r\n")
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return len(head) + 4 + int(line.split(b":")[1])
    return len(data)


def post(port: int, path: str, body: bytes, **headers: str) -> bytes:
    lines = [f"POST {path} HTTP/1.1", f"Content-Length: {len(body)}"]
    lines += [f"{k.replace('_', '-')}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


@contextmanager
def control(*args: str) -> Iterator[tuple[str, int]]:
    with serving(*args) as (_proc, _bootstrap, ctl):
        yield ctl, int(ctl.split(":")[-1].split()[0])


FAULT_STEP = json.dumps({"fault": {"name": "evil", "on": "Produce", "error": "NONE"}}).encode()


def faults(ctl: str) -> list[str]:
    """The names of the fault rules the cluster holds now."""
    return [r["name"] for r in http("GET", f"{ctl}/faults")[1]]


def test_the_cross_site_request_that_granted_alice_all_is_refused() -> None:
    """The request of the report: text/plain, a foreign Host and an evil Origin, POST /steps
    granting User:alice ALL on the cluster. Refused, and nothing was granted."""
    with control("--authorizer") as (ctl, port):
        evil = post(
            port, "/steps", ACL_STEP,
            Host="evil.example", Origin="http://evil.example", Content_Type="text/plain",
        )  # fmt: skip
        status, _h, body = raw(port, evil)
        assert status == 421 and b"DNS rebinding" in body
        assert raw(port, evil.replace(ACL_STEP, FAULT_STEP))[0] == 421
        # each defence on its own
        cases = [
            ({"Host": "evil.example"}, 421, b"is not this endpoint"),
            ({"Host": f"evil.example:{port}"}, 421, b"is not this endpoint"),
            ({"Host": f"127.0.0.1:{port + 1}"}, 421, b"is not this endpoint"),
            ({"Origin": "http://evil.example"}, 403, b"cross-origin"),
            ({"Origin": "null"}, 403, b"cross-origin"),
            ({"Origin": f"http://localhost:{port + 1}"}, 403, b"cross-origin"),
            ({"Sec-Fetch-Site": "cross-site"}, 403, b"Sec-Fetch-Site"),
            ({"Content-Type": "text/plain"}, 415, b"application/json"),
            ({"Content-Type": "application/x-www-form-urlencoded"}, 415, b"application/json"),
            ({"Content-Type": ""}, 415, b"application/json"),
        ]
        for override, want_status, want in cases:
            headers = {
                "Host": f"127.0.0.1:{port}",
                "Content-Type": "application/json",
                **override,
            }
            for step in (ACL_STEP, FAULT_STEP):
                status, _h, body = raw(port, post(port, "/steps", step, **{
                    k.replace("-", "_"): v for k, v in headers.items()
                }))  # fmt: skip
                assert (status, want in body) == (want_status, True), (override, status, body)
        missing = f"POST /steps HTTP/1.0\r\nContent-Length: {len(ACL_STEP)}\r\n"
        missing += "Content-Type: application/json\r\n\r\n"
        assert raw(port, missing.encode() + ACL_STEP)[0] == 421  # no Host at all
        assert faults(ctl) == []  # nothing refused was applied
        # what a local suite sends is served: localhost, its own origin, same-origin fetch
        for host, extra in [
            (f"localhost:{port}", {"Origin": f"http://localhost:{port}"}),
            (f"127.0.0.1:{port}", {"Sec-Fetch-Site": "same-origin"}),
            ("127.0.0.1", {}),
        ]:
            for step in (ACL_STEP, FAULT_STEP):
                status, _h, body = raw(
                    port,
                    post(port, "/steps", step, Host=host, Content_Type="application/json",
                         **{k.replace("-", "_"): v for k, v in extra.items()}),
                )  # fmt: skip
                assert status == 200, (host, body)
            assert faults(ctl) == ["evil"]
            assert http("DELETE", f"{ctl}/faults")[0] == 200


def test_a_control_token_is_required_when_set() -> None:
    with control("--control-token", "s3cret") as (_ctl, port):
        base = {"Host": f"127.0.0.1:{port}", "Content_Type": "application/json"}
        status, headers, body = raw(port, post(port, "/steps", ACL_STEP, **base))
        assert status == 401 and headers["www-authenticate"].startswith("Bearer")
        assert b"Authorization: Bearer TOKEN" in body
        wrong = raw(port, post(port, "/steps", ACL_STEP, **base, Authorization="Bearer nope"))
        assert wrong[0] == 401
        get = f"GET /state HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()
        assert raw(port, get)[0] == 401  # reads too: the traffic holds client secrets
        ok = raw(port, post(port, "/steps", FAULT_STEP, **base, Authorization="Bearer s3cret"))
        assert ok[0] == 200, ok


def test_a_listener_that_is_not_loopback_gets_a_random_token_on_the_control_line() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "mockkafka.cli", "serve", "--control-host", "0.0.0.0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        proc.stdout.readline()
        line = proc.stdout.readline().strip()
        url, _sep, token = line.removeprefix("control=").partition(" token=")
        assert url.startswith("http://0.0.0.0:") and len(token) >= 32, line
        port = int(url.rsplit(":", 1)[1])
        get = f"GET /state HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n"
        assert raw(port, get.encode())[0] == 401
        authed = get.replace("\r\n\r\n", f"\r\nAuthorization: Bearer {token}\r\n\r\n")
        assert raw(port, authed.encode())[0] == 200
    finally:
        proc.kill()
        proc.wait(10)


def test_hostile_http_gets_4xx_and_the_endpoint_keeps_serving() -> None:
    with control() as (ctl, port):
        huge = f"GET /state HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Big: {'a' * 70000}\r\n\r\n"
        assert raw(port, huge.encode())[0] == 431
        big_body = b"x" * (2 << 20)
        status, _h, _b = raw(port, post(port, "/steps", big_body, Host="127.0.0.1",
                                        Content_Type="application/json"))  # fmt: skip
        assert status == 413
        for bad in (b"[1,2]", b'"str"', b"\xff\xfe", b"{" * 100_000, b"nul"):
            status, _h, body = raw(
                port, post(port, "/steps", bad, Host="127.0.0.1", Content_Type="application/json")
            )
            assert status == 400 and b"error" in body, (bad[:20], status, body)
        assert http("GET", f"{ctl}/faults") == (200, [])


def test_a_slow_request_is_cut_off_with_408(monkeypatch: pytest.MonkeyPatch) -> None:
    """A body trickled byte by byte ends after REQUEST_TIMEOUT (short here: in-process)."""
    import trio

    import mockkafka
    from mockkafka import control as control_mod

    monkeypatch.setattr(control_mod, "REQUEST_TIMEOUT", 0.3)

    async def main() -> tuple[int, float]:
        async with mockkafka.open_cluster() as cluster, trio.open_nursery() as nursery:
            server = control_mod.ControlServer(cluster, nursery)
            port = await nursery.start(server.serve, 0)
            stream = await trio.open_tcp_stream("127.0.0.1", port)
            head = post(port, "/steps", b"{}" * 10, Host="127.0.0.1",
                        Content_Type="application/json")  # fmt: skip
            started = trio.current_time()
            await stream.send_all(head[:-20])
            data = b""
            with trio.fail_after(5):
                for _ in range(200):
                    await trio.sleep(0.05)
                    try:
                        await stream.send_all(b"{")
                    except trio.BrokenResourceError:
                        break
                    with trio.move_on_after(0):
                        data += await stream.receive_some(4096)
                    if data:
                        break
                with trio.move_on_after(1):
                    while chunk := await stream.receive_some(4096):
                        data += chunk
            await stream.aclose()
            nursery.cancel_scope.cancel()
            return int(data.split()[1]), trio.current_time() - started

    status, took = trio.run(main)
    assert status == 408 and took < 3


def test_the_control_accept_loop_backs_off_quietly_when_fds_run_out(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """While accept() fails with EMFILE the loop retries with a growing pause and logs one
    warning, not a traceback per retry; once fds come back it serves again."""
    import errno

    import trio

    from mockkafka.server.limits import accept_connections

    class Exhausted:
        def __init__(self) -> None:
            self.calls = 0

        async def accept(self) -> Any:
            self.calls += 1
            await trio.sleep(0)
            raise OSError(errno.EMFILE, "Too many open files")

    listener = Exhausted()

    async def main() -> None:
        with trio.move_on_after(1.0):
            await accept_connections(listener, lambda s: None, admit=lambda: True, quiet=True)  # type: ignore[arg-type]

    with caplog.at_level("DEBUG", logger="mockkafka.server"):
        trio.run(main)
    assert 3 <= listener.calls <= 12  # 5 ms doubling to 500 ms: not a busy loop
    warnings = [r for r in caplog.records if "accept failed" in r.getMessage()]
    assert len(warnings) == 1 and warnings[0].exc_info is None


def test_a_bug_behind_an_endpoint_answers_500_and_the_endpoint_keeps_serving() -> None:
    """Before, an unexpected exception in a handler ended the connection task's nursery,
    and with it ``mockkafka serve``."""
    import trio

    import mockkafka
    from mockkafka import control as control_mod

    async def main() -> tuple[bytes, bytes]:
        async with mockkafka.open_cluster() as cluster, trio.open_nursery() as nursery:
            server = control_mod.ControlServer(cluster, nursery)

            async def broken(doc: Any, q: Any) -> Any:
                raise TypeError("a bug")

            server.routes[("GET", "/state")] = broken
            port = await nursery.start(server.serve, 0)

            async def get(path: str) -> bytes:
                stream = await trio.open_tcp_stream("127.0.0.1", port)
                req = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
                await stream.send_all(req.encode())
                data = b""
                with trio.fail_after(5):
                    while chunk := await stream.receive_some(65536):
                        data += chunk
                await stream.aclose()
                return data

            first, second = await get("/state"), await get("/faults")
            nursery.cancel_scope.cancel()
            return first, second

    first, second = trio.run(main)
    assert first.startswith(b"HTTP/1.1 500 ") and b"TypeError: a bug" in first
    assert second.startswith(b"HTTP/1.1 200 ")

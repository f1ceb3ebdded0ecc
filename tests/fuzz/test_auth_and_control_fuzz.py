"""Hostile input on the surfaces before the Kafka protocol: TLS, SASL and the HTTP control
endpoint of ``mockkafka serve``. Nothing a client sends there may crash, wedge or open the
broker: after every input a fresh, well-behaved client is served and nothing was raised
inside the broker.

- TLS: garbage instead of a ClientHello; a real ClientHello truncated, flipped or extended;
  a finished handshake followed by a mangled encrypted record.
- SASL: SaslHandshake with any mechanism name, then SaslAuthenticate tokens for PLAIN,
  SCRAM-SHA-256/512 (client-first and client-final) and OAUTHBEARER built from valid ones
  and mangled or truncated; the unframed (v0) exchange the same way. A PLAIN token that
  authenticates must carry a configured user's password.
- The control endpoint: any method, path, headers (up to 64 KiB) and body (random JSON
  shaped like steps, not JSON at all), requests cut anywhere and abandoned.

Bounded by the hypothesis profile (``ci``: 100 examples a test; ``--hypothesis-profile=long``
2000). How many inputs each surface got is printed at the end of the module (``-s``) and
appended to ``$MOCKKAFKA_FUZZ_COUNTS`` when that names a file.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import functools
import json
import os
import socket
import ssl
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mockkafka
from mockkafka.cluster.security import SASL_MECHANISMS
from mockkafka.protocol.framing import NEED_DATA, ClientConnection, Response

pytestmark = [pytest.mark.interop, pytest.mark.timeout(300)]

SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
# A TLS example costs two handshakes: a third of the profile's examples (33 in ``ci``).
TLS_SETTINGS = settings(SETTINGS, max_examples=max(10, settings.default.max_examples // 3))
USERS = {"alice": "alice-secret", "bob": "bob-secret"}
TRIED: collections.Counter[str] = collections.Counter()

#: ApiVersions v3+ must name a valid client software (Kafka answers INVALID_REQUEST else).
SOFTWARE = {"client_software_name": "fuzz", "client_software_version": "1.0"}


@pytest.fixture(scope="module", autouse=True)
def _report_counts() -> Iterator[None]:
    yield
    line = "fuzz inputs tried: " + ", ".join(f"{k}={v}" for k, v in sorted(TRIED.items()))
    print("\n" + line)
    path = os.environ.get("MOCKKAFKA_FUZZ_COUNTS")
    if path:
        with open(path, "a", encoding="utf-8") as fp:
            fp.write(json.dumps(dict(TRIED)) + "\n")


def mangle(data: bytes, draw: st.DataObject) -> bytes:
    """``data`` truncated, with 1-4 bytes flipped, or with bytes appended."""
    how = draw.draw(st.sampled_from(["truncate", "flip", "append", "same"]), label="how")
    out = bytearray(data)
    if how == "truncate":
        return bytes(out[: draw.draw(st.integers(0, max(len(out) - 1, 0)))])
    if how == "flip" and out:
        for _ in range(draw.draw(st.integers(1, 4))):
            out[draw.draw(st.integers(0, len(out) - 1))] = draw.draw(st.integers(0, 255))
    elif how == "append":
        out += draw.draw(st.binary(min_size=1, max_size=32))
    return bytes(out)


def _drain(sock: socket.socket, seconds: float = 0.3, *, http: bool = False) -> bytes:
    """What the peer sends until it closes or ``seconds`` pass (``http``: or until one
    whole HTTP response is in)."""
    sock.settimeout(seconds)
    got = b""
    try:
        while len(got) < 1 << 20:
            chunk = sock.recv(65536)
            if not chunk:
                break
            got += chunk
            if http and _whole_response(got):
                break
    except (TimeoutError, ConnectionResetError, BrokenPipeError, OSError):
        pass
    return got


def _whole_response(data: bytes) -> bool:
    head, sep, body = data.partition(b"\r\n\r\n")
    if not sep:
        return False
    for line in head.split(b"\r\n")[1:]:
        name, _c, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(body) >= int(value)
    return True


def _request(sock: Any, conn: ClientConnection, api: str, version: int, body: Any) -> Any:
    """One request on a blocking socket (or SSLSocket); the decoded answer, or None when the
    broker closed the connection (5 s at most)."""
    sock.sendall(conn.send_request(api, version, body))
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        ev = conn.next_event()
        if ev is not NEED_DATA:
            assert isinstance(ev, Response)
            return ev.body
        try:
            data = sock.recv(65536)
        except (ConnectionResetError, ssl.SSLError, OSError):
            return None
        if not data:
            return None
        conn.receive_data(data)
    raise AssertionError(f"{api}: no answer within 5 s")


# -- TLS ---------------------------------------------------------------------------------------


@functools.cache
def tls_cluster() -> mockkafka.Cluster:
    c = mockkafka.Cluster(security_protocol="SSL").start()
    atexit.register(c.stop)
    return c


def _tls_context(c: mockkafka.Cluster) -> ssl.SSLContext:
    ctx = c.client_config("aiokafka")["ssl_context"]
    assert isinstance(ctx, ssl.SSLContext)
    return ctx


def _tls_still_serving(c: mockkafka.Cluster) -> None:
    assert not c.broker_errors, c.broker_errors
    b = c.brokers[0]
    with (
        socket.create_connection((b.host, b.port), timeout=5) as raw,
        _tls_context(c).wrap_socket(raw, server_hostname=b.host) as sock,
    ):
        body = _request(sock, ClientConnection(), "ApiVersions", 3, SOFTWARE)
        assert body is not None and body["error_code"] == 0


def _hello_bytes(c: mockkafka.Cluster) -> bytes:
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = _tls_context(c).wrap_bio(incoming, outgoing, server_hostname="127.0.0.1")
    with contextlib.suppress(ssl.SSLWantReadError):
        obj.do_handshake()
    return outgoing.read()


@TLS_SETTINGS
@given(data=st.data())
def test_tls_listener_survives_garbage_and_mangled_handshakes(data: st.DataObject) -> None:
    c = tls_cluster()
    b = c.brokers[0]
    kind = data.draw(st.sampled_from(["garbage", "client_hello"]), label="kind")
    payload = (
        data.draw(st.binary(max_size=512)) if kind == "garbage" else mangle(_hello_bytes(c), data)
    )
    with socket.create_connection((b.host, b.port), timeout=2) as sock:
        sock.sendall(payload)
        _drain(sock, 0.1)
    TRIED["tls"] += 1
    _tls_still_serving(c)


@TLS_SETTINGS
@given(data=st.data())
def test_tls_listener_survives_mangled_records_after_the_handshake(data: st.DataObject) -> None:
    c = tls_cluster()
    b = c.brokers[0]
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = _tls_context(c).wrap_bio(incoming, outgoing, server_hostname=b.host)
    with socket.create_connection((b.host, b.port), timeout=5) as sock:
        for _ in range(20):  # the handshake, driven by hand so the records can be mangled
            try:
                obj.do_handshake()
                break
            except ssl.SSLWantReadError:
                sock.sendall(outgoing.read())
                chunk = sock.recv(65536)
                assert chunk, "the broker closed during a valid handshake"
                incoming.write(chunk)
        sock.sendall(outgoing.read())
        frame = ClientConnection().send_request("ApiVersions", 3, SOFTWARE)
        obj.write(frame)
        sock.sendall(mangle(outgoing.read(), data))
        _drain(sock, 0.1)
    TRIED["tls"] += 1
    _tls_still_serving(c)


# -- SASL --------------------------------------------------------------------------------------


@functools.cache
def sasl_cluster() -> mockkafka.Cluster:
    c = mockkafka.Cluster(security_protocol="SASL_PLAINTEXT", users=USERS).start()
    atexit.register(c.stop)
    return c


def _sasl_still_serving(c: mockkafka.Cluster) -> None:
    assert not c.broker_errors, c.broker_errors
    b = c.brokers[0]
    conn = ClientConnection()
    with socket.create_connection((b.host, b.port), timeout=5) as sock:
        hs = _request(sock, conn, "SaslHandshake", 1, {"mechanism": "PLAIN"})
        assert hs is not None and hs["error_code"] == 0
        ok = _request(sock, conn, "SaslAuthenticate", 2, {"auth_bytes": b"\0bob\0bob-secret"})
        assert ok is not None and ok["error_code"] == 0
        md = _request(sock, conn, "Metadata", 12, {"topics": None})
        assert md is not None and md["brokers"]


def _jwt(sub: str) -> bytes:
    import base64

    def b64(doc: dict[str, Any]) -> bytes:
        return base64.urlsafe_b64encode(json.dumps(doc).encode()).rstrip(b"=")

    now = int(time.time())
    return b64({"alg": "none"}) + b"." + b64({"sub": sub, "iat": now, "exp": now + 60}) + b"."


def _first_token(mechanism: str, user: str, password: str) -> bytes:
    if mechanism == "PLAIN":
        return b"\0" + user.encode() + b"\0" + password.encode()
    if mechanism == "OAUTHBEARER":
        return b"n,,\x01auth=Bearer " + _jwt(user) + b"\x01\x01"
    return b"n,,n=" + user.encode() + b",r=fuzznonce0123456789"


MECHANISM_NAMES = st.one_of(
    st.sampled_from(SASL_MECHANISMS), st.sampled_from(["GSSAPI", "", "plain"]), st.text(max_size=20)
)


@SETTINGS
@given(
    data=st.data(),
    mechanism=MECHANISM_NAMES,
    user=st.sampled_from(["alice", "bob", "mallory", ""]),
    password=st.sampled_from(["alice-secret", "bob-secret", "wrong", ""]),
    handshake_version=st.sampled_from([0, 1]),
)
def test_sasl_exchanges_survive_mangled_and_truncated_tokens(
    data: st.DataObject, mechanism: str, user: str, password: str, handshake_version: int
) -> None:
    c = sasl_cluster()
    b = c.brokers[0]
    token = mangle(_first_token(mechanism, user, password), data)
    conn = ClientConnection()
    with socket.create_connection((b.host, b.port), timeout=5) as sock:
        hs = _request(sock, conn, "SaslHandshake", handshake_version, {"mechanism": mechanism})
        if hs is not None and hs["error_code"] == 0:
            if handshake_version == 0:  # raw size-prefixed tokens, no request header
                sock.sendall(struct.pack(">i", len(token)) + token)
                reply = _drain(sock, 0.2)
                if mechanism.startswith("SCRAM") and len(reply) > 4:
                    final = mangle(b"c=biws,r=" + reply[4:].split(b",")[0][2:] + b",p=AAAA", data)
                    sock.sendall(struct.pack(">i", len(final)) + final)
                    _drain(sock, 0.2)
            else:
                resp = _request(sock, conn, "SaslAuthenticate", 2, {"auth_bytes": token})
                if resp is not None and resp["error_code"] == 0:
                    if mechanism == "PLAIN":  # authenticated: it must have been a real user
                        _authz, name, secret = token.split(b"\0", 2)
                        assert USERS.get(name.decode(errors="replace")) == secret.decode(
                            errors="replace"
                        ), token
                    elif mechanism.startswith("SCRAM"):
                        nonce = resp["auth_bytes"].split(b",")[0][2:]
                        final = mangle(b"c=biws,r=" + nonce + b",p=AAAA", data)
                        resp = _request(sock, conn, "SaslAuthenticate", 2, {"auth_bytes": final})
                        assert resp is None or resp["error_code"] != 0  # no proof: no entry
    TRIED["sasl"] += 1
    _sasl_still_serving(c)


# -- the control endpoint ------------------------------------------------------------------------


class ServeProcess:
    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mockkafka.cli", "serve", "--topic", "orders:2"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        self.proc.stdout.readline()
        self.port = int(self.proc.stdout.readline().strip().rsplit(":", 1)[1])

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)


@functools.cache
def serve_process() -> ServeProcess:
    p = ServeProcess()
    atexit.register(p.stop)
    return p


def _http(port: int, raw: bytes, *, wait: float = 0.3) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=wait) as sock:
        try:
            sock.sendall(raw)
        except (BrokenPipeError, ConnectionResetError):
            return b""
        return _drain(sock, wait, http=True)


def _control_still_serving(p: ServeProcess) -> None:
    assert p.proc.poll() is None, p.proc.stderr.read() if p.proc.stderr else ""
    got = _http(p.port, f"GET /state HTTP/1.1\r\nHost: 127.0.0.1:{p.port}\r\n\r\n".encode(), wait=5)
    assert got.startswith(b"HTTP/1.1 200 "), got[:200]


def _step_keys() -> list[str]:
    from mockkafka.scenario.schema import build_schema

    step = build_schema()["properties"]["steps"]["items"]
    return sorted(k for k in step["properties"] if k not in ("at", "after", "when"))


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63) | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=12,
)
PATHS = ["/steps", "/faults", "/scenario", "/scenario/check", "/traffic?api=Produce&limit=x",
         "/traffic?since_seq=-1", "/state", "/reset", "/openapi.json", "/nope", "/steps/../stop",
         "%00", "/" + "a" * 5000]  # fmt: skip


@st.composite
def control_requests(draw: st.DrawFn) -> bytes:
    method = draw(st.sampled_from(["GET", "POST", "DELETE", "PUT", "PATCH", "OPTIONS", "G\x00T"]))
    path = draw(st.sampled_from(PATHS))
    shape = draw(st.sampled_from(["step", "json", "bytes", "none"]))
    if shape == "step":
        key = draw(st.sampled_from(_step_keys()))
        doc: Any = {key: draw(JSON)}
        if draw(st.booleans()):
            doc["timeout"] = draw(st.sampled_from(["10ms", "soon", -1, None]))
        body = json.dumps(doc).encode()
    elif shape == "json":
        body = json.dumps(draw(JSON)).encode()
    elif shape == "bytes":
        body = draw(st.binary(max_size=200))
    else:
        body = b""
    headers = [f"Host: {draw(st.sampled_from(['127.0.0.1', 'localhost', 'evil.example', '']))}"]
    if draw(st.booleans()):
        headers.append(
            "Content-Type: " + draw(st.sampled_from(["application/json", "text/plain", "", "x"]))
        )
    for _ in range(draw(st.integers(0, 3))):
        name = draw(st.sampled_from(["Origin", "X-Big", "Authorization", "Transfer-Encoding",
                                     "Content-Length", "Sec-Fetch-Site", "Expect"]))  # fmt: skip
        value = draw(st.sampled_from(["http://evil.example", "chunked", "-1", "100-continue",
                                      "Bearer x", "cross-site", "9" * 30, "a" * 65_000]))  # fmt: skip
        headers.append(f"{name}: {value}")
    if not any(h.lower().startswith("content-length") for h in headers):
        headers.append(f"Content-Length: {len(body)}")
    raw = f"{method} {path} HTTP/1.1\r\n".encode() + "\r\n".join(headers).encode() + b"\r\n\r\n"
    raw += body
    if draw(st.booleans()):  # cut anywhere and abandoned
        raw = raw[: draw(st.integers(0, len(raw)))]
    return raw


@SETTINGS
@given(raw=control_requests())
def test_the_control_endpoint_survives_hostile_http(raw: bytes) -> None:
    p = serve_process()
    _http(p.port, raw)
    TRIED["control"] += 1
    _control_still_serving(p)

"""How the proxy reaches the upstream Kafka cluster: TCP, TLS, and its own SASL login.

Theory of operation
-------------------
:class:`UpstreamSecurity` says how to open a connection to an upstream broker:
``security_protocol`` (Kafka's names: PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL), the TLS
context for SSL and SASL_SSL (a CA file to trust, or the system's roots), and the SASL
credentials the *proxy* uses for its own requests (the Metadata that discovers the
brokers). Client connections are never authenticated by the proxy: their SaslHandshake and
SaslAuthenticate requests are relayed like any request, Kafka answers them, and what
follows on the connection is decoded as before.

:class:`SaslClient` is the client side of PLAIN and SCRAM-SHA-256/512 (RFC 4616, 5802,
7677), sans-IO: ``first()`` is the first token, ``step(server_token)`` the next one (or
``None`` when the exchange is over), and the server's final signature is checked.
:func:`sasl_exchange` is the whole login, sans-IO too (SaslHandshake v1, then SaslAuthenticate
v2 rounds): :func:`login` drives it on a trio stream, the blocking admin client of the
proxy's cluster verbs (``server/upstream_admin.py``) on its socket.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import ssl
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

import trio

from mockkafka.errors import ConfigError, MockKafkaError
from mockkafka.protocol.framing import NEED_DATA, ClientConnection, Response

#: Kafka's security protocols, as the proxy's ``upstream_security_protocol`` accepts them.
SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
#: SASL mechanisms the proxy can log in with itself (clients may use any: it relays them).
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")


class UpstreamAuthFailed(MockKafkaError):
    """The upstream refused the proxy's own SASL login; the message is Kafka's."""


class SaslClient:
    """The client side of one SASL exchange (see the module docstring)."""

    def __init__(self, mechanism: str, username: str, password: str) -> None:
        self.mechanism = mechanism
        self.username = username
        self.password = password
        self._hash = "sha256" if mechanism == "SCRAM-SHA-256" else "sha512"
        self._nonce = secrets.token_urlsafe(18)
        self._client_first_bare = ""
        self._expected_signature = b""
        self._state = "first"

    def first(self) -> bytes:
        """The first token the client sends."""
        if self.mechanism == "PLAIN":
            self._state = "done"
            return b"\x00" + self.username.encode() + b"\x00" + self.password.encode()
        user = self.username.replace("=", "=3D").replace(",", "=2C")
        self._client_first_bare = f"n={user},r={self._nonce}"
        self._state = "final"
        return ("n,," + self._client_first_bare).encode()

    def step(self, server: bytes) -> bytes | None:
        """The answer to the server's token; None when nothing more is to be sent. Raises
        UpstreamAuthFailed on a server message that breaks the exchange."""
        if self._state == "done":
            return None
        msg = server.decode("utf-8", "replace")
        if self._state == "final":
            attrs = dict(kv.split("=", 1) for kv in msg.split(",") if "=" in kv)
            nonce, salt, iterations = attrs.get("r", ""), attrs.get("s", ""), attrs.get("i", "")
            if not nonce.startswith(self._nonce) or not salt or not iterations.isdigit():
                raise UpstreamAuthFailed(f"unexpected SCRAM server-first message {msg!r}")
            salted = hashlib.pbkdf2_hmac(
                self._hash, self.password.encode(), base64.b64decode(salt), int(iterations)
            )
            without_proof = f"c=biws,r={nonce}"
            auth = f"{self._client_first_bare},{msg},{without_proof}".encode()
            client_key = hmac.digest(salted, b"Client Key", self._hash)
            stored_key = hashlib.new(self._hash, client_key).digest()
            signature = hmac.digest(stored_key, auth, self._hash)
            proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
            server_key = hmac.digest(salted, b"Server Key", self._hash)
            self._expected_signature = hmac.digest(server_key, auth, self._hash)
            self._state = "verify"
            return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()
        if self._state == "verify":
            if msg != "v=" + base64.b64encode(self._expected_signature).decode():
                raise UpstreamAuthFailed(f"the upstream's SCRAM signature is wrong: {msg!r}")
            self._state = "done"
        return None


@dataclass(frozen=True)
class UpstreamSecurity:
    """How the proxy connects to the upstream cluster; see the module docstring."""

    security_protocol: str = "PLAINTEXT"
    ssl_context: ssl.SSLContext | None = None
    sasl: tuple[str, str, str] | None = None  # mechanism, username, password

    @classmethod
    def build(
        cls,
        security_protocol: str = "PLAINTEXT",
        *,
        ssl_cafile: str | None = None,
        ssl_check_hostname: bool = True,
        sasl_mechanism: str | None = None,
        sasl_username: str | None = None,
        sasl_password: str | None = None,
    ) -> UpstreamSecurity:
        """Check the options (ConfigError naming the one that is wrong) and build."""
        if security_protocol not in SECURITY_PROTOCOLS:
            raise ConfigError(
                f"upstream_security_protocol: {security_protocol!r} is not one of "
                + ", ".join(SECURITY_PROTOCOLS)
            )
        tls = security_protocol.endswith("SSL")
        if ssl_cafile is not None and not tls:
            raise ConfigError(
                "upstream_ssl_cafile is for an SSL or SASL_SSL upstream; "
                f"upstream_security_protocol is {security_protocol}"
            )
        context = None
        if tls:
            try:
                context = ssl.create_default_context(cafile=ssl_cafile)
            except (OSError, ssl.SSLError) as exc:
                raise ConfigError(
                    f"upstream_ssl_cafile: cannot load {ssl_cafile!r}: {exc}"
                ) from exc
            context.check_hostname = ssl_check_hostname
        sasl = None
        if security_protocol.startswith("SASL_"):
            if sasl_mechanism not in SASL_MECHANISMS or not sasl_username or not sasl_password:
                raise ConfigError(
                    f"a {security_protocol} upstream needs the proxy's own login for its "
                    "Metadata requests: upstream_sasl_mechanism (one of "
                    + ", ".join(SASL_MECHANISMS)
                    + f"; got {sasl_mechanism!r}), upstream_sasl_username and "
                    "upstream_sasl_password (mockkafka proxy: --upstream-sasl-mechanism, "
                    "--upstream-sasl-username and the password in the variable "
                    "--upstream-sasl-password-env names); clients log in through the proxy "
                    "themselves"
                )
            sasl = (sasl_mechanism, sasl_username, sasl_password)
        elif sasl_mechanism or sasl_username or sasl_password:
            raise ConfigError(
                "upstream_sasl_* are for a SASL_PLAINTEXT or SASL_SSL upstream; "
                f"upstream_security_protocol is {security_protocol}"
            )
        return cls(security_protocol, context, sasl)

    @property
    def client_sasl(self) -> bool:
        """True when clients must log in (the upstream listener is SASL_*)."""
        return self.security_protocol.startswith("SASL_")

    async def connect(self, host: str, port: int) -> trio.abc.Stream:
        """A connection to ``host:port`` (TLS handshake done when SSL/SASL_SSL)."""
        stream: trio.abc.Stream = await trio.open_tcp_stream(host, port)
        if self.ssl_context is not None:
            tls = trio.SSLStream(stream, self.ssl_context, server_hostname=host)
            try:
                await tls.do_handshake()
            except BaseException:
                await trio.aclose_forcefully(stream)
                raise
            stream = tls
        return stream


async def request(
    stream: trio.abc.Stream, conn: ClientConnection, api: str, version: int, body: dict[str, Any]
) -> dict[str, Any]:
    """One request on ``stream`` and its decoded answer (MockKafkaError if it closes)."""
    await stream.send_all(conn.send_request(api, version, body))
    while True:
        ev = conn.next_event()
        if isinstance(ev, Response):
            answer: dict[str, Any] = ev.body
            return answer
        assert ev is NEED_DATA
        data = await stream.receive_some(1 << 20)
        if not data:
            raise MockKafkaError(f"the upstream closed the connection on {api} v{version}")
        conn.receive_data(data)


#: One step of the proxy's own SASL login: (API name, version, request body).
SaslStep = tuple[str, int, dict[str, Any]]


def sasl_exchange(sasl: tuple[str, str, str]) -> Generator[SaslStep, dict[str, Any], None]:
    """The proxy's own SASL login, sans-IO: yields each request (SaslHandshake v1, then
    SaslAuthenticate v2 rounds) and takes the upstream's decoded answer back through
    ``send``; returns when the login succeeded, raises UpstreamAuthFailed with Kafka's
    refusal. :func:`login` drives it on a trio stream, the blocking admin client
    (``server/upstream_admin.py``) on its socket."""
    mechanism, username, password = sasl
    answer = yield "SaslHandshake", 1, {"mechanism": mechanism}
    if answer["error_code"]:
        raise UpstreamAuthFailed(
            f"the upstream does not offer {mechanism} (it offers "
            f"{', '.join(answer.get('mechanisms') or [])})"
        )
    client = SaslClient(mechanism, username, password)
    token: bytes | None = client.first()
    for _ in range(4):  # PLAIN: one round; SCRAM: two
        if token is None:
            return
        answer = yield "SaslAuthenticate", 2, {"auth_bytes": token}
        if answer["error_code"]:
            raise UpstreamAuthFailed(
                f"the upstream refused the proxy's {mechanism} login as {username!r}: "
                f"{answer.get('error_message') or answer['error_code']}"
            )
        token = client.step(answer.get("auth_bytes") or b"")
    raise UpstreamAuthFailed(f"the {mechanism} exchange did not end")


async def login(
    stream: trio.abc.Stream, conn: ClientConnection, sasl: tuple[str, str, str]
) -> None:
    """The proxy's own SASL login on a relaying connection (:func:`sasl_exchange`)."""
    steps = sasl_exchange(sasl)
    try:
        step = next(steps)
        while True:
            step = steps.send(await request(stream, conn, *step))
    except StopIteration:
        return

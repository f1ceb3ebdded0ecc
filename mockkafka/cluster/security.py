"""Security settings of a cluster (sans-IO): which protocol its listeners speak.

``ClusterConfig.security_protocol`` is Kafka's ``security.protocol`` of the listeners
(``PLAINTEXT``, ``SSL``, ``SASL_PLAINTEXT``, ``SASL_SSL``), ``ClusterConfig.users`` the
SASL users (name -> password) and
``ClusterConfig.ssl_client_auth`` Kafka's ``ssl.client.auth`` (``none``, ``requested``,
``required``). The TLS itself (certificates, contexts) is in ``server/tls.py``.

SASL exchanges are small sans-IO objects (:class:`PlainExchange`, :class:`ScramExchange`):
``step(client_token) -> server_token``, raising :class:`SaslFailed` with the message Kafka
gives; ``principal`` is set once the client is authenticated. The SaslHandshake and
SaslAuthenticate handlers keep the exchange in the connection's state; OAUTHBEARER takes
unsecured JWS tokens. Not implemented: signed OAUTHBEARER tokens,
GSSAPI, the pre-KIP-152 unframed exchange (SaslHandshake v0 is not
advertised, so every client uses SaslAuthenticate).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from mockkafka.errors import ConfigError

#: ``Cluster(security_protocol=...)`` values served (Kafka's ``security.protocol``).
SECURITY_PROTOCOLS: Final = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
TLS_PROTOCOLS: Final = ("SSL", "SASL_SSL")
SASL_PROTOCOLS: Final = ("SASL_PLAINTEXT", "SASL_SSL")
#: ``Cluster(ssl_client_auth=...)`` values (Kafka's ``ssl.client.auth``).
CLIENT_AUTH: Final = ("none", "requested", "required")


def choice(value: object, valid: tuple[str, ...], what: str) -> str:
    """``value`` if it is one of ``valid``, else ConfigError naming ``what`` (did-you-mean)."""
    if not isinstance(value, str) or value not in valid:
        close = difflib.get_close_matches(str(value), valid, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ConfigError(f"{what}={value!r} is not one of {', '.join(valid)}{hint}")
    return value


def check_security(security_protocol: object, ssl_client_auth: object) -> None:
    """ConfigError for a security protocol or client-auth mode mockkafka does not serve."""
    choice(security_protocol, SECURITY_PROTOCOLS, "security_protocol")
    choice(ssl_client_auth, CLIENT_AUTH, "ssl_client_auth")
    if ssl_client_auth != "none" and security_protocol not in TLS_PROTOCOLS:
        raise ConfigError(
            f"ssl_client_auth={ssl_client_auth!r} needs security_protocol 'SSL' or 'SASL_SSL'"
        )


def check_users(security_protocol: str, users: tuple[tuple[str, str], ...]) -> None:
    """ConfigError when a SASL cluster has no users, or a user has no password."""
    if security_protocol in SASL_PROTOCOLS and not users:
        raise ConfigError(
            f"security_protocol={security_protocol!r} needs users, e.g. "
            "users={'alice': 'alice-secret'}"
        )
    for user, password in users:
        if not user or not isinstance(password, str) or not password:
            raise ConfigError(f"users: user {user!r} needs a non-empty password")


# -- SASL (sans-IO exchanges) -------------------------------------------------------------

#: Mechanisms a SASL listener offers (Kafka's ``sasl.enabled.mechanisms``).
SASL_MECHANISMS: Final = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")
SCRAM_ITERATIONS: Final = 4096


class SaslFailed(Exception):
    """Authentication failed; the message is what the client is told."""


class PlainExchange:
    """SASL/PLAIN (RFC 4616): one client token ``authzid NUL user NUL password``."""

    def __init__(self, users: dict[str, str]) -> None:
        self.users = users
        self.principal: str | None = None

    def step(self, token: bytes) -> bytes:
        """Answer one client token; sets ``principal`` once authenticated."""
        parts = token.split(b"\x00")
        if len(parts) != 3:
            raise SaslFailed("Invalid SASL/PLAIN response: expected 3 tokens")
        authzid, user, password = (p.decode("utf-8", "replace") for p in parts)
        if not user or not password:
            raise SaslFailed("Authentication failed: username or password is empty")
        if authzid and authzid != user:
            raise SaslFailed(
                "Authentication failed: Client requested an authorization id that is different from username"
            )
        if self.users.get(user) != password:
            raise SaslFailed("Authentication failed: Invalid username or password")
        self.principal = f"User:{user}"
        return b""


def _scram_hash(mechanism: str) -> str:
    return "sha256" if mechanism == "SCRAM-SHA-256" else "sha512"


#: Kafka's ScramMechanism codes (DescribeUserScramCredentials / AlterUserScramCredentials).
SCRAM_MECHANISM_CODES: Final = {"SCRAM-SHA-256": 1, "SCRAM-SHA-512": 2}


@dataclass(frozen=True, slots=True)
class ScramCredential:
    """What a broker stores for a SCRAM user (never the password)."""

    salt: bytes
    iterations: int
    salted_password: bytes


def scram_credential(password: str, mechanism: str) -> ScramCredential:
    """A credential for ``password`` with a fresh salt and Kafka's 4096 iterations."""
    import hashlib
    import secrets

    salt = secrets.token_bytes(16)
    salted = hashlib.pbkdf2_hmac(_scram_hash(mechanism), password.encode(), salt, SCRAM_ITERATIONS)
    return ScramCredential(salt, SCRAM_ITERATIONS, salted)


#: The SCRAM credentials of a cluster: (user, mechanism) -> credential.
ScramCredentials = dict[tuple[str, str], ScramCredential]


def scram_credentials(users: tuple[tuple[str, str], ...]) -> ScramCredentials:
    """Both SCRAM mechanisms' credentials for every configured user."""
    return {(u, m): scram_credential(pw, m) for u, pw in users for m in SCRAM_MECHANISM_CODES}


class ScramExchange:
    """SASL/SCRAM-SHA-256/512 (RFC 5802, RFC 7677), server side: client-first ->
    server-first, client-final -> server-final. Credentials derive from the cluster's users
    stored in ``credentials`` (the cluster's, changed by AlterUserScramCredentials)."""

    def __init__(self, credentials: ScramCredentials, mechanism: str) -> None:
        self.credentials = credentials
        self.mechanism = mechanism
        self.hash = _scram_hash(mechanism)
        self.principal: str | None = None
        self._state = "first"
        self._user = ""
        self._nonce = ""
        self._client_first_bare = ""
        self._server_first = ""
        self._salted = b""

    def step(self, token: bytes) -> bytes:
        """Answer one client message; sets ``principal`` once authenticated."""
        import base64
        import hashlib
        import hmac
        import secrets

        msg = token.decode("utf-8", "replace")
        if self._state == "first":
            if not msg.startswith(("n,", "y,")) or msg.count(",") < 3:
                raise SaslFailed("Invalid SCRAM client first message")
            gs2, _, bare = msg.partition(",")[2].partition(",")
            del gs2
            attrs = dict(kv.split("=", 1) for kv in bare.split(",") if "=" in kv)
            user = attrs.get("n", "").replace("=2C", ",").replace("=3D", "=")
            cred = self.credentials.get((user, self.mechanism))
            if cred is None or "r" not in attrs:
                raise SaslFailed(
                    f"Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-{self.hash.upper()}"
                )
            self._user = user
            self._client_first_bare = bare
            self._nonce = attrs["r"] + secrets.token_urlsafe(18)
            self._salted = cred.salted_password
            salt = base64.b64encode(cred.salt).decode()
            self._server_first = f"r={self._nonce},s={salt},i={cred.iterations}"
            self._state = "final"
            return self._server_first.encode()
        if self._state != "final":
            raise SaslFailed("Unexpected SCRAM message after authentication")
        without_proof, _, proof_b64 = msg.rpartition(",p=")
        attrs = dict(kv.split("=", 1) for kv in without_proof.split(",") if "=" in kv)
        if attrs.get("r") != self._nonce:
            raise SaslFailed("Invalid client nonce in the final client message.")
        auth_message = f"{self._client_first_bare},{self._server_first},{without_proof}"
        client_key = hmac.digest(self._salted, b"Client Key", self.hash)
        stored_key = hashlib.new(self.hash, client_key).digest()
        signature = hmac.digest(stored_key, auth_message.encode(), self.hash)
        try:
            proof = base64.b64decode(proof_b64)
        except ValueError:
            raise SaslFailed("Invalid client proof") from None
        recovered = bytes(a ^ b for a, b in zip(proof, signature, strict=False))
        if len(proof) != len(signature) or hashlib.new(self.hash, recovered).digest() != stored_key:
            raise SaslFailed(
                f"Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-{self.hash.upper()}"
            )
        server_key = hmac.digest(self._salted, b"Server Key", self.hash)
        server_sig = hmac.digest(server_key, auth_message.encode(), self.hash)
        self.principal = f"User:{self._user}"
        self._state = "done"
        return b"v=" + base64.b64encode(server_sig)


def _b64url_json(part: str) -> Any:
    import base64
    import json

    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def unsecured_token_problem(token: str, now_ms: int) -> tuple[str | None, str, int]:
    """Check an unsecured JWS (``header.payload.``, ``alg`` none) as Kafka's
    OAuthBearerUnsecuredValidatorCallbackHandler does: (problem or None, ``sub``, ``exp`` in
    ms). ``sub`` names the principal; ``exp`` must be in the future."""
    parts = token.split(".")
    if len(parts) != 3 or parts[2]:
        return "the token is not an unsecured JWS (header.payload. with an empty signature)", "", 0
    try:
        header, claims = _b64url_json(parts[0]), _b64url_json(parts[1])
    except ValueError:
        return "the token's header or claims are not base64url JSON", "", 0
    if not isinstance(header, dict) or header.get("alg") != "none":
        return "the token's header must say alg none", "", 0
    if not isinstance(claims, dict):
        return "the token's claims are not a JSON object", "", 0
    sub, exp = claims.get("sub"), claims.get("exp")
    if not isinstance(sub, str) or not sub:
        return "the token has no sub claim (the principal)", "", 0
    if not isinstance(exp, int | float) or isinstance(exp, bool):
        return "the token has no numeric exp claim", sub, 0
    exp_ms = int(exp * 1000)
    if exp_ms <= now_ms:
        return f"the token expired at {exp_ms} ms (now {now_ms})", sub, exp_ms
    return None, sub, exp_ms


class OAuthBearerExchange:
    """SASL/OAUTHBEARER (RFC 7628) with Kafka's unsecured JWS tokens: one client message
    ``gs2-header \x01auth=Bearer <token>\x01\x01``. A bad token gets the JSON error
    challenge ``{"status":"invalid_token"}``; the client's ``\x01`` reply then fails the
    authentication with that JSON as the message, byte for byte as Kafka's
    ``OAuthBearerSaslServer`` does (Kafka logs why the token was refused; ``problem`` keeps
    it here). ``expires_ms`` is the token's ``exp``."""

    #: The error challenge, and then the failure message, Kafka sends for a refused token.
    INVALID_TOKEN = '{"status":"invalid_token"}'

    def __init__(self, now_ms: Callable[[], int]) -> None:
        self.now_ms = now_ms
        self.principal: str | None = None
        self.expires_ms: int | None = None
        self.problem: str | None = None

    def step(self, token: bytes) -> bytes:
        if self.problem is not None:
            raise SaslFailed(self.INVALID_TOKEN)
        msg = token.decode("utf-8", "replace")
        gs2, sep, rest = msg.partition("\x01")
        if not sep or not gs2.startswith(("n,", "y,")):
            raise SaslFailed("Invalid OAUTHBEARER client first message")
        kvs = dict(kv.split("=", 1) for kv in rest.split("\x01") if "=" in kv)
        scheme, _, bearer = kvs.get("auth", "").partition(" ")
        if scheme.lower() != "bearer" or not bearer:
            raise SaslFailed("Invalid OAUTHBEARER client first message: no auth=Bearer token")
        problem, sub, exp_ms = unsecured_token_problem(bearer.strip(), self.now_ms())
        if problem is not None:
            self.problem = problem
            return self.INVALID_TOKEN.encode()
        self.principal = f"User:{sub}"
        self.expires_ms = exp_ms
        return b""


def unsecured_token(sub: str, lifetime_ms: int = 3_600_000, now_ms: int | None = None) -> str:
    """An unsecured JWS for ``sub`` valid ``lifetime_ms`` (what a client's unsecured
    login module makes), e.g. for a kafka-python token provider."""
    import base64
    import json
    import time

    now = int(time.time() * 1000) if now_ms is None else now_ms

    def part(obj: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    claims = {"sub": sub, "iat": now / 1000, "exp": (now + lifetime_ms) / 1000}
    return f"{part({'alg': 'none'})}.{part(claims)}."


SaslExchange = PlainExchange | ScramExchange | OAuthBearerExchange


def sasl_exchange(
    mechanism: str,
    users: dict[str, str],
    now_ms: Callable[[], int],
    credentials: ScramCredentials,
) -> SaslExchange:
    """A fresh server-side exchange for ``mechanism`` (one of SASL_MECHANISMS): PLAIN checks
    the configured ``users`` (Kafka's JAAS users), SCRAM the stored ``credentials``."""
    if mechanism == "PLAIN":
        return PlainExchange(users)
    if mechanism == "OAUTHBEARER":
        return OAuthBearerExchange(now_ms)
    return ScramExchange(credentials, mechanism)

"""TLS for the listeners: a throwaway CA per cluster, and ready client settings.

Theory of operation
-------------------
A cluster built with ``security_protocol="SSL"`` gets a :class:`TlsMaterial`: a fresh CA
(``trustme``), a server certificate for ``localhost`` / ``127.0.0.1`` (and the cluster's
host) signed by it, and a client certificate (principal ``CN=client``) for clusters that ask
for client certificates (``ssl_client_auth="required"`` or ``"requested"``, Kafka's
``ssl.client.auth``). The PEM files are written to a private temporary directory, because
librdkafka, kafka-python and the Java client read them from paths; the directory is removed
when the cluster stops.

:meth:`TlsMaterial.client_config` gives the settings each client needs, with the
``bootstrap.servers`` of the cluster, in the spelling of that client:
``"confluent"`` (librdkafka), ``"kafka-python"``, ``"aiokafka"`` (an ``ssl_context``),
``"java"`` (property names of the Java client, PEM stores) and ``"kafkajs"`` (the
``new Kafka({...})`` options as JSON-ready data, PEM text inline).

The server wraps each accepted socket in a :class:`trio.SSLStream` (:meth:`wrap`); the
handshake happens on the first read, bounded by ``connections.max.idle.ms`` like any read,
so a client that never finishes it costs one idle connection.
"""

from __future__ import annotations

import shutil
import ssl
import tempfile
from pathlib import Path
from typing import Any, Final

import trio

from mockkafka.cluster.security import choice
from mockkafka.errors import ConfigError

#: ``client_config(client=...)`` flavours.
CLIENTS: Final = ("confluent", "kafka-python", "aiokafka", "java", "kafkajs")


#: connection_state key of the principal a TLS client certificate names.
TLS_PRINCIPAL: Final = "tls.principal"

_DN_KEYS: Final = {
    "commonName": "CN",
    "organizationName": "O",
    "organizationalUnitName": "OU",
    "countryName": "C",
    "stateOrProvinceName": "ST",
    "localityName": "L",
}


def subject_dn(cert: dict[str, Any]) -> str:
    """The subject of a peer certificate (``ssl.getpeercert()``) as Kafka writes it
    (RFC 2253: most specific first, e.g. ``CN=client,O=acme``)."""
    parts = [
        f"{_DN_KEYS.get(k, k)}={v}" for rdn in reversed(cert.get("subject", ())) for k, v in rdn
    ]
    return ",".join(parts)


def _pkcs8_keystore(cert: Any) -> bytes:
    """A trustme leaf certificate as the Java client's PEM keystore: the private key in
    PKCS#8 (``BEGIN PRIVATE KEY``; Java refuses the traditional ``BEGIN EC PRIVATE KEY``
    form trustme writes) followed by the certificate chain."""
    from cryptography.hazmat.primitives import serialization

    key = serialization.load_pem_private_key(cert.private_key_pem.bytes(), password=None)
    pkcs8 = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return pkcs8 + b"".join(pem.bytes() for pem in cert.cert_chain_pems)


class TlsMaterial:
    """A throwaway CA with a server and a client certificate; see the module docstring."""

    def __init__(self, host: str, *, client_auth: str = "none") -> None:
        try:
            import trustme
        except ImportError as exc:  # pragma: no cover - declared in the tls extra
            raise ConfigError(
                "security_protocol='SSL' needs the trustme package: pip install trustme (the [tls] extra: pip install '.[tls]' in a clone)"
            ) from exc
        self.client_auth = client_auth
        self.ca = trustme.CA(organization_name="mockkafka throwaway CA")
        names = sorted({"localhost", "127.0.0.1", host})
        self._server_cert = self.ca.issue_cert(*names)
        self._client_cert = self.ca.issue_cert("client", common_name="client")
        self.dir = Path(tempfile.mkdtemp(prefix="mockkafka-tls-"))
        self.ca_file = self.dir / "ca.pem"
        self.client_cert_file = self.dir / "client-cert.pem"
        self.client_key_file = self.dir / "client-key.pem"
        self.client_keystore_file = self.dir / "client-keystore.pem"  # key + chain (Java)
        self.ca.cert_pem.write_to_path(str(self.ca_file))
        self._client_cert.cert_chain_pems[0].write_to_path(str(self.client_cert_file))
        self._client_cert.private_key_pem.write_to_path(str(self.client_key_file))
        self.client_keystore_file.write_bytes(_pkcs8_keystore(self._client_cert))
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self._server_cert.configure_cert(ctx)
        if client_auth != "none":
            self.ca.configure_trust(ctx)
            ctx.verify_mode = ssl.CERT_REQUIRED if client_auth == "required" else ssl.CERT_OPTIONAL
        self.server_context = ctx

    def wrap(self, stream: trio.SocketStream) -> trio.SSLStream[trio.SocketStream]:
        """The server side of TLS over an accepted socket (handshake on first read)."""
        return trio.SSLStream(stream, self.server_context, server_side=True)

    def client_ssl_context(self, *, with_cert: bool | None = None) -> ssl.SSLContext:
        """An ``ssl.SSLContext`` that trusts the cluster's CA (and presents the client
        certificate when the cluster asks for one, or ``with_cert=True``)."""
        ctx = ssl.create_default_context(cafile=str(self.ca_file))
        if self._wants_cert(with_cert):
            ctx.load_cert_chain(str(self.client_cert_file), str(self.client_key_file))
        return ctx

    def _wants_cert(self, with_cert: bool | None) -> bool:
        return self.client_auth != "none" if with_cert is None else with_cert

    def client_config(
        self, client: str, bootstrap: str, *, with_cert: bool | None = None
    ) -> dict[str, Any]:
        """Settings for ``client`` (one of CLIENTS) to reach the cluster over TLS."""
        choice(client, CLIENTS, "client")
        cert = self._wants_cert(with_cert)
        ca, crt, key = str(self.ca_file), str(self.client_cert_file), str(self.client_key_file)
        if client == "confluent":
            out: dict[str, Any] = {
                "bootstrap.servers": bootstrap,
                "security.protocol": "SSL",
                "ssl.ca.location": ca,
            }
            if cert:
                out |= {"ssl.certificate.location": crt, "ssl.key.location": key}
            return out
        if client == "kafka-python":
            out = {
                "bootstrap_servers": bootstrap,
                "security_protocol": "SSL",
                "ssl_cafile": ca,
                "ssl_check_hostname": True,
            }
            if cert:
                out |= {"ssl_certfile": crt, "ssl_keyfile": key}
            return out
        if client == "aiokafka":
            return {
                "bootstrap_servers": bootstrap,
                "security_protocol": "SSL",
                "ssl_context": self.client_ssl_context(with_cert=cert),
            }
        if client == "kafkajs":
            tls: dict[str, Any] = {"ca": [self.ca_file.read_text()]}
            if cert:
                tls |= {
                    "cert": self.client_cert_file.read_text(),
                    "key": self.client_key_file.read_text(),
                }
            return {"brokers": bootstrap.split(","), "ssl": tls}
        out = {
            "bootstrap.servers": bootstrap,
            "security.protocol": "SSL",
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": ca,
        }
        if cert:
            out |= {
                "ssl.keystore.type": "PEM",
                "ssl.keystore.location": str(self.client_keystore_file),
            }
        return out

    def close(self) -> None:
        """Remove the PEM files."""
        shutil.rmtree(self.dir, ignore_errors=True)


def client_settings(
    client: str,
    bootstrap: str,
    *,
    security_protocol: str,
    tls: TlsMaterial | None,
    with_cert: bool | None = None,
    sasl: tuple[str, str, str] | None = None,
) -> dict[str, Any]:
    """Everything ``client`` needs to reach a cluster: bootstrap servers, TLS settings of an
    SSL / SASL_SSL cluster, and (``sasl`` = mechanism, user, password) SASL settings."""
    choice(client, CLIENTS, "client")
    if tls is not None:
        out = tls.client_config(client, bootstrap, with_cert=with_cert)
    elif client == "kafkajs":
        out = {"brokers": bootstrap.split(",")}
    elif client in ("kafka-python", "aiokafka"):
        out = {"bootstrap_servers": bootstrap}
    else:
        out = {"bootstrap.servers": bootstrap}
    if security_protocol == "PLAINTEXT":
        return out
    python = client in ("kafka-python", "aiokafka")
    if client != "kafkajs":  # kafkajs infers it from its ssl and sasl options
        out["security_protocol" if python else "security.protocol"] = security_protocol
    if sasl is None:
        return out
    mechanism, user, password = sasl
    if mechanism == "OAUTHBEARER":
        return out | _oauthbearer_settings(client, user)
    if client == "kafkajs":
        return out | {
            "sasl": {"mechanism": mechanism.lower(), "username": user, "password": password}
        }
    if python:
        out |= {
            "sasl_mechanism": mechanism,
            "sasl_plain_username": user,
            "sasl_plain_password": password,
        }
    elif client == "confluent":
        out |= {"sasl.mechanism": mechanism, "sasl.username": user, "sasl.password": password}
    else:
        module = (
            "org.apache.kafka.common.security.plain.PlainLoginModule"
            if mechanism == "PLAIN"
            else "org.apache.kafka.common.security.scram.ScramLoginModule"
        )
        out |= {
            "sasl.mechanism": mechanism,
            "sasl.jaas.config": f'{module} required username="{user}" password="{password}";',
        }
    return out


def _oauthbearer_settings(client: str, user: str) -> dict[str, Any]:
    """Client settings for SASL/OAUTHBEARER with unsecured tokens whose ``sub`` is ``user``."""
    if client == "confluent":
        return {
            "sasl.mechanism": "OAUTHBEARER",
            "enable.sasl.oauthbearer.unsecure.jwt": True,
            "sasl.oauthbearer.config": f"principal={user}",
        }
    if client == "java":
        module = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
        return {
            "sasl.mechanism": "OAUTHBEARER",
            "sasl.jaas.config": f'{module} required unsecuredLoginStringClaim_sub="{user}";',
        }
    if client == "kafka-python":
        return {
            "sasl_mechanism": "OAUTHBEARER",
            "sasl_oauth_token_provider": _kafka_python_token_provider(user),
        }
    from mockkafka.errors import ConfigError

    raise ConfigError(
        f"client_config({client!r}, mechanism='OAUTHBEARER') is not supported: use "
        "'confluent', 'kafka-python' or 'java', or give aiokafka (sasl_oauth_token_provider) "
        "or kafkajs (sasl.oauthBearerProvider) a provider returning "
        "mockkafka.cluster.security.unsecured_token(user)"
    )


def _kafka_python_token_provider(user: str) -> Any:
    """kafka-python's ``sasl_oauth_token_provider`` (it must subclass kafka-python's
    AbstractTokenProvider): a fresh unsecured token for ``user`` per call."""
    try:
        from kafka.net.sasl.oauth import AbstractTokenProvider  # kafka-python 3
    except ImportError:
        from kafka.sasl.oauth import AbstractTokenProvider  # type: ignore[no-redef,unused-ignore]

    from mockkafka.cluster.security import unsecured_token

    class UnsecuredTokenProvider(AbstractTokenProvider):  # type: ignore[misc]
        def token(self) -> str:
            return unsecured_token(user)

    return UnsecuredTokenProvider()

"""Security settings of a cluster (sans-IO): which protocol its listeners speak.

``ClusterConfig.security_protocol`` is Kafka's ``security.protocol`` of the listeners
(``PLAINTEXT`` or ``SSL``; the SASL ones are not implemented yet) and
``ClusterConfig.ssl_client_auth`` Kafka's ``ssl.client.auth`` (``none``, ``requested``,
``required``). The TLS itself (certificates, contexts) is in ``server/tls.py``.
"""

from __future__ import annotations

import difflib
from typing import Final

from mockkafka.errors import ConfigError

#: ``Cluster(security_protocol=...)`` values served (Kafka's ``security.protocol``).
SECURITY_PROTOCOLS: Final = ("PLAINTEXT", "SSL")
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
    if security_protocol in ("SASL_PLAINTEXT", "SASL_SSL"):
        raise ConfigError(
            f"security_protocol={security_protocol!r}: SASL is not implemented yet; "
            "use 'PLAINTEXT' or 'SSL'"
        )
    choice(security_protocol, SECURITY_PROTOCOLS, "security_protocol")
    choice(ssl_client_auth, CLIENT_AUTH, "ssl_client_auth")
    if ssl_client_auth != "none" and security_protocol != "SSL":
        raise ConfigError(f"ssl_client_auth={ssl_client_auth!r} needs security_protocol='SSL'")

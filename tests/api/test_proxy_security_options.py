"""The proxy's security options without a Kafka broker: the proxy's own SASL client
against the fake's SCRAM and PLAIN servers, and options that cannot work refused at once.
(The proxy against a real SASL and SSL Kafka: tests/oracle/test_proxy_security.py.)"""

from __future__ import annotations

from typing import Any

import pytest

import mockkafka
from mockkafka.cluster.security import PlainExchange, SaslFailed, ScramExchange, scram_credentials
from mockkafka.server.upstream import SaslClient, UpstreamAuthFailed


def run(client: SaslClient, server: PlainExchange | ScramExchange) -> str | None:
    """Play one exchange; the principal the server settled on."""
    token: bytes | None = client.first()
    for _ in range(4):
        if token is None:
            break
        token = client.step(server.step(token))
    return server.principal


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_the_proxys_scram_login_passes_a_scram_server(mechanism: str) -> None:
    creds = scram_credentials((("proxy", "s3cret,=x"),))
    server = ScramExchange(creds, mechanism)
    assert run(SaslClient(mechanism, "proxy", "s3cret,=x"), server) == "User:proxy"


def test_a_wrong_scram_password_is_refused_by_the_server() -> None:
    server = ScramExchange(scram_credentials((("proxy", "right"),)), "SCRAM-SHA-256")
    with pytest.raises(SaslFailed, match="invalid credentials"):
        run(SaslClient("SCRAM-SHA-256", "proxy", "wrong"), server)


def test_a_server_that_cannot_prove_the_password_is_refused_by_the_proxy() -> None:
    client = SaslClient("SCRAM-SHA-512", "proxy", "pw")
    server = ScramExchange(scram_credentials((("proxy", "pw"),)), "SCRAM-SHA-512")
    client.step(server.step(client.first()))
    with pytest.raises(UpstreamAuthFailed, match="signature is wrong"):
        client.step(b"v=AAAA")


def test_the_proxys_plain_login_passes_a_plain_server() -> None:
    assert run(SaslClient("PLAIN", "proxy", "pw"), PlainExchange({"proxy": "pw"})) == "User:proxy"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"upstream_security_protocol": "SASL_SSL"}, "needs the proxy's own login"),
        ({"security_protocol": "SASL_PLAINTEXT"}, "cannot front a PLAINTEXT upstream"),
        ({"upstream_ssl_cafile": "/ca.pem"}, "upstream_ssl_cafile is for an SSL"),
        ({"upstream_security_protocol": "TLS"}, "upstream_security_protocol: 'TLS'"),
        ({"upstream_sasl_username": "x"}, "upstream_sasl_\\* are for a SASL_PLAINTEXT"),
        (
            {"upstream_security_protocol": "SSL", "upstream_ssl_cafile": "/no/such/ca.pem"},
            "cannot load '/no/such/ca.pem'",
        ),
        (
            {
                "upstream_security_protocol": "SASL_PLAINTEXT",
                "upstream_sasl_mechanism": "GSSAPI",
                "upstream_sasl_username": "u",
                "upstream_sasl_password": "p",
            },
            "got 'GSSAPI'",
        ),
    ],
)
def test_security_options_that_cannot_work_are_refused_at_once(
    options: dict[str, str], message: str
) -> None:
    with pytest.raises(mockkafka.ConfigError, match=message):
        mockkafka.Proxy(upstream="127.0.0.1:9092", **options)  # type: ignore[arg-type]


def test_client_config_of_a_sasl_proxy_asks_for_the_login() -> None:
    proxy = mockkafka.Proxy(
        upstream="127.0.0.1:9092",
        upstream_security_protocol="SASL_PLAINTEXT",
        upstream_sasl_mechanism="PLAIN",
        upstream_sasl_username="proxy",
        upstream_sasl_password="pw",
    )
    with pytest.raises(mockkafka.ConfigError, match="pass user= and password="):
        proxy.client_config("confluent")


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-512"])
def test_the_proxys_login_to_a_sasl_fake_on_both_of_its_sides(mechanism: str) -> None:
    """One login exchange serves the relaying side (the Metadata discovery at start()) and
    the blocking admin client of the cluster verbs (``topics()``); a wrong password is
    refused at start() with the upstream's message."""
    with mockkafka.Cluster(security_protocol="SASL_PLAINTEXT", users={"proxy": "pw"}) as cluster:
        cluster.create_topic("orders")
        login: dict[str, Any] = {
            "upstream_security_protocol": "SASL_PLAINTEXT",
            "upstream_sasl_mechanism": mechanism,
            "upstream_sasl_username": "proxy",
        }
        with mockkafka.Proxy(
            cluster.bootstrap_servers, upstream_sasl_password="pw", **login
        ) as proxy:
            assert proxy.topics() == ["orders"]
        bad = mockkafka.Proxy(cluster.bootstrap_servers, upstream_sasl_password="no", **login)
        with pytest.raises(UpstreamAuthFailed, match=f"refused the proxy's {mechanism} login"):
            bad.start()
        bad.stop()

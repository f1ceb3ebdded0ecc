"""The oracle tier: the same requests against mockkafka and a real Apache Kafka broker.

* ``kafka`` -- one Apache Kafka 4.4 KRaft broker per session (per xdist worker), with an
  OAUTHBEARER listener beside the plaintext one (``mockkafka/kafka_broker.py``). The tier
  skips, saying why, without Java, Maven or the jars (``.ci/run`` resolves them in a
  bounded step; with ``MOCKKAFKA_BUILD_OFFLINE=1`` nothing downloads during the tests).
* ``target`` -- parametrized: a fresh ``mockkafka.Cluster()`` and that broker, as a
  :class:`Target` (where to connect). A test written against ``target`` runs twice and must
  pass on both: the broker is shared by the whole session, so such a test uses fresh names
  (:func:`tests.interop.conftest.unique`) and asserts nothing about a broker's history.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

import mockkafka
from mockkafka.kafka_broker import KafkaBroker, KafkaUnavailable

pytestmark = pytest.mark.kafka_oracle


@dataclass(frozen=True)
class Target:
    """A broker under test: ``name`` is ``mockkafka`` or ``kafka``; ``port`` the plaintext
    listener, ``sasl_port`` a SASL_PLAINTEXT listener offering OAUTHBEARER (unsecured JWS)."""

    name: str
    port: int
    sasl_port: int


_broker: KafkaBroker | None = None
_problem: str | None = None


def kafka_broker() -> KafkaBroker:
    """The session's Apache Kafka broker (started at first use); skips the test with the
    reason when it cannot be had."""
    global _broker, _problem
    if _broker is None and _problem is None:
        try:
            _broker = KafkaBroker(sasl_mechanisms=("OAUTHBEARER",)).start()
        except KafkaUnavailable as exc:
            _problem = str(exc)
    if _broker is None:
        pytest.skip(f"kafka oracle tier: {_problem}")
    return _broker


@pytest.fixture(scope="session")
def kafka() -> Iterator[KafkaBroker]:
    broker = kafka_broker()
    yield broker
    broker.stop()


def _port(cluster: mockkafka.Cluster) -> int:
    return int(cluster.bootstrap_servers.split(",")[0].rsplit(":", 1)[1])


@pytest.fixture(params=["mockkafka", "kafka"])
def target(request: pytest.FixtureRequest) -> Iterator[Target]:
    if request.param == "kafka":
        broker = request.getfixturevalue("kafka")
        yield Target("kafka", broker.port, broker.sasl_port)
        return
    with (
        mockkafka.Cluster() as plain,
        mockkafka.Cluster(security_protocol="SASL_PLAINTEXT", users={"broker": "x"}) as sasl,
    ):
        yield Target("mockkafka", _port(plain), _port(sasl))

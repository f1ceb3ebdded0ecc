"""The authorizer on, with and without ACLs: the same sessions on mockkafka and Apache Kafka.

Kafka runs with ``StandardAuthorizer`` and ``allow.everyone.if.no.acl.found=false``; its
plaintext clients are ``User:ANONYMOUS`` (the broker reaches its controller as a super user
over OAUTHBEARER, ``KafkaBroker(authorizer=True)``). mockkafka runs with
``Cluster(authorizer=True)``. A super user sets both up the same way -- two topics, and ACLs
letting ANONYMOUS read, write and describe one of them and read one group -- and then an
ANONYMOUS session asks for the open and the closed resources alike. The answers are compared
as in ``test_differential.py`` (same normalization, same allow-list).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import mockkafka
from mockkafka.kafka_broker import KafkaBroker, KafkaUnavailable
from tests.oracle.authz_sessions import run_authorizer
from tests.oracle.harness import ApiTally
from tests.oracle.report import format_report

pytestmark = pytest.mark.kafka_oracle


@pytest.fixture(scope="module")
def tallies() -> Iterator[dict[str, ApiTally]]:
    try:
        kafka = KafkaBroker(authorizer=True).start()
    except KafkaUnavailable as exc:
        pytest.skip(f"kafka oracle tier: {exc}")
    try:
        with mockkafka.Cluster(authorizer=True) as fake:
            yield run_authorizer(fake, kafka)
    finally:
        kafka.stop()


def test_anonymous_answers_match_kafka_with_the_authorizer_on(
    tallies: dict[str, ApiTally],
) -> None:
    assert sum(t.compared for t in tallies.values()) >= 35
    assert sum(t.unexplained for t in tallies.values()) == 0, format_report(tallies, verbose=True)

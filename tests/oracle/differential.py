"""Run every session against mockkafka and Apache Kafka and compare (see ``harness.py``)."""

from __future__ import annotations

from mockkafka.handlers.base import load_handlers
from mockkafka.protocol.apis import API_BY_KEY
from tests.oracle.allowed import allowed_by
from tests.oracle.harness import ApiTally, Client, Exchange, compare, run_session
from tests.oracle.sessions import HANDWRITTEN, SOFTWARE, sweep_sessions, versioned_sessions


def advertised(port: int) -> dict[str, tuple[int, int]]:
    """API name -> (min, max) version a broker advertises."""
    c = Client(port, "api-versions", "x")
    try:
        body = c.request("ApiVersions", 3, SOFTWARE)
    finally:
        c.close()
    assert isinstance(body, dict) and body["error_code"] == 0, body
    return {
        API_BY_KEY[a["api_key"]].name: (a["min_version"], a["max_version"])
        for a in body["api_keys"]
        if a["api_key"] in API_BY_KEY
    }


def common_versions(fake_port: int, kafka_port: int) -> dict[str, tuple[int, int]]:
    """The versions both brokers advertise, for the APIs mockkafka has a handler for."""
    served = {spec.api.name for spec in load_handlers().values()}
    fake, kafka = advertised(fake_port), advertised(kafka_port)
    out = {}
    for api in sorted(set(fake) & set(kafka) & served):
        lo, hi = max(fake[api][0], kafka[api][0]), min(fake[api][1], kafka[api][1])
        if lo <= hi:
            out[api] = (lo, hi)
    return out


def run_all(fake_port: int, kafka_port: int) -> tuple[dict[str, ApiTally], list[Exchange]]:
    """Every session on both brokers (sweep first: it reads "all groups" and "all topics"
    while both brokers are still empty); returns the tallies and the fake's exchanges."""
    versions = common_versions(fake_port, kafka_port)
    sessions = {**sweep_sessions(versions), **versioned_sessions(versions), **HANDWRITTEN}
    fake_all: list[Exchange] = []
    kafka_all: list[Exchange] = []
    for name, session in sessions.items():
        fake_all += run_session(fake_port, name, session)
        kafka_all += run_session(kafka_port, name, session)
    return compare(fake_all, kafka_all, allowed_by), fake_all

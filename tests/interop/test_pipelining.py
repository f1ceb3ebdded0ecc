"""Pipelined requests over a real socket: answered in order, held responses never wait.

The broker answers the requests a client pipelined with one write (fewer syscalls, and
librdkafka's FindCoordinator that follows Metadata on a bootstrap connection arrives with the
Metadata response). A request that has to wait (a long-poll Fetch, a fault's delay) first
sends what is already answered, so an earlier response never waits behind it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

import mockkafka
from mockkafka.protocol.framing import Response
from tests.interop.test_bad_input import RawClient

pytestmark = [pytest.mark.interop, pytest.mark.timeout(30)]


@pytest.fixture
def cluster() -> Iterator[mockkafka.Cluster]:
    with mockkafka.Cluster(brokers=1) as c:
        c.create_topic("t", partitions=1)
        yield c


def fetch_body(wait_ms: int) -> dict[str, object]:
    return {
        "replica_id": -1,
        "max_wait_ms": wait_ms,
        "min_bytes": 1_000_000,  # never satisfied: the Fetch waits its whole max_wait_ms
        "max_bytes": 1_000_000,
        "topics": [
            {
                "topic": "t",
                "partitions": [{"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1000}],
            }
        ],
    }


def metadata_then(
    cluster: mockkafka.Cluster, api: str, version: int, body: dict[str, object]
) -> list[tuple[Response, float]]:
    """Pipeline Metadata and ``api`` in one write; each response with its delay (s)."""
    raw = RawClient(cluster)
    try:
        raw.send_raw(
            raw.conn.send_request("Metadata", 12, {"topics": None})
            + raw.conn.send_request(api, version, body)
        )
        t0 = time.monotonic()
        got = []
        for _ in range(2):
            r = raw.response()
            got.append((r, time.monotonic() - t0))
        return got
    finally:
        raw.close()


def test_pipelined_requests_are_all_answered_in_order(cluster: mockkafka.Cluster) -> None:
    raw = RawClient(cluster)
    try:
        frames = b"".join(
            [
                raw.conn.send_request("ApiVersions", 3, {"client_software_name": "raw"}),
                raw.conn.send_request("Metadata", 12, {"topics": None}),
                raw.conn.send_request("ApiVersions", 0, {}),
            ]
        )
        raw.send_raw(frames)
        got = [raw.response() for _ in range(3)]
    finally:
        raw.close()
    assert [(r.api.name, r.correlation_id) for r in got] == [
        ("ApiVersions", 0),
        ("Metadata", 1),
        ("ApiVersions", 2),
    ]
    assert got[1].body["topics"][0]["name"] == "t"


def test_an_answered_request_does_not_wait_behind_a_long_poll_fetch(
    cluster: mockkafka.Cluster,
) -> None:
    (first, first_s), (second, second_s) = metadata_then(cluster, "Fetch", 11, fetch_body(2_000))
    assert isinstance(first, Response) and first.api.name == "Metadata"
    assert first_s < 1.0, f"Metadata answer held {first_s:.2f} s behind the parked Fetch"
    assert second.api.name == "Fetch" and second_s >= 1.5


def test_an_answered_request_does_not_wait_behind_a_delay_fault(
    cluster: mockkafka.Cluster,
) -> None:
    cluster.faults.on("ListOffsets").delay(ms=1500)
    list_offsets = {
        "replica_id": -1,
        "topics": [{"name": "t", "partitions": [{"partition_index": 0, "timestamp": -1}]}],
    }
    (first, first_s), (second, second_s) = metadata_then(cluster, "ListOffsets", 5, list_offsets)
    assert first.api.name == "Metadata" and first_s < 1.0
    assert second.api.name == "ListOffsets" and second_s >= 1.2

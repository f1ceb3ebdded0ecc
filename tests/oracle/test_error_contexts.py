"""The request contexts ``fault_plans()`` draws errors in (``faults.match.REQUEST_CONTEXTS``,
``faults.error_facts.ERROR_CONTEXTS``), asked of both brokers: Kafka answers a fetch-session
error only to an incremental session fetch, a leader-epoch error only to a partition that
sent an epoch, a duplicate batch NONE, and FindCoordinator never NOT_COORDINATOR
(issue 33). Only error codes are
compared; each test runs on mockkafka and on Apache Kafka 4.4 (where the tier can start it).
"""

from __future__ import annotations

import time
from typing import Any

from mockkafka.errors import ErrorCode
from mockkafka.protocol.records import encode_batch
from tests.interop.conftest import unique
from tests.oracle.conftest import Target
from tests.oracle.harness import Client
from tests.oracle.sessions import settle_topic
from tests.robustness._wire import Raw, fetch_body


def _topic(target: Target) -> str:
    name = unique("contexts")
    c = Client(target.port, "contexts", "x")
    try:
        topic = {"name": name, "num_partitions": 1, "replication_factor": 1}
        c.request("CreateTopics", 7, {"topics": [topic], "timeout_ms": 5000})
        settle_topic(c, name, 1)
    finally:
        c.close()
    return name


def _partition_errors(answer: dict[str, Any]) -> list[int]:
    key = "responses" if "responses" in answer else "topics"
    return [p["error_code"] for t in answer[key] for p in t["partitions"]]


def test_a_fetch_session_error_answers_only_an_incremental_session_fetch(target: Target) -> None:
    topic = _topic(target)
    with Raw("127.0.0.1", target.port) as raw:
        sessionless = raw.request("Fetch", 12, fetch_body(max_wait_ms=0, topic=topic))
        unknown = raw.request(
            "Fetch",
            12,
            fetch_body(max_wait_ms=0, topic=topic, session_id=0x5EED, session_epoch=3),
        )
    assert sessionless["error_code"] == 0 and _partition_errors(sessionless) == [0]
    assert unknown["error_code"] == ErrorCode.FETCH_SESSION_ID_NOT_FOUND
    assert unknown["responses"] == []  # a top-level error: no partition carries it


def test_a_leader_epoch_error_answers_only_a_partition_that_sent_an_epoch(target: Target) -> None:
    topic = _topic(target)
    future = 1_000_000
    listing: dict[str, Any] = {
        "replica_id": -1,
        "isolation_level": 0,
        "topics": [{"name": topic, "partitions": [{"partition_index": 0, "timestamp": -1}]}],
    }
    with Raw("127.0.0.1", target.port) as raw:
        no_epoch = raw.request("Fetch", 12, fetch_body(max_wait_ms=0, topic=topic))
        ahead = raw.request(
            "Fetch", 12, fetch_body(max_wait_ms=0, topic=topic, current_leader_epoch=future)
        )
        listed = raw.request("ListOffsets", 7, listing)
        listing["topics"][0]["partitions"][0]["current_leader_epoch"] = future
        listed_ahead = raw.request("ListOffsets", 7, listing)
    assert _partition_errors(no_epoch) == [0] and _partition_errors(listed) == [0]
    assert _partition_errors(ahead) == [ErrorCode.UNKNOWN_LEADER_EPOCH]
    assert _partition_errors(listed_ahead) == [ErrorCode.UNKNOWN_LEADER_EPOCH]


def test_find_coordinator_is_never_answered_not_coordinator(target: Target) -> None:
    group = unique("contexts-group")
    seen: list[int] = []
    deadline = time.monotonic() + 20
    with Raw("127.0.0.1", target.port) as raw:
        while time.monotonic() < deadline:
            got = raw.request("FindCoordinator", 4, {"key_type": 0, "coordinator_keys": [group]})
            (entry,) = got["coordinators"]
            seen.append(entry["error_code"])
            if entry["error_code"] == 0:
                break
            time.sleep(0.1)  # Kafka may still be creating __consumer_offsets
    assert seen[-1] == 0, seen
    assert set(seen) <= {0, ErrorCode.COORDINATOR_NOT_AVAILABLE}, seen


def _produce(raw: Raw, topic: str, records: bytes, *, acks: int) -> dict[str, Any]:
    body = {
        "acks": acks,
        "timeout_ms": 5000,
        "topic_data": [{"name": topic, "partition_data": [{"index": 0, "records": records}]}],
    }
    out: dict[str, Any] = raw.request("Produce", 9, body)["responses"][0]["partition_responses"][0]
    return out


def test_min_insync_replicas_above_the_replica_count_refuses_no_write(target: Target) -> None:
    """Kafka caps min.insync.replicas by the replica count (``Partition.effectiveMinIsr``):
    on a topic of one replica an acks=-1 write is taken even with min.insync.replicas=2.
    (NOT_ENOUGH_REPLICAS needs a shrunk ISR, which one broker cannot show; the fake's
    acks=-1-only check is in tests/cluster/test_produce_path.py.)"""
    name = unique("contexts-isr")
    c = Client(target.port, "contexts", "x")
    try:
        topic = {
            "name": name,
            "num_partitions": 1,
            "replication_factor": 1,
            "configs": [{"name": "min.insync.replicas", "value": "2"}],
        }
        c.request("CreateTopics", 7, {"topics": [topic], "timeout_ms": 5000})
        settle_topic(c, name, 1)
    finally:
        c.close()
    with Raw("127.0.0.1", target.port) as raw:
        leader_only = _produce(raw, name, encode_batch([(None, b"a")]), acks=1)
        every_replica = _produce(raw, name, encode_batch([(None, b"b")]), acks=-1)
    assert leader_only["error_code"] == every_replica["error_code"] == 0


def test_a_duplicate_batch_is_answered_none_with_its_offset(target: Target) -> None:
    """Why DUPLICATE_SEQUENCE_NUMBER is beyond Kafka: Kafka 4 answers a retried batch it
    holds already NONE, with the offset it stored it at."""
    topic = _topic(target)
    with Raw("127.0.0.1", target.port) as raw:
        init = {"transactional_id": None, "transaction_timeout_ms": -1}
        pid = raw.request("InitProducerId", 4, init)
        deadline = time.monotonic() + 20
        while pid["error_code"] == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
            # an idempotent producer's only coordinator-ish error: no producer id block yet
            assert time.monotonic() < deadline, pid
            time.sleep(0.1)
            pid = raw.request("InitProducerId", 4, init)
        assert pid["error_code"] == 0
        batch = encode_batch(
            [(None, b"x")],
            producer_id=pid["producer_id"],
            producer_epoch=pid["producer_epoch"],
            base_sequence=0,
        )
        first = _produce(raw, topic, batch, acks=-1)
        again = _produce(raw, topic, batch, acks=-1)
    assert first["error_code"] == again["error_code"] == 0
    assert again["base_offset"] == first["base_offset"]

"""Protocol-violation detection: the broker answers as Kafka does and notes the client's bug,
and the pytest report shows it (a warning of the test, or a failure on request)."""

from __future__ import annotations

import socket
import time
from typing import Any

import pytest
from kafka import KafkaConsumer, OffsetAndMetadata, TopicPartition
from kafka.errors import FencedInstanceIdError

import mockkafka
from mockkafka.protocol import records as rec
from mockkafka.protocol.framing import NEED_DATA, ClientConnection, Response

pytestmark = pytest.mark.timeout(60)


class Raw:
    """Frames over a blocking socket, each wait bounded (for requests no client sends)."""

    def __init__(self, cluster: mockkafka.Cluster) -> None:
        b = cluster.brokers[0]
        self.sock = socket.create_connection((b.host, b.port), timeout=5)
        self.conn = ClientConnection(client_id="raw")

    def request(self, api: str, version: int, body: dict[str, Any]) -> Any:
        self.sock.sendall(self.conn.send_request(api, version, body))
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            ev = self.conn.next_event()
            if ev is not NEED_DATA:
                assert isinstance(ev, Response)
                return ev.body
            data = self.sock.recv(65536)
            if not data:
                return None  # closed by the broker
            self.conn.receive_data(data)
        raise TimeoutError("no response within 5 s")


def _kafka_python_member(cluster: mockkafka.Cluster) -> KafkaConsumer:
    c = KafkaConsumer(
        bootstrap_servers=cluster.bootstrap_servers,
        group_id="g",
        group_instance_id="same-instance",
        enable_auto_commit=False,
        session_timeout_ms=6000,
        heartbeat_interval_ms=500,
    )
    c.subscribe(["t"])
    for _ in range(200):
        c.poll(50)
        if c.assignment():
            break
    return c


def test_commit_from_a_fenced_static_member_is_noted() -> None:
    # Two kafka-python consumers given the same group.instance.id: the second fences the
    # first, whose commit Kafka answers FENCED_INSTANCE_ID.
    with mockkafka.Cluster(group_initial_rebalance_delay_ms=300) as cluster:
        cluster.create_topic("t")
        first = _kafka_python_member(cluster)
        second = _kafka_python_member(cluster)
        try:
            with pytest.raises(FencedInstanceIdError):
                first.commit({TopicPartition("t", 0): OffsetAndMetadata(0, "", -1)})
        finally:
            first.close()
            second.close()
        rules = [v.rule for v in cluster.protocol_violations]
        assert "commit-from-fenced-member" in rules
        v = next(v for v in cluster.protocol_violations if v.rule == "commit-from-fenced-member")
        assert "FENCED_INSTANCE_ID" in v.message and v.api == "OffsetCommit"


def test_an_error_a_fault_rule_injected_is_not_a_violation() -> None:
    with mockkafka.Cluster(group_initial_rebalance_delay_ms=300) as cluster:
        cluster.create_topic("t")
        c = _kafka_python_member(cluster)
        try:
            cluster.faults.on("OffsetCommit").once().error("ILLEGAL_GENERATION")
            with pytest.raises(Exception):  # noqa: B017 - kafka-python's commit failure
                c.commit({TopicPartition("t", 0): OffsetAndMetadata(0, "", -1)})
        finally:
            c.close()
        assert cluster.protocol_violations == []


def test_request_outside_the_negotiated_versions_is_noted_and_closed() -> None:
    with mockkafka.Cluster(kafka_version="0.11") as cluster:
        raw = Raw(cluster)
        assert raw.request("ApiVersions", 0, {})["error_code"] == 0
        assert raw.request("Metadata", 9, {"topics": None}) is None  # Kafka 0.11 closes
        (v,) = cluster.protocol_violations
        assert v.rule == "version-not-negotiated"
        assert "listed v0-v4" in v.message


def test_idempotent_sequence_gap_is_noted() -> None:
    with mockkafka.Cluster() as cluster:
        cluster.create_topic("t")
        raw = Raw(cluster)
        pid = raw.request(
            "InitProducerId", 4, {"transactional_id": None, "transaction_timeout_ms": -1}
        )

        def produce(seq: int) -> int:
            batch = rec.encode_batch(
                [(None, b"x")],
                producer_id=pid["producer_id"],
                producer_epoch=pid["producer_epoch"],
                base_sequence=seq,
            )
            r = raw.request(
                "Produce",
                9,
                {
                    "acks": -1,
                    "timeout_ms": 1000,
                    "topic_data": [
                        {"name": "t", "partition_data": [{"index": 0, "records": batch}]}
                    ],
                },
            )
            return int(r["responses"][0]["partition_responses"][0]["error_code"])

        assert produce(0) == 0
        assert produce(5) == mockkafka.ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
        assert [v.rule for v in cluster.protocol_violations] == ["idempotent-sequence-gap"]


_PLUGIN_TEST = """
import pytest
from kafka import OffsetAndMetadata, TopicPartition
from tests.apis.test_protocol_violations import _kafka_python_member

@pytest.mark.kafka_cluster(topics={"t": 1}, group_initial_rebalance_delay_ms=300)
def test_duplicate_instance_ids(kafka_cluster):
    a = _kafka_python_member(kafka_cluster)
    b = _kafka_python_member(kafka_cluster)
    try:
        a.commit({TopicPartition("t", 0): OffsetAndMetadata(0, "", -1)})
    except Exception:
        pass
    a.close()
    b.close()
"""


def test_pytest_report_lists_violations_as_warnings_or_failures(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(_PLUGIN_TEST)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, warnings=1)
    result.stdout.fnmatch_lines(["*ProtocolViolationWarning*", "*commit-from-fenced-member*"])
    result = pytester.runpytest("-p", "no:cacheprovider", "--kafka-violations=error")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*client protocol violations*"])


def test_a_request_before_sasl_completes_closes_the_connection_and_is_noted() -> None:
    with mockkafka.Cluster(security_protocol="SASL_PLAINTEXT", users={"alice": "pw"}) as cluster:
        raw = Raw(cluster)
        assert (
            raw.request(
                "ApiVersions", 3, {"client_software_name": "t", "client_software_version": "1"}
            )["error_code"]
            == 0
        )  # allowed before SASL
        assert raw.request("Metadata", 12, {"topics": None}) is None  # closed, as Kafka does
        (v,) = [v for v in cluster.protocol_violations if v.rule == "request-before-sasl"]
        assert v.api == "Metadata" and v.client_id == "raw"

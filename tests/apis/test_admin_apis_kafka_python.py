"""Admin APIs a Kafka 4.x broker serves, driven by kafka-python 3's admin client and its own
protocol classes over real sockets: features, the metadata quorum, replica log dirs, client
quotas (stored and enforced), delegation tokens."""

from __future__ import annotations

import time
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer
from kafka import KafkaAdminClient, TopicPartitionReplica
from kafka.errors import InvalidUpdateVersionError

import mockkafka
from mockkafka.errors import ErrorCode
from tests.robustness._wire import Raw


@pytest.fixture
def cluster() -> Any:
    with mockkafka.Cluster(brokers=2) as c:
        yield c


def _admin(cluster: mockkafka.Cluster) -> KafkaAdminClient:
    return KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers, request_timeout_ms=10000)


def _send(admin: KafkaAdminClient, request: Any) -> Any:
    """Send one request with kafka-python's own network manager (any broker)."""
    manager = admin._manager

    async def send() -> Any:
        return await manager.send(request)

    return manager.run(send)


def test_share_version_is_finalized_and_turning_it_off_hides_the_share_apis(
    cluster: mockkafka.Cluster,
) -> None:
    admin = _admin(cluster)
    try:
        before = admin.describe_features()
        assert before["share.version"]["finalized"] == (1, 1)  # on, as a new Kafka 4.2+ cluster
        with pytest.raises(InvalidUpdateVersionError):
            admin.update_features({"no.such.feature": 1})
        with pytest.raises(InvalidUpdateVersionError):
            admin.update_features({"share.version": 0})  # a downgrade needs the downgrade type
        admin.update_features({"share.version": ("SAFE_DOWNGRADE", 0)})
        after = admin.describe_features()
        assert "finalized" not in after["share.version"]  # level 0: off, not finalized
        assert after["share.version"]["supported"] == (0, 1)
    finally:
        admin.close()
    # Kafka 4.1+ serves share groups only while share.version is 1 or more
    with Raw(cluster.brokers[0].host, cluster.brokers[0].port) as r:
        body = r.request(
            "ApiVersions", 3, {"client_software_name": "t", "client_software_version": "1"}
        )
    assert not {76, 77, 78, 79, 90, 91, 92} & {k["api_key"] for k in body["api_keys"]}


def test_describe_metadata_quorum_reports_the_controller_as_leader_and_voter(
    cluster: mockkafka.Cluster,
) -> None:
    admin = _admin(cluster)
    try:
        q = admin.describe_metadata_quorum()
        part = q["topics"][0]["partitions"][0]
        assert part["leader_id"] == 1
        assert [v["replica_id"] for v in part["current_voters"]] == [1]
        assert [o["replica_id"] for o in part["observers"]] == [2]
    finally:
        admin.close()


def test_alter_replica_log_dirs_accepts_the_broker_dir_and_refuses_another(
    cluster: mockkafka.Cluster,
) -> None:
    cluster.create_topic("t", partitions=1, replication_factor=2)
    admin = _admin(cluster)
    try:
        ok = admin.alter_replica_log_dirs(
            {TopicPartitionReplica("t", 0, 1): "/var/lib/mockkafka/1"}
        )
        bad = admin.alter_replica_log_dirs({TopicPartitionReplica("t", 0, 2): "/elsewhere"})
    finally:
        admin.close()
    assert _codes(ok) == {ErrorCode.NONE}
    assert _codes(bad) == {ErrorCode.LOG_DIR_NOT_FOUND}


def _codes(result: Any) -> set[int]:
    vals = list(result.values()) if isinstance(result, dict) else list(result)
    out: set[int] = set()
    for v in vals:
        code = getattr(v, "errno", v)
        out.add(0 if code is None else int(code))
    return out


def _alter_quota(key: str, value: float, *, remove: bool = False) -> Any:
    from kafka.protocol.admin.client_quotas import AlterClientQuotasRequest as Req

    return Req.EntryData(
        entity=[Req.EntryData.EntityData(entity_type="client-id", entity_name="app")],
        ops=[Req.EntryData.OpData(key=key, value=value, remove=remove)],
    )


def _describe_client_ids() -> Any:
    from kafka.protocol.admin.client_quotas import DescribeClientQuotasRequest as Req

    return Req(
        components=[Req.ComponentData(entity_type="client-id", match_type=2, match=None)],
        strict=False,
    )


def test_client_quotas_are_stored_described_and_removed(cluster: mockkafka.Cluster) -> None:
    from kafka.protocol.admin.client_quotas import AlterClientQuotasRequest

    admin = _admin(cluster)
    try:
        entries = [_alter_quota("producer_byte_rate", 1024.0), _alter_quota("bogus_rate", 1.0)]
        r = _send(admin, AlterClientQuotasRequest(entries=entries, validate_only=False))
        assert [e.error_code for e in r.entries] == [0, ErrorCode.INVALID_REQUEST]
        d = _send(admin, _describe_client_ids())
        assert [(e.entity_type, e.entity_name) for e in d.entries[0].entity] == [
            ("client-id", "app")
        ]
        assert [(v.key, v.value) for v in d.entries[0].values] == [("producer_byte_rate", 1024.0)]
        removal = [_alter_quota("producer_byte_rate", 0.0, remove=True)]
        _send(admin, AlterClientQuotasRequest(entries=removal, validate_only=False))
        assert not _send(admin, _describe_client_ids()).entries
    finally:
        admin.close()


def test_producer_over_its_byte_rate_quota_is_throttled_as_kafka_throttles() -> None:
    with mockkafka.Cluster() as cluster:
        cluster.create_topic("t")
        cluster.set_client_quotas({"producer_byte_rate": 20_000}, client_id="slow")
        p = Producer(
            {
                "bootstrap.servers": cluster.bootstrap_servers,
                "client.id": "slow",
                "linger.ms": 0,
                "batch.size": 20_000,
            }
        )
        start = time.monotonic()
        for _ in range(30):
            p.produce("t", b"x" * 10_000)
            p.poll(0)
        assert p.flush(60) == 0
        elapsed = time.monotonic() - start
        produces = cluster.traffic.requests(api="Produce")
        throttles = [r.response.get("throttle_time_ms", 0) for r in produces if r.response]
        assert max(throttles) > 0
        # 300 kB at 20 kB/s over an 11 s window: Kafka holds the producer back for seconds.
        assert elapsed > 2.0
        assert len(cluster.topic("t").records()) == 30
        # Other clients are not throttled.
        fast = Producer({"bootstrap.servers": cluster.bootstrap_servers, "client.id": "fast"})
        fast.produce("t", b"y" * 10_000)
        assert fast.flush(10) == 0
        last = cluster.traffic.requests(api="Produce", client_id="fast")[-1]
        assert last.response is not None and last.response.get("throttle_time_ms", 0) == 0


def test_consumer_over_its_byte_rate_quota_gets_throttled_fetches() -> None:
    with mockkafka.Cluster() as cluster:
        cluster.create_topic("t")
        for _ in range(40):
            cluster.produce("t", b"z" * 10_000)
        cluster.set_client_quotas({"consumer_byte_rate": 10_000}, user="<default>")
        c = Consumer(
            {
                "bootstrap.servers": cluster.bootstrap_servers,
                "group.id": "g",
                "client.id": "reader",
                "auto.offset.reset": "earliest",
            }
        )
        got = 0
        try:
            c.subscribe(["t"])
            deadline = time.monotonic() + 30
            while got < 40 and time.monotonic() < deadline:
                m = c.poll(0.2)
                if m is not None and m.error() is None:
                    got += 1
        finally:
            c.close()
        assert got == 40
        fetches = cluster.traffic.requests(api="Fetch")
        assert max((r.response or {}).get("throttle_time_ms", 0) for r in fetches) > 0

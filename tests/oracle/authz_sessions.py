"""The authorizer sessions of the differential harness (``test_authorizer_differential.py``,
``python -m tests.oracle.report``): set-up by a super user, then an ANONYMOUS session."""

from __future__ import annotations

from typing import Any

import mockkafka
from mockkafka.cluster.security import unsecured_token
from mockkafka.kafka_broker import KafkaBroker
from tests.oracle.harness import ApiTally, Client, compare, new_token, run_session
from tests.oracle.sessions import _batch, _fetch, _produce, settle_topic
from tests.robustness._wire import Raw

OPEN, CLOSED, GROUP_OPEN, GROUP_CLOSED = "open", "closed", "g-open", "g-closed"


def _names(token: str) -> dict[str, str]:
    return {n: f"{n}-{token}" for n in (OPEN, CLOSED, GROUP_OPEN, GROUP_CLOSED)}


def _acl(resource_type: int, name: str, operation: int) -> dict[str, Any]:
    return {
        "resource_type": resource_type,
        "resource_name": name,
        "resource_pattern_type": 3,  # LITERAL
        "principal": "User:ANONYMOUS",
        "host": "*",
        "operation": operation,
        "permission_type": 3,  # ALLOW
    }


def _setup_kafka(kafka: KafkaBroker, token: str) -> None:
    """As super user ``admin`` over OAUTHBEARER: the topics and the ACLs."""
    n = _names(token)
    with Raw("127.0.0.1", kafka.sasl_port, timeout=30) as admin:
        assert admin.request("SaslHandshake", 1, {"mechanism": "OAUTHBEARER"})["error_code"] == 0
        first = f"n,,\x01auth=Bearer {unsecured_token('admin')}\x01\x01".encode()
        assert admin.request("SaslAuthenticate", 2, {"auth_bytes": first})["error_code"] == 0
        topics = [
            {"name": n[t], "num_partitions": 1, "replication_factor": 1} for t in (OPEN, CLOSED)
        ]
        created = admin.request("CreateTopics", 7, {"topics": topics, "timeout_ms": 10000})
        assert [t["error_code"] for t in created["topics"]] == [0, 0], created
        creations = [_acl(2, n[OPEN], op) for op in (3, 4, 8)]  # READ, WRITE, DESCRIBE
        creations.append(_acl(3, n[GROUP_OPEN], 3))  # READ on the group
        made = admin.request("CreateAcls", 3, {"creations": creations})
        assert all(r["error_code"] == 0 for r in made["results"]), made
    c = Client(kafka.port, "setup", token)
    try:
        settle_topic(c, n[OPEN], 1)
    finally:
        c.close()


def _setup_fake(fake: mockkafka.Cluster, token: str) -> None:
    n = _names(token)
    for t in (OPEN, CLOSED):
        fake.create_topic(n[t], partitions=1)
    fake.allow("User:ANONYMOUS", ["read", "write", "describe"], topic=n[OPEN])
    fake.allow("User:ANONYMOUS", "read", group=n[GROUP_OPEN])


def anonymous_session(c: Client) -> None:
    t_open, t_closed = c.name(OPEN), c.name(CLOSED)
    g_open, g_closed = c.name(GROUP_OPEN), c.name(GROUP_CLOSED)
    c.request("Metadata", 12, {"topics": None})
    c.request("Metadata", 12, {"topics": [{"name": t_open}, {"name": t_closed}]})
    c.request(
        "Metadata", 12, {"topics": [{"name": c.name("new")}], "allow_auto_topic_creation": True}
    )
    for t in (t_open, t_closed):
        _produce(c, t, 0, _batch(b"x"))
        _fetch(c, t, 0)
        c.request(
            "ListOffsets",
            7,
            {
                "replica_id": -1,
                "topics": [{"name": t, "partitions": [{"partition_index": 0, "timestamp": -1}]}],
            },
        )
        c.request(
            "DescribeConfigs",
            4,
            {
                "resources": [
                    {"resource_type": 2, "resource_name": t, "configuration_keys": ["retention.ms"]}
                ]
            },
        )
        c.request(
            "DeleteRecords",
            2,
            {
                "topics": [{"name": t, "partitions": [{"partition_index": 0, "offset": 0}]}],
                "timeout_ms": 5000,
            },
        )
        c.request("DescribeProducers", 0, {"topics": [{"name": t, "partition_indexes": [0]}]})
    c.request(
        "CreateTopics",
        7,
        {
            "topics": [{"name": c.name("made"), "num_partitions": 1, "replication_factor": 1}],
            "timeout_ms": 5000,
        },
    )
    c.request("DeleteTopics", 6, {"topics": [{"name": t_closed}], "timeout_ms": 5000})
    c.request(
        "CreatePartitions", 3, {"topics": [{"name": t_closed, "count": 2}], "timeout_ms": 5000}
    )
    for g in (g_open, g_closed):
        c.request("FindCoordinator", 4, {"key_type": 0, "coordinator_keys": [g]})
        c.request(
            "OffsetCommit",
            8,
            {
                "group_id": g,
                "generation_id_or_member_epoch": -1,
                "member_id": "",
                "topics": [
                    {"name": t_open, "partitions": [{"partition_index": 0, "committed_offset": 1}]}
                ],
            },
        )
        c.request(
            "OffsetFetch",
            8,
            {"groups": [{"group_id": g, "topics": [{"name": t_open, "partition_indexes": [0]}]}]},
        )
        c.request("DescribeGroups", 5, {"groups": [g]})
        c.request("DeleteGroups", 2, {"groups_names": [g]})
    c.request("ListGroups", 5, {"states_filter": [], "types_filter": []})
    c.request("FindCoordinator", 4, {"key_type": 1, "coordinator_keys": [c.name("txn")]})
    c.request(
        "InitProducerId", 4, {"transactional_id": c.name("txn"), "transaction_timeout_ms": 60000}
    )
    c.request("InitProducerId", 4, {"transactional_id": None, "transaction_timeout_ms": -1})
    acl_filter = {
        "resource_type_filter": 1,
        "resource_name_filter": None,
        "pattern_type_filter": 1,
        "principal_filter": None,
        "host_filter": None,
        "operation": 1,
        "permission_type": 1,
    }
    c.request("DescribeAcls", 3, acl_filter)
    c.request("CreateAcls", 3, {"creations": [_acl(2, t_closed, 3)]})
    c.request("DeleteAcls", 3, {"filters": [{**acl_filter, "resource_type_filter": 2}]})
    c.request("DescribeCluster", 1, {"include_cluster_authorized_operations": True})
    c.request("DescribeLogDirs", 4, {"topics": None})
    c.request(
        "AlterConfigs",
        2,
        {"resources": [{"resource_type": 2, "resource_name": t_open, "configs": []}]},
    )


def run_authorizer(fake: mockkafka.Cluster, kafka: KafkaBroker) -> dict[str, ApiTally]:
    """Set both up, run :func:`anonymous_session` on each, compare (see ``harness.py``);
    ``fake`` needs ``authorizer=True`` and ``kafka`` ``KafkaBroker(authorizer=True)``."""
    from tests.oracle.allowed import allowed_by

    port = int(fake.bootstrap_servers.split(",")[0].rsplit(":", 1)[1])
    fake_token, kafka_token = new_token(), new_token()
    _setup_fake(fake, fake_token)
    _setup_kafka(kafka, kafka_token)
    on_fake = run_session(port, "authorizer", anonymous_session, token=fake_token)
    on_kafka = run_session(kafka.port, "authorizer", anonymous_session, token=kafka_token)
    return compare(on_fake, on_kafka, allowed_by)

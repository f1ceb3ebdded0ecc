"""The authorization table (handlers/authz.RULES) without a server: every API has a
declaration, every declaration names fields the schemas have, and the checks answer with
Kafka's errors while the authorized part of a request is done."""

from __future__ import annotations

from typing import Any

import pytest

from mockkafka.cluster.acls import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
)
from mockkafka.cluster.state import ClusterConfig, ClusterState
from mockkafka.errors import ErrorCode
from mockkafka.handlers.authz import RULES, Each, Hide, Whole
from mockkafka.handlers.base import call_handler, load_handlers
from mockkafka.protocol.apis import API_BY_NAME
from mockkafka.protocol.codec import Message, field_in_version, message_fields

ALICE = "User:alice"
TOPIC_FAILED = ErrorCode.TOPIC_AUTHORIZATION_FAILED
GROUP_FAILED = ErrorCode.GROUP_AUTHORIZATION_FAILED
CLUSTER_FAILED = ErrorCode.CLUSTER_AUTHORIZATION_FAILED


def test_every_handler_declares_what_it_authorizes() -> None:
    # A new handler (share groups, ...) must add its line to RULES in handlers/authz.py.
    served = {spec.api.name for spec in load_handlers().values()}
    missing = sorted(served - RULES.keys())
    assert not missing, f"add these APIs to handlers/authz.RULES: {missing}"
    assert not RULES.keys() - API_BY_NAME.keys()


def _names(message: str, version: int, within: tuple[str, ...] = ()) -> set[str]:
    fields = message_fields(message, version)
    for outer in within:
        fields = next(f[7] for f in fields if f[0] == outer)
    return {f[0] for f in fields if field_in_version(f, version)}


@pytest.mark.parametrize("api_name", sorted(RULES))
def test_declarations_name_fields_the_schemas_have(api_name: str) -> None:
    api = API_BY_NAME[api_name]
    spec = load_handlers()[api.key]
    for check in RULES[api_name]:
        if not isinstance(check, Whole | Each | Hide):
            continue
        lo, hi = max(check.versions[0], spec.min_version), min(check.versions[1], spec.max_version)
        assert lo <= hi, f"{api_name}: {check} covers no served version"
        for v in (lo, hi):
            if isinstance(check, Whole):
                assert not check.field or check.field in _names(api.request_name, v), check
                continue
            req_in = (check.within[0],) if check.within else ()
            resp_in = (check.within[1],) if check.within else ()
            if isinstance(check, Each):
                assert check.array in _names(api.request_name, v, req_in), (v, check)
            answer = _names(api.response_name, v, resp_in)
            assert check.answer in answer, (v, check)


def _acl(rtype: ResourceType, name: str, op: AclOperation, principal: str = ALICE) -> AclBinding:
    return AclBinding(rtype, name, PatternType.LITERAL, principal, "*", op, AclPermissionType.ALLOW)


def _cluster(*acls: AclBinding) -> ClusterState:
    state = ClusterState(ClusterConfig(authorizer=True, auto_create_topics=False))
    for name in ("orders", "secret"):
        state.create_topic(name)
    for a in acls:
        state.acls.create(a)
    return state


def _commit(state: ClusterState, group: str, offsets: dict[tuple[str, int], int]) -> None:
    for (topic, partition), offset in offsets.items():
        state.groups.store_committed_offset(group, topic, partition, offset, -1, "")


def _call(state: ClusterState, api: str, request: Message, **kw: Any) -> Message:
    out = call_handler(state, api, request, principal=ALICE, **kw)
    assert isinstance(out, dict)
    return out


def _errors(entries: list[Message], key: str = "name") -> dict[str, int]:
    return {e[key]: e["error_code"] for e in entries}


def test_create_topics_needs_create_on_the_topic_or_the_cluster() -> None:
    state = _cluster(_acl(ResourceType.TOPIC, "new-a", AclOperation.CREATE))
    one = {"num_partitions": 1, "replication_factor": 1}
    req = {"topics": [{"name": "new-a", **one}, {"name": "new-b", **one}], "timeout_ms": 1000}
    out = _call(state, "CreateTopics", req)
    assert _errors(out["topics"]) == {"new-a": 0, "new-b": TOPIC_FAILED}
    assert "new-a" in state.topics and "new-b" not in state.topics
    created = out["topics"][0]  # alice may not see its configs: no DESCRIBE_CONFIGS
    assert created["topic_config_error_code"] == TOPIC_FAILED and created["configs"] == []
    state.acls.create(_acl(ResourceType.CLUSTER, "kafka-cluster", AclOperation.CREATE))
    out = _call(state, "CreateTopics", {"topics": [{"name": "new-b", **one}], "timeout_ms": 1000})
    assert _errors(out["topics"]) == {"new-b": 0}


@pytest.mark.parametrize("version", [5, 6])
def test_delete_topics_needs_delete_per_topic(version: int) -> None:
    state = _cluster(_acl(ResourceType.TOPIC, "orders", AclOperation.DELETE))
    if version == 5:
        req: Message = {"topic_names": ["orders", "secret"], "timeout_ms": 1000}
    else:
        req = {"topics": [{"name": "orders"}, {"name": "secret"}], "timeout_ms": 1000}
    out = _call(state, "DeleteTopics", req, version=version)
    assert _errors(out["responses"]) == {"orders": 0, "secret": TOPIC_FAILED}
    assert sorted(state.topics) == ["secret"]


def test_describe_configs_broker_needs_cluster_describe_configs() -> None:
    state = _cluster(_acl(ResourceType.TOPIC, "orders", AclOperation.DESCRIBE_CONFIGS))
    req = {
        "resources": [
            {"resource_type": 2, "resource_name": "orders"},
            {"resource_type": 2, "resource_name": "secret"},
            {"resource_type": 4, "resource_name": "1"},
        ]
    }
    out = _call(state, "DescribeConfigs", req)
    got = {r["resource_name"]: r["error_code"] for r in out["results"]}
    assert got == {"orders": 0, "secret": TOPIC_FAILED, "1": CLUSTER_FAILED}
    assert next(r for r in out["results"] if r["resource_name"] == "orders")["configs"]


def test_list_groups_shows_only_describable_groups_unless_cluster_describe() -> None:
    state = _cluster(_acl(ResourceType.GROUP, "mine", AclOperation.READ))
    _commit(state, "mine", {("orders", 0): 1})
    _commit(state, "theirs", {("orders", 0): 1})
    groups = [g["group_id"] for g in _call(state, "ListGroups", {})["groups"]]
    assert groups == ["mine"]
    state.acls.create(_acl(ResourceType.CLUSTER, "kafka-cluster", AclOperation.DESCRIBE))
    groups = [g["group_id"] for g in _call(state, "ListGroups", {})["groups"]]
    assert sorted(groups) == ["mine", "theirs"]


@pytest.mark.parametrize("version", [7, 9])
def test_offset_fetch_needs_describe_on_group_and_topics(version: int) -> None:
    state = _cluster(
        _acl(ResourceType.GROUP, "g", AclOperation.DESCRIBE),
        _acl(ResourceType.TOPIC, "orders", AclOperation.DESCRIBE),
    )
    _commit(state, "g", {("orders", 0): 5, ("secret", 0): 7})
    _commit(state, "other", {("orders", 0): 1})

    def fetch(group: str, topics: list[str] | None) -> Message:
        ts = None if topics is None else [{"name": t, "partition_indexes": [0]} for t in topics]
        if version < 8:
            return _call(state, "OffsetFetch", {"group_id": group, "topics": ts}, version=version)
        out = _call(
            state, "OffsetFetch", {"groups": [{"group_id": group, "topics": ts}]}, version=version
        )
        return dict(out["groups"][0])

    assert fetch("other", ["orders"])["error_code"] == GROUP_FAILED
    named = fetch("g", ["orders", "secret"])
    parts = {t["name"]: t["partitions"][0] for t in named["topics"]}
    assert parts["orders"]["committed_offset"] == 5
    assert parts["secret"]["error_code"] == TOPIC_FAILED
    assert parts["secret"]["committed_offset"] == -1
    every = fetch("g", None)  # all topics: the undescribable ones are left out
    assert [t["name"] for t in every["topics"]] == ["orders"]


def test_add_partitions_to_txn_refused_topic_leaves_the_others_not_attempted() -> None:
    state = _cluster(
        _acl(ResourceType.TRANSACTIONAL_ID, "tx", AclOperation.WRITE),
        _acl(ResourceType.TOPIC, "orders", AclOperation.WRITE),
    )
    req = {
        "v3_and_below_transactional_id": "tx",
        "v3_and_below_producer_id": 1,
        "v3_and_below_producer_epoch": 0,
        "v3_and_below_topics": [
            {"name": "orders", "partitions": [0]},
            {"name": "secret", "partitions": [0]},
        ],
    }
    out = _call(state, "AddPartitionsToTxn", req, version=3)
    got = {
        t["name"]: t["results_by_partition"][0]["partition_error_code"]
        for t in out["results_by_topic_v3_and_below"]
    }
    assert got == {"orders": ErrorCode.OPERATION_NOT_ATTEMPTED, "secret": TOPIC_FAILED}


def test_authorized_operations_are_the_principals() -> None:
    state = _cluster(
        _acl(ResourceType.TOPIC, "orders", AclOperation.READ),
        _acl(ResourceType.CLUSTER, "kafka-cluster", AclOperation.DESCRIBE),
    )
    out = _call(
        state,
        "Metadata",
        {
            "topics": [{"name": "orders"}],
            "include_topic_authorized_operations": True,
            "include_cluster_authorized_operations": True,
        },
        version=10,
    )
    assert out["topics"][0]["topic_authorized_operations"] == (1 << 3) | (1 << 8)
    assert out["cluster_authorized_operations"] == 1 << 8
    out = _call(state, "DescribeCluster", {"include_cluster_authorized_operations": False})
    assert out["cluster_authorized_operations"] == -(2**31)


def test_authorized_operations_without_an_authorizer_are_every_supported_one() -> None:
    state = ClusterState(ClusterConfig())
    out = call_handler(state, "DescribeCluster", {"include_cluster_authorized_operations": True})
    assert isinstance(out, dict)
    # CREATE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE
    assert out["cluster_authorized_operations"] == sum(1 << b for b in (5, 7, 8, 9, 10, 11, 12))


TXN_FAILED = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED


@pytest.mark.parametrize(
    ("api", "request_body", "version", "where", "code"),
    [
        ("Produce", {"transactional_id": "tx", "acks": -1, "topic_data": []}, 9, "", None),
        ("EndTxn", {"transactional_id": "tx", "producer_id": 1}, 3, "error_code", TXN_FAILED),
        (
            "JoinGroup",
            {"group_id": "g", "protocol_type": "consumer"},
            9,
            "error_code",
            GROUP_FAILED,
        ),
        ("DescribeLogDirs", {"topics": None}, 4, "error_code", CLUSTER_FAILED),
        (
            "ElectLeaders",
            {"election_type": 0, "topic_partitions": None},
            2,
            "error_code",
            CLUSTER_FAILED,
        ),
        ("UpdateFeatures", {"feature_updates": []}, 1, "error_code", CLUSTER_FAILED),
        ("DescribeClientQuotas", {"components": []}, 1, "error_code", CLUSTER_FAILED),
        ("ListConfigResources", {}, 1, "error_code", CLUSTER_FAILED),
        ("DescribeUserScramCredentials", {"users": None}, 0, "error_code", CLUSTER_FAILED),
    ],
)
def test_requests_refused_whole_without_the_acl(
    api: str, request_body: Message, version: int, where: str, code: ErrorCode | None
) -> None:
    state = _cluster()
    out = _call(state, api, request_body, version=version)
    if api == "Produce":  # a transactional produce: every partition, and nothing stored
        assert out["responses"] == []
        return
    assert out[where] == code
    if api == "DescribeLogDirs":
        assert out["results"] == []  # Kafka tells nothing about the log dirs


def test_transactions_and_groups_are_hidden_or_refused_per_id() -> None:
    state = _cluster(
        _acl(ResourceType.TRANSACTIONAL_ID, "mine", AclOperation.DESCRIBE),
        _acl(ResourceType.GROUP, "g1", AclOperation.DESCRIBE),
    )
    out = _call(state, "DescribeTransactions", {"transactional_ids": ["mine", "theirs"]})
    got = {t["transactional_id"]: t["error_code"] for t in out["transaction_states"]}
    assert got["theirs"] == TXN_FAILED and got["mine"] != TXN_FAILED
    out = _call(
        state, "DescribeGroups", {"groups": ["g1", "g2"], "include_authorized_operations": True}
    )
    got = {g["group_id"]: g["error_code"] for g in out["groups"]}
    assert got["g2"] == GROUP_FAILED and got["g1"] != GROUP_FAILED
    out = _call(state, "DeleteGroups", {"groups_names": ["g1"]})
    assert out["results"] == [{"group_id": "g1", "error_code": GROUP_FAILED, "error_message": None}]


def test_describe_topic_partitions_hides_and_refuses_undescribable_topics() -> None:
    state = _cluster(_acl(ResourceType.TOPIC, "orders", AclOperation.READ))
    out = _call(state, "DescribeTopicPartitions", {"topics": [], "response_partition_limit": 10})
    assert [t["name"] for t in out["topics"]] == ["orders"]
    assert out["topics"][0]["topic_authorized_operations"] == (1 << 3) | (1 << 8)
    out = _call(
        state,
        "DescribeTopicPartitions",
        {"topics": [{"name": "secret"}], "response_partition_limit": 10},
    )
    assert [(t["name"], t["error_code"]) for t in out["topics"]] == [("secret", TOPIC_FAILED)]


def test_share_group_describe_needs_describe_on_the_group() -> None:
    state = _cluster(_acl(ResourceType.GROUP, "mine", AclOperation.DESCRIBE))
    out = _call(state, "ShareGroupDescribe", {"group_ids": ["mine", "theirs"]})
    got = {g["group_id"]: g["error_code"] for g in out["groups"]}
    assert got["theirs"] == GROUP_FAILED and got["mine"] != GROUP_FAILED

"""Admin and metadata handlers, sans-IO: a ClusterState, a RequestContext, the handler.

Requests and responses go through the real codec at the version under test, so a response a
client could not decode fails here too.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from mockkafka.cluster.configs import (
    ConfigSource,
    ConfigType,
    ResourceType,
    validate_topic_config,
)
from mockkafka.cluster.produce import append_records
from mockkafka.cluster.state import ClusterConfig, ClusterState
from mockkafka.errors import ErrorCode
from mockkafka.handlers.base import call_handler, load_handlers
from mockkafka.protocol import records as rec
from mockkafka.protocol.apis import API_BY_NAME
from mockkafka.protocol.codec import ZERO_UUID, Message

ADMIN_APIS = (
    "CreateTopics",
    "DeleteTopics",
    "CreatePartitions",
    "DeleteRecords",
    "DescribeConfigs",
    "AlterConfigs",
    "IncrementalAlterConfigs",
    "DescribeCluster",
    "DescribeTopicPartitions",
    "DescribeLogDirs",
    "OffsetForLeaderEpoch",
    "GetTelemetrySubscriptions",
    "PushTelemetry",
    "ElectLeaders",
    "ListPartitionReassignments",
    "AlterPartitionReassignments",
    "DescribeClientQuotas",
    "DescribeAcls",
    "CreateAcls",
    "DeleteAcls",
    "DescribeUserScramCredentials",
    "ListConfigResources",
)

TOPIC, BROKER, BROKER_LOGGER, GROUP = 2, 4, 8, 32
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3


def make_state(brokers: int = 3, **options: Any) -> ClusterState:
    state = ClusterState(ClusterConfig(brokers=brokers, **options))
    for b in state.brokers.values():
        b.port = 9000 + b.node_id
    return state


def call(
    state: ClusterState,
    api_name: str,
    request: Message,
    *,
    version: int | None = None,
    broker_id: int = 1,
) -> Message:
    """Run a handler as the server would: request and response through the codec."""
    out = call_handler(
        state, api_name, request, version=version, broker_id=broker_id, client_id="admin-test"
    )
    assert isinstance(out, dict)
    return out


def produce(state: ClusterState, topic: str, partition: int, n: int) -> None:
    t = state.topic(topic)
    p = t.partition(partition)
    for i in range(n):
        batch = rec.encode_batch([rec.Record(0, state.now_ms(), None, f"v{i}".encode(), ())])
        res = append_records(state, t, p, batch)
        assert res.error == ErrorCode.NONE


def configs_of(result: Message) -> dict[str, Message]:
    return {c["name"]: c for c in result["configs"]}


# -- every version of every API answers something the codec can encode -------------------------


@pytest.mark.parametrize("api_name", ADMIN_APIS)
def test_every_served_version_answers_an_empty_request(api_name: str) -> None:
    state = make_state()
    state.create_topic("t", 2, 2)
    spec = load_handlers()[API_BY_NAME[api_name].key]
    assert (spec.min_version, spec.max_version) == (
        API_BY_NAME[api_name].min_version,
        API_BY_NAME[api_name].max_version,
    )
    for v in range(spec.min_version, spec.max_version + 1):
        resp = call(state, api_name, {}, version=v)
        assert "throttle_time_ms" in resp or v == 0


# -- CreateTopics -------------------------------------------------------------------------------


def test_create_topics_returns_id_partitions_replication_and_config_sources() -> None:
    state = make_state()
    resp = call(
        state,
        "CreateTopics",
        {
            "topics": [
                {
                    "name": "orders",
                    "num_partitions": 4,
                    "replication_factor": 3,
                    "configs": [{"name": "retention.ms", "value": "1000"}],
                }
            ]
        },
    )
    [t] = resp["topics"]
    assert t["error_code"] == 0 and t["error_message"] is None
    assert t["topic_id"] == state.topic("orders").topic_id != ZERO_UUID
    assert (t["num_partitions"], t["replication_factor"]) == (4, 3)
    cfg = configs_of(t)
    assert cfg["retention.ms"]["value"] == "1000"
    assert cfg["retention.ms"]["config_source"] == ConfigSource.DYNAMIC_TOPIC_CONFIG
    assert cfg["cleanup.policy"]["config_source"] == ConfigSource.DEFAULT_CONFIG
    assert state.topic("orders").configs == {"retention.ms": "1000"}
    assert [len(p.replicas) for p in state.topic("orders").partitions] == [3, 3, 3, 3]


def test_create_topics_defaults_with_minus_one() -> None:
    state = make_state(default_partitions=3, default_replication_factor=2)
    [t] = call(
        state,
        "CreateTopics",
        {"topics": [{"name": "d", "num_partitions": -1, "replication_factor": -1}]},
    )["topics"]
    assert (t["num_partitions"], t["replication_factor"]) == (3, 2)


@pytest.mark.parametrize(
    ("topic", "code"),
    [
        ({"name": "bad name!", "num_partitions": 1, "replication_factor": 1}, 17),
        ({"name": "zero", "num_partitions": 0, "replication_factor": 1}, 37),
        ({"name": "rf", "num_partitions": 1, "replication_factor": 4}, 38),
        (
            {
                "name": "cfg",
                "num_partitions": 1,
                "replication_factor": 1,
                "configs": [{"name": "retention.ms", "value": "soon"}],
            },
            40,
        ),
        (
            {
                "name": "unknown-cfg",
                "num_partitions": 1,
                "replication_factor": 1,
                "configs": [{"name": "no.such.config", "value": "1"}],
            },
            40,
        ),
        (
            {
                "name": "null-cfg",
                "num_partitions": 1,
                "replication_factor": 1,
                "configs": [{"name": "retention.ms", "value": None}],
            },
            40,
        ),
        (
            {
                "name": "both",
                "num_partitions": 2,
                "replication_factor": -1,
                "assignments": [{"partition_index": 0, "broker_ids": [1]}],
            },
            42,
        ),
        (
            {
                "name": "gap",
                "num_partitions": -1,
                "replication_factor": -1,
                "assignments": [{"partition_index": 1, "broker_ids": [1]}],
            },
            39,
        ),
        (
            {
                "name": "nobroker",
                "num_partitions": -1,
                "replication_factor": -1,
                "assignments": [{"partition_index": 0, "broker_ids": [7]}],
            },
            39,
        ),
    ],
)
def test_create_topics_per_topic_errors_with_messages(topic: Message, code: int) -> None:
    state = make_state()
    [t] = call(state, "CreateTopics", {"topics": [topic]})["topics"]
    assert t["error_code"] == code
    assert t["error_message"]
    assert t["num_partitions"] == -1
    assert topic["name"] not in state.topics


def test_create_topics_already_exists_and_name_collision() -> None:
    state = make_state()
    state.create_topic("a.b", 1, 1)
    resp = call(
        state,
        "CreateTopics",
        {
            "topics": [
                {"name": "a.b", "num_partitions": 1, "replication_factor": 1},
                {"name": "a_b", "num_partitions": 1, "replication_factor": 1},
            ]
        },
    )
    codes = {t["name"]: (t["error_code"], t["error_message"]) for t in resp["topics"]}
    assert codes["a.b"] == (ErrorCode.TOPIC_ALREADY_EXISTS, "Topic 'a.b' already exists.")
    assert codes["a_b"][0] == ErrorCode.INVALID_TOPIC_EXCEPTION
    assert "collides" in codes["a_b"][1]


def test_create_topics_duplicate_name_in_one_request_is_invalid_request() -> None:
    state = make_state()
    resp = call(
        state,
        "CreateTopics",
        {"topics": [{"name": "dup", "num_partitions": 1, "replication_factor": 1}] * 2},
    )
    assert [(t["name"], t["error_code"]) for t in resp["topics"]] == [("dup", 42)]
    assert "dup" not in state.topics


def test_create_topics_validate_only_creates_nothing() -> None:
    state = make_state()
    [t] = call(
        state,
        "CreateTopics",
        {
            "topics": [{"name": "v", "num_partitions": 5, "replication_factor": 2}],
            "validate_only": True,
        },
    )["topics"]
    assert t["error_code"] == 0 and (t["num_partitions"], t["replication_factor"]) == (5, 2)
    assert "v" not in state.topics


def test_create_topics_with_explicit_assignments() -> None:
    state = make_state()
    [t] = call(
        state,
        "CreateTopics",
        {
            "topics": [
                {
                    "name": "placed",
                    "num_partitions": -1,
                    "replication_factor": -1,
                    "assignments": [
                        {"partition_index": 0, "broker_ids": [3, 1]},
                        {"partition_index": 1, "broker_ids": [2, 3]},
                    ],
                }
            ]
        },
    )["topics"]
    assert t["error_code"] == 0
    assert [p.replicas for p in state.topic("placed").partitions] == [[3, 1], [2, 3]]
    assert [p.leader for p in state.topic("placed").partitions] == [3, 2]


def test_create_topics_v0_has_no_error_message() -> None:
    state = make_state()
    [t] = call(
        state,
        "CreateTopics",
        {"topics": [{"name": "old", "num_partitions": 1, "replication_factor": 1}]},
        version=0,
    )["topics"]
    assert t["error_code"] == 0 and "old" in state.topics


# -- DeleteTopics -------------------------------------------------------------------------------


def test_delete_topics_by_name_and_by_id() -> None:
    state = make_state()
    state.create_topic("a", 1, 1)
    b = state.create_topic("b", 1, 1)
    woken: list[Any] = []
    state.add_waker(woken.append)
    resp = call(state, "DeleteTopics", {"topic_names": ["a", "nope"]}, version=5)
    assert [(r["name"], r["error_code"]) for r in resp["responses"]] == [("a", 0), ("nope", 3)]
    resp = call(
        state,
        "DeleteTopics",
        {"topics": [{"name": None, "topic_id": b.topic_id}, {"topic_id": uuid.uuid4()}]},
    )
    assert [(r["name"], r["error_code"]) for r in resp["responses"]] == [
        ("b", 0),
        (None, ErrorCode.UNKNOWN_TOPIC_ID),
    ]
    assert state.topics == {} and state.topics_by_id == {}
    assert ("partition", "a", 0) in woken


def test_delete_topics_name_and_id_together_is_invalid_request() -> None:
    state = make_state()
    t = state.create_topic("a", 1, 1)
    [r] = call(state, "DeleteTopics", {"topics": [{"name": "a", "topic_id": t.topic_id}]})[
        "responses"
    ]
    assert r["error_code"] == ErrorCode.INVALID_REQUEST and "a" in state.topics


def test_delete_topics_disabled_by_broker_config() -> None:
    state = make_state(broker_configs=(("delete.topic.enable", "false"),))
    state.create_topic("keep", 1, 1)
    [r] = call(state, "DeleteTopics", {"topic_names": ["keep"]}, version=4)["responses"]
    assert r["error_code"] == ErrorCode.TOPIC_DELETION_DISABLED
    assert "keep" in state.topics


# -- CreatePartitions ---------------------------------------------------------------------------


def test_create_partitions_grows_with_and_without_assignments() -> None:
    state = make_state()
    state.create_topic("g", 1, 2)
    resp = call(
        state,
        "CreatePartitions",
        {"topics": [{"name": "g", "count": 3, "assignments": [{"broker_ids": [3, 2]}] * 2}]},
    )
    assert resp["results"] == [{"name": "g", "error_code": 0, "error_message": None}]
    assert [p.replicas for p in state.topic("g").partitions[1:]] == [[3, 2], [3, 2]]
    call(state, "CreatePartitions", {"topics": [{"name": "g", "count": 4, "assignments": None}]})
    assert len(state.topic("g").partitions) == 4


@pytest.mark.parametrize(
    ("entry", "code"),
    [
        ({"name": "g", "count": 2}, ErrorCode.INVALID_PARTITIONS),
        ({"name": "g", "count": 1}, ErrorCode.INVALID_PARTITIONS),
        ({"name": "missing", "count": 5}, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
        ({"name": "g", "count": 4, "assignments": [{"broker_ids": [1, 2]}]}, 39),
        ({"name": "g", "count": 3, "assignments": [{"broker_ids": [1, 9]}] * 2}, 39),
        ({"name": "g", "count": 3, "assignments": [{"broker_ids": [1]}] * 2}, 39),
        ({"name": "g", "count": 3, "assignments": [{"broker_ids": [2, 2]}] * 2}, 39),
    ],
)
def test_create_partitions_errors(entry: Message, code: int) -> None:
    state = make_state()
    state.create_topic("g", 2, 2)
    [r] = call(state, "CreatePartitions", {"topics": [entry]})["results"]
    assert r["error_code"] == code and r["error_message"]
    assert len(state.topic("g").partitions) == 2


def test_create_partitions_validate_only_and_duplicates() -> None:
    state = make_state()
    state.create_topic("g", 1, 1)
    [r] = call(
        state,
        "CreatePartitions",
        {"topics": [{"name": "g", "count": 8}], "validate_only": True},
    )["results"]
    assert r["error_code"] == 0 and len(state.topic("g").partitions) == 1
    [r] = call(state, "CreatePartitions", {"topics": [{"name": "g", "count": 8}] * 2})["results"]
    assert r["error_code"] == ErrorCode.INVALID_REQUEST and len(state.topic("g").partitions) == 1


# -- DeleteRecords ------------------------------------------------------------------------------


def _delete_records(state: ClusterState, offset: int, broker: int = 1, idx: int = 0) -> Message:
    resp = call(
        state,
        "DeleteRecords",
        {"topics": [{"name": "d", "partitions": [{"partition_index": idx, "offset": offset}]}]},
        broker_id=broker,
    )
    [p] = resp["topics"][0]["partitions"]
    return p


def test_delete_records_advances_log_start_and_wakes_fetchers() -> None:
    state = make_state()
    state.create_topic("d", 1, 1, assignments=[[1]])
    produce(state, "d", 0, 10)
    woken: list[Any] = []
    state.add_waker(woken.append)
    assert _delete_records(state, 4) == {"partition_index": 0, "low_watermark": 4, "error_code": 0}
    assert state.partition("d", 0).log_start_offset == 4
    assert state.partition("d", 0).records()[0].offset == 4
    assert ("partition", "d", 0) in woken
    assert _delete_records(state, 2)["low_watermark"] == 4  # never moves back
    assert _delete_records(state, -1)["low_watermark"] == 10  # -1: the high watermark
    assert state.partition("d", 0).records() == []


@pytest.mark.parametrize(
    ("offset", "broker", "idx", "code"),
    [
        (11, 1, 0, ErrorCode.OFFSET_OUT_OF_RANGE),
        (-7, 1, 0, ErrorCode.OFFSET_OUT_OF_RANGE),
        (3, 2, 0, ErrorCode.NOT_LEADER_OR_FOLLOWER),
        (3, 1, 5, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
    ],
)
def test_delete_records_errors(offset: int, broker: int, idx: int, code: int) -> None:
    state = make_state()
    state.create_topic("d", 1, 1, assignments=[[1]])
    produce(state, "d", 0, 10)
    assert _delete_records(state, offset, broker, idx)["error_code"] == code
    assert state.partition("d", 0).log_start_offset == 0


def test_delete_records_on_compacted_topic_is_policy_violation() -> None:
    state = make_state()
    state.create_topic("d", 1, 1, {"cleanup.policy": "compact"}, assignments=[[1]])
    produce(state, "d", 0, 3)
    assert _delete_records(state, 2)["error_code"] == ErrorCode.POLICY_VIOLATION


# -- DescribeConfigs ----------------------------------------------------------------------------


def _describe(
    state: ClusterState,
    rtype: int,
    name: str,
    keys: list[str] | None = None,
    *,
    version: int | None = None,
    broker_id: int = 1,
    synonyms: bool = True,
) -> Message:
    [r] = call(
        state,
        "DescribeConfigs",
        {
            "resources": [
                {"resource_type": rtype, "resource_name": name, "configuration_keys": keys}
            ],
            "include_synonyms": synonyms,
        },
        version=version,
        broker_id=broker_id,
    )["results"]
    return r


def test_describe_configs_topic_reports_every_config_with_source_and_type() -> None:
    state = make_state()
    state.create_topic("c", 1, 1, {"retention.ms": "5000"})
    r = _describe(state, TOPIC, "c")
    assert r["error_code"] == 0 and r["error_message"] is None
    cfg = configs_of(r)
    assert len(cfg) > 25
    assert cfg["retention.ms"]["value"] == "5000"
    assert cfg["retention.ms"]["config_source"] == ConfigSource.DYNAMIC_TOPIC_CONFIG
    assert cfg["retention.ms"]["config_type"] == ConfigType.LONG
    assert [s["source"] for s in cfg["retention.ms"]["synonyms"]] == [
        ConfigSource.DYNAMIC_TOPIC_CONFIG,
        ConfigSource.DEFAULT_CONFIG,
    ]
    assert cfg["retention.ms"]["synonyms"][1]["name"] == "log.retention.ms"
    assert cfg["max.message.bytes"]["config_source"] == ConfigSource.DEFAULT_CONFIG
    assert cfg["cleanup.policy"]["config_type"] == ConfigType.LIST
    assert cfg["min.cleanable.dirty.ratio"]["config_type"] == ConfigType.DOUBLE
    assert cfg["retention.ms"]["documentation"] is None


def test_describe_configs_only_requested_keys_and_no_synonyms_unless_asked() -> None:
    state = make_state()
    state.create_topic("c", 1, 1)
    r = _describe(state, TOPIC, "c", ["retention.ms", "no.such.key"], synonyms=False)
    assert [c["name"] for c in r["configs"]] == ["retention.ms"]
    assert r["configs"][0]["synonyms"] == []


def test_describe_configs_v0_is_default_flag() -> None:
    state = make_state()
    state.create_topic("c", 1, 1, {"segment.ms": "1000"})
    cfg = configs_of(_describe(state, TOPIC, "c", version=0))
    assert cfg["segment.ms"]["is_default"] is False
    assert cfg["retention.ms"]["is_default"] is True


def test_describe_configs_unknown_topic_and_unknown_resource_type() -> None:
    state = make_state()
    r = _describe(state, TOPIC, "ghost")
    assert r["error_code"] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION and r["configs"] == []
    assert _describe(state, 99, "x")["error_code"] == ErrorCode.INVALID_REQUEST


def test_describe_configs_broker_must_be_the_receiving_broker() -> None:
    state = make_state(broker_configs=(("message.max.bytes", "2000000"),))
    r = _describe(state, BROKER, "2", broker_id=2)
    cfg = configs_of(r)
    assert cfg["broker.id"]["value"] == "2"
    assert cfg["message.max.bytes"]["value"] == "2000000"
    assert cfg["message.max.bytes"]["config_source"] == ConfigSource.STATIC_BROKER_CONFIG
    assert cfg["message.max.bytes"]["read_only"] is False
    assert cfg["auto.create.topics.enable"]["read_only"] is True
    assert cfg["ssl.keystore.password"]["is_sensitive"] is True
    assert cfg["ssl.keystore.password"]["value"] is None
    assert cfg["listeners"]["value"] == "PLAINTEXT://127.0.0.1:9002"
    assert _describe(state, BROKER, "1", broker_id=2)["error_code"] == ErrorCode.INVALID_REQUEST
    assert _describe(state, BROKER, "one")["error_code"] == ErrorCode.INVALID_REQUEST


def test_describe_configs_broker_default_resource_lists_dynamic_defaults_only() -> None:
    state = make_state()
    # Kafka 4.1+ writes the cluster-wide min.insync.replicas at bootstrap (checked against
    # Kafka 4.4 by the oracle tier); nothing else is set.
    [c] = _describe(state, BROKER, "")["configs"]
    assert (c["name"], c["value"]) == ("min.insync.replicas", "1")
    _alter(state, BROKER, "", [("log.retention.ms", SET, "1234")])
    cfg = configs_of(_describe(state, BROKER, ""))
    assert sorted(cfg) == ["log.retention.ms", "min.insync.replicas"]
    assert cfg["log.retention.ms"]["value"] == "1234"
    assert {c["config_source"] for c in cfg.values()} == {
        ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG
    }


def test_describe_configs_broker_logger_and_group() -> None:
    state = make_state()
    cfg = configs_of(_describe(state, BROKER_LOGGER, "1"))
    assert cfg["root"]["value"] == "INFO"
    assert cfg["root"]["config_source"] == ConfigSource.DYNAMIC_BROKER_LOGGER_CONFIG
    cfg = configs_of(_describe(state, GROUP, "my-group"))
    assert cfg["consumer.session.timeout.ms"]["value"] == "45000"
    assert cfg["consumer.session.timeout.ms"]["config_source"] == ConfigSource.DEFAULT_CONFIG


# -- AlterConfigs / IncrementalAlterConfigs -----------------------------------------------------


def _alter(
    state: ClusterState,
    rtype: int,
    name: str,
    ops: list[tuple[str, int, str | None]],
    *,
    validate_only: bool = False,
) -> Message:
    [r] = call(
        state,
        "IncrementalAlterConfigs",
        {
            "resources": [
                {
                    "resource_type": rtype,
                    "resource_name": name,
                    "configs": [
                        {"name": k, "config_operation": op, "value": v} for k, op, v in ops
                    ],
                }
            ],
            "validate_only": validate_only,
        },
    )["responses"]
    return r


def test_alter_configs_replaces_every_dynamic_topic_config() -> None:
    state = make_state()
    state.create_topic("a", 1, 1, {"retention.ms": "1", "segment.ms": "2"})
    [r] = call(
        state,
        "AlterConfigs",
        {
            "resources": [
                {
                    "resource_type": TOPIC,
                    "resource_name": "a",
                    "configs": [{"name": "max.message.bytes", "value": "100"}],
                }
            ]
        },
    )["responses"]
    assert (r["error_code"], r["error_message"], r["resource_name"]) == (0, None, "a")
    assert state.topic("a").configs == {"max.message.bytes": "100"}
    assert state.topic("a").config_int("max.message.bytes") == 100


@pytest.mark.parametrize(
    ("rtype", "name", "configs", "code"),
    [
        (TOPIC, "a", [("retention.ms", "x")], ErrorCode.INVALID_CONFIG),
        (TOPIC, "a", [("no.such", "1")], ErrorCode.INVALID_CONFIG),
        (TOPIC, "a", [("min.insync.replicas", "0")], ErrorCode.INVALID_CONFIG),
        (TOPIC, "a", [("message.timestamp.type", "Later")], ErrorCode.INVALID_CONFIG),
        (TOPIC, "ghost", [("retention.ms", "1")], ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
        (BROKER, "1", [("auto.create.topics.enable", "true")], ErrorCode.INVALID_REQUEST),
        (BROKER_LOGGER, "1", [("root", "DEBUG")], ErrorCode.INVALID_REQUEST),
        (TOPIC, "a", [("retention.ms", "1"), ("retention.ms", "2")], ErrorCode.INVALID_REQUEST),
    ],
)
def test_alter_configs_errors_change_nothing(
    rtype: int, name: str, configs: list[tuple[str, str]], code: int
) -> None:
    state = make_state()
    state.create_topic("a", 1, 1, {"retention.ms": "1"})
    [r] = call(
        state,
        "AlterConfigs",
        {
            "resources": [
                {
                    "resource_type": rtype,
                    "resource_name": name,
                    "configs": [{"name": k, "value": v} for k, v in configs],
                }
            ]
        },
    )["responses"]
    assert r["error_code"] == code and r["error_message"]
    assert state.topic("a").configs == {"retention.ms": "1"}
    assert state.brokers[1].configs == {}


def test_alter_configs_validate_only_and_duplicate_resources() -> None:
    state = make_state()
    state.create_topic("a", 1, 1)
    res = {
        "resource_type": TOPIC,
        "resource_name": "a",
        "configs": [{"name": "retention.ms", "value": "9"}],
    }
    [r] = call(state, "AlterConfigs", {"resources": [res], "validate_only": True})["responses"]
    assert r["error_code"] == 0 and state.topic("a").configs == {}
    resp = call(state, "AlterConfigs", {"resources": [res, res]})
    assert [r["error_code"] for r in resp["responses"]] == [42, 42]
    assert state.topic("a").configs == {}


def test_incremental_alter_configs_set_delete_append_subtract() -> None:
    state = make_state()
    state.create_topic("i", 1, 1, {"retention.ms": "1"})
    r = _alter(
        state,
        TOPIC,
        "i",
        [
            ("retention.ms", DELETE, None),
            ("message.timestamp.type", SET, "LogAppendTime"),
            ("cleanup.policy", APPEND, "compact"),
        ],
    )
    assert r["error_code"] == 0, r
    assert state.topic("i").configs == {
        "message.timestamp.type": "LogAppendTime",
        "cleanup.policy": "delete,compact",
    }
    assert _alter(state, TOPIC, "i", [("cleanup.policy", SUBTRACT, "delete")])["error_code"] == 0
    assert state.topic("i").configs["cleanup.policy"] == "compact"


@pytest.mark.parametrize(
    ("ops", "code"),
    [
        ([("retention.ms", APPEND, "5")], ErrorCode.INVALID_CONFIG),
        ([("retention.ms", 9, "5")], ErrorCode.INVALID_REQUEST),
        ([("retention.ms", SET, None)], ErrorCode.INVALID_REQUEST),
        ([("retention.ms", SET, "1"), ("retention.ms", DELETE, None)], ErrorCode.INVALID_REQUEST),
        ([("cleanup.policy", APPEND, "forever")], ErrorCode.INVALID_CONFIG),
        ([("not.a.config", DELETE, None)], ErrorCode.INVALID_CONFIG),
    ],
)
def test_incremental_alter_configs_errors(
    ops: list[tuple[str, int, str | None]], code: int
) -> None:
    state = make_state()
    state.create_topic("i", 1, 1)
    r = _alter(state, TOPIC, "i", ops)
    assert r["error_code"] == code and r["error_message"]
    assert state.topic("i").configs == {}


def test_incremental_alter_configs_per_broker_and_cluster_default() -> None:
    state = make_state()
    assert _alter(state, BROKER, "2", [("message.max.bytes", SET, "5000")])["error_code"] == 0
    assert state.brokers[2].configs == {"message.max.bytes": "5000"}
    cfg = configs_of(_describe(state, BROKER, "2", ["message.max.bytes"], broker_id=2))
    assert cfg["message.max.bytes"]["config_source"] == ConfigSource.DYNAMIC_BROKER_CONFIG
    # cluster-wide default: visible in broker_configs, and restored when deleted
    assert _alter(state, BROKER, "", [("log.retention.ms", SET, "42")])["error_code"] == 0
    assert state.broker_configs["log.retention.ms"] == "42"
    state.create_topic("t", 1, 1)
    cfg = configs_of(_describe(state, TOPIC, "t", ["retention.ms"]))
    assert cfg["retention.ms"]["value"] == "42"
    assert cfg["retention.ms"]["config_source"] == ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG
    assert _alter(state, BROKER, "", [("log.retention.ms", DELETE, None)])["error_code"] == 0
    assert state.broker_configs["log.retention.ms"] == "604800000"
    cfg = configs_of(_describe(state, TOPIC, "t", ["retention.ms"]))
    assert cfg["retention.ms"]["config_source"] == ConfigSource.DEFAULT_CONFIG


def test_incremental_alter_configs_broker_logger_levels() -> None:
    state = make_state()
    assert _alter(state, BROKER_LOGGER, "1", [("kafka", SET, "DEBUG")])["error_code"] == 0
    assert configs_of(_describe(state, BROKER_LOGGER, "1"))["kafka"]["value"] == "DEBUG"
    assert _alter(state, BROKER_LOGGER, "1", [("kafka", DELETE, None)])["error_code"] == 0
    assert configs_of(_describe(state, BROKER_LOGGER, "1"))["kafka"]["value"] == "INFO"
    r = _alter(state, BROKER_LOGGER, "1", [("root", DELETE, None)])
    assert r["error_code"] == ErrorCode.INVALID_CONFIG
    r = _alter(state, BROKER_LOGGER, "1", [("kafka", SET, "LOUD")])
    assert r["error_code"] == ErrorCode.INVALID_CONFIG


def test_incremental_alter_configs_validate_only_and_group_configs() -> None:
    state = make_state()
    state.create_topic("i", 1, 1)
    r = _alter(state, TOPIC, "i", [("retention.ms", SET, "7")], validate_only=True)
    assert r["error_code"] == 0 and state.topic("i").configs == {}
    assert (
        _alter(state, GROUP, "g", [("consumer.session.timeout.ms", SET, "30000")])["error_code"]
        == 0
    )
    cfg = configs_of(_describe(state, GROUP, "g"))
    assert cfg["consumer.session.timeout.ms"]["config_source"] == ConfigSource.GROUP_CONFIG
    [res] = call(state, "ListConfigResources", {"resource_types": [GROUP]})["config_resources"]
    assert res == {"resource_name": "g", "resource_type": GROUP}


def test_validate_topic_config_messages() -> None:
    assert validate_topic_config("retention.ms", "100") is None
    p = validate_topic_config("segment.bytes", "1")
    assert p is not None and "at least 14" in p.message
    assert validate_topic_config("preallocate", "TRUE") is None
    assert validate_topic_config("cleanup.policy", "compact,delete") is None


# -- DescribeCluster ----------------------------------------------------------------------------


def test_describe_cluster_lists_brokers_controller_and_fenced_brokers() -> None:
    state = make_state(racks=("r1", "r2", None))
    state.stop_broker(3)
    resp = call(state, "DescribeCluster", {"include_cluster_authorized_operations": True})
    assert resp["cluster_id"] == state.cluster_id
    assert resp["controller_id"] == state.controller_id == 1
    assert [(b["broker_id"], b["rack"], b["port"]) for b in resp["brokers"]] == [
        (1, "r1", 9001),
        (2, "r2", 9002),
    ]
    assert resp["cluster_authorized_operations"] > 0
    resp = call(state, "DescribeCluster", {"include_fenced_brokers": True})
    assert [(b["broker_id"], b["is_fenced"]) for b in resp["brokers"]] == [
        (1, False),
        (2, False),
        (3, True),
    ]
    assert resp["cluster_authorized_operations"] == -2147483648
    resp = call(state, "DescribeCluster", {"endpoint_type": 2})
    assert resp["error_code"] == ErrorCode.UNSUPPORTED_ENDPOINT_TYPE


# -- DescribeTopicPartitions --------------------------------------------------------------------


def test_describe_topic_partitions_pages_with_cursor() -> None:
    state = make_state()
    state.create_topic("b", 3, 2)
    state.create_topic("a", 2, 1)
    seen: list[tuple[str, int]] = []
    cursor = None
    for _ in range(10):
        resp = call(
            state,
            "DescribeTopicPartitions",
            {"topics": [], "response_partition_limit": 2, "cursor": cursor},
        )
        for t in resp["topics"]:
            assert t["error_code"] == 0 and t["topic_id"] == state.topic(t["name"]).topic_id
            for p in t["partitions"]:
                assert p["eligible_leader_replicas"] == [] and p["leader_epoch"] == 0
                seen.append((t["name"], p["partition_index"]))
        cursor = resp["next_cursor"]
        if cursor is None:
            break
    assert seen == [("a", 0), ("a", 1), ("b", 0), ("b", 1), ("b", 2)]


def test_describe_topic_partitions_unknown_topic_and_bad_cursor() -> None:
    state = make_state()
    state.create_topic("a", 1, 1)
    resp = call(state, "DescribeTopicPartitions", {"topics": [{"name": "a"}, {"name": "zz"}]})
    assert [(t["name"], t["error_code"]) for t in resp["topics"]] == [("a", 0), ("zz", 3)]
    assert resp["next_cursor"] is None
    resp = call(
        state,
        "DescribeTopicPartitions",
        {"topics": [{"name": "a"}], "cursor": {"topic_name": "b", "partition_index": 0}},
    )
    assert resp["topics"][0]["error_code"] == ErrorCode.INVALID_REQUEST


# -- DescribeLogDirs ----------------------------------------------------------------------------


def test_describe_log_dirs_reports_partition_sizes_of_this_broker() -> None:
    state = make_state()
    state.create_topic("l", 2, 1, assignments=[[1], [2]])
    produce(state, "l", 0, 3)
    resp = call(state, "DescribeLogDirs", {"topics": None}, broker_id=1)
    [d] = resp["results"]
    assert d["log_dir"] == "/var/lib/mockkafka/1"
    [t] = d["topics"]
    assert t["name"] == "l"
    assert [(p["partition_index"], p["partition_size"]) for p in t["partitions"]] == [
        (0, state.partition("l", 0).log.size_bytes)
    ]
    assert t["partitions"][0]["partition_size"] > 0
    assert d["usable_bytes"] == d["total_bytes"] - t["partitions"][0]["partition_size"]
    resp = call(
        state, "DescribeLogDirs", {"topics": [{"topic": "l", "partitions": [1]}]}, broker_id=2
    )
    assert [p["partition_index"] for p in resp["results"][0]["topics"][0]["partitions"]] == [1]


# -- OffsetForLeaderEpoch -----------------------------------------------------------------------


def _epoch(
    state: ClusterState,
    leader_epoch: int,
    current: int = -1,
    *,
    broker: int = 1,
    version: int | None = None,
) -> Message:
    resp = call(
        state,
        "OffsetForLeaderEpoch",
        {
            "topics": [
                {
                    "topic": "e",
                    "partitions": [
                        {
                            "partition": 0,
                            "current_leader_epoch": current,
                            "leader_epoch": leader_epoch,
                        }
                    ],
                }
            ]
        },
        broker_id=broker,
        version=version,
    )
    [p] = resp["topics"][0]["partitions"]
    return p


def _epoch_state() -> ClusterState:
    state = make_state()
    state.create_topic("e", 1, 2, assignments=[[1, 2]])
    return state


def test_offset_for_leader_epoch_current_epoch_ends_at_log_end() -> None:
    state = _epoch_state()
    assert (_epoch(state, 0)["leader_epoch"], _epoch(state, 0)["end_offset"]) == (0, 0)
    produce(state, "e", 0, 5)
    p = _epoch(state, 0, 0)
    assert (p["error_code"], p["leader_epoch"], p["end_offset"]) == (0, 0, 5)


def test_offset_for_leader_epoch_after_leader_change_detects_truncation() -> None:
    state = _epoch_state()
    produce(state, "e", 0, 5)  # epoch 0: offsets 0-4
    state.set_leader("e", 0, 2)  # epoch 1 starts at 5
    produce(state, "e", 0, 3)  # epoch 1: offsets 5-7
    state.set_leader("e", 0, 1)  # epoch 2 starts at 8
    p = _epoch(state, 0, 2)
    assert (p["leader_epoch"], p["end_offset"]) == (0, 5)
    p = _epoch(state, 1, 2)
    assert (p["leader_epoch"], p["end_offset"]) == (1, 8)
    p = _epoch(state, 2, 2)
    assert (p["leader_epoch"], p["end_offset"]) == (2, 8)
    # an unclean election lost offsets 3-7: a consumer at epoch 0 / offset 5 must truncate
    state.partition("e", 0).log.truncate(3)
    state.set_leader("e", 0, 2)  # epoch 3
    p = _epoch(state, 0, 3, broker=2)
    assert (p["leader_epoch"], p["end_offset"]) == (0, 3)


def test_offset_for_leader_epoch_unknown_epochs_and_epoch_gaps() -> None:
    state = _epoch_state()
    produce(state, "e", 0, 2)
    state.set_leader("e", 0, 1)  # epoch 1, no records
    state.set_leader("e", 0, 1)  # epoch 2
    produce(state, "e", 0, 2)
    p = _epoch(state, -1)
    assert (p["error_code"], p["leader_epoch"], p["end_offset"]) == (0, -1, -1)
    p = _epoch(state, 7)
    assert (p["leader_epoch"], p["end_offset"]) == (-1, -1)
    p = _epoch(state, 1)  # epoch 1 held no records: answered by epoch 0 ending at 2
    assert (p["leader_epoch"], p["end_offset"]) == (0, 2)


def test_offset_for_leader_epoch_trims_epochs_below_log_start() -> None:
    state = _epoch_state()
    produce(state, "e", 0, 3)
    state.set_leader("e", 0, 1)  # epoch 1 starts at 3
    produce(state, "e", 0, 3)
    state.set_leader("e", 0, 1)  # epoch 2 starts at 6
    state.partition("e", 0).log.delete_before(4)
    p = _epoch(state, 0)  # older than every epoch left: that epoch, ending at epoch 1's start
    assert (p["leader_epoch"], p["end_offset"]) == (0, 4)


@pytest.mark.parametrize(
    ("current", "broker", "code"),
    [
        (0, 1, ErrorCode.FENCED_LEADER_EPOCH),
        (5, 1, ErrorCode.UNKNOWN_LEADER_EPOCH),
        (1, 2, ErrorCode.NOT_LEADER_OR_FOLLOWER),
    ],
)
def test_offset_for_leader_epoch_fencing(current: int, broker: int, code: int) -> None:
    state = _epoch_state()
    state.set_leader("e", 0, 1)  # epoch 1
    p = _epoch(state, 0, current, broker=broker)
    assert (p["error_code"], p["end_offset"]) == (code, -1)


def test_offset_for_leader_epoch_v0_and_unknown_topic() -> None:
    state = _epoch_state()
    produce(state, "e", 0, 4)
    assert _epoch(state, 0, version=0)["end_offset"] == 4
    resp = call(
        state,
        "OffsetForLeaderEpoch",
        {"topics": [{"topic": "nope", "partitions": [{"partition": 0, "leader_epoch": 0}]}]},
    )
    assert resp["topics"][0]["partitions"][0]["error_code"] == 3


# -- telemetry ----------------------------------------------------------------------------------


def test_telemetry_subscription_is_empty_and_push_is_accepted() -> None:
    state = make_state()
    resp = call(state, "GetTelemetrySubscriptions", {"client_instance_id": ZERO_UUID})
    assert resp["error_code"] == 0 and resp["requested_metrics"] == []
    assert resp["client_instance_id"] != ZERO_UUID and resp["push_interval_ms"] > 0
    mine = uuid.uuid4()
    again = call(state, "GetTelemetrySubscriptions", {"client_instance_id": mine})
    assert again["client_instance_id"] == mine
    push = {"client_instance_id": mine, "subscription_id": resp["subscription_id"]}
    assert call(state, "PushTelemetry", push)["error_code"] == 0
    push["subscription_id"] = resp["subscription_id"] + 1
    assert call(state, "PushTelemetry", push)["error_code"] == ErrorCode.UNKNOWN_SUBSCRIPTION_ID


# -- ElectLeaders and reassignments -------------------------------------------------------------


def test_elect_leaders_preferred() -> None:
    state = make_state()
    state.create_topic("p", 2, 3, assignments=[[1, 2, 3], [2, 3, 1]])
    state.set_leader("p", 0, 3)
    epoch = state.partition("p", 0).leader_epoch
    req = {"election_type": 0, "topic_partitions": [{"topic": "p", "partitions": [0, 1, 9]}]}
    [t] = call(state, "ElectLeaders", req)["replica_election_results"]
    assert [(r["partition_id"], r["error_code"]) for r in t["partition_result"]] == [
        (0, 0),
        (1, ErrorCode.ELECTION_NOT_NEEDED),
        (9, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
    ]
    assert state.partition("p", 0).leader == 1
    assert state.partition("p", 0).leader_epoch == epoch + 1
    # null: every partition, and those that needed nothing are left out
    resp = call(state, "ElectLeaders", {"election_type": 0, "topic_partitions": None})
    assert resp["replica_election_results"] == []
    state.stop_broker(1)
    [t] = call(state, "ElectLeaders", req)["replica_election_results"]
    assert t["partition_result"][0]["error_code"] == ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE


def test_elect_leaders_unclean_picks_a_running_replica() -> None:
    state = make_state()
    state.create_topic("u", 1, 2, assignments=[[1, 2]])
    state.set_isr("u", 0, [1])
    state.stop_broker(1)
    assert state.partition("u", 0).leader == -1
    req = {"election_type": 1, "topic_partitions": [{"topic": "u", "partitions": [0]}]}
    [t] = call(state, "ElectLeaders", req)["replica_election_results"]
    assert t["partition_result"][0]["error_code"] == 0
    assert state.partition("u", 0).leader == 2 and state.partition("u", 0).isr == [2]
    [t] = call(state, "ElectLeaders", req)["replica_election_results"]
    assert t["partition_result"][0]["error_code"] == ErrorCode.ELECTION_NOT_NEEDED


def test_alter_partition_reassignments_complete_at_once() -> None:
    state = make_state()
    state.create_topic("r", 1, 2, assignments=[[1, 2]])
    resp = call(
        state,
        "AlterPartitionReassignments",
        {"topics": [{"name": "r", "partitions": [{"partition_index": 0, "replicas": [3, 2]}]}]},
    )
    assert resp["responses"][0]["partitions"][0]["error_code"] == 0
    p = state.partition("r", 0)
    assert (p.replicas, sorted(p.isr), p.leader) == ([3, 2], [2, 3], 3)
    assert p.leader_epoch == 1
    listed = call(state, "ListPartitionReassignments", {"topics": None})
    assert listed["error_code"] == 0 and listed["topics"] == []
    resp = call(
        state,
        "AlterPartitionReassignments",
        {
            "topics": [
                {
                    "name": "r",
                    "partitions": [
                        {"partition_index": 0, "replicas": None},
                        {"partition_index": 0, "replicas": [1, 1]},
                        {"partition_index": 3, "replicas": [1]},
                    ],
                }
            ],
            "allow_replication_factor_change": False,
        },
    )
    assert [p["error_code"] for p in resp["responses"][0]["partitions"]] == [
        ErrorCode.NO_REASSIGNMENT_IN_PROGRESS,
        ErrorCode.INVALID_REPLICA_ASSIGNMENT,
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    ]
    resp = call(
        state,
        "AlterPartitionReassignments",
        {
            "topics": [{"name": "r", "partitions": [{"partition_index": 0, "replicas": [1]}]}],
            "allow_replication_factor_change": False,
        },
    )
    assert resp["responses"][0]["partitions"][0]["error_code"] == 38
    assert state.partition("r", 0).replicas == [3, 2]


# -- security and quota stubs -------------------------------------------------------------------


def test_acl_apis_answer_security_disabled() -> None:
    state = make_state()
    resp = call(state, "DescribeAcls", {"resource_type_filter": 1})
    assert resp["error_code"] == ErrorCode.SECURITY_DISABLED and resp["resources"] == []
    resp = call(state, "CreateAcls", {"creations": [{"resource_type": 2, "resource_name": "t"}]})
    assert [r["error_code"] for r in resp["results"]] == [ErrorCode.SECURITY_DISABLED]
    resp = call(state, "DeleteAcls", {"filters": [{"resource_type_filter": 1}] * 2})
    assert [r["error_code"] for r in resp["filter_results"]] == [ErrorCode.SECURITY_DISABLED] * 2


def test_quotas_and_scram_credentials_are_empty() -> None:
    state = make_state()
    resp = call(
        state, "DescribeClientQuotas", {"components": [{"entity_type": "user", "match_type": 2}]}
    )
    assert (resp["error_code"], resp["entries"]) == (0, [])
    resp = call(state, "DescribeClientQuotas", {"components": [{"entity_type": "x"}]})
    assert resp["error_code"] == ErrorCode.INVALID_REQUEST
    assert call(state, "DescribeUserScramCredentials", {"users": None})["results"] == []
    [r] = call(state, "DescribeUserScramCredentials", {"users": [{"name": "alice"}]})["results"]
    assert (r["user"], r["error_code"]) == ("alice", ErrorCode.RESOURCE_NOT_FOUND)


def test_list_config_resources() -> None:
    state = make_state()
    state.create_topic("x", 1, 1)
    resp = call(state, "ListConfigResources", {"resource_types": [TOPIC, BROKER]})
    assert [(r["resource_type"], r["resource_name"]) for r in resp["config_resources"]] == [
        (TOPIC, "x"),
        (BROKER, "1"),
        (BROKER, "2"),
        (BROKER, "3"),
    ]
    assert call(state, "ListConfigResources", {}, version=0)["config_resources"] == []
    resp = call(state, "ListConfigResources", {"resource_types": [99]})
    assert resp["error_code"] == ErrorCode.UNSUPPORTED_VERSION
    assert int(ResourceType.CLIENT_METRICS) == 16

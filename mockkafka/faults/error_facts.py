"""Which error codes a broker may answer, per API and version: Kafka's facts as data.

How this table was made (keep it true when you add to it):

* The set for each API is the "possible error codes" list Kafka documents on its response
  classes (``org.apache.kafka.common.requests.*Response``), plus codes the coordinator and
  replica manager return for that API in Kafka's broker.
* The first version of each code comes from the version history at the top of the API's JSON
  schema (``ProduceResponse.json``: "Version 4 added KAFKA_STORAGE_ERROR", "Version 11 adds
  support for new error code TRANSACTION_ABORTABLE") and from the KIP that introduced the
  code together with the version bump that lets a client understand it (KIP-227 fetch
  sessions: Fetch v7; KIP-320 leader epochs: Fetch v9, ListOffsets v4, OffsetForLeaderEpoch
  v2; KIP-345 static membership: JoinGroup v5, SyncGroup/Heartbeat/LeaveGroup v3,
  OffsetCommit v7; KIP-394 MEMBER_ID_REQUIRED: JoinGroup v4; KIP-447 UNSTABLE_OFFSET_COMMIT:
  OffsetFetch v7; KIP-516 topic ids: Fetch v13; KIP-588 PRODUCER_FENCED: InitProducerId v4,
  AddPartitionsToTxn/AddOffsetsToTxn/EndTxn v2; KIP-599 THROTTLING_QUOTA_EXCEEDED:
  CreateTopics v6, DeleteTopics v5, CreatePartitions v3; KIP-848: OffsetCommit v9,
  OffsetFetch v9; KIP-890 TRANSACTION_ABORTABLE).
* Kafka down-converts codes an old client would not understand (a Fetch v5 or older gets
  NOT_LEADER_OR_FOLLOWER instead of KAFKA_STORAGE_ERROR): such a code is listed from the
  version that may carry it.
* UNKNOWN_SERVER_ERROR is possible for every API at every version (the broker's answer to
  an unexpected exception).

``tests/strategies/test_data_strategies.py`` checks every name against the generated error
table and every version against the schemas' version ranges.
"""

from __future__ import annotations

# API name -> {error name: first version that may carry it}
ERRORS_BY_API: dict[str, dict[str, int]] = {
    "Produce": {
        "CORRUPT_MESSAGE": 0,
        "UNKNOWN_TOPIC_OR_PARTITION": 0,
        "NOT_LEADER_OR_FOLLOWER": 0,
        "MESSAGE_TOO_LARGE": 0,
        "INVALID_TOPIC_EXCEPTION": 0,
        "RECORD_LIST_TOO_LARGE": 0,
        "NOT_ENOUGH_REPLICAS": 0,
        "NOT_ENOUGH_REPLICAS_AFTER_APPEND": 0,
        "INVALID_REQUIRED_ACKS": 0,
        "TOPIC_AUTHORIZATION_FAILED": 0,
        "REQUEST_TIMED_OUT": 0,
        "INVALID_TIMESTAMP": 2,
        "UNSUPPORTED_FOR_MESSAGE_FORMAT": 2,
        "OUT_OF_ORDER_SEQUENCE_NUMBER": 3,
        "DUPLICATE_SEQUENCE_NUMBER": 3,
        "INVALID_PRODUCER_EPOCH": 3,
        "INVALID_PRODUCER_ID_MAPPING": 3,
        "INVALID_TXN_STATE": 3,
        "UNKNOWN_PRODUCER_ID": 3,
        "TRANSACTIONAL_ID_AUTHORIZATION_FAILED": 3,
        "CLUSTER_AUTHORIZATION_FAILED": 3,
        "KAFKA_STORAGE_ERROR": 4,
        "UNSUPPORTED_COMPRESSION_TYPE": 7,
        "INVALID_RECORD": 8,
        "TRANSACTION_ABORTABLE": 11,
    },
    "Fetch": {
        "OFFSET_OUT_OF_RANGE": 0,
        "UNKNOWN_TOPIC_OR_PARTITION": 0,
        "NOT_LEADER_OR_FOLLOWER": 0,
        "REPLICA_NOT_AVAILABLE": 0,
        "CORRUPT_MESSAGE": 0,
        "TOPIC_AUTHORIZATION_FAILED": 0,
        "KAFKA_STORAGE_ERROR": 6,
        "FETCH_SESSION_ID_NOT_FOUND": 7,
        "INVALID_FETCH_SESSION_EPOCH": 7,
        "FENCED_LEADER_EPOCH": 9,
        "UNKNOWN_LEADER_EPOCH": 9,
        "UNSUPPORTED_COMPRESSION_TYPE": 10,
        "UNKNOWN_TOPIC_ID": 13,
        "INCONSISTENT_TOPIC_ID": 13,
        "FETCH_SESSION_TOPIC_ID_ERROR": 13,
    },
    "ListOffsets": {
        "UNKNOWN_TOPIC_OR_PARTITION": 0,
        "NOT_LEADER_OR_FOLLOWER": 0,
        "TOPIC_AUTHORIZATION_FAILED": 0,
        "UNSUPPORTED_FOR_MESSAGE_FORMAT": 1,
        "KAFKA_STORAGE_ERROR": 1,
        "FENCED_LEADER_EPOCH": 4,
        "UNKNOWN_LEADER_EPOCH": 4,
        "OFFSET_NOT_AVAILABLE": 5,
        "LEADER_NOT_AVAILABLE": 5,
    },
    "Metadata": {
        "UNKNOWN_TOPIC_OR_PARTITION": 0,
        "LEADER_NOT_AVAILABLE": 0,
        "REPLICA_NOT_AVAILABLE": 0,
        "INVALID_TOPIC_EXCEPTION": 0,
        "TOPIC_AUTHORIZATION_FAILED": 0,
        "INVALID_REPLICATION_FACTOR": 4,
        "LISTENER_NOT_FOUND": 6,
        "UNKNOWN_TOPIC_ID": 10,
    },
    "OffsetCommit": {
        "OFFSET_METADATA_TOO_LARGE": 0,
        "COORDINATOR_LOAD_IN_PROGRESS": 0,
        "COORDINATOR_NOT_AVAILABLE": 0,
        "NOT_COORDINATOR": 0,
        "INVALID_COMMIT_OFFSET_SIZE": 0,
        "TOPIC_AUTHORIZATION_FAILED": 0,
        "GROUP_AUTHORIZATION_FAILED": 0,
        "UNKNOWN_TOPIC_OR_PARTITION": 0,
        "ILLEGAL_GENERATION": 1,
        "UNKNOWN_MEMBER_ID": 1,
        "REBALANCE_IN_PROGRESS": 1,
        "FENCED_INSTANCE_ID": 7,
        "STALE_MEMBER_EPOCH": 9,
    },
    "OffsetFetch": {
        "COORDINATOR_LOAD_IN_PROGRESS": 0,
        "COORDINATOR_NOT_AVAILABLE": 0,
        "NOT_COORDINATOR": 0,
        "GROUP_AUTHORIZATION_FAILED": 0,
        "UNKNOWN_TOPIC_OR_PARTITION": 0,
        "TOPIC_AUTHORIZATION_FAILED": 2,
        "UNSTABLE_OFFSET_COMMIT": 7,
        "STALE_MEMBER_EPOCH": 9,
        "UNKNOWN_MEMBER_ID": 9,
    },
    "FindCoordinator": {
        "COORDINATOR_NOT_AVAILABLE": 0,
        "NOT_COORDINATOR": 0,
        "GROUP_AUTHORIZATION_FAILED": 0,
        "TRANSACTIONAL_ID_AUTHORIZATION_FAILED": 1,
        "INVALID_REQUEST": 1,
    },
    "JoinGroup": {
        "COORDINATOR_LOAD_IN_PROGRESS": 0,
        "COORDINATOR_NOT_AVAILABLE": 0,
        "NOT_COORDINATOR": 0,
        "INCONSISTENT_GROUP_PROTOCOL": 0,
        "UNKNOWN_MEMBER_ID": 0,
        "INVALID_SESSION_TIMEOUT": 0,
        "GROUP_AUTHORIZATION_FAILED": 0,
        "MEMBER_ID_REQUIRED": 4,
        "GROUP_MAX_SIZE_REACHED": 4,
        "FENCED_INSTANCE_ID": 5,
        "UNRELEASED_INSTANCE_ID": 5,
    },
    "SyncGroup": {
        "COORDINATOR_LOAD_IN_PROGRESS": 0,
        "COORDINATOR_NOT_AVAILABLE": 0,
        "NOT_COORDINATOR": 0,
        "ILLEGAL_GENERATION": 0,
        "UNKNOWN_MEMBER_ID": 0,
        "REBALANCE_IN_PROGRESS": 0,
        "GROUP_AUTHORIZATION_FAILED": 0,
        "FENCED_INSTANCE_ID": 3,
        "INCONSISTENT_GROUP_PROTOCOL": 5,
    },
    "Heartbeat": {
        "COORDINATOR_LOAD_IN_PROGRESS": 0,
        "COORDINATOR_NOT_AVAILABLE": 0,
        "NOT_COORDINATOR": 0,
        "ILLEGAL_GENERATION": 0,
        "UNKNOWN_MEMBER_ID": 0,
        "REBALANCE_IN_PROGRESS": 0,
        "GROUP_AUTHORIZATION_FAILED": 0,
        "FENCED_INSTANCE_ID": 3,
    },
    "LeaveGroup": {
        "COORDINATOR_LOAD_IN_PROGRESS": 0,
        "COORDINATOR_NOT_AVAILABLE": 0,
        "NOT_COORDINATOR": 0,
        "UNKNOWN_MEMBER_ID": 0,
        "GROUP_AUTHORIZATION_FAILED": 0,
        "FENCED_INSTANCE_ID": 3,
    },
    "DescribeGroups": {
        "COORDINATOR_LOAD_IN_PROGRESS": 0,
        "COORDINATOR_NOT_AVAILABLE": 0,
        "NOT_COORDINATOR": 0,
        "GROUP_AUTHORIZATION_FAILED": 0,
    },
    "ListGroups": {
        "COORDINATOR_LOAD_IN_PROGRESS": 0,
        "COORDINATOR_NOT_AVAILABLE": 0,
    },
    "InitProducerId": {
        "NOT_COORDINATOR": 0,
        "COORDINATOR_NOT_AVAILABLE": 0,
        "COORDINATOR_LOAD_IN_PROGRESS": 0,
        "TRANSACTIONAL_ID_AUTHORIZATION_FAILED": 0,
        "CLUSTER_AUTHORIZATION_FAILED": 0,
        "INVALID_TRANSACTION_TIMEOUT": 0,
        "CONCURRENT_TRANSACTIONS": 0,
        "INVALID_PRODUCER_EPOCH": 3,
        "PRODUCER_FENCED": 4,
    },
    "AddPartitionsToTxn": {
        "NOT_COORDINATOR": 0,
        "COORDINATOR_NOT_AVAILABLE": 0,
        "COORDINATOR_LOAD_IN_PROGRESS": 0,
        "CONCURRENT_TRANSACTIONS": 0,
        "INVALID_TXN_STATE": 0,
        "INVALID_PRODUCER_ID_MAPPING": 0,
        "INVALID_PRODUCER_EPOCH": 0,
        "TOPIC_AUTHORIZATION_FAILED": 0,
        "TRANSACTIONAL_ID_AUTHORIZATION_FAILED": 0,
        "UNKNOWN_TOPIC_OR_PARTITION": 0,
        "OPERATION_NOT_ATTEMPTED": 0,
        "PRODUCER_FENCED": 2,
        "TRANSACTION_ABORTABLE": 5,
    },
    "AddOffsetsToTxn": {
        "NOT_COORDINATOR": 0,
        "COORDINATOR_NOT_AVAILABLE": 0,
        "COORDINATOR_LOAD_IN_PROGRESS": 0,
        "CONCURRENT_TRANSACTIONS": 0,
        "INVALID_TXN_STATE": 0,
        "INVALID_PRODUCER_ID_MAPPING": 0,
        "INVALID_PRODUCER_EPOCH": 0,
        "GROUP_AUTHORIZATION_FAILED": 0,
        "TRANSACTIONAL_ID_AUTHORIZATION_FAILED": 0,
        "PRODUCER_FENCED": 2,
        "TRANSACTION_ABORTABLE": 4,
    },
    "EndTxn": {
        "NOT_COORDINATOR": 0,
        "COORDINATOR_NOT_AVAILABLE": 0,
        "COORDINATOR_LOAD_IN_PROGRESS": 0,
        "CONCURRENT_TRANSACTIONS": 0,
        "INVALID_TXN_STATE": 0,
        "INVALID_PRODUCER_ID_MAPPING": 0,
        "INVALID_PRODUCER_EPOCH": 0,
        "TRANSACTIONAL_ID_AUTHORIZATION_FAILED": 0,
        "PRODUCER_FENCED": 2,
        "TRANSACTION_ABORTABLE": 5,
    },
    "TxnOffsetCommit": {
        "NOT_COORDINATOR": 0,
        "COORDINATOR_NOT_AVAILABLE": 0,
        "COORDINATOR_LOAD_IN_PROGRESS": 0,
        "CONCURRENT_TRANSACTIONS": 0,
        "INVALID_PRODUCER_ID_MAPPING": 0,
        "INVALID_PRODUCER_EPOCH": 0,
        "UNKNOWN_TOPIC_OR_PARTITION": 0,
        "GROUP_AUTHORIZATION_FAILED": 0,
        "TRANSACTIONAL_ID_AUTHORIZATION_FAILED": 0,
        "OFFSET_METADATA_TOO_LARGE": 0,
        "INVALID_COMMIT_OFFSET_SIZE": 0,
        "ILLEGAL_GENERATION": 3,
        "UNKNOWN_MEMBER_ID": 3,
        "FENCED_INSTANCE_ID": 3,
    },
    "ApiVersions": {
        "UNSUPPORTED_VERSION": 0,
        "INVALID_REQUEST": 3,
    },
    "OffsetForLeaderEpoch": {
        "UNKNOWN_TOPIC_OR_PARTITION": 0,
        "NOT_LEADER_OR_FOLLOWER": 0,
        "KAFKA_STORAGE_ERROR": 0,
        "TOPIC_AUTHORIZATION_FAILED": 1,
        "FENCED_LEADER_EPOCH": 2,
        "UNKNOWN_LEADER_EPOCH": 2,
    },
    "CreateTopics": {
        "TOPIC_ALREADY_EXISTS": 0,
        "INVALID_PARTITIONS": 0,
        "INVALID_REPLICATION_FACTOR": 0,
        "INVALID_REPLICA_ASSIGNMENT": 0,
        "INVALID_CONFIG": 0,
        "INVALID_TOPIC_EXCEPTION": 0,
        "NOT_CONTROLLER": 0,
        "INVALID_REQUEST": 0,
        "REQUEST_TIMED_OUT": 0,
        "CLUSTER_AUTHORIZATION_FAILED": 0,
        "TOPIC_AUTHORIZATION_FAILED": 0,
        "POLICY_VIOLATION": 1,
        "THROTTLING_QUOTA_EXCEEDED": 6,
    },
    "DeleteTopics": {
        "UNKNOWN_TOPIC_OR_PARTITION": 0,
        "TOPIC_AUTHORIZATION_FAILED": 0,
        "NOT_CONTROLLER": 0,
        "REQUEST_TIMED_OUT": 0,
        "THROTTLING_QUOTA_EXCEEDED": 5,
        "UNKNOWN_TOPIC_ID": 6,
    },
    "DeleteRecords": {
        "OFFSET_OUT_OF_RANGE": 0,
        "UNKNOWN_TOPIC_OR_PARTITION": 0,
        "NOT_LEADER_OR_FOLLOWER": 0,
        "TOPIC_AUTHORIZATION_FAILED": 0,
        "POLICY_VIOLATION": 0,
        "REQUEST_TIMED_OUT": 0,
    },
    "ConsumerGroupHeartbeat": {
        "GROUP_AUTHORIZATION_FAILED": 0,
        "NOT_COORDINATOR": 0,
        "COORDINATOR_NOT_AVAILABLE": 0,
        "COORDINATOR_LOAD_IN_PROGRESS": 0,
        "INVALID_REQUEST": 0,
        "UNKNOWN_MEMBER_ID": 0,
        "FENCED_MEMBER_EPOCH": 0,
        "UNSUPPORTED_ASSIGNOR": 0,
        "UNRELEASED_INSTANCE_ID": 0,
        "GROUP_MAX_SIZE_REACHED": 0,
    },
}

#: The APIs clients send (what fault plans and the coverage report target by default).
CLIENT_APIS = (
    "Produce",
    "Fetch",
    "ListOffsets",
    "Metadata",
    "OffsetCommit",
    "OffsetFetch",
    "FindCoordinator",
    "JoinGroup",
    "SyncGroup",
    "Heartbeat",
    "LeaveGroup",
    "InitProducerId",
    "AddPartitionsToTxn",
    "AddOffsetsToTxn",
    "EndTxn",
    "TxnOffsetCommit",
    "OffsetForLeaderEpoch",
)

#: Possible for every API at every version.
ANY_API_ERRORS = ("UNKNOWN_SERVER_ERROR",)


def possible_errors(api: str, version: int | None) -> tuple[str, ...]:
    """Error names ``api`` may answer at ``version`` (None: at any version), sorted by code
    order of the table. ``api`` must be a key of :data:`ERRORS_BY_API`."""
    table = ERRORS_BY_API[api]
    names = [n for n, since in table.items() if version is None or version >= since]
    return (*names, *ANY_API_ERRORS)

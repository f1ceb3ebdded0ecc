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


# -- as Kafka, or beyond Kafka ---------------------------------------------------------------
#
# An injected error is "as Kafka" when a real broker could send it to a well-formed request
# of a correct client, in a cluster as the fault plans build it (no authorizer, default
# configs, the client's own producer and group state), with the state made consistent:
# transient conditions (a leader or coordinator moving, a coordinator loading, an ISR
# shrinking, a log directory failing) claim nothing the cluster contradicts, and the errors
# of APPLIED_FIRST are answered only after the request was applied, as Kafka does.
# Everything else in ERRORS_BY_API claims something false about the request or the cluster
# (a lie a correct client may rightly not survive): "beyond Kafka", drawn by fault_plans()
# only when named in errors=, and reported so by the fault-coverage report.

#: Why an error is beyond Kafka in that situation (by error name, for messages and docs).
BEYOND_KAFKA_REASONS: dict[str, str] = {
    "TOPIC_AUTHORIZATION_FAILED": "the cluster has no authorizer",
    "GROUP_AUTHORIZATION_FAILED": "the cluster has no authorizer",
    "TRANSACTIONAL_ID_AUTHORIZATION_FAILED": "the cluster has no authorizer",
    "CLUSTER_AUTHORIZATION_FAILED": "the cluster has no authorizer",
    "MESSAGE_TOO_LARGE": "the batch is within max.message.bytes",
    "RECORD_LIST_TOO_LARGE": "the batch is within max.message.bytes",
    "INVALID_TOPIC_EXCEPTION": "the topic name is valid",
    "INVALID_REQUIRED_ACKS": "acks is valid",
    "INVALID_TIMESTAMP": "the timestamps are within message.timestamp.*.ms",
    "UNSUPPORTED_FOR_MESSAGE_FORMAT": "the message format is the current one",
    "UNSUPPORTED_COMPRESSION_TYPE": "the client may use that compression at that version",
    "INVALID_RECORD": "the records are valid",
    "OUT_OF_ORDER_SEQUENCE_NUMBER": "the batch is the next in sequence",
    "UNKNOWN_PRODUCER_ID": "the broker still holds the producer's state",
    "INVALID_PRODUCER_EPOCH": "the producer's epoch is the current one",
    "INVALID_PRODUCER_ID_MAPPING": "the producer id belongs to the transactional id",
    "INVALID_TXN_STATE": "the transaction is in the state the request needs",
    "PRODUCER_FENCED": "no newer producer took the transactional id (fence_producer does that consistently)",
    "TRANSACTION_ABORTABLE": "the transaction has not failed",
    "OPERATION_NOT_ATTEMPTED": "no other partition of the request failed",
    "INVALID_TRANSACTION_TIMEOUT": "the timeout is within transaction.max.timeout.ms",
    "OFFSET_OUT_OF_RANGE": "the offset is within the log (delete_records or truncate_log make it consistent)",
    "INCONSISTENT_TOPIC_ID": "the topic id is the topic's",
    "INVALID_REPLICATION_FACTOR": "the replication factor fits the brokers",
    "UNKNOWN_TOPIC_ID": "the client names the topic as it exists",
    "OFFSET_METADATA_TOO_LARGE": "the commit metadata is small",
    "INVALID_COMMIT_OFFSET_SIZE": "the commit fits the offsets topic",
    "ILLEGAL_GENERATION": "the member's generation is current (trigger_rebalance makes it consistent)",
    "UNKNOWN_MEMBER_ID": "the member is in the group (expire_member makes it consistent)",
    "REBALANCE_IN_PROGRESS": "no rebalance is in progress (trigger_rebalance makes it consistent)",
    "FENCED_INSTANCE_ID": "the client has no group.instance.id",
    "UNRELEASED_INSTANCE_ID": "the client has no group.instance.id",
    "STALE_MEMBER_EPOCH": "the member's epoch is current",
    "FENCED_MEMBER_EPOCH": "the member's epoch is current",
    "INCONSISTENT_GROUP_PROTOCOL": "the member's protocols match the group's",
    "INVALID_SESSION_TIMEOUT": "the session timeout is within the broker's bounds",
    "MEMBER_ID_REQUIRED": "Kafka sends it with a member id it registered (the join is answered as Kafka does)",
    "GROUP_MAX_SIZE_REACHED": "the group is below group.max.size",
    "UNSTABLE_OFFSET_COMMIT": "no transactional offset commit is pending",
    "INVALID_REQUEST": "the request is valid",
    "UNSUPPORTED_ASSIGNOR": "the assignor is supported",
    "UNKNOWN_TOPIC_OR_PARTITION": "the topic exists",
    "POLICY_VIOLATION": "no policy is configured",
    "INVALID_PARTITIONS": "the partition count is valid",
    "INVALID_REPLICA_ASSIGNMENT": "the assignment is valid",
    "INVALID_CONFIG": "the configs are valid",
    "TOPIC_ALREADY_EXISTS": "the topic does not exist",
    "THROTTLING_QUOTA_EXCEEDED": "no controller mutation quota is set",
    "LISTENER_NOT_FOUND": "every broker has the client's listener",
    "DUPLICATE_SEQUENCE_NUMBER": "the batch was never stored",
    "CORRUPT_MESSAGE": "the batch's CRC is right and the log is intact",
}

#: (API, error) pairs that are as Kafka although the error is listed above: the situation
#: makes them possible (a topic or partition briefly unknown to a broker whose metadata lags;
#: a Fetch session evicted).
_AS_KAFKA_ANYWAY = {
    ("Produce", "UNKNOWN_TOPIC_OR_PARTITION"),
    ("Fetch", "UNKNOWN_TOPIC_OR_PARTITION"),
    ("ListOffsets", "UNKNOWN_TOPIC_OR_PARTITION"),
    ("OffsetForLeaderEpoch", "UNKNOWN_TOPIC_OR_PARTITION"),
    ("Fetch", "UNKNOWN_TOPIC_ID"),
}

#: (API, error) pairs Kafka answers only after it applied the request; the fault engine
#: applies the request (stores the batch) and then answers the error, so they are as Kafka.
#: DUPLICATE_SEQUENCE_NUMBER: the batch is held already; NOT_ENOUGH_REPLICAS_AFTER_APPEND:
#: appended to the leader, the ISR shrank meanwhile; REQUEST_TIMED_OUT: appended, not
#: replicated within request.timeout.ms.
APPLIED_FIRST: frozenset[tuple[str, str]] = frozenset(
    {
        ("Produce", "DUPLICATE_SEQUENCE_NUMBER"),
        ("Produce", "NOT_ENOUGH_REPLICAS_AFTER_APPEND"),
        ("Produce", "REQUEST_TIMED_OUT"),
    }
)


def beyond_kafka(api: str, error: str) -> str | None:
    """Why answering ``error`` to ``api`` is beyond Kafka in the situations fault plans make
    (see the comment above), or None when it is as Kafka."""
    if (api, error) in APPLIED_FIRST or (api, error) in _AS_KAFKA_ANYWAY:
        return None
    return BEYOND_KAFKA_REASONS.get(error)


def as_kafka_errors(api: str, version: int | None = None) -> tuple[str, ...]:
    """The errors of :func:`possible_errors` that are as Kafka (what fault plans draw by
    default)."""
    return tuple(e for e in possible_errors(api, version) if beyond_kafka(api, e) is None)

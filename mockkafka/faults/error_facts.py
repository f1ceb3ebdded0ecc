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

from typing import Any

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
        "LEADER_NOT_AVAILABLE": 1,
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
        "COORDINATOR_LOAD_IN_PROGRESS": 2,
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


#: (API, error) -> the last version that may carry it, where Kafka stopped sending it: a
#: Metadata v1+ lists every replica (``KRaftMetadataCache`` filters out replicas without the
#: listener only for v0, ``errorUnavailableEndpoints``); ListOffsets v5+ gets
#: OFFSET_NOT_AVAILABLE where v1-v4 got LEADER_NOT_AVAILABLE (``ReplicaManager.fetchOffset``).
UNTIL_VERSION: dict[tuple[str, str], int] = {
    ("Metadata", "REPLICA_NOT_AVAILABLE"): 0,
    ("ListOffsets", "LEADER_NOT_AVAILABLE"): 4,
}


def possible_errors(api: str, version: int | None) -> tuple[str, ...]:
    """Error names ``api`` may answer at ``version`` (None: at any version), sorted by code
    order of the table. ``api`` must be a key of :data:`ERRORS_BY_API`."""
    table = ERRORS_BY_API[api]
    names = [
        n
        for n, since in table.items()
        if version is None or since <= version <= UNTIL_VERSION.get((api, n), version)
    ]
    return (*names, *ANY_API_ERRORS)


def error_versions(api: str, error: str) -> tuple[int, int | None]:
    """The versions of ``api`` that may carry ``error``: (first, last or None for every
    newer one)."""
    since = ERRORS_BY_API[api].get(error, 0) if error not in ANY_API_ERRORS else 0
    return since, UNTIL_VERSION.get((api, error))


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
#
# "As Kafka" is per request, not per API: a code is as Kafka only at the versions that carry
# it (a Fetch v5 never gets KAFKA_STORAGE_ERROR) and only in the request context it needs
# (FETCH_SESSION_ID_NOT_FOUND only for an incremental session fetch: librdkafka's sessionless
# Fetch, session id 0 and epoch -1, never gets it, and takes it as fatal). kafka_match()
# gives the versions and the context (ERROR_CONTEXTS); fault_plans() puts them on the rule.
# Each entry below was checked in Kafka's source (FetchManager.newContext,
# Partition.checkCurrentLeaderEpoch / appendRecordsToLeader, DelayedProduce,
# GroupCoordinatorService, CoordinatorRuntime, KafkaApis.getCoordinator,
# TransactionCoordinator.handleInitProducerId); docs/fuzzing.md lists the outcome.

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
    "CORRUPT_MESSAGE": "the batch's CRC is right and the log is intact",
}

#: (API, error) pairs beyond Kafka whatever the error's name says elsewhere: Kafka 4's broker
#: has no path that answers this API so (checked in its source, named in each reason).
BEYOND_KAFKA_ON: dict[tuple[str, str], str] = {
    ("Produce", "DUPLICATE_SEQUENCE_NUMBER"): "Kafka answers a duplicate batch NONE with the "
    "offsets it stored it at (UnifiedLog.append); no Kafka 4 broker sends DUPLICATE_SEQUENCE_NUMBER",
    ("Fetch", "INVALID_FETCH_SESSION_EPOCH"): "the client sends its fetch session's next epoch "
    "(a client resets its session after a failed fetch)",
    ("Fetch", "FETCH_SESSION_TOPIC_ID_ERROR"): "the client keeps one Fetch version in a session "
    "(Kafka answers it to a session switching between v12 topic names and v13+ topic ids)",
    ("Fetch", "REPLICA_NOT_AVAILABLE"): "the cluster has no tiered storage (a Fetch gets it only "
    "while a partition's remote log metadata loads)",
    ("Heartbeat", "COORDINATOR_LOAD_IN_PROGRESS"): "Kafka's group coordinator answers a Heartbeat "
    "NONE while it loads the group (GroupCoordinatorService.heartbeat)",
    ("FindCoordinator", "NOT_COORDINATOR"): "Kafka answers a FindCoordinator it cannot serve "
    "COORDINATOR_NOT_AVAILABLE (KafkaApis.getCoordinator); NOT_COORDINATOR answers a request "
    "sent to a broker that is not the coordinator",
}

#: (API, error) -> the request context (``faults.match.REQUEST_CONTEXTS``) Kafka needs to
#: answer it: as Kafka only there, so ``fault_plans()`` puts ``context=`` on such a rule.
ERROR_CONTEXTS: dict[tuple[str, str], str] = {
    # FetchManager.newContext: only an incremental fetch (session epoch > 0) looks a session up
    ("Fetch", "FETCH_SESSION_ID_NOT_FOUND"): "fetch_session",
    # Partition.checkCurrentLeaderEpoch: an absent epoch (-1) is not checked
    ("Fetch", "FENCED_LEADER_EPOCH"): "leader_epoch",
    ("Fetch", "UNKNOWN_LEADER_EPOCH"): "leader_epoch",
    ("ListOffsets", "FENCED_LEADER_EPOCH"): "leader_epoch",
    ("ListOffsets", "UNKNOWN_LEADER_EPOCH"): "leader_epoch",
    ("OffsetForLeaderEpoch", "FENCED_LEADER_EPOCH"): "leader_epoch",
    ("OffsetForLeaderEpoch", "UNKNOWN_LEADER_EPOCH"): "leader_epoch",
    # Partition.appendRecordsToLeader checks min.insync.replicas, and DelayedProduce waits for
    # the ISR (timing out, or finding it shrunk), only for acks=-1
    ("Produce", "NOT_ENOUGH_REPLICAS"): "acks_all",
    ("Produce", "NOT_ENOUGH_REPLICAS_AFTER_APPEND"): "acks_all",
    ("Produce", "REQUEST_TIMED_OUT"): "acks_all",
    # TransactionCoordinator.handleInitProducerId: a null transactional id gets an id from the
    # producer id manager (COORDINATOR_LOAD_IN_PROGRESS at most, while a block is fetched)
    ("InitProducerId", "NOT_COORDINATOR"): "transactional",
    ("InitProducerId", "COORDINATOR_NOT_AVAILABLE"): "transactional",
    ("InitProducerId", "CONCURRENT_TRANSACTIONS"): "transactional",
}

#: (API, error) pairs Kafka sends only as the request's top-level error, never per partition
#: (a fetch-session error answers the whole Fetch): a rule for them names no topic.
REQUEST_LEVEL_ERRORS: frozenset[tuple[str, str]] = frozenset(
    {
        ("Fetch", "FETCH_SESSION_ID_NOT_FOUND"),
        ("Fetch", "INVALID_FETCH_SESSION_EPOCH"),
        ("Fetch", "FETCH_SESSION_TOPIC_ID_ERROR"),
    }
)

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

#: (API, error) pairs answered only after the request was applied; the fault engine applies
#: the request (stores the batch) and then answers the error, so the state is as the answer
#: says. NOT_ENOUGH_REPLICAS_AFTER_APPEND: appended to the leader, the ISR shrank meanwhile;
#: REQUEST_TIMED_OUT: appended, not replicated within request.timeout.ms (both as Kafka, for
#: acks=-1). DUPLICATE_SEQUENCE_NUMBER: the batch is held already -- what the code claims,
#: though Kafka 4 itself answers a duplicate NONE (beyond Kafka, drawn only when named).
APPLIED_FIRST: frozenset[tuple[str, str]] = frozenset(
    {
        ("Produce", "DUPLICATE_SEQUENCE_NUMBER"),
        ("Produce", "NOT_ENOUGH_REPLICAS_AFTER_APPEND"),
        ("Produce", "REQUEST_TIMED_OUT"),
    }
)


def beyond_kafka(api: str, error: str) -> str | None:
    """Why answering ``error`` to ``api`` is beyond Kafka in the situations fault plans make
    (see the comment above), or None when it is as Kafka -- in the request context and
    versions :func:`kafka_match` names."""
    reason = BEYOND_KAFKA_ON.get((api, error))
    if reason is not None:
        return reason
    if (api, error) in APPLIED_FIRST or (api, error) in _AS_KAFKA_ANYWAY:
        return None
    return BEYOND_KAFKA_REASONS.get(error)


def kafka_match(api: str, error: str) -> dict[str, Any]:
    """The match keys of a ``fault:`` step (``versions``, ``context``) that keep a rule
    answering ``error`` to ``api`` to the requests Kafka could answer so: the versions that
    carry the code, and the request context it needs (:data:`ERROR_CONTEXTS`). Empty when
    every request of the API will do."""
    from mockkafka.protocol.apis import api as lookup_api

    out: dict[str, Any] = {}
    a = lookup_api(api)
    since, until = error_versions(api, error)
    lo, hi = max(since, a.min_version), a.max_version if until is None else until
    if (lo, hi) != (a.min_version, a.max_version):
        out["versions"] = [lo, hi]
    context = ERROR_CONTEXTS.get((api, error))
    if context is not None:
        out["context"] = context
    return out


def as_kafka_errors(api: str, version: int | None = None) -> tuple[str, ...]:
    """The errors of :func:`possible_errors` that are as Kafka (what fault plans draw by
    default)."""
    return tuple(e for e in possible_errors(api, version) if beyond_kafka(api, e) is None)

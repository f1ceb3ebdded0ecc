"""The sessions the differential harness runs against both brokers (``harness.py``).

* :func:`sweep_sessions` -- every API both brokers serve, at every version both advertise,
  with the request's schema defaults (a few fields set so a broker may answer at all):
  mostly the refusals a client meets first (empty ids, no topics, an unknown group).
* Hand-written sessions with state: a topic's life (create, produce, list offsets, fetch in
  and out of range, unknown partitions, delete), a classic group (member id required, wrong
  generation, offsets), idempotent and transactional producers (fenced epochs, sequence
  errors), nulls where Kafka forbids them, and configs.

Sessions read earlier answers (a member id, a producer epoch) only through the decoded
bodies, so the same code drives both brokers.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from mockkafka.protocol.codec import codec
from mockkafka.protocol.records import encode_batch
from tests.oracle.harness import CLOSED, Client, Session

SOFTWARE = {"client_software_name": "mockkafka-oracle", "client_software_version": "1"}
#: Requests whose schema defaults would make a broker wait or say nothing.
OVERRIDES: dict[str, dict[str, Any]] = {
    "ApiVersions": SOFTWARE,
    "Produce": {"acks": -1, "timeout_ms": 1000},
    "Fetch": {"max_wait_ms": 0, "replica_id": -1},
    "ListOffsets": {"replica_id": -1},
}
#: APIs the sweep leaves out: they change the connection's state (SASL), or their default
#: request asks about every topic or group of the broker (not the same on the two).
SWEEP_SKIPS = {"SaslHandshake", "SaslAuthenticate"}
TIMESTAMP = 1_700_000_000_000


def _request_default(api: str, version: int) -> dict[str, Any]:
    body = codec(f"{api}Request", version).default()
    body.update(OVERRIDES.get(api, {}))
    return body


def sweep_sessions(versions: dict[str, tuple[int, int]]) -> dict[str, Session]:
    """One session per API: its default request at every version in ``versions``."""
    out: dict[str, Session] = {}
    for api, (lo, hi) in sorted(versions.items()):
        if api in SWEEP_SKIPS:
            continue

        def run(c: Client, api: str = api, lo: int = lo, hi: int = hi) -> None:
            for v in range(lo, hi + 1):
                c.request(api, v, _request_default(api, v))

        out[f"sweep:{api}"] = run
    return out


def _create(c: Client, name: str, partitions: int = 1, **extra: Any) -> Any:
    """CreateTopics (recorded), then wait, unrecorded, until every partition is led and
    answers ListOffsets (Kafka propagates a new topic to the broker asynchronously)."""
    topic = {"name": name, "num_partitions": partitions, "replication_factor": 1, **extra}
    answer = c.request("CreateTopics", 7, {"topics": [topic], "timeout_ms": 5000})
    settle_topic(c, name, partitions)
    return answer


def _topic_id(c: Client, name: str) -> Any:
    """The topic's id (clients learn it from Metadata; v13+ Produce/Fetch name topics by it)."""
    found = c.quiet("Metadata", 12, {"topics": [{"name": name}]})
    return found["topics"][0]["topic_id"] if isinstance(found, dict) else None


def settle_topic(c: Client, name: str, partitions: int) -> None:
    deadline = time.monotonic() + 10
    ask = {
        "replica_id": -1,
        "topics": [
            {
                "name": name,
                "partitions": [{"partition_index": p, "timestamp": -1} for p in range(partitions)],
            }
        ],
    }
    while time.monotonic() < deadline:
        got = c.quiet("ListOffsets", 7, ask)
        if isinstance(got, dict) and all(
            p["error_code"] == 0 for t in got["topics"] for p in t["partitions"]
        ):
            return
        time.sleep(0.1)


def _batch(*values: bytes, **kw: Any) -> bytes:
    return encode_batch([(None, v) for v in values], base_timestamp=TIMESTAMP, **kw)


def _produce(
    c: Client, topic: str, partition: int, records: bytes, *, version: int = 9, **kw: Any
) -> Any:
    topic_id = kw.pop("topic_id", None)
    named: dict[str, Any] = {"name": topic}
    if version >= 13 and topic_id is not None:
        named = {"topic_id": topic_id}
    body = {
        "acks": -1,
        "timeout_ms": 5000,
        "topic_data": [{**named, "partition_data": [{"index": partition, "records": records}]}],
        **kw,
    }
    return c.request("Produce", version, body)


def _fetch(c: Client, topic: str, offset: int, *, version: int = 12, topic_id: Any = None) -> Any:
    """Fetch partition 0 of ``topic`` (by ``topic_id`` from v13, as clients do)."""
    named: dict[str, Any] = {"topic": topic}
    if version >= 13 and topic_id is not None:
        named = {"topic_id": topic_id}
    return c.request(
        "Fetch",
        version,
        {
            "replica_id": -1,
            "max_wait_ms": 0,
            "min_bytes": 1,
            "max_bytes": 1 << 20,
            "isolation_level": 0,
            "topics": [
                {
                    **named,
                    "partitions": [
                        {"partition": 0, "fetch_offset": offset, "partition_max_bytes": 1 << 20}
                    ],
                }
            ],
        },
    )


def topic_life(c: Client) -> None:
    t = c.name("orders")
    created = {"name": t, "num_partitions": 3, "replication_factor": 1}
    _create(c, t, 3)
    c.request("CreateTopics", 7, {"topics": [created], "timeout_ms": 5000})  # exists
    bad = {"name": c.name("bad"), "num_partitions": 0, "replication_factor": 1}
    c.request("CreateTopics", 7, {"topics": [bad], "timeout_ms": 5000})
    c.request("CreateTopics", 7, {"topics": [{**created, "name": "bad name!"}], "timeout_ms": 5000})
    c.request(
        "Metadata",
        12,
        {"topics": [{"name": t}, {"name": c.name("missing")}], "allow_auto_topic_creation": False},
    )
    _produce(c, t, 0, _batch(b"a", b"b", b"c"))
    _produce(c, t, 7, _batch(b"x"))  # no such partition
    _produce(c, c.name("missing"), 0, _batch(b"x"), version=9)
    for ts in (-2, -1, 0):
        c.request(
            "ListOffsets",
            7,
            {
                "replica_id": -1,
                "topics": [{"name": t, "partitions": [{"partition_index": 0, "timestamp": ts}]}],
            },
        )
    for v in (4, 11, 12):
        _fetch(c, t, 0, version=v)
    _fetch(c, t, 1)  # from the middle of a batch
    _fetch(c, t, 3)  # at the end
    _fetch(c, t, 99)  # out of range
    c.request(
        "DeleteRecords",
        2,
        {
            "topics": [{"name": t, "partitions": [{"partition_index": 0, "offset": 2}]}],
            "timeout_ms": 5000,
        },
    )
    c.request(
        "DeleteRecords",
        2,
        {
            "topics": [{"name": t, "partitions": [{"partition_index": 0, "offset": 9}]}],
            "timeout_ms": 5000,
        },
    )
    _fetch(c, t, 0)  # now before the log start
    c.request("CreatePartitions", 3, {"topics": [{"name": t, "count": 2}], "timeout_ms": 5000})
    c.request("CreatePartitions", 3, {"topics": [{"name": t, "count": 4}], "timeout_ms": 5000})
    settle_topic(c, t, 4)
    c.request("DeleteTopics", 6, {"topics": [{"name": t}], "timeout_ms": 5000})
    c.request("DeleteTopics", 6, {"topics": [{"name": t}], "timeout_ms": 5000})


def _join(c: Client, group: str, member: str, *, version: int = 9) -> Any:
    return c.request(
        "JoinGroup",
        version,
        {
            "group_id": group,
            "session_timeout_ms": 10000,
            "rebalance_timeout_ms": 10000,
            "member_id": member,
            "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": b""}],
        },
    )


def classic_group(c: Client) -> None:
    g = c.name("group")
    c.request("FindCoordinator", 4, {"key_type": 0, "coordinator_keys": [g]})
    c.request("FindCoordinator", 4, {"key_type": 0, "coordinator_keys": [g]})
    first = _join(c, g, "")
    member = first["member_id"] if isinstance(first, dict) else ""
    joined = _join(c, g, member)
    gen = joined["generation_id"] if isinstance(joined, dict) else -1
    sync = {
        "group_id": g,
        "generation_id": gen,
        "member_id": member,
        "protocol_type": "consumer",
        "protocol_name": "range",
        "assignments": [{"member_id": member, "assignment": b""}],
    }
    c.request("SyncGroup", 5, sync)
    c.request("SyncGroup", 5, {**sync, "generation_id": gen + 5})
    c.request("Heartbeat", 4, {"group_id": g, "generation_id": gen, "member_id": member})
    c.request("Heartbeat", 4, {"group_id": g, "generation_id": gen + 1, "member_id": member})
    c.request("Heartbeat", 4, {"group_id": g, "generation_id": gen, "member_id": "nobody"})
    t = c.name("offsets")
    c.request(
        "CreateTopics",
        7,
        {"topics": [{"name": t, "num_partitions": 1, "replication_factor": 1}], "timeout_ms": 5000},
    )
    commit = {
        "group_id": g,
        "generation_id_or_member_epoch": gen,
        "member_id": member,
        "topics": [{"name": t, "partitions": [{"partition_index": 0, "committed_offset": 5}]}],
    }
    c.request("OffsetCommit", 8, commit)
    c.request("OffsetCommit", 8, {**commit, "generation_id_or_member_epoch": gen + 3})
    c.request(
        "OffsetFetch",
        8,
        {"groups": [{"group_id": g, "topics": [{"name": t, "partition_indexes": [0, 1]}]}]},
    )
    c.request("OffsetFetch", 8, {"groups": [{"group_id": g, "topics": None}]})
    c.request("DescribeGroups", 5, {"groups": [g, c.name("nogroup")]})
    c.request(
        "LeaveGroup",
        4,
        {"group_id": g, "members": [{"member_id": member}, {"member_id": "nobody"}]},
    )
    c.request("DescribeGroups", 5, {"groups": [g]})
    c.request(
        "OffsetDelete",
        0,
        {"group_id": g, "topics": [{"name": t, "partitions": [{"partition_index": 0}]}]},
    )
    c.request("DeleteGroups", 2, {"groups_names": [g, c.name("nogroup")]})


def producers(c: Client) -> None:
    t = c.name("idem")
    c.request(
        "CreateTopics",
        7,
        {"topics": [{"name": t, "num_partitions": 1, "replication_factor": 1}], "timeout_ms": 5000},
    )
    pid = c.request("InitProducerId", 4, {"transactional_id": None, "transaction_timeout_ms": -1})
    p = pid.get("producer_id", -1) if isinstance(pid, dict) else -1
    e = pid.get("producer_epoch", 0) if isinstance(pid, dict) else 0
    _produce(c, t, 0, _batch(b"1", b"2", producer_id=p, producer_epoch=e, base_sequence=0))
    _produce(c, t, 0, _batch(b"1", b"2", producer_id=p, producer_epoch=e, base_sequence=0))  # dup
    _produce(c, t, 0, _batch(b"9", producer_id=p, producer_epoch=e, base_sequence=7))  # gap
    _produce(c, t, 0, _batch(b"9", producer_id=p, producer_epoch=e + 3, base_sequence=5))  # epoch
    txn = c.name("txn")
    c.request("FindCoordinator", 4, {"key_type": 1, "coordinator_keys": [txn]})
    c.request("FindCoordinator", 4, {"key_type": 1, "coordinator_keys": [txn]})
    init = {"transactional_id": txn, "transaction_timeout_ms": 60000}
    got = c.request("InitProducerId", 4, init)
    tp = got.get("producer_id", -1) if isinstance(got, dict) else -1
    te = got.get("producer_epoch", 0) if isinstance(got, dict) else 0
    add = {
        "v3_and_below_transactional_id": txn,
        "v3_and_below_producer_id": tp,
        "v3_and_below_producer_epoch": te,
        "v3_and_below_topics": [{"name": t, "partitions": [0]}],
    }
    c.request("AddPartitionsToTxn", 3, add)
    c.request("AddPartitionsToTxn", 3, {**add, "v3_and_below_producer_epoch": te + 2})
    c.request(
        "EndTxn",
        3,
        {"transactional_id": txn, "producer_id": tp, "producer_epoch": te, "committed": False},
    )
    c.request("InitProducerId", 4, init)  # bumps the epoch: the old one is fenced
    c.request(
        "EndTxn",
        3,
        {"transactional_id": txn, "producer_id": tp, "producer_epoch": te, "committed": True},
    )
    c.request("DescribeProducers", 0, {"topics": [{"name": t, "partition_indexes": [0, 3]}]})
    c.request("DescribeTransactions", 0, {"transactional_ids": [txn, c.name("notxn")]})


def configs(c: Client) -> None:
    t = c.name("cfg")
    c.request(
        "CreateTopics",
        7,
        {
            "topics": [
                {
                    "name": t,
                    "num_partitions": 1,
                    "replication_factor": 1,
                    "configs": [{"name": "retention.ms", "value": "1000"}],
                }
            ],
            "timeout_ms": 5000,
        },
    )
    c.request(
        "CreateTopics",
        7,
        {
            "topics": [
                {
                    "name": c.name("cfg2"),
                    "num_partitions": 1,
                    "replication_factor": 1,
                    "configs": [{"name": "no.such.config", "value": "1"}],
                }
            ],
            "timeout_ms": 5000,
        },
    )
    c.request(
        "IncrementalAlterConfigs",
        1,
        {
            "resources": [
                {
                    "resource_type": 2,
                    "resource_name": t,
                    "configs": [{"name": "retention.ms", "config_operation": 0, "value": "abc"}],
                }
            ]
        },
    )
    c.request(
        "DescribeConfigs",
        4,
        {
            "resources": [
                {
                    "resource_type": 2,
                    "resource_name": t,
                    "configuration_keys": ["retention.ms", "cleanup.policy"],
                }
            ]
        },
    )
    c.request(
        "DescribeConfigs",
        4,
        {
            "resources": [
                {"resource_type": 2, "resource_name": c.name("missing"), "configuration_keys": None}
            ]
        },
    )


def bad_requests(c: Client) -> None:
    """Client software names Kafka refuses (nulls in non-nullable fields, which the codec
    cannot send, are in test_known_differences.py)."""
    c.request("ApiVersions", 3, {"client_software_name": "", "client_software_version": ""})
    c.request(
        "ApiVersions", 3, {"client_software_name": "bad name!", "client_software_version": "1"}
    )


def sasl_on_plaintext(c: Client) -> None:
    """SASL requests on a PLAINTEXT listener (the SASL exchange itself is compared in
    test_known_differences.py, on each broker's OAUTHBEARER listener)."""
    for v in (0, 1):
        c.request("SaslHandshake", v, {"mechanism": "PLAIN"})
        c.close()
    for v in (0, 1, 2):
        c.request("SaslAuthenticate", v, {"auth_bytes": b"\x00u\x00p"})
        c.close()


def _vrange(versions: dict[str, tuple[int, int]], api: str, lowest: int = 0) -> range:
    lo, hi = versions.get(api, (1, 0))
    return range(max(lo, lowest), hi + 1)


def versioned_sessions(versions: dict[str, tuple[int, int]]) -> dict[str, Session]:
    """The core client requests on one topic and one group at every version both brokers
    advertise (``versions``): what each client generation sends."""

    def data_path(c: Client) -> None:
        t = c.name("everyv")
        _create(c, t, 2)
        topic_id = _topic_id(c, t)
        for v in _vrange(versions, "Metadata"):
            # v0-v3 may auto-create: they ask only for the topic that exists.
            body: dict[str, Any] = {"topics": [{"name": t}]}
            if v >= 4:
                body = {"topics": [{"name": t}, {"name": c.name("nope")}]}
                body["allow_auto_topic_creation"] = False
            c.request("Metadata", v, body)
        c.request(
            "Metadata",
            12,
            {"topics": [{"name": c.name("auto")}], "allow_auto_topic_creation": True},
        )
        for v in _vrange(versions, "Produce", lowest=3):
            _produce(c, t, 0, _batch(f"v{v}".encode()), version=v, topic_id=topic_id)
        for v in _vrange(versions, "ListOffsets"):
            for ts in (-2, -1):
                part: dict[str, Any] = {"partition_index": 0, "timestamp": ts}
                if v == 0:
                    part["max_num_offsets"] = 1
                c.request(
                    "ListOffsets",
                    v,
                    {"replica_id": -1, "topics": [{"name": t, "partitions": [part]}]},
                )
        for v in _vrange(versions, "Fetch"):
            _fetch(c, t, 0, version=v, topic_id=topic_id)
            _fetch(c, t, 1000, version=v, topic_id=topic_id)
        for v in _vrange(versions, "DescribeConfigs"):
            c.request(
                "DescribeConfigs",
                v,
                {
                    "resources": [
                        {
                            "resource_type": 2,
                            "resource_name": t,
                            "configuration_keys": ["retention.ms"],
                        }
                    ]
                },
            )

    def offsets(c: Client) -> None:
        t, g = c.name("offv"), c.name("offg")
        _create(c, t, 1)
        topic_id = _topic_id(c, t)
        for v in _vrange(versions, "OffsetCommit", lowest=2):
            part = {"partition_index": 0, "committed_offset": v, "committed_metadata": "m"}
            topic: dict[str, Any] = {"topic_id": topic_id} if v >= 10 else {"name": t}
            c.request(
                "OffsetCommit",
                v,
                {
                    "group_id": g,
                    "generation_id_or_member_epoch": -1,
                    "member_id": "",
                    "retention_time_ms": -1,
                    "topics": [{**topic, "partitions": [part]}],
                },
            )
        for v in _vrange(versions, "OffsetFetch", lowest=1):
            if v >= 8:
                named: dict[str, Any] = {"topic_id": topic_id} if v >= 10 else {"name": t}
                asked = {**named, "partition_indexes": [0, 5]}
                body: dict[str, Any] = {"groups": [{"group_id": g, "topics": [asked]}]}
            else:
                body = {"group_id": g, "topics": [{"name": t, "partition_indexes": [0, 5]}]}
            c.request("OffsetFetch", v, body)
        for v in _vrange(versions, "DescribeGroups"):
            c.request("DescribeGroups", v, {"groups": [g]})
        for v in _vrange(versions, "FindCoordinator"):
            if v >= 4:
                c.request("FindCoordinator", v, {"key_type": 0, "coordinator_keys": [g]})
            else:
                c.request("FindCoordinator", v, {"key": g, "key_type": 0})

    def topics_admin(c: Client) -> None:
        for v in _vrange(versions, "CreateTopics", lowest=2):
            t = c.name(f"adm{v}")
            body = {
                "topics": [{"name": t, "num_partitions": 1, "replication_factor": 1}],
                "timeout_ms": 5000,
            }
            c.request("CreateTopics", v, body)
            settle_topic(c, t, 1)
            c.request("CreateTopics", v, body)  # TOPIC_ALREADY_EXISTS
        for v in _vrange(versions, "DeleteTopics", lowest=1):
            names = [c.name(f"adm{v}"), c.name("never")]
            if v >= 6:
                c.request(
                    "DeleteTopics", v, {"topics": [{"name": n} for n in names], "timeout_ms": 5000}
                )
            else:
                c.request("DeleteTopics", v, {"topic_names": names, "timeout_ms": 5000})

    return {
        "every-version:data": data_path,
        "every-version:offsets": offsets,
        "every-version:topics": topics_admin,
    }


HANDWRITTEN: dict[str, Callable[[Client], None]] = {
    "sasl-on-plaintext": sasl_on_plaintext,
    "topic-life": topic_life,
    "classic-group": classic_group,
    "producers": producers,
    "configs": configs,
    "bad-requests": bad_requests,
}

__all__ = ["CLOSED", "HANDWRITTEN", "sweep_sessions"]

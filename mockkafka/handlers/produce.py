"""Produce (key 0), versions 0-13.

acks 0 (no response), 1 and -1 (all: checks ``min.insync.replicas``, capped by the replica
count as Kafka's effectiveMinIsr, against the ISR); every record format; offsets assigned per
batch without decoding records; log-append time when the topic says so;
``max.message.bytes``; idempotent sequence checks and transactional writes (see
``cluster/produce.py``). As in Kafka, v3+ must carry exactly one v2 batch (INVALID_RECORD)
and zstd needs v7+ (UNSUPPORTED_COMPRESSION_TYPE). A partition this broker does not lead
answers NOT_LEADER_OR_FOLLOWER with the current leader (KIP-951, v10+). Topic ids from v13.
Not implemented: ``timeout_ms`` (replication is instantaneous),
``message.timestamp.difference.max.ms`` checks, per-record errors (``record_errors``).
"""

from __future__ import annotations

import struct
from typing import Any

from mockkafka.cluster.acls import AclOperation
from mockkafka.cluster.produce import UNCHECKED, append_records
from mockkafka.errors import ErrorCode
from mockkafka.handlers._common import (
    current_leader,
    find_partition,
    find_topic,
    leader_error,
    node_endpoints,
)
from mockkafka.handlers.authz import topic_allowed
from mockkafka.handlers.base import NO_RESPONSE, RequestContext, Result, handler
from mockkafka.protocol import records as rec
from mockkafka.protocol.codec import Message
from mockkafka.protocol.errors import ProtocolError

ZSTD = 4
_MAGIC_POS = 16
_LENGTH = struct.Struct(">i")


@handler("Produce", versions=(0, 13))
def handle(ctx: RequestContext, request: Message) -> Result:
    acks = request.get("acks", 1)
    txn_id = request.get("transactional_id")
    responses: list[dict[str, Any]] = []
    leaders: set[int] = set()
    for td in request.get("topic_data") or []:
        topic, terr = find_topic(ctx, td.get("name"), td.get("topic_id"))
        parts: list[dict[str, Any]] = []
        for pd in td.get("partition_data") or []:
            idx = pd.get("index", 0)
            out: dict[str, Any] = {"index": idx, "base_offset": -1, "log_append_time_ms": -1}
            parts.append(out)
            if acks not in (-1, 0, 1):
                out["error_code"] = ErrorCode.INVALID_REQUIRED_ACKS
                continue
            if not topic_allowed(ctx, AclOperation.WRITE, td.get("name") or _name(topic)):
                out["error_code"] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
                continue
            if topic is None:
                # v13+ names topics by id only: a zero id is an unknown id too, as in Kafka.
                out["error_code"] = ErrorCode.UNKNOWN_TOPIC_ID if ctx.version >= 13 else terr
                continue
            p = find_partition(topic, idx)
            if p is None:
                out["error_code"] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                continue
            err = leader_error(ctx, p)
            if err != ErrorCode.NONE:
                out["error_code"] = err
                out["current_leader"] = current_leader(p)
                if p.leader >= 0:
                    leaders.add(p.leader)
                continue
            # Kafka's effectiveMinIsr: min.insync.replicas capped by the replica count, so a
            # topic of replication factor 1 takes acks=-1 writes whatever min.insync.replicas
            if acks == -1 and len(p.isr) < min(
                topic.config_int("min.insync.replicas"), len(p.replicas)
            ):
                out["error_code"] = ErrorCode.NOT_ENOUGH_REPLICAS
                continue
            bad = _format_error(ctx.version, pd.get("records"))
            if bad is not None:
                out["error_code"], out["error_message"] = bad
                continue
            data = pd.get("records")
            verdicts = ctx.records_verdicts
            res = append_records(
                ctx.cluster,
                topic,
                p,
                data,
                transactional_id=txn_id,
                tv2=ctx.version >= 12,  # KIP-890 part 2: the partition joins the transaction
                validated=verdicts.get(id(data), UNCHECKED) if verdicts else UNCHECKED,
            )
            out["error_code"] = res.error
            out["base_offset"] = res.base_offset
            out["log_append_time_ms"] = res.log_append_time
            out["log_start_offset"] = p.log.log_start_offset
            if res.message and res.error:
                out["error_message"] = res.message
        responses.append(
            {"name": td.get("name"), "topic_id": td.get("topic_id"), "partition_responses": parts}
        )
    if acks == 0:
        return NO_RESPONSE
    resp: dict[str, Any] = {"responses": responses}
    if leaders and ctx.version >= 10:
        resp["node_endpoints"] = node_endpoints(ctx, leaders)
    return resp


def _name(topic: Any) -> str:
    return str(topic.name) if topic is not None else ""


def _format_error(version: int, records: Any) -> tuple[ErrorCode, str] | None:
    """Kafka's ``ProduceRequest.validateRecords``: what each request version may carry."""
    if not records:
        return None
    if version >= 7 and _one_v2_batch(records):
        return None  # what every current client sends: nothing to walk
    try:
        batches = [h for h, _raw in rec.iter_batches(records)]
    except ProtocolError:
        return None  # append_records answers CORRUPT_MESSAGE (also for no whole batch)
    if version >= 3:
        if len(batches) > 1:
            return (
                ErrorCode.INVALID_RECORD,
                "Produce requests with version 3+ must have exactly one record batch",
            )
        if batches and batches[0].magic != 2:
            return (
                ErrorCode.INVALID_RECORD,
                "Produce requests with version 3+ must use message format v2",
            )
    if version < 7 and any(h.attributes & 0x07 == ZSTD for h in batches):
        return (
            ErrorCode.UNSUPPORTED_COMPRESSION_TYPE,
            "Produce requests with version < 7 may not use ZStandard compression",
        )
    return None


def _one_v2_batch(records: Any) -> bool:
    """True when ``records`` is exactly one magic-2 batch (its length prefix spans it all).
    The batch itself is checked by ``append_records``."""
    if len(records) < rec.V2_HEADER_SIZE or records[_MAGIC_POS] != 2:
        return False
    (length,) = _LENGTH.unpack_from(records, 8)
    return bool(length + 12 == len(records))

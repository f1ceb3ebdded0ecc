"""Build a response that answers every part of a request with one error code.

Used when the broker refuses a request whole (an internal error, a fault rule's
``error(...)`` action). The response mirrors the request's structure where the schemas let
it: each request array (topics, partitions, groups, ...) becomes the matching response
array, identity fields (names, ids, partition indexes) are copied, and every ``error_code``
is set. The top-level ``error_code`` is set when the response has one.
"""

from __future__ import annotations

from typing import Any

from mockkafka.protocol.apis import Api
from mockkafka.protocol.codec import Field, Message, field_in_version, message_fields
from mockkafka.protocol.layout import (
    PARTITION_ARRAYS,
    PARTITION_KEYS,
    TOPIC_ARRAYS,
    TOPIC_KEYS,
    same_meaning,
)

# Response array name -> request array names it answers, in order of preference.
_ARRAY_ALIASES = {
    **{name: same_meaning(name, TOPIC_ARRAYS) for name in TOPIC_ARRAYS},
    **{name: same_meaning(name, PARTITION_ARRAYS) for name in PARTITION_ARRAYS},
    "results": (*TOPIC_ARRAYS, "groups", "resources", "coordinator_keys"),
    "groups": ("groups", "group_ids", "groups_names"),
    "coordinators": ("coordinator_keys",),
    "results_by_partition": ("partitions",),
    "results_by_topic_v3_and_below": ("v3_and_below_topics",),
}
# DescribeUserScramCredentials answers its users in "results".
_ARRAY_ALIASES["results"] = (*_ARRAY_ALIASES["results"], "users")
# AlterConfigs / IncrementalAlterConfigs answer their config resources in "responses".
_ARRAY_ALIASES["responses"] = (*_ARRAY_ALIASES["responses"], "resources")

# The error code fields set (partition_error_code: AddPartitionsToTxn v0-3).
_ERROR_FIELDS = frozenset({"error_code", "partition_error_code"})
# Fields whose schema default is a real value; an error answers Kafka's "unknown" instead.
# (Checked against Kafka 4.4 by the oracle tier: CreateTopics, DeleteRecords; Produce's
# base offset is -1 in an error answer, as Kafka's.)
_UNKNOWN_VALUES = {
    "committed_offset": -1,
    "base_offset": -1,
    "low_watermark": -1,
    "num_partitions": -1,
    "replication_factor": -1,
}

# Response field -> request fields that carry the same identity under another name.
_ID_ALIASES = {
    **{name: same_meaning(name, PARTITION_KEYS) for name in PARTITION_KEYS},
    **{name: same_meaning(name, TOPIC_KEYS) for name in TOPIC_KEYS},
    "group_id": ("group_id", "key"),
    "key": ("key",),
    "user": ("name",),
}


def build_error_response(
    api: Api, version: int, request: Message, error: int, message: str | None = None
) -> Message:
    """The response of ``api`` at ``version`` answering ``request`` with ``error``."""
    fields = message_fields(api.response_name, version)
    return _mirror(fields, version, request, int(error), message)


def _mirror(
    fields: list[Field], version: int, req: Any, error: int, message: str | None = None
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in fields:
        name, ftype = f[0], f[1]
        if not field_in_version(f, version):
            continue
        if name in _ERROR_FIELDS:
            out[name] = error
        elif name == "error_message" and message is not None:
            out[name] = message
        elif name in _UNKNOWN_VALUES:
            out[name] = _UNKNOWN_VALUES[name]
        elif ftype == "records":
            out[name] = b""  # empty, never null: librdkafka rejects a null record set
        elif ftype == "[]struct":
            src = _find_array(req, name)
            if src is not None:
                out[name] = [_mirror(f[7], version, e, error, message) for e in src]
        elif isinstance(req, dict):
            for alias in _ID_ALIASES.get(name, (name,)):
                if alias in req and not isinstance(req[alias], list | dict):
                    out[name] = req[alias]
                    break
        elif name in _ID_ALIASES and isinstance(req, int | str):
            out[name] = req  # an array of plain ids (partition indexes, group ids)
    return out


def _find_array(req: Any, name: str) -> list[Any] | None:
    if not isinstance(req, dict):
        return None
    for alias in (name, *_ARRAY_ALIASES.get(name, ())):
        v = req.get(alias)
        if isinstance(v, list):
            return v
    return None

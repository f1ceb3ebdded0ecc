"""DeleteTopics (key 20), versions 0-6.

Deletes topics named by name (``topic_names`` up to v5, ``topics[].name`` from v6) or by
topic id (v6+) at once: their partitions, logs and id disappear and fetchers parked on them
wake up. Unknown names answer UNKNOWN_TOPIC_OR_PARTITION, unknown ids UNKNOWN_TOPIC_ID; a
v6 entry with both or neither of name and id, or a topic named twice, answers
INVALID_REQUEST; ``delete.topic.enable=false`` answers TOPIC_DELETION_DISABLED. Internal
topics (``__consumer_offsets``, ``__transaction_state``) cannot be deleted
(INVALID_REQUEST). ``error_message`` from v5.

Not implemented: ``timeout_ms`` is ignored (deletion completes before the answer); committed
offsets of the topic in consumer groups are left to the group coordinator.
"""

from __future__ import annotations

import uuid
from typing import Any

from mockkafka.errors import ErrorCode
from mockkafka.handlers._common import distinct_entries
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import ZERO_UUID, Message


@handler("DeleteTopics", versions=(0, 6))
def handle(ctx: RequestContext, request: Message) -> Result:
    if ctx.version >= 6:
        wanted: list[tuple[str | None, uuid.UUID]] = [
            (t.get("name"), t.get("topic_id") or ZERO_UUID) for t in request.get("topics") or []
        ]
    else:
        wanted = [(n, ZERO_UUID) for n in request.get("topic_names") or []]
    enabled = ctx.cluster.broker_configs.get("delete.topic.enable", "true").lower() == "true"
    out: list[dict[str, Any]] = []
    for (name, topic_id), _key, repeated in distinct_entries(wanted, lambda w: w):
        code, message, name_out = _delete(ctx, name, topic_id, repeated, enabled)
        out.append(
            {
                "name": name_out,
                "topic_id": topic_id,
                "error_code": code,
                "error_message": message if code != ErrorCode.NONE else None,
            }
        )
    return {"responses": out}


def _delete(
    ctx: RequestContext, name: str | None, topic_id: uuid.UUID, repeated: bool, enabled: bool
) -> tuple[ErrorCode, str, str | None]:
    c = ctx.cluster
    by_id = topic_id != ZERO_UUID
    if by_id and name is not None:
        return ErrorCode.INVALID_REQUEST, "You may not specify both topic name and topic id.", name
    if not by_id and name is None:
        return ErrorCode.INVALID_REQUEST, "Neither topic name nor id were specified.", name
    if repeated:
        return ErrorCode.INVALID_REQUEST, "Duplicate topic name or id in request.", name
    topic = c.topics_by_id.get(topic_id) if by_id else c.topics.get(name or "")
    if topic is None:
        if by_id:
            return ErrorCode.UNKNOWN_TOPIC_ID, f"Topic id {topic_id} does not exist.", None
        return (
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
            "This server does not host this topic-partition.",
            name,
        )
    if not enabled:
        return ErrorCode.TOPIC_DELETION_DISABLED, "Topic deletion is disabled.", topic.name
    if topic.is_internal or topic.name in ("__consumer_offsets", "__transaction_state"):
        return (
            ErrorCode.INVALID_REQUEST,
            f"Topic {topic.name} is an internal topic and cannot be deleted.",
            topic.name,
        )
    c.delete_topic(topic.name)
    return ErrorCode.NONE, "", topic.name

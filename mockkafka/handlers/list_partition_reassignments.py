"""ListPartitionReassignments (key 46), version 0.

Reassignments complete the moment AlterPartitionReassignments accepts them, so none is ever
in progress: the answer lists no partitions (unknown topics are skipped, as in Kafka).

Not implemented: reassignments that take time (adding / removing replicas).
"""

from __future__ import annotations

from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import Message


@handler("ListPartitionReassignments", versions=(0, 0))
def handle(ctx: RequestContext, request: Message) -> Result:
    return {"error_code": 0, "error_message": None, "topics": []}

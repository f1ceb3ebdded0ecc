"""DeleteAcls (key 31), versions 0-3.

Without an authorizer every filter answers SECURITY_DISABLED ("No Authorizer is
configured.") with no matching ACLs, as a Kafka broker without an authorizer does.

Not implemented: ACLs.
"""

from __future__ import annotations

from mockkafka.errors import ErrorCode
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.handlers.describe_acls import NO_AUTHORIZER
from mockkafka.protocol.codec import Message


@handler("DeleteAcls", versions=(0, 3))
def handle(ctx: RequestContext, request: Message) -> Result:
    return {
        "filter_results": [
            {
                "error_code": ErrorCode.SECURITY_DISABLED,
                "error_message": NO_AUTHORIZER,
                "matching_acls": [],
            }
            for _ in request.get("filters") or []
        ]
    }

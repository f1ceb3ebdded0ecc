"""CreateAcls (key 30), versions 0-3.

Without an authorizer every creation answers SECURITY_DISABLED ("No Authorizer is
configured."), as a Kafka broker without ``authorizer.class.name`` does.

Not implemented: ACLs.
"""

from __future__ import annotations

from mockkafka.errors import ErrorCode
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.handlers.describe_acls import NO_AUTHORIZER
from mockkafka.protocol.codec import Message


@handler("CreateAcls", versions=(0, 3))
def handle(ctx: RequestContext, request: Message) -> Result:
    return {
        "results": [
            {"error_code": ErrorCode.SECURITY_DISABLED, "error_message": NO_AUTHORIZER}
            for _ in request.get("creations") or []
        ]
    }

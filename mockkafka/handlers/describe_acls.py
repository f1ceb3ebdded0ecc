"""DescribeAcls (key 29), versions 0-3.

The cluster runs without an authorizer, so it answers as such a Kafka broker does:
SECURITY_DISABLED, "No Authorizer is configured.", and no ACLs.

Not implemented: ACLs.
"""

from __future__ import annotations

from mockkafka.errors import ErrorCode
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import Message

NO_AUTHORIZER = "No Authorizer is configured."


@handler("DescribeAcls", versions=(0, 3))
def handle(ctx: RequestContext, request: Message) -> Result:
    return {
        "error_code": ErrorCode.SECURITY_DISABLED,
        "error_message": NO_AUTHORIZER,
        "resources": [],
    }

"""DescribeUserScramCredentials (key 50), version 0.

No SCRAM credentials exist: describing all users (null or empty list) answers no results;
each named user answers RESOURCE_NOT_FOUND, and a user named twice DUPLICATE_RESOURCE, as
Kafka does.

Not implemented: storing credentials (AlterUserScramCredentials), SASL/SCRAM itself.
"""

from __future__ import annotations

from typing import Any

from mockkafka.errors import ErrorCode
from mockkafka.handlers._common import distinct_entries
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import Message


@handler("DescribeUserScramCredentials", versions=(0, 0))
def handle(ctx: RequestContext, request: Message) -> Result:
    users = [str(u.get("name") or "") for u in request.get("users") or []]
    results: list[dict[str, Any]] = []
    for user, _key, repeated in distinct_entries(users, lambda u: u):
        if repeated:
            code, message = (
                ErrorCode.DUPLICATE_RESOURCE,
                f"Cannot describe SCRAM credentials for the same user twice in a single request: {user}",
            )
        else:
            code, message = (
                ErrorCode.RESOURCE_NOT_FOUND,
                f"Attempt to describe a user credential that does not exist: {user}",
            )
        results.append(
            {"user": user, "error_code": code, "error_message": message, "credential_infos": []}
        )
    return {"error_code": 0, "error_message": None, "results": results}

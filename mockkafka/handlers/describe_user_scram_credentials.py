"""DescribeUserScramCredentials (key 50), version 0.

The cluster's SASL users (``Cluster(users={...})``) have SCRAM-SHA-256 and SCRAM-SHA-512
credentials (4096 iterations); describing all users (null or empty list) lists them. Any
other named user answers RESOURCE_NOT_FOUND, and a user named twice DUPLICATE_RESOURCE, as
Kafka does.

Not implemented: AlterUserScramCredentials (users are fixed when the cluster is built).
"""

from __future__ import annotations

from typing import Any

from mockkafka.cluster.security import SCRAM_ITERATIONS
from mockkafka.errors import ErrorCode
from mockkafka.handlers._common import distinct_entries
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import Message


@handler("DescribeUserScramCredentials", versions=(0, 0))
def handle(ctx: RequestContext, request: Message) -> Result:
    known = dict(ctx.cluster.config.users)
    asked = request.get("users")
    if not asked:  # null or empty: every user with credentials
        return {
            "error_code": 0,
            "error_message": None,
            "results": [_described(u) for u in known],
        }
    users = [str(u.get("name") or "") for u in asked]
    results: list[dict[str, Any]] = []
    for user, _key, repeated in distinct_entries(users, lambda u: u):
        if not repeated and user in known:
            results.append(_described(user))
            continue
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


def _described(user: str) -> dict[str, Any]:
    """A configured SASL user: SCRAM-SHA-256 (1) and SCRAM-SHA-512 (2) credentials."""
    infos = [{"mechanism": m, "iterations": SCRAM_ITERATIONS} for m in (1, 2)]
    return {"user": user, "error_code": 0, "error_message": None, "credential_infos": infos}

"""DescribeUserScramCredentials (key 50), version 0.

The cluster's SCRAM credentials: each SASL user (``Cluster(users={...})``) starts with
SCRAM-SHA-256 and SCRAM-SHA-512 ones (4096 iterations), changed by
AlterUserScramCredentials; describing all users (null or empty list) lists them. Any
other named user answers RESOURCE_NOT_FOUND, and a user named twice DUPLICATE_RESOURCE, as
Kafka does.
"""

from __future__ import annotations

from typing import Any

from mockkafka.cluster.security import SCRAM_MECHANISM_CODES
from mockkafka.errors import ErrorCode
from mockkafka.handlers._common import distinct_entries
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import Message


@handler("DescribeUserScramCredentials", versions=(0, 0))
def handle(ctx: RequestContext, request: Message) -> Result:
    known: dict[str, list[dict[str, int]]] = {}
    for (user, mech), cred in ctx.cluster.scram_credentials.items():
        known.setdefault(user, []).append(
            {"mechanism": SCRAM_MECHANISM_CODES[mech], "iterations": cred.iterations}
        )
    asked = request.get("users")
    if not asked:  # null or empty: every user with credentials
        return {
            "error_code": 0,
            "error_message": None,
            "results": [_described(u, infos) for u, infos in known.items()],
        }
    users = [str(u.get("name") or "") for u in asked]
    results: list[dict[str, Any]] = []
    for user, _key, repeated in distinct_entries(users, lambda u: u):
        if not repeated and user in known:
            results.append(_described(user, known[user]))
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


def _described(user: str, infos: list[dict[str, int]]) -> dict[str, Any]:
    """A user with SCRAM credentials: SCRAM-SHA-256 (1) and/or SCRAM-SHA-512 (2)."""
    return {"user": user, "error_code": 0, "error_message": None, "credential_infos": infos}

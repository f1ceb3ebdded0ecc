"""AlterUserScramCredentials (key 51), version 0.

Deletes and upserts the cluster's SCRAM credentials (``cluster.scram_credentials``), as
Kafka does: the client sends the salted password, never the password. Errors as Kafka's:
UNSUPPORTED_SASL_MECHANISM for an unknown mechanism, UNACCEPTABLE_CREDENTIAL for an empty
user name or iterations outside 4096-16384, RESOURCE_NOT_FOUND when deleting a credential
that does not exist, DUPLICATE_RESOURCE for a user named twice. Connections already
authenticated keep their session until they re-authenticate (KIP-368), when the new
credential applies. PLAIN users (``Cluster(users=...)``, Kafka's JAAS users) are not
SCRAM credentials and do not change.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from mockkafka.cluster.security import SCRAM_MECHANISM_CODES, ScramCredential
from mockkafka.errors import ErrorCode
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import Message

MECHANISM_BY_CODE = {code: name for name, code in SCRAM_MECHANISM_CODES.items()}
MIN_ITERATIONS, MAX_ITERATIONS = 4096, 16384


@handler("AlterUserScramCredentials", versions=(0, 0))
def handle(ctx: RequestContext, request: Message) -> Result:
    deletions = request.get("deletions") or []
    upsertions = request.get("upsertions") or []
    named = Counter(str(x.get("name") or "") for x in [*deletions, *upsertions])
    creds = ctx.cluster.scram_credentials
    results: dict[str, dict[str, Any]] = {}

    def fail(user: str, code: int, message: str) -> None:
        results.setdefault(user, _result(user, code, message))

    for user, n in named.items():
        if not user:
            fail(user, ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty")
        elif n > 1:
            fail(
                user,
                ErrorCode.DUPLICATE_RESOURCE,
                "A user credential cannot be altered twice in the same request",
            )
    for d in deletions:
        user = str(d.get("name") or "")
        mech = MECHANISM_BY_CODE.get(d.get("mechanism", 0))
        if mech is None:
            fail(user, ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism")
        elif (user, mech) not in creds:
            fail(
                user,
                ErrorCode.RESOURCE_NOT_FOUND,
                "Attempt to delete a user credential that does not exist",
            )
        elif user not in results:
            del creds[(user, mech)]
    for u in upsertions:
        user = str(u.get("name") or "")
        mech = MECHANISM_BY_CODE.get(u.get("mechanism", 0))
        iterations = int(u.get("iterations", 0))
        if mech is None:
            fail(user, ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism")
        elif not MIN_ITERATIONS <= iterations <= MAX_ITERATIONS:
            fail(
                user,
                ErrorCode.UNACCEPTABLE_CREDENTIAL,
                f"Iterations {iterations} must be between {MIN_ITERATIONS} and {MAX_ITERATIONS}",
            )
        elif user not in results:
            creds[(user, mech)] = ScramCredential(
                bytes(u.get("salt") or b""), iterations, bytes(u.get("salted_password") or b"")
            )
    for user in named:
        results.setdefault(user, _result(user, 0, None))
    return {"throttle_time_ms": 0, "results": list(results.values())}


def _result(user: str, code: int, message: str | None) -> dict[str, Any]:
    return {"user": user, "error_code": code, "error_message": message}

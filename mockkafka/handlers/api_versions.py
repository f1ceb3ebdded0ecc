"""ApiVersions (key 18), versions 0-4.

Answers with every API this cluster serves (capped by ``cap_api_versions``). A version the
broker does not know is answered by the server in the v0 body format with
UNSUPPORTED_VERSION (see ``server/runtime.py``). Features: advertises ``metadata.version``
and ``transaction.version``/``group.version`` as a Kafka 4.x broker does.
"""

from __future__ import annotations

from mockkafka.handlers.base import RequestContext, Result, handler, served_versions
from mockkafka.protocol.codec import Message

FEATURES = (
    # (name, min, max, finalized level)
    ("metadata.version", 1, 25, 25),
    ("group.version", 0, 1, 1),
    ("transaction.version", 0, 2, 0),  # KIP-890 part 2 not finalized: clients use v1 flow
    ("kraft.version", 0, 1, 0),
)


@handler("ApiVersions", versions=(0, 4))
def handle(ctx: RequestContext, request: Message) -> Result:
    keys = [
        {"api_key": k, "min_version": lo, "max_version": hi}
        for k, (lo, hi) in served_versions(ctx.cluster).items()
    ]
    return {
        "error_code": 0,
        "api_keys": keys,
        "supported_features": [
            {"name": n, "min_version": lo, "max_version": hi} for n, lo, hi, _ in FEATURES
        ],
        "finalized_features_epoch": 1,
        "finalized_features": [
            {"name": n, "min_version_level": lvl, "max_version_level": lvl}
            for n, _lo, _hi, lvl in FEATURES
            if lvl > 0
        ],
    }

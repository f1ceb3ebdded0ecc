"""ApiVersions (key 18), versions 0-4.

Answers with every API this cluster serves (capped by ``cap_api_versions``). A version the
broker does not know is answered by the server in the v0 body format with
UNSUPPORTED_VERSION (see ``server/runtime.py``). Features: advertises ``metadata.version``
and ``transaction.version``/``group.version`` as a Kafka 4.x broker does; below v4 a
feature whose supported range starts at 0 is left out (KAFKA-17011 / KAFKA-17492), as
older Java clients fail on it.
"""

from __future__ import annotations

import re

from mockkafka.cluster.features import FEATURES, finalized
from mockkafka.errors import ErrorCode
from mockkafka.handlers.base import RequestContext, Result, handler, served_versions
from mockkafka.protocol.codec import Message
from mockkafka.protocol.releases import METADATA_VERSION_3X, release_tuple

#: What Kafka accepts as a client software name or version (v3+).
_SOFTWARE = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")


@handler("ApiVersions", versions=(0, 4))
def handle(ctx: RequestContext, request: Message) -> Result:
    if ctx.version >= 3 and not all(
        _SOFTWARE.fullmatch(request.get(k) or "")
        for k in ("client_software_name", "client_software_version")
    ):
        # Kafka's ApiVersionsRequest.isValid(): INVALID_REQUEST and nothing else.
        return {"error_code": ErrorCode.INVALID_REQUEST, "finalized_features_epoch": -1}
    fin = finalized(ctx.cluster)
    keys = [
        {"api_key": k, "min_version": lo, "max_version": hi}
        for k, (lo, hi) in served_versions(ctx.cluster).items()
    ]
    release = ctx.cluster.config.kafka_version
    if release is not None and release_tuple(release) < (4, 0):
        level = METADATA_VERSION_3X.get(release)
        features = [("metadata.version", 1, level)] if level else []
        return {
            "error_code": 0,
            "api_keys": keys,
            "supported_features": [
                {"name": n, "min_version": lo, "max_version": hi} for n, lo, hi in features
            ],
            "finalized_features_epoch": 1 if features else -1,
            "finalized_features": [
                {"name": n, "min_version_level": hi, "max_version_level": hi}
                for n, _lo, hi in features
            ],
        }
    return {
        "error_code": 0,
        "api_keys": keys,
        "supported_features": [
            {"name": f.name, "min_version": f.min_version, "max_version": f.max_version}
            for f in FEATURES
            # Clients before KAFKA-17011 (e.g. kafka-clients 3.4, in Spark 3.5) refuse a
            # supported range starting at 0; below v4 Kafka leaves such features out.
            if f.min_version > 0 or ctx.version >= 4
        ],
        "finalized_features_epoch": fin.epoch,
        "finalized_features": [
            {"name": n, "min_version_level": lvl, "max_version_level": lvl}
            for n, lvl in fin.levels.items()
            if lvl > 0
        ],
    }

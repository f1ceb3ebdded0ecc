"""UpdateFeatures (key 57), versions 0-2.

Changes finalized feature levels (``cluster/features.py``) as the KRaft controller does, all
or nothing: an unknown feature or a level outside the supported range answers
INVALID_UPDATE_VERSION; lowering a level needs ``allow_downgrade`` (v0) or upgrade type
SAFE_DOWNGRADE / UNSAFE_DOWNGRADE (v1+); ``metadata.version`` cannot be downgraded; a
feature named twice answers INVALID_REQUEST. ``validate_only`` (v1+) checks without
applying. v0-1 answer per feature, v2 with the top-level error only. A successful change
bumps the finalized features epoch that ApiVersions reports.
"""

from __future__ import annotations

from mockkafka.cluster.features import FEATURES_BY_NAME, finalized
from mockkafka.errors import ErrorCode
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import Message

UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3


def _problem(name: str, level: int, current: int, downgrade: bool) -> str | None:
    f = FEATURES_BY_NAME.get(name)
    if f is None:
        return f"Invalid update version {level} for feature {name}. The controller does not support the given feature."
    if level != 0 and not f.min_version <= level <= f.max_version:
        return (
            f"Invalid update version {level} for feature {name}. Local controller supports "
            f"versions {f.min_version}-{f.max_version}"
        )
    if level < current and not downgrade:
        return (
            f"Invalid update version {level} for feature {name}. Can't downgrade the version "
            "of this feature without setting the upgrade type to either safe or unsafe "
            "downgrade."
        )
    if name == "metadata.version" and level < current:
        return "Unable to downgrade metadata.version: downgrades are not supported"
    return None


@handler("UpdateFeatures", versions=(0, 2))
def handle(ctx: RequestContext, request: Message) -> Result:
    fin = finalized(ctx.cluster)
    updates = request.get("feature_updates") or []
    names = [u.get("feature") or "" for u in updates]
    results: dict[str, tuple[int, str | None]] = {n: (0, None) for n in names}
    top: tuple[int, str | None] = (0, None)
    if len(set(names)) != len(names):
        top = (ErrorCode.INVALID_REQUEST, "Duplicate feature in the request")
    else:
        for u in updates:
            name = u.get("feature") or ""
            level = u.get("max_version_level", 0)
            if ctx.version == 0:
                downgrade = bool(u.get("allow_downgrade"))
            else:
                downgrade = u.get("upgrade_type", UPGRADE) in (SAFE_DOWNGRADE, UNSAFE_DOWNGRADE)
            why = _problem(name, level, fin.levels.get(name, 0), downgrade)
            if why is not None:
                results[name] = (ErrorCode.INVALID_UPDATE_VERSION, why)
                top = (ErrorCode.INVALID_UPDATE_VERSION, why)
                break
    if top[0] == 0 and not request.get("validate_only", False) and updates:
        for u in updates:
            fin.levels[u.get("feature") or ""] = u.get("max_version_level", 0)
        fin.epoch += 1
    return {
        "throttle_time_ms": 0,
        "error_code": top[0],
        "error_message": top[1],
        "results": [
            {"feature": n, "error_code": code, "error_message": msg}
            for n, (code, msg) in results.items()
        ],
    }

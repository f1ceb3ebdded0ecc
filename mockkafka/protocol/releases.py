"""Release presets: what an Apache Kafka release advertises, so a cluster can be that release.

``Cluster(kafka_version="3.9")`` makes every broker advertise exactly the API versions that
Kafka 3.9 advertises (intersected with what mockkafka serves), so a client that infers the
broker's release from ApiVersions (kafka-python, Sarama, ...) infers 3.9, and negotiates the
versions it would negotiate against that release. Releases before 0.10 had no ApiVersions:
such a preset closes the connection on an ApiVersions request, as those brokers did, and
clients fall back to probing. The tables live in ``_releases_data.py`` (see
``tools/gen_releases.py`` for where its facts come from) and, for 4.0-4.4, in
``_releases_recorded.py``, recorded from the real brokers by
``tools/record_kafka_releases.py``.

The finalized features a release reports: none before 3.3; ``metadata.version`` at the
release's level for 3.3-3.9 (KRaft); Kafka 4's features from 4.0 on.
"""

from __future__ import annotations

import difflib

from mockkafka.protocol._releases_data import RELEASE_API_VERSIONS as _FROM_KAFKA_PYTHON
from mockkafka.protocol._releases_recorded import RECORDED

#: Release -> {api key: (min, max)}: the 4.x releases as their brokers answered
#: (``_releases_recorded.py``, ``tools/record_kafka_releases.py``), the older ones from
#: ``_releases_data.py``.
RELEASE_API_VERSIONS: dict[str, dict[int, tuple[int, int]]] = {
    **_FROM_KAFKA_PYTHON,
    **{release: dict(data["apis"]) for release, data in RECORDED.items()},
}

NEWEST = max(RELEASE_API_VERSIONS, key=lambda r: tuple(int(x) for x in r.split(".")))
"""The newest release in the table (the default behaviour is newer still: every version)."""

# metadata.version level of each KRaft 3.x release (MetadataVersion IBP_3_x_IVn).
METADATA_VERSION_3X: dict[str, int] = {
    "3.3": 7,
    "3.4": 8,
    "3.5": 11,
    "3.6": 14,
    "3.7": 19,
    "3.8": 20,
    "3.9": 21,
}


def normalize_release(text: str) -> str:
    """The table's name for release ``text`` (``"3.9.1"`` -> ``"3.9"``).

    Raises ValueError with the known releases and a did-you-mean for an unknown one.
    """
    name = str(text).strip()
    if name in RELEASE_API_VERSIONS:
        return name
    parts = name.split(".")
    for n in (3, 2):
        short = ".".join(parts[:n])
        if short in RELEASE_API_VERSIONS:
            return short
    if len(parts) == 2 and f"{name}.0" in RELEASE_API_VERSIONS:
        return f"{name}.0"
    close = difflib.get_close_matches(name, list(RELEASE_API_VERSIONS), n=3)
    hint = f" (did you mean {', '.join(close)}?)" if close else ""
    raise ValueError(
        f"unknown Kafka release {text!r}{hint}; known: {', '.join(RELEASE_API_VERSIONS)}"
    )


def release_api_versions(name: str) -> dict[int, tuple[int, int]]:
    """api key -> (min, max) advertised by release ``name`` (already normalized)."""
    return RELEASE_API_VERSIONS[name]


def release_tuple(name: str) -> tuple[int, ...]:
    return tuple(int(x) for x in name.split("."))

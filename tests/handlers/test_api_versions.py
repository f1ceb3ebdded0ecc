"""ApiVersions: the features it advertises, per request version."""

from __future__ import annotations

import pytest

from mockkafka.cluster.features import FEATURES
from mockkafka.cluster.state import ClusterConfig, ClusterState
from mockkafka.handlers.base import call_handler


@pytest.mark.parametrize("version", [3, 4])
def test_features_starting_at_0_are_left_out_below_v4(version: int) -> None:
    """KAFKA-17011/17492: clients before 3.8 fail on a supported range starting at 0, so
    Kafka leaves such features out of ApiVersions v0-v3; v4 carries every feature."""
    out = call_handler(
        ClusterState(ClusterConfig()),
        "ApiVersions",
        {"client_software_name": "test", "client_software_version": "1"},
        version=version,
    )
    assert isinstance(out, dict)
    advertised = {f["name"]: f["min_version"] for f in out["supported_features"]}
    expected = {f.name for f in FEATURES if version >= 4 or f.min_version > 0}
    assert set(advertised) == expected
    assert any(f.min_version == 0 for f in FEATURES)  # the case this pins exists
    if version < 4:
        assert min(advertised.values()) >= 1

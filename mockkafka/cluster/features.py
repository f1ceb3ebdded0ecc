"""Feature flags (KIP-584): the versions each feature supports and the finalized levels.

ApiVersions advertises ``supported_features`` and the ``finalized_features``; UpdateFeatures
changes finalized levels (upgrade, safe or unsafe downgrade) as the controller would. A
level of 0 means the feature is off and is not listed as finalized.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mockkafka.cluster.host import StateCore


@dataclass(frozen=True, slots=True)
class Feature:
    name: str
    min_version: int
    max_version: int
    default_level: int


FEATURES: tuple[Feature, ...] = (
    Feature("metadata.version", 1, 25, 25),
    Feature("group.version", 0, 1, 1),
    # KIP-890 part 2 on, as on a new Kafka 4.x cluster: Produce v12+, TxnOffsetCommit v5+ and
    # EndTxn v5+ take the transaction version 2 flow; older requests keep the v1 flow
    Feature("transaction.version", 0, 2, 2),
    Feature("kraft.version", 0, 1, 0),
    # KIP-932 share groups: on, as on a new Kafka 4.2+ cluster; at 0 no share API is served
    Feature("share.version", 0, 1, 1),
    Feature("streams.version", 0, 1, 1),  # KIP-1071 streams groups: on, as in Kafka 4.2+
)
FEATURES_BY_NAME = {f.name: f for f in FEATURES}

_EXT = "features.finalized"


@dataclass(slots=True)
class FinalizedFeatures:
    levels: dict[str, int]
    epoch: int = 1


def finalized(state: StateCore) -> FinalizedFeatures:
    """The cluster's finalized feature levels (defaults on first use)."""
    f: FinalizedFeatures | None = state.extensions.get(_EXT)
    if f is None:
        f = state.extensions[_EXT] = FinalizedFeatures({x.name: x.default_level for x in FEATURES})
    return f


def feature_level(state: StateCore, name: str) -> int:
    """The finalized level of feature ``name`` (0: off)."""
    return finalized(state).levels.get(name, 0)

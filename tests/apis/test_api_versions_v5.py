"""ApiVersions v5 (KIP-1242): a client names the cluster and node it means to reach and gets
REBOOTSTRAP_REQUIRED from a broker that is not that node of that cluster."""

from __future__ import annotations

from typing import Any

import pytest

import mockkafka
from tests.robustness._wire import Raw

MINE = "MkU3OEVBNTcwNTJENDM2Qg"  # cluster ids are base64 UUIDs, as Kafka's
ANOTHER = "AAAAAAAAAAAAAAAAAAAAAA"

REBOOTSTRAP_REQUIRED = 129


def _ask(cluster: mockkafka.Cluster, **ids: Any) -> dict[str, Any]:
    b = cluster.brokers[1]
    body = {"client_software_name": "t", "client_software_version": "1", **ids}
    with Raw(b.host, b.port) as r:
        out: dict[str, Any] = r.request("ApiVersions", 5, body)
    return out


@pytest.mark.parametrize(
    ("ids", "error"),
    [
        ({}, 0),  # nothing named (cluster_id null, node_id -1)
        ({"cluster_id": MINE, "node_id": 2}, 0),
        ({"cluster_id": ANOTHER, "node_id": 2}, REBOOTSTRAP_REQUIRED),
        ({"cluster_id": MINE, "node_id": 3}, REBOOTSTRAP_REQUIRED),
    ],
)
def test_a_client_pointed_at_another_cluster_or_node_must_rebootstrap(
    ids: dict[str, Any], error: int
) -> None:
    with mockkafka.Cluster(brokers=3, cluster_id=MINE) as cluster:
        out = _ask(cluster, **ids)
    assert out["error_code"] == error
    assert {k["api_key"] for k in out["api_keys"]} >= {0, 1, 3, 18}

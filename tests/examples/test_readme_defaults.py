"""README example: project-wide defaults by overriding ``kafka_cluster_options``.

In a project this fixture lives in ``conftest.py``; here it is in the test module (pytest
resolves fixture overrides the same way) so it only affects this file.
"""

# --- example: defaults for every test (conftest.py) ----------------------------------------
import pytest


@pytest.fixture
def kafka_cluster_options():
    return {"brokers": 3, "topics": {"orders": 6, "audit": 1}}


def test_uses_project_defaults(kafka_cluster):
    assert len(kafka_cluster.brokers) == 3
    assert kafka_cluster.topics() == ["audit", "orders"]


@pytest.mark.kafka_cluster(brokers=1)  # a marker still wins, key by key
def test_marker_overrides_a_default(kafka_cluster):
    assert len(kafka_cluster.brokers) == 1
    assert kafka_cluster.topics() == ["audit", "orders"]

"""Helpers shared by the public-surface tests."""

from __future__ import annotations

from confluent_kafka import Producer

import mockkafka
from tests.interop.conftest import unique


def commit_one_transaction(cluster: mockkafka.Cluster, topic: str) -> str:
    """Commit one transaction writing one record to ``topic`` with a real producer; returns
    its transactional id."""
    tid = unique("tx")
    p = Producer({"bootstrap.servers": cluster.bootstrap_servers, "transactional.id": tid})
    p.init_transactions(10)
    p.begin_transaction()
    p.produce(topic, b"x")
    p.commit_transaction(10)
    return tid

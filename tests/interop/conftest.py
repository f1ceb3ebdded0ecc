"""Shared helpers for interop tests: real clients over real sockets on 127.0.0.1.

Other interop test modules import from here, so keep it small and stable:

* ``cluster`` -- a fresh, started ``mockkafka.Cluster(brokers=3)`` per test;
* :func:`unique` -- a topic/group name no other test (or xdist worker) uses;
* :data:`CODECS` -- the compression codecs every client must round-trip;
* :func:`keyed_messages` -- ``n`` deterministic (key, value) pairs.
"""

from __future__ import annotations

import itertools
import os
import uuid
from collections.abc import Iterator

import pytest

import mockkafka

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")

_counter = itertools.count()


def unique(prefix: str = "t") -> str:
    """A legal, never-reused topic or group name (unique across xdist workers)."""
    return f"{prefix}-{os.getpid()}-{next(_counter)}-{uuid.uuid4().hex[:6]}"


def keyed_messages(n: int, *, tag: str = "") -> list[tuple[bytes, bytes]]:
    """``n`` (key, value) pairs; keys repeat every 97 so partitioning by key is exercised."""
    return [(f"key-{i % 97}".encode(), f"{tag}value-{i:06d}".encode()) for i in range(n)]


@pytest.fixture
def cluster() -> Iterator[mockkafka.Cluster]:
    """A fresh three-broker cluster; broker errors are re-raised at teardown."""
    with mockkafka.Cluster(brokers=3) as c:
        yield c


def requires_apis(*names: str) -> pytest.MarkDecorator:
    """Skip (with the reason) until mockkafka has a handler for every API in ``names``."""
    from mockkafka.handlers.base import load_handlers
    from mockkafka.protocol.apis import API_BY_NAME

    served = load_handlers()
    missing = [n for n in names if API_BY_NAME[n].key not in served]
    return pytest.mark.skipif(bool(missing), reason=f"no handler yet for {', '.join(missing)}")


def assert_sent_with_codec(cluster: mockkafka.Cluster, topic: str, codec: str) -> None:
    """The producer compressed with ``codec``. librdkafka and kafka-python send a batch
    uncompressed when compression would not shrink it (a lone small record), so "none" may
    appear beside the codec, but no other codec may."""
    seen = produced_codecs(cluster, topic)
    assert codec in seen, seen
    assert seen <= {codec, "none"}, seen


def produced_codecs(cluster: mockkafka.Cluster, topic: str) -> set[str]:
    """The compression codecs of every batch producers sent to ``topic`` (from traffic)."""
    from mockkafka.protocol import records as rec

    topic_id = cluster.topic(topic).topic_id
    out: set[str] = set()
    for ex in cluster.traffic.requests("Produce"):
        for td in (ex.request or {}).get("topic_data") or []:
            if td.get("name") != topic and td.get("topic_id") != topic_id:
                continue
            for pd in td.get("partition_data") or []:
                for header, _raw in rec.iter_batches(pd.get("records") or b""):
                    out.add(CODECS[header.attributes & 0x07])
    return out


@pytest.fixture
def topics(cluster: mockkafka.Cluster) -> tuple[str, str]:
    """Two topics for transaction tests: 2 partitions and 1 partition, replicated over the
    three brokers (use with :func:`txn_partitions`)."""
    a, b = unique("ta"), unique("tb")
    cluster.create_topic(a, partitions=2, replication_factor=3)
    cluster.create_topic(b, partitions=1, replication_factor=3)
    return a, b


def txn_partitions(topics: tuple[str, str]) -> list[tuple[str, int]]:
    """Every partition of the :func:`topics` pair."""
    a, b = topics
    return [(a, 0), (a, 1), (b, 0)]


def source_and_sink(cluster: mockkafka.Cluster, records: int) -> tuple[str, str]:
    """A consume-transform-produce pair of one-partition topics; the source holds
    ``records`` values ``m0``, ``m1``, ..."""
    src, dst = unique("src"), unique("dst")
    cluster.create_topic(src, partitions=1, replication_factor=3)
    cluster.create_topic(dst, partitions=1, replication_factor=3)
    for i in range(records):
        cluster.produce(src, f"m{i}".encode())
    return src, dst

"""A rule that cannot act says why, with confluent-kafka at its defaults (issue 33).

A producer at its defaults writes 50 records in one batch; a consumer reads them with a
record-editing rule in place that has nothing to edit. The rule does not fire, and it
reports the answers it saw (``matched``), why it left each alone (``declined``), and
``cluster.why_unfired`` says it in words a test author can act on."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer

import mockkafka
from tests.interop.conftest import unique

pytestmark = [pytest.mark.interop, pytest.mark.timeout(60)]


@pytest.fixture
def cluster() -> Iterator[mockkafka.Cluster]:
    with mockkafka.Cluster(topics={"t": 1}) as c:
        yield c


def _write_one_batch(cluster: mockkafka.Cluster) -> None:
    p = Producer({"bootstrap.servers": cluster.bootstrap_servers})
    for i in range(50):
        p.produce("t", value=f"v{i}".encode())
    assert p.flush(20) == 0
    (produce,) = cluster.traffic.requests("Produce")  # one request, one batch of 50
    assert cluster.topic("t").partition(0).high_watermark == 50, produce


def _read_all(cluster: mockkafka.Cluster) -> list[bytes]:
    c = Consumer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "group.id": unique("g"),
            "auto.offset.reset": "earliest",
        }
    )
    got: list[bytes] = []
    try:
        c.subscribe(["t"])
        deadline = time.monotonic() + 20
        while len(got) < 50 and time.monotonic() < deadline:
            m = c.poll(0.2)
            if m is not None and not m.error():
                got.append(m.value())
    finally:
        c.close()
    return got


@pytest.mark.parametrize(
    ("action", "kwargs", "reason"),
    [
        (
            "partial_trailing_batch",
            {},
            "partial_trailing_batch: the answer held a single batch and the log has none after it",
        ),
        ("schema_id", {"id": 7}, "schema_id: no value is in the schema-registry wire format"),
    ],
)
def test_a_rule_with_nothing_to_edit_in_one_batch_says_why(
    cluster: mockkafka.Cluster, action: str, kwargs: dict[str, Any], reason: str
) -> None:
    _write_one_batch(cluster)
    rule = getattr(cluster.faults.on("Fetch", topic="t"), action)(**kwargs)
    assert _read_all(cluster) == [f"v{i}".encode() for i in range(50)]
    assert rule.fired == 0
    assert rule.matched >= 1  # the answer with the batch, and any empty ones after it
    assert rule.declined.get(reason_key(rule, reason)) == 1
    why = cluster.why_unfired(rule)
    assert f"1x {reason}" in why
    cluster.faults.clear()


def reason_key(rule: Any, start: str) -> str:
    (key,) = [k for k in rule.declined if k.startswith(start)]
    return key

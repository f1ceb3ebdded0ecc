"""Real-client workloads the library scenarios are played against (confluent-kafka).

Every loop is bounded in count and time. The convention of the library: the main topic is
the scenario's first topic, the consumer group is ``billing``, the transactional id
``orders-tx``.
"""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Any

from confluent_kafka import Consumer, KafkaException, Producer

import mockkafka

GROUP = "billing"
TRANSACTIONAL_ID = "orders-tx"
QUIET = {"log_level": 0}


def produce(
    cluster: mockkafka.Cluster, topic: str, n: int, *, pause_every: int = 20, **conf: Any
) -> int:
    """Write ``n`` keyed records with an idempotent producer; returns how many were
    acknowledged without error."""
    p = Producer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "enable.idempotence": True,
            "linger.ms": 5,
            "message.timeout.ms": 30000,
            **QUIET,
            **conf,
        }
    )
    ok = [0]

    def done(err: Any, _msg: Any) -> None:
        if err is None:
            ok[0] += 1

    for i in range(n):
        p.produce(topic, value=f"value-{i:05d}".encode(), key=f"key-{i}".encode(), on_delivery=done)
        p.poll(0)
        if pause_every and i % pause_every == pause_every - 1:
            p.flush(30)
            time.sleep(0.02)
    p.flush(30)
    return ok[0]


def consume_all(
    cluster: mockkafka.Cluster,
    topic: str,
    *,
    until: int,
    timeout: float = 40.0,
    consumer: Consumer | None = None,
    group: str = GROUP,
) -> tuple[Consumer, int]:
    """Read with group ``billing`` and commit synchronously until ``until`` records were
    received; returns the (still open) consumer and the count."""
    c = consumer or Consumer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 200,
            "topic.metadata.refresh.interval.ms": 500,
            **QUIET,
        }
    )
    if consumer is None:
        c.subscribe([topic])
    got = 0
    deadline = time.monotonic() + timeout
    for _ in range(100_000):
        if time.monotonic() > deadline:
            break
        msgs = c.consume(200, 0.2)
        got += sum(1 for m in msgs if m.error() is None)
        if msgs:
            # a rebalance or a coordinator move may refuse it: commit again next round
            with contextlib.suppress(KafkaException):
                c.commit(asynchronous=False)
        if got >= until and _committed_all(cluster, topic, group):
            break
    return c, got


def _committed_all(cluster: mockkafka.Cluster, topic: str, group: str = GROUP) -> bool:
    hw = {p.partition: p.high_watermark for p in cluster.topic(topic).partitions}
    done = cluster.committed_offsets(group)
    return all(done.get((topic, p), -1) >= h for p, h in hw.items())


def pipeline(
    cluster: mockkafka.Cluster,
    topic: str,
    *,
    n: int = 200,
    seeded: int = 0,
    group: str = GROUP,
    **conf: Any,
) -> tuple[Consumer, int, int]:
    """A producer thread writes ``n`` records while a consumer group reads them all (and the
    ``seeded`` ones). Returns the open consumer, how many were acknowledged and read."""
    acked = [0]
    t = threading.Thread(target=lambda: acked.__setitem__(0, produce(cluster, topic, n, **conf)))
    t.start()
    consumer, got = consume_all(cluster, topic, until=n + seeded, group=group)
    t.join(60)
    assert not t.is_alive(), "the producer did not finish within 60 s"
    if got < n + seeded:  # the producer finished late: read the rest
        consumer, more = consume_all(
            cluster, topic, until=n + seeded - got, consumer=consumer, timeout=20, group=group
        )
        got += more
    return consumer, acked[0], got


def transactions(cluster: mockkafka.Cluster, topic: str, *, count: int = 5, per: int = 10) -> int:
    """Commit ``count`` transactions of ``per`` records with transactional id ``orders-tx``;
    returns how many committed."""
    p = Producer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "transactional.id": TRANSACTIONAL_ID,
            "transaction.timeout.ms": 20000,
            **QUIET,
        }
    )
    p.init_transactions(30)
    done = 0
    for t in range(count):
        p.begin_transaction()
        for i in range(per):
            p.produce(topic, value=f"tx{t}-{i}".encode(), key=f"k{i}".encode())
        p.flush(10)
        time.sleep(0.1)  # let the scenario see the transaction Ongoing
        for _ in range(20):
            try:
                p.commit_transaction(30)
                done += 1
                break
            except KafkaException as exc:
                if not exc.args[0].retriable():
                    raise
                time.sleep(0.1)
    return done

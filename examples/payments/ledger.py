"""A small payments service: a publisher writes payments to the ``payments`` topic, the
``ledger`` consumer group books them and commits what it booked.

The library scenarios are written for a topic ``orders`` and a group ``billing``; the
tests next to this file (``test_payments_ledger.py``) play three of them against this
service's own names by binding the scenarios' parameters. Run them with
``python -m pytest examples/payments`` (needs confluent-kafka, and faker for the scenarios
that seed records: ``pip install -e '.[scenarios]' confluent-kafka``).
"""

from __future__ import annotations

import time

from confluent_kafka import Consumer, KafkaException, Producer

TOPIC = "payments"
GROUP = "ledger"
QUIET = {"log_level": 0}


def publish(bootstrap: str, count: int, *, topic: str = TOPIC) -> int:
    """Write ``count`` payments with an idempotent producer; returns how many were
    acknowledged (all of them, whatever the cluster does, if the publisher is right)."""
    p = Producer(
        {
            "bootstrap.servers": bootstrap,
            "enable.idempotence": True,
            "linger.ms": 5,
            "message.timeout.ms": 30000,
            **QUIET,
        }
    )
    acked = [0]

    def delivered(err: object, _msg: object) -> None:
        if err is None:
            acked[0] += 1

    for i in range(count):
        value = f'{{"payment": {i}, "cents": {100 + i}}}'.encode()
        p.produce(topic, key=f"payment-{i}".encode(), value=value, on_delivery=delivered)
        if i % 10 == 9:  # a few records per request, as a real service would send them
            p.flush(30)
    p.flush(30)
    return acked[0]


def book(
    bootstrap: str,
    *,
    until: int,
    topic: str = TOPIC,
    group: str = GROUP,
    timeout: float = 30.0,
    work_s: float = 0.01,
) -> int:
    """Consume with group ``ledger``, booking each small batch (``work_s`` seconds of work)
    and committing it, until ``until`` distinct payments were booked or ``timeout`` seconds
    passed; returns how many."""
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 200,
            "topic.metadata.refresh.interval.ms": 500,
            **QUIET,
        }
    )
    c.subscribe([topic])
    booked: set[tuple[int, int]] = set()
    uncommitted = False
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            msgs = c.consume(10, 0.1)
            for m in msgs:
                if m.error() is None:
                    booked.add((m.partition(), m.offset()))
                    uncommitted = True
            if msgs:
                time.sleep(work_s)  # booking the batch
            if uncommitted:
                try:
                    c.commit(asynchronous=False)
                    uncommitted = False
                except KafkaException:
                    pass  # a coordinator moved or is loading: commit again next round
            if len(booked) >= until and not uncommitted:
                break
    finally:
        c.close()
    return len(booked)

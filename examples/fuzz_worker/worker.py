"""A small billing worker: one invoice for every order, committed as it goes.

It reads ``orders``, writes ``invoice:<order>`` to ``invoices`` and commits its position in
the ``billing`` group. ``commit_before_processing=True`` is the bug this example is about:
the worker commits a batch as soon as it has polled it, so a crash while processing (here:
a produce that fails) loses the rest of the batch -- the restarted worker resumes after it.
``docs/fuzzing.md`` walks through how the fuzzer finds and shrinks it.
"""

from __future__ import annotations

import time
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer

ORDERS = "orders"
INVOICES = "invoices"
GROUP = "billing"


class WorkerCrashed(Exception):
    """The worker could not process a batch; a supervisor restarts it."""


class InvoiceWorker:
    """One worker process: ``run_batch()`` polls a batch and processes it."""

    def __init__(self, bootstrap_servers: str, *, commit_before_processing: bool = False) -> None:
        self.commit_before_processing = commit_before_processing
        self.consumer = Consumer(
            {
                "bootstrap.servers": bootstrap_servers,
                "group.id": GROUP,
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
                "fetch.wait.max.ms": 10,
                "session.timeout.ms": 6000,
                "heartbeat.interval.ms": 100,
                "retry.backoff.ms": 10,
                "topic.metadata.refresh.interval.ms": 1000,
                "log_level": 0,
            }
        )
        self.consumer.subscribe([ORDERS])
        self.producer = Producer(
            {
                "bootstrap.servers": bootstrap_servers,
                "linger.ms": 0,
                "retry.backoff.ms": 10,
                "message.timeout.ms": 3000,
                "log_level": 0,
            }
        )

    def run_batch(self, *, max_records: int = 10, timeout: float = 0.2) -> int:
        """Poll up to ``max_records`` orders and invoice them; returns how many were polled.
        Raises WorkerCrashed when an invoice cannot be written, the commit fails or the
        consumer reports an error that will not go away by itself."""
        batch = []
        for m in self.consumer.consume(max_records, timeout=timeout):
            err = m.error()
            if err is None:
                batch.append(m)
            elif not err.retriable() and err.code() != KafkaError._PARTITION_EOF:
                # e.g. TOPIC_AUTHORIZATION_FAILED on a fetch: librdkafka stops fetching that
                # partition, so carrying on would leave its orders unprocessed for good.
                raise WorkerCrashed(f"consumer error: {err}")
        if not batch:
            return 0
        if self.commit_before_processing:
            self._commit()  # BUG: the position moves before the work is done
        for message in batch:
            self._invoice(message.value())
        if not self.commit_before_processing:
            self._commit()
        return len(batch)

    def _invoice(self, order: bytes) -> None:
        failures: list[Any] = []

        def report(err: KafkaError | None, _msg: Any) -> None:
            if err is not None:
                failures.append(err)

        self.producer.produce(INVOICES, b"invoice:" + order, on_delivery=report)
        if self.producer.flush(5) or failures:
            raise WorkerCrashed(f"could not write the invoice of {order!r}: {failures}")

    def _commit(self) -> None:
        try:
            self.consumer.commit(asynchronous=False)
        except KafkaException as exc:
            raise WorkerCrashed(f"commit failed: {exc}") from exc

    def caught_up(self) -> bool:
        """True when the group's committed offsets reached the end of every partition this
        worker owns (consumer lag 0): there is nothing left to do."""
        owned = self.consumer.assignment()
        if not owned:
            return False
        try:
            committed = self.consumer.committed(owned, timeout=2)
            for tp in committed:
                _low, high = self.consumer.get_watermark_offsets(tp, timeout=2)
                if tp.offset < high:
                    return False
        except KafkaException:
            return False
        return True

    def close(self) -> None:
        self.consumer.close()
        self.producer.flush(1)


def run_until_idle(
    bootstrap_servers: str,
    *,
    commit_before_processing: bool = False,
    max_restarts: int = 12,
    poll_timeout: float = 0.05,
    deadline_s: float = 15.0,
) -> int:
    """Run workers as a supervisor would: restart a crashed one; stop once a worker polls
    nothing and the group has no lag (or at the deadline). Returns the number of restarts."""
    restarts = 0
    end = time.monotonic() + deadline_s
    while True:
        worker = InvoiceWorker(bootstrap_servers, commit_before_processing=commit_before_processing)
        try:
            while time.monotonic() < end:
                if worker.run_batch(timeout=poll_timeout) == 0 and worker.caught_up():
                    break
            return restarts
        except WorkerCrashed:
            restarts += 1
            if restarts > max_restarts or time.monotonic() >= end:
                raise
        finally:
            worker.close()

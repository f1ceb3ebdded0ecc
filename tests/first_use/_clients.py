"""Producing and consuming as a user writes it, with each Python client family at its
defaults (only ``auto.offset.reset=earliest``, which every test that reads what it wrote
sets). Every loop is bounded: a consumer thread stops when told or after ``max_s``.

``FIRST_USE_CLIENT_LOG=DIR`` writes kafka-python's and aiokafka's DEBUG logs of each run to
``DIR/<pid>.log`` (the path is printed to stderr, so a failed run's output names it)."""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Sequence
from types import TracebackType
from typing import Any

_debug_log_path: str | None = None


def _client_debug_log() -> None:
    """Send the Python clients' DEBUG logs to a file when ``FIRST_USE_CLIENT_LOG`` names a
    directory (once per process)."""
    global _debug_log_path
    folder = os.environ.get("FIRST_USE_CLIENT_LOG")
    if not folder or _debug_log_path is not None:
        return
    os.makedirs(folder, exist_ok=True)
    _debug_log_path = os.path.join(folder, f"{os.getpid()}.log")
    handler = logging.FileHandler(_debug_log_path)
    handler.setFormatter(
        logging.Formatter("%(asctime)s %(threadName)s %(name)s %(levelname)s %(message)s")
    )
    for name in ("kafka", "aiokafka"):
        logging.getLogger(name).setLevel(logging.DEBUG)
        logging.getLogger(name).addHandler(handler)
    print(f"client DEBUG log: {_debug_log_path}", file=sys.stderr, flush=True)


def produce(
    client: str, bootstrap: str, topic: str, values: Sequence[bytes], **settings: Any
) -> None:
    """Send ``values`` to ``topic`` and wait for every acknowledgement; raise on a failure."""
    _client_debug_log()
    if client == "confluent":
        from confluent_kafka import KafkaException, Producer

        p = Producer({"bootstrap.servers": bootstrap, **settings})
        errors: list[Any] = []
        for v in values:
            p.produce(topic, v, on_delivery=lambda err, _m: err and errors.append(err))
        left = p.flush(30)
        if left or errors:
            raise KafkaException(errors[0] if errors else f"{left} record(s) not delivered")
    elif client == "kafka-python":
        from kafka import KafkaProducer

        kp = KafkaProducer(bootstrap_servers=bootstrap, **settings)
        futures = [kp.send(topic, v) for v in values]
        for f in futures:
            f.get(timeout=30)
        kp.close(timeout=10)
    elif client == "aiokafka":
        import asyncio

        from aiokafka import AIOKafkaProducer

        async def run() -> None:
            ap = AIOKafkaProducer(bootstrap_servers=bootstrap, **settings)
            await ap.start()
            try:
                for v in values:
                    await ap.send_and_wait(topic, v)
            finally:
                await ap.stop()

        asyncio.run(run())
    else:  # pragma: no cover - a typo in a probe
        raise ValueError(client)


class GroupConsumer:
    """A member of ``group`` subscribed to ``topic``, polling on its own thread.

    ``records`` collects ``(partition, offset, value)``; with ``commit=True`` the consumer
    commits synchronously after each batch it got (auto-commit stays at its default too).
    ``protocol="consumer"`` joins with KIP-848 (confluent-kafka and kafka-python... where the
    client speaks it). Use as a context manager; leaving closes the consumer."""

    def __init__(
        self,
        client: str,
        bootstrap: str,
        topic: str,
        group: str,
        *,
        commit: bool = False,
        max_s: float = 60.0,
        **settings: Any,
    ) -> None:
        self.client, self.bootstrap, self.topic, self.group = client, bootstrap, topic, group
        self.commit, self.max_s, self.settings = commit, max_s, settings
        self.records: list[tuple[int, int, bytes | None]] = []
        self.errors: list[BaseException] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"{client}-consumer", daemon=True)

    def __enter__(self) -> GroupConsumer:
        _client_debug_log()
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(30)
        if self._thread.is_alive():
            raise AssertionError(f"the {self.client} consumer did not close within 30 s")
        if self.errors and self.errors[0] is not None:
            raise self.errors[0]

    def wait_records(
        self, count: int, timeout: float = 20.0
    ) -> list[tuple[int, int, bytes | None]]:
        deadline = time.monotonic() + timeout
        while len(self.records) < count and time.monotonic() < deadline:
            if self.errors:
                raise self.errors[0]
            time.sleep(0.02)
        if len(self.records) < count:
            raise AssertionError(
                f"the {self.client} consumer got {len(self.records)} of {count} records "
                f"in {timeout} s"
            )
        return list(self.records)

    def _running(self, started: float) -> bool:
        return not self._stop.is_set() and time.monotonic() - started < self.max_s

    def _run(self) -> None:
        try:
            getattr(self, "_run_" + self.client.replace("-", "_"))()
        except BaseException as e:  # reported by close()
            self.errors.append(e)

    def _run_confluent(self) -> None:
        from confluent_kafka import Consumer, KafkaException

        c = Consumer(
            {
                "bootstrap.servers": self.bootstrap,
                "group.id": self.group,
                "auto.offset.reset": "earliest",
                **self.settings,
            }
        )
        c.subscribe([self.topic])
        started = time.monotonic()
        try:
            while self._running(started):
                m = c.poll(0.1)
                if m is None:
                    continue
                if m.error():
                    if m.error().fatal():
                        raise KafkaException(m.error())
                    continue
                self.records.append((m.partition(), m.offset(), m.value()))
                if self.commit:
                    c.commit(m, asynchronous=False)
        finally:
            c.close()

    def _run_kafka_python(self) -> None:
        from kafka import KafkaConsumer

        c = KafkaConsumer(
            self.topic,
            bootstrap_servers=self.bootstrap,
            group_id=self.group,
            auto_offset_reset="earliest",
            **self.settings,
        )
        started = time.monotonic()
        try:
            while self._running(started):
                # 1000 ms, the common value, not 100: kafka-python 3.0.12 drops a rejoin that
                # completes while no poll() waits for it and then stays silent (no Fetch, no
                # Heartbeat; README "Tested clients", also against Kafka 4.4). A poll that
                # ends before its JoinGroup is answered opens that window; a short timeout
                # makes that likely, 1000 ms rare (poll returns as soon as records arrive).
                got = c.poll(timeout_ms=1000)
                for batch in got.values():
                    for m in batch:
                        self.records.append((m.partition, m.offset, m.value))
                if got and self.commit:
                    c.commit()
        finally:
            c.close()

    def _run_aiokafka(self) -> None:
        import asyncio

        from aiokafka import AIOKafkaConsumer

        async def run() -> None:
            c = AIOKafkaConsumer(
                self.topic,
                bootstrap_servers=self.bootstrap,
                group_id=self.group,
                auto_offset_reset="earliest",
                **self.settings,
            )
            await c.start()
            started = time.monotonic()
            try:
                while self._running(started):
                    got = await c.getmany(timeout_ms=100)
                    for batch in got.values():
                        for m in batch:
                            self.records.append((m.partition, m.offset, m.value))
                    if got and self.commit:
                        await c.commit()
            finally:
                await c.stop()

        asyncio.run(run())

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


def values(n: int, tag: str = "v") -> list[bytes]:
    """``n`` distinct record values (``tag-000``, ``tag-001``, ...)."""
    return [f"{tag}-{i:03d}".encode() for i in range(n)]


def stored(cluster: Any, topic: str) -> list[bytes | None]:
    """Every value ``topic`` holds on the cluster, partition by partition, in offset order."""
    out: list[bytes | None] = []
    for p in cluster.topic(topic).partitions:
        out.extend(r.value for r in p.records())
    return out


def each_once(records: list[tuple[int, int, bytes | None]], want: list[bytes]) -> None:
    """The consumer delivered every value, none twice (by partition and offset)."""
    seen = [(p, o) for p, o, _v in records]
    twice = sorted({x for x in seen if seen.count(x) > 1})
    assert not twice, f"delivered twice: {twice[:5]}"
    assert sorted(v for _p, _o, v in records if v is not None) == sorted(want), (
        f"delivered {len(records)} records, want {len(want)}"
    )


class ShareMember:
    """A confluent-kafka ``ShareConsumer`` of share group ``group`` polling ``topic`` on its
    own thread (bounded: 60 s) until the block ends."""

    def __init__(self, bootstrap: str, topic: str, group: str) -> None:
        self.bootstrap, self.topic, self.group = bootstrap, topic, group
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="share-member", daemon=True)

    def __enter__(self) -> ShareMember:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(30)

    def _run(self) -> None:
        from confluent_kafka import ShareConsumer

        c = ShareConsumer({"bootstrap.servers": self.bootstrap, "group.id": self.group})
        c.subscribe([self.topic])
        try:
            for _ in range(600):
                if self._stop.is_set():
                    break
                c.poll(0.1)
        finally:
            c.close()


class GroupConsumer:
    """A member of ``group`` subscribed to ``topic``, polling on its own thread.

    ``records`` collects ``(partition, offset, value)``; with ``commit=True`` the consumer
    commits synchronously after each batch it got (auto-commit stays at its default too);
    with ``tolerate_commit_errors=True`` a refused commit (a rebalance, a moved coordinator)
    is let go, as an app does whose next commit covers it.
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
        tolerate_commit_errors: bool = False,
        max_s: float = 60.0,
        **settings: Any,
    ) -> None:
        self.client, self.bootstrap, self.topic, self.group = client, bootstrap, topic, group
        self.commit, self.max_s, self.settings = commit, max_s, settings
        self.tolerate_commit_errors = tolerate_commit_errors
        #: commits refused (only with ``tolerate_commit_errors``)
        self.commit_errors: list[BaseException] = []
        self.records: list[tuple[int, int, bytes | None]] = []
        #: the CreateTime (ms) of each record, in the order of ``records``
        self.timestamps: list[int] = []
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

    def _commit(self, commit: Any) -> None:
        try:
            commit()
        except Exception as e:
            if not self.tolerate_commit_errors:
                raise
            self.commit_errors.append(e)

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
                self.timestamps.append(m.timestamp()[1])
                if self.commit:
                    self._commit(lambda m=m: c.commit(message=m, asynchronous=False))
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
                        self.timestamps.append(m.timestamp)
                if got and self.commit:
                    self._commit(c.commit)
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
                            self.timestamps.append(m.timestamp)
                    if got and self.commit:
                        try:
                            await c.commit()
                        except Exception as e:
                            if not self.tolerate_commit_errors:
                                raise
                            self.commit_errors.append(e)
            finally:
                try:
                    await c.stop()
                except asyncio.CancelledError:
                    # aiokafka 0.14's Fetcher.close() cancels and awaits a fetch task that
                    # sleeps its retry backoff after a failed fetch (a broker restarted):
                    # stop() then raises CancelledError though the consumer is closed
                    if asyncio.current_task().cancelling():  # type: ignore[union-attr]
                        raise

        asyncio.run(run())


class KeptProducer:
    """One producer kept open across several sends (so a verb lands between two sends of
    the same client), at the client's defaults plus ``settings``. ``send`` waits for every
    acknowledgement and raises on a failure. Use as a context manager."""

    def __init__(self, client: str, bootstrap: str, **settings: Any) -> None:
        self.client = client
        if client == "confluent":
            from confluent_kafka import Producer

            self._p: Any = Producer({"bootstrap.servers": bootstrap, **settings})
        elif client == "kafka-python":
            from kafka import KafkaProducer

            self._p = KafkaProducer(bootstrap_servers=bootstrap, **settings)
        elif client == "aiokafka":
            import asyncio

            from aiokafka import AIOKafkaProducer

            self._loop = asyncio.new_event_loop()
            self._thread = threading.Thread(
                target=self._loop.run_forever, name="aiokafka-producer", daemon=True
            )
            self._thread.start()

            async def start() -> Any:
                p = AIOKafkaProducer(bootstrap_servers=bootstrap, **settings)
                await p.start()
                return p

            self._p = self._on_loop(start())
        else:  # pragma: no cover - a typo in a probe
            raise ValueError(client)

    def _on_loop(self, coro: Any, timeout: float = 40.0) -> Any:
        import asyncio

        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    def __enter__(self) -> KeptProducer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def send(self, topic: str, values: Sequence[bytes], **kw: Any) -> None:
        if self.client == "confluent":
            from confluent_kafka import KafkaException

            errors: list[Any] = []

            def delivered(err: Any, _msg: Any) -> None:
                if err is not None:
                    errors.append(err)

            for v in values:
                self._p.produce(topic, v, on_delivery=delivered, **kw)
            left = self._p.flush(30)
            if left or errors:
                raise KafkaException(errors[0] if errors else f"{left} record(s) not delivered")
        elif self.client == "kafka-python":
            futures = [self._p.send(topic, v, **kw) for v in values]
            for f in futures:
                f.get(timeout=30)
        else:

            async def send() -> None:
                import asyncio

                futs = [await self._p.send(topic, v, **kw) for v in values]
                await asyncio.gather(*futs)

            self._on_loop(send())

    def close(self) -> None:
        if self.client == "confluent":
            self._p.flush(10)
        elif self.client == "kafka-python":
            self._p.close(timeout=10)
        elif self._thread.is_alive():
            try:
                self._on_loop(self._p.stop(), timeout=15)
            finally:
                self._loop.call_soon_threadsafe(self._loop.stop)
                self._thread.join(10)


def txn_producer(client: str, bootstrap: str, tid: str) -> Any:
    """A transactional producer of ``client`` at its defaults (plus the transactional id),
    with ``begin``, ``send``, ``commit`` callables in a small namespace."""
    import types

    if client == "confluent":
        from confluent_kafka import Producer

        p = Producer({"bootstrap.servers": bootstrap, "transactional.id": tid})
        p.init_transactions(30)

        def send(topic: str, values: list[bytes]) -> None:
            for v in values:
                p.produce(topic, v)
            p.flush(30)

        return types.SimpleNamespace(
            begin=p.begin_transaction,
            send=send,
            commit=lambda: p.commit_transaction(30),
            close=lambda: None,
        )
    if client == "kafka-python":
        from kafka import KafkaProducer

        kp = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=tid)
        kp.init_transactions()

        def ksend(topic: str, values: list[bytes]) -> None:
            for f in [kp.send(topic, v) for v in values]:
                f.get(timeout=30)

        return types.SimpleNamespace(
            begin=kp.begin_transaction,
            send=ksend,
            commit=kp.commit_transaction,
            close=lambda: kp.close(timeout=5),
        )
    import asyncio

    from aiokafka import AIOKafkaProducer

    loop = asyncio.new_event_loop()
    t = threading.Thread(target=loop.run_forever, daemon=True)
    t.start()

    def on_loop(coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, loop).result(40)

    async def start() -> Any:
        ap = AIOKafkaProducer(bootstrap_servers=bootstrap, transactional_id=tid)
        await ap.start()
        return ap

    ap = on_loop(start())

    async def asend(topic: str, values: list[bytes]) -> None:
        for v in values:
            await ap.send_and_wait(topic, v)

    async def abegin() -> None:
        await ap.begin_transaction()

    def aclose() -> None:
        try:
            on_loop(ap.stop())
        finally:
            loop.call_soon_threadsafe(loop.stop)
            t.join(10)

    return types.SimpleNamespace(
        begin=lambda: on_loop(abegin()),
        send=lambda topic, values: on_loop(asend(topic, values)),
        commit=lambda: on_loop(ap.commit_transaction()),
        close=aclose,
    )

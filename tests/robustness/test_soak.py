"""Soak: producers and a consumer group of each Python client under a random fault plan.

For ``seconds`` (short in the default run; ``MOCKKAFKA_SOAK_SECONDS=N`` runs the ``slow``
form for N seconds) an idempotent producer of each client (confluent-kafka, kafka-python,
aiokafka) writes uniquely numbered messages while a seeded random plan of faults fires
(retriable errors, lost responses after the write, delays, dropped connections, leader
moves). Meanwhile a consumer group per client (two members each for confluent-kafka and
kafka-python, one for aiokafka) reads the topic. Afterwards:

* every acknowledged message is in the log exactly once (nothing lost, no duplicates:
  every producer is idempotent);
* each group saw every acknowledged message;
* once the clients are closed the broker holds no connection, and the test process has no
  more threads, file descriptors or broker tasks than before.

The figures (duration, messages moved, faults fired) are printed (``-s``).
"""

from __future__ import annotations

import asyncio
import os
import random
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trio

import mockkafka
from mockkafka.cluster.state import ClusterState

CLIENTS = ("confluent", "kafka-python", "aiokafka")
TOPIC = "soak"
PARTITIONS = 4


def _fault_plan(cluster: mockkafka.Cluster, seed: int) -> list[Any]:
    """A random plan of faults clients must survive without losing acknowledged data."""
    rng = random.Random(seed)
    f = cluster.faults
    # Produce errors come from real leader moves (``soak`` moves leaders), not from a random
    # per-request NOT_LEADER_OR_FOLLOWER: a broker never refuses one request as not leader
    # and accepts the next one pipelined behind it, and when a fault plan does so the
    # broker rightly answers that next one OUT_OF_ORDER_SEQUENCE_NUMBER, on which
    # librdkafka bumps its epoch and re-sends a batch that was already written (a duplicate
    # the fault plan asked for).
    rules = [
        f.on("Produce")
        .with_probability(rng.uniform(0.01, 0.03), seed=rng.randrange(2**32))
        .drop_connection(after_processing=True),
        f.on("Fetch")
        .with_probability(rng.uniform(0.02, 0.05), seed=rng.randrange(2**32))
        .error("NOT_LEADER_OR_FOLLOWER"),
        f.on("Fetch")
        .with_probability(rng.uniform(0.02, 0.08), seed=rng.randrange(2**32))
        .delay(ms=rng.randint(10, 80)),
        f.on("Metadata").with_probability(0.02, seed=rng.randrange(2**32)).drop_connection(),
        f.on("Heartbeat").with_probability(0.02, seed=rng.randrange(2**32)).delay(ms=50),
    ]
    return rules


def _trio_tasks(cluster: mockkafka.Cluster) -> int:
    def count(_: ClusterState) -> int:
        n = 0
        stack = [trio.lowlevel.current_root_task()]
        while stack:
            t = stack.pop()
            n += 1
            for nursery in t.child_nurseries:
                stack.extend(nursery.child_tasks)
        return n

    return cluster.call(count)


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _own_local_ports() -> set[int]:
    """Local ports of this process's TCP sockets (from /proc): a broker connection whose peer
    port is not among them comes from another process, e.g. a client of a finished test on
    another xdist worker reconnecting to a port the OS has since given to this cluster."""
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[9] in inodes:
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def _own_connections(cluster: mockkafka.Cluster) -> dict[int, Any]:
    """The broker's open connections whose client is in this process."""
    own = _own_local_ports()
    return {
        cid: conn
        for cid, conn in cluster._server.connections.items()
        if int(conn.peer.rsplit(":", 1)[1]) in own
    }


class Run:
    """Shared state of one soak run."""

    def __init__(self, cluster: mockkafka.Cluster, seconds: float) -> None:
        self.cluster = cluster
        self.bootstrap = cluster.bootstrap_servers
        self.stop_producing = threading.Event()
        self.stop_consuming = threading.Event()
        self.acked: dict[str, set[bytes]] = {c: set() for c in CLIENTS}
        self.seen: dict[str, set[bytes]] = {c: set() for c in CLIENTS}
        self.lock = threading.Lock()
        self.errors: list[BaseException] = []
        self.seconds = seconds

    def all_acked(self) -> set[bytes]:
        with self.lock:
            return set().union(*self.acked.values())

    def guard(self, fn: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                fn()
            except BaseException as exc:  # reported by the test
                self.errors.append(exc)

        return run


def _confluent_producer(run: Run) -> None:
    from confluent_kafka import Producer

    p = Producer(
        {
            "bootstrap.servers": run.bootstrap,
            "enable.idempotence": True,
            "linger.ms": 5,
            "message.timeout.ms": 60000,
            "retry.backoff.ms": 20,
        }
    )

    def delivered(err: Any, msg: Any) -> None:
        if err is None:
            with run.lock:
                run.acked["confluent"].add(msg.value())

    i = 0
    while not run.stop_producing.is_set() and i < 1_000_000:
        p.produce(
            TOPIC, key=str(i % 31).encode(), value=f"confluent-{i}".encode(), on_delivery=delivered
        )
        p.poll(0)
        i += 1
        if i % 10 == 0:
            time.sleep(0.01)
    p.flush(30)


def _kafka_python_producer(run: Run) -> None:
    from kafka import KafkaProducer

    p = KafkaProducer(
        bootstrap_servers=run.bootstrap,
        enable_idempotence=True,
        acks="all",
        linger_ms=5,
        retries=1000,
        retry_backoff_ms=20,
    )

    def ok(value: bytes) -> Callable[[Any], None]:
        def cb(_: Any) -> None:
            with run.lock:
                run.acked["kafka-python"].add(value)

        return cb

    i = 0
    while not run.stop_producing.is_set() and i < 1_000_000:
        v = f"kafka-python-{i}".encode()
        p.send(TOPIC, key=str(i % 31).encode(), value=v).add_callback(ok(v))
        i += 1
        if i % 10 == 0:
            time.sleep(0.01)
    p.flush(30)
    p.close(10)


def _aiokafka_producer(run: Run) -> None:
    from aiokafka import AIOKafkaProducer

    async def main() -> None:
        p = AIOKafkaProducer(
            bootstrap_servers=run.bootstrap,
            enable_idempotence=True,
            linger_ms=5,
            retry_backoff_ms=20,
            request_timeout_ms=10000,
        )
        await p.start()
        try:
            i = 0
            pending: list[tuple[bytes, asyncio.Future[Any]]] = []
            while not run.stop_producing.is_set() and i < 1_000_000:
                v = f"aiokafka-{i}".encode()
                pending.append((v, await p.send(TOPIC, key=str(i % 31).encode(), value=v)))
                i += 1
                if i % 10 == 0:
                    await asyncio.sleep(0.01)
            for v, fut in pending:
                try:
                    await asyncio.wait_for(fut, 30)
                except Exception:  # not acknowledged: allowed to be missing
                    continue
                with run.lock:
                    run.acked["aiokafka"].add(v)
        finally:
            await p.stop()

    asyncio.run(main())


def _consume_until_done(run: Run, client: str, poll: Callable[[], list[bytes]]) -> None:
    """Poll until told to stop (the test stops consumers once every group saw everything,
    or at the deadline)."""
    while not run.stop_consuming.is_set():
        got = poll()
        if got:
            with run.lock:
                run.seen[client].update(got)


def _confluent_consumer(run: Run, group: str) -> None:
    from confluent_kafka import Consumer

    c = Consumer(
        {
            "bootstrap.servers": run.bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 500,
        }
    )
    c.subscribe([TOPIC])
    try:

        def poll() -> list[bytes]:
            msgs = c.consume(500, 0.1)
            return [m.value() for m in msgs if m.error() is None]

        _consume_until_done(run, "confluent", poll)
    finally:
        c.close()


def _kafka_python_consumer(run: Run, group: str) -> None:
    from kafka import KafkaConsumer

    c = KafkaConsumer(
        TOPIC,
        bootstrap_servers=run.bootstrap,
        group_id=group,
        auto_offset_reset="earliest",
        session_timeout_ms=6000,
        heartbeat_interval_ms=500,
    )
    try:

        def poll() -> list[bytes]:
            batches = c.poll(timeout_ms=100)
            return [r.value for rs in batches.values() for r in rs]

        _consume_until_done(run, "kafka-python", poll)
    finally:
        c.close()


def _aiokafka_consumer(run: Run, group: str) -> None:
    from aiokafka import AIOKafkaConsumer

    async def main() -> None:
        c = AIOKafkaConsumer(
            TOPIC,
            bootstrap_servers=run.bootstrap,
            group_id=group,
            auto_offset_reset="earliest",
            session_timeout_ms=6000,
            heartbeat_interval_ms=500,
        )
        await c.start()
        try:
            while not run.stop_consuming.is_set():
                batches = await c.getmany(timeout_ms=100)
                got = [r.value for rs in batches.values() for r in rs]
                if got:
                    with run.lock:
                        run.seen["aiokafka"].update(got)
        finally:
            await c.stop()

    asyncio.run(main())


def soak(seconds: float, seed: int) -> dict[str, Any]:
    threads_before = threading.active_count()
    fds_before = _fds()
    with mockkafka.Cluster(brokers=3) as cluster:
        cluster.create_topic(TOPIC, partitions=PARTITIONS, replication_factor=3)
        tasks_before = _trio_tasks(cluster)
        rules = _fault_plan(cluster, seed)
        run = Run(cluster, seconds)
        producers = [
            threading.Thread(target=run.guard(lambda f=f: f(run)), name=f"soak-{f.__name__}")
            for f in (_confluent_producer, _kafka_python_producer, _aiokafka_producer)
        ]
        consumers = []
        for fn, members in (
            (_confluent_consumer, 2),
            (_kafka_python_consumer, 2),
            (_aiokafka_consumer, 1),
        ):
            group = f"soak-{fn.__name__}"
            for _ in range(members):
                consumers.append(
                    threading.Thread(target=run.guard(lambda fn=fn, g=group: fn(run, g)))
                )
        t0 = time.monotonic()
        for t in producers + consumers:
            t.start()
        rng = random.Random(seed)
        moves = 0
        while time.monotonic() - t0 < seconds:
            time.sleep(min(0.7, max(0.0, seconds - (time.monotonic() - t0))))
            part = rng.randrange(PARTITIONS)
            leader = cluster.topic(TOPIC).partition(part).leader
            cluster.move_leader(TOPIC, part, to=rng.choice([b for b in (1, 2, 3) if b != leader]))
            moves += 1
        run.stop_producing.set()
        for t in producers:
            t.join(90)
        acked = run.all_acked()
        for r in rules:
            r.remove()
        # Consumers get a bounded grace period to catch up with everything acknowledged.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with run.lock:
                if all(acked <= s for s in run.seen.values()):
                    break
            time.sleep(0.1)
        run.stop_consuming.set()
        for t in consumers:
            t.join(60)
        assert not any(t.is_alive() for t in producers + consumers), "a client thread hung"
        assert run.errors == [], run.errors
        elapsed = time.monotonic() - t0

        values = [r.value for r in cluster.topic(TOPIC).records()]
        in_log = set(values)
        lost = acked - in_log
        dups = len(values) - len(in_log)
        assert not lost, f"{len(lost)} acknowledged messages lost, e.g. {sorted(lost)[:5]}"
        if dups:
            from collections import Counter

            twice = [v for v, n in Counter(values).items() if n > 1]
            raise AssertionError(
                f"{dups} duplicates in the log of idempotent producers: {twice[:10]}"
            )
        where = {r.value: p.partition for p in cluster.topic(TOPIC).partitions for r in p.records()}
        for client, seen in run.seen.items():
            missing = acked - seen
            if missing:
                from collections import Counter

                by_part = Counter(where.get(v) for v in missing)
                hw = [p.high_watermark for p in cluster.topic(TOPIC).partitions]
                raise AssertionError(
                    f"the {client} group missed {len(missing)} messages; by partition "
                    f"{dict(by_part)}; high watermarks {hw}\n{cluster.traffic.timeline(60)}"
                )

        deadline = time.monotonic() + 10
        while _own_connections(cluster) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _own_connections(cluster) == {}, "connections left open on the broker"
        # A connection from another process costs one task; it is not this test's leak.
        foreign = len(cluster._server.connections)
        tasks_after = _trio_tasks(cluster)
        assert tasks_after <= tasks_before + foreign, (
            f"broker tasks {tasks_before} -> {tasks_after}"
        )
        assert cluster.broker_errors == []
        fired = sum(r.fired for r in rules)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and (
        threading.active_count() > threads_before or _fds() > fds_before + 3
    ):
        time.sleep(0.1)
    assert threading.active_count() <= threads_before, "threads left behind"
    assert _fds() <= fds_before + 3, f"fds {fds_before} -> {_fds()}"
    figures = {
        "seconds": round(elapsed, 1),
        "acknowledged": len(acked),
        "in_log": len(values),
        "consumed_per_group": {c: len(s) for c, s in run.seen.items()},
        "faults_fired": fired,
        "leader_moves": moves,
    }
    print(f"soak figures: {figures}")
    return figures


@pytest.mark.timeout(300)
def test_soak_short() -> None:
    figures = soak(4.0, seed=14)
    assert figures["acknowledged"] > 100
    assert figures["faults_fired"] > 0


@pytest.mark.slow
@pytest.mark.timeout(7200)
@pytest.mark.skipif(
    not os.environ.get("MOCKKAFKA_SOAK_SECONDS"),
    reason="set MOCKKAFKA_SOAK_SECONDS=N to run the long soak",
)
def test_soak_long() -> None:
    seconds = float(os.environ["MOCKKAFKA_SOAK_SECONDS"])
    figures = soak(seconds, seed=int(os.environ.get("MOCKKAFKA_SOAK_SEED", "1")))
    assert figures["acknowledged"] > 0

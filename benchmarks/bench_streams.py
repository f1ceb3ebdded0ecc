"""A Kafka Streams word count end to end: mockkafka beside Apache Kafka itself, same run.

    python benchmarks/bench_streams.py            # 20,000 lines per target, 3 repetitions
    python benchmarks/bench_streams.py --quick    # 2,000 lines, 1 repetition

The application is the Java tier's (``tests/interop/java/streams-src/StreamsInterop.java``):
a Kafka Streams 4.4 word count with ``group.protocol=streams`` (KIP-1071), so the broker
assigns its tasks and creates its repartition and changelog topics. For each target -- a
``mockkafka.Cluster`` and a real Apache Kafka 4.4 broker (one KRaft node,
``mockkafka.kafka_broker``) -- the benchmark starts the application, waits until a first
small batch has been counted (the JVM is up and the group is running), then produces N lines
with confluent-kafka and times until the output topic holds the final count of every word,
read back by a consumer. Figures: lines/s and words/s through the whole topology (source,
repartition, count with its changelog, sink), and the time from starting the application to
its first output. Targets that cannot run (no Java or Maven, jars not resolved) print why.
"""

from __future__ import annotations

import argparse
import collections
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

WORDS = ("kafka", "streams", "group", "task", "topic", "broker", "offset", "epoch", "log")
TIMEOUT_S = 300.0


def lines(n: int, seed: int) -> list[tuple[bytes, bytes]]:
    out = []
    for i in range(n):
        words = [WORDS[(seed + i * 7 + j * 3) % len(WORDS)] for j in range(1 + i % 4)]
        out.append((f"{seed}-{i}".encode(), " ".join(words).encode()))
    return out


def produce(bootstrap: str, batch: list[tuple[bytes, bytes]]) -> collections.Counter[str]:
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    counts: collections.Counter[str] = collections.Counter()
    for key, value in batch:
        p.produce("lines", value, key=key)
        counts.update(value.decode().split())
    assert p.flush(60) == 0
    return counts


class Counts:
    """A consumer of the output topic keeping the latest count per word."""

    def __init__(self, bootstrap: str) -> None:
        from confluent_kafka import Consumer

        self.latest: dict[str, int] = {}
        self.consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": f"bench-reader-{uuid.uuid4().hex[:8]}",
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
                "topic.metadata.refresh.interval.ms": 500,
            }
        )
        self.consumer.subscribe(["counts"])

    def wait_for(self, expected: dict[str, int], deadline: float) -> bool:
        while time.monotonic() < deadline:
            for msg in self.consumer.consume(1000, 0.2):
                if msg.error() is None and msg.key() is not None:
                    self.latest[msg.key().decode()] = int(msg.value().decode())
            if self.latest == expected:
                return True
        return False

    def close(self) -> None:
        self.consumer.close()


@contextmanager
def fake() -> Iterator[str]:
    import mockkafka

    with mockkafka.Cluster() as cluster:
        cluster.create_topic("lines", partitions=2)
        yield cluster.bootstrap_servers


@contextmanager
def real_kafka() -> Iterator[str]:
    from confluent_kafka.admin import AdminClient, NewTopic

    from mockkafka.kafka_broker import KafkaBroker

    with KafkaBroker() as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
        for f in admin.create_topics([NewTopic("lines", 2, 1)]).values():
            f.result(30)
        yield broker.bootstrap_servers


def run_once(
    command: tuple[str, ...], target: Callable[[], object], n: int, seed: int
) -> tuple[float, float, int]:
    """(seconds for n lines end to end, seconds from start to first output, words)."""
    with target() as bootstrap, tempfile.TemporaryFile("w+") as log:  # type: ignore[attr-defined]
        java, *rest = command
        app = subprocess.Popen(
            [
                java,
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                *rest,
                bootstrap,
                f"bench-{uuid.uuid4().hex[:8]}",
                "lines",
                "counts",
                str(int(TIMEOUT_S)),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=log,
            text=True,
        )
        reader = Counts(bootstrap)
        try:
            started = time.monotonic()
            expected = produce(bootstrap, lines(20, seed))
            if not reader.wait_for(dict(expected), started + TIMEOUT_S):
                log.seek(0)
                raise RuntimeError(f"warm-up batch never counted:\n{log.read()[-2000:]}")
            first = time.monotonic() - started
            t0 = time.monotonic()
            expected += produce(bootstrap, lines(n, seed + 1))
            if not reader.wait_for(dict(expected), t0 + TIMEOUT_S):
                raise RuntimeError("the counts never completed")
            return time.monotonic() - t0, first, sum(expected.values())
        finally:
            reader.close()
            app.communicate(input="", timeout=60)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--lines", type=int, default=20_000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="2,000 lines, 1 repetition")
    args = ap.parse_args()
    if args.quick:
        args.lines, args.reps = 2_000, 1
    try:
        from tests.interop._build import build_java_streams

        program = build_java_streams("4.4.0")
    except BaseException as exc:  # pytest.skip outside pytest: the reason is the message
        print(f"bench_streams: the Kafka Streams application cannot be built: {exc}")
        return 0
    targets: dict[str, Callable[[], object]] = {"mockkafka": fake, "Apache Kafka 4.4.0": real_kafka}
    rows: dict[str, list[tuple[float, float, int]]] = {name: [] for name in targets}
    problems: dict[str, str] = {}
    for rep in range(args.reps):
        for name, target in targets.items():
            if name in problems:
                continue
            try:
                rows[name].append(run_once(program.command, target, args.lines, seed=rep * 100))
            except Exception as exc:
                problems[name] = f"{type(exc).__name__}: {exc}"
    print(f"Kafka Streams word count, {args.lines:,} lines per run, {args.reps} repetition(s)")
    print(f"{'target':<22} {'lines/s':>10} {'words/s':>10} {'to first output s':>18}")
    medians: dict[str, float] = {}
    for name, runs in rows.items():
        if not runs:
            print(f"{name:<22} not measured: {problems.get(name, 'no run')}")
            continue
        secs = statistics.median(r[0] for r in runs)
        first = statistics.median(r[1] for r in runs)
        words = statistics.median(r[2] for r in runs)
        medians[name] = args.lines / secs
        print(f"{name:<22} {args.lines / secs:>10,.0f} {words / secs:>10,.0f} {first:>18.2f}")
    if len(medians) == 2:
        fake_rate, kafka_rate = medians["mockkafka"], medians["Apache Kafka 4.4.0"]
        print(f"ratio mockkafka / Apache Kafka (lines/s): {fake_rate / kafka_rate:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

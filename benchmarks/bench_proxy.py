"""What the proxy costs: a real Apache Kafka broker directly, through ``mockkafka.Proxy`` with
no rules, and through it with 100 rules, in the same run.

    python benchmarks/bench_proxy.py            # 200,000 x 100 B, 1,000 round trips, 3 reps
    python benchmarks/bench_proxy.py --quick    # 20,000 x 100 B, 200 round trips, 1 rep
    python benchmarks/bench_proxy.py --figure round-trip   # one figure: round-trip,
                                                           # produce or consume

One Apache Kafka 4.4 broker (one KRaft node, ``mockkafka.kafka_broker``) is the upstream. The
same confluent-kafka client drives each path in turn: produce N x 100 B (acks=all,
linger.ms=5, 6 partitions) until ``flush()``; consume them all from the beginning; and the
round trip of one ``produce()`` + ``flush()`` (linger.ms=0), p50 and p99. The 100 rules match
a topic the benchmark never uses, so they cost their matching on every request and fire
never: the price of a rule set a test leaves installed. Ratios are proxy / direct (above 1:
the proxy is slower). Needs Java and Maven for the broker; prints why otherwise.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

PARTITIONS = 6


def produce(bootstrap: str, topic: str, n: int) -> float:
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "acks": "all"})
    payload = b"x" * 100
    t0 = time.perf_counter()
    for i in range(n):
        while True:
            try:
                p.produce(topic, payload)
                break
            except BufferError:
                p.poll(0.01)
        if i % 10_000 == 0:
            p.poll(0)
    assert p.flush(120) == 0
    return n / (time.perf_counter() - t0)


def consume(bootstrap: str, topic: str, n: int) -> float:
    from confluent_kafka import Consumer

    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"bench-{uuid.uuid4().hex[:6]}",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    c.subscribe([topic])
    got = 0
    t0 = time.perf_counter()
    deadline = time.monotonic() + 120
    while got < n and time.monotonic() < deadline:
        for m in c.consume(10_000, 0.5):
            if m.error() is None:
                got += 1
    elapsed = time.perf_counter() - t0
    c.close()
    if got < n:
        raise RuntimeError(f"consumed {got} of {n}")
    return n / elapsed


def round_trips(bootstrap: str, topic: str, count: int) -> tuple[float, float]:
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0, "acks": "all"})
    p.produce(topic, b"warm")
    p.flush(30)
    times = []
    for _ in range(count):
        t0 = time.perf_counter()
        p.produce(topic, b"x" * 100)
        p.flush(30)
        times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    return times[len(times) // 2], times[int(len(times) * 0.99) - 1]


def create_topic(bootstrap: str, topic: str) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(topic, PARTITIONS, 1)]).values():
        f.result(30)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--messages", type=int, default=200_000)
    ap.add_argument("--round-trips", type=int, default=1000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument(
        "--figure",
        choices=("all", "round-trip", "produce", "consume"),
        default="all",
        help="measure one figure only (consume writes its records untimed first)",
    )
    args = ap.parse_args()
    want = {"all": {"round-trip", "produce", "consume"}}.get(args.figure, {args.figure})
    if args.quick:
        args.messages, args.round_trips, args.reps = 20_000, 200, 1
    import mockkafka
    from mockkafka.kafka_broker import KafkaBroker, KafkaUnavailable

    try:
        broker = KafkaBroker().start()
    except KafkaUnavailable as exc:
        print(f"bench_proxy: no Apache Kafka broker: {exc}")
        return 0
    try:

        @contextmanager
        def direct() -> Iterator[str]:
            yield broker.bootstrap_servers

        @contextmanager
        def proxy(rules: int) -> Iterator[str]:
            with mockkafka.Proxy(upstream=broker.bootstrap_servers) as px:
                for i in range(rules):
                    px.faults.on("*", topic=f"never-{i}").error("NOT_LEADER_OR_FOLLOWER")
                yield px.bootstrap_servers
                px.faults.clear()  # they were meant never to fire

        paths: dict[str, Callable[[], AbstractContextManager[str]]] = {
            "direct": direct,
            "proxy, no rules": lambda: proxy(0),
            "proxy, 100 rules": lambda: proxy(100),
        }
        figures: dict[str, dict[str, list[float]]] = {name: {} for name in paths}
        # Warm the broker's JIT first: a cold JVM makes whichever path runs first look slow.
        warm = f"bench-warm-{uuid.uuid4().hex[:6]}"
        create_topic(broker.bootstrap_servers, warm)
        produce(broker.bootstrap_servers, warm, args.messages)
        if "consume" in want:
            consume(broker.bootstrap_servers, warm, args.messages)
        if "round-trip" in want:
            round_trips(broker.bootstrap_servers, warm, args.round_trips)
        order = list(paths.items())
        for rep in range(args.reps):
            for name, path in order[rep % 3 :] + order[: rep % 3]:  # rotate the order
                with path() as bootstrap:
                    topic = f"bench-{uuid.uuid4().hex[:8]}"
                    create_topic(bootstrap, topic)
                    row = figures[name]
                    if want & {"produce", "consume"}:
                        rate = produce(bootstrap, topic, args.messages)
                        if "produce" in want:
                            row.setdefault("produce msg/s", []).append(rate)
                    if "consume" in want:
                        row.setdefault("consume msg/s", []).append(
                            consume(bootstrap, topic, args.messages)
                        )
                    if "round-trip" in want:
                        p50, p99 = round_trips(bootstrap, topic, args.round_trips)
                        row.setdefault("round trip p50 ms", []).append(p50)
                        row.setdefault("round trip p99 ms", []).append(p99)
    finally:
        broker.stop()
    print(
        f"Apache Kafka 4.4 direct and through mockkafka.Proxy: {args.messages:,} x 100 B, "
        f"{args.round_trips} round trips, {args.reps} rep(s), medians"
    )
    names = list(paths)
    print(
        f"{'figure':<20}"
        + "".join(f"{n:>18}" for n in names)
        + f"{'ratio 0 rules':>15}{'ratio 100':>11}"
    )
    for figure in figures["direct"]:
        med = [statistics.median(figures[n][figure]) for n in names]
        fmt = (lambda v: f"{v:>18,.0f}") if "msg/s" in figure else (lambda v: f"{v:>18.3f}")
        # Ratio: how many times the direct path's figure the proxy costs (time, or 1/rate).
        r = [(med[0] / m if "msg/s" in figure else m / med[0]) for m in med[1:]]
        print(f"{figure:<20}" + "".join(fmt(v) for v in med) + f"{r[0]:>15.2f}{r[1]:>11.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What a scenario costs before the first client request: loading and checking a file, and
writing its seed data.

Run ``python benchmarks/bench_scenarios.py`` (about 5 s). Prints, best of ``--rounds``:

- load + check (YAML, JSON Schema, model, faker templates) of each library scenario, in ms,
  and of the whole library;
- ``Scenario.start`` on a started 3-broker cluster for a 6-partition topic seeded with N
  faker records (``--records``, default 10,000): records/s, the faker templates included;
- a scenario step reaching the cluster: ``after: {requests: ...}`` from the request that
  satisfies it to the verb applied (the step's reaction time), median over 20 rounds.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import mockkafka
from mockkafka.scenario.loader import library
from mockkafka.scenario.model import load_text

SEEDED = """
name: seeded
cluster: {{brokers: 3}}
topics: {{orders: {{partitions: 6, replication_factor: 3}}}}
seed:
  orders: {{count: {n}, key: "{{{{ faker.uuid4 }}}}", value: {{faker: json, fields: {{name: name, email: email}}}}}}
"""

REACT = """
name: react
topics: {t: {}}
steps:
  - after: {requests: {api: CreatePartitions, count: 1}}
    move_leader: {topic: t, partition: 0, to: 1}
"""


def best(fn: object, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--records", type=int, default=10_000)
    args = ap.parse_args()

    texts = {name: path.read_text() for name, path in sorted(library().items())}
    load_text(next(iter(texts.values())))  # warm: imports, schema, faker
    print(f"{'library scenario':<34} {'load+check ms':>14}")
    total = 0.0
    for name, text in texts.items():
        t = best(lambda text=text: load_text(text), args.rounds)
        total += t
        print(f"{name:<34} {t * 1000:>14.2f}")
    print(f"{'whole library (' + str(len(texts)) + ')':<34} {total * 1000:>14.2f}")

    sc = load_text(SEEDED.format(n=args.records))
    with mockkafka.Cluster(brokers=3) as c:
        t0 = time.perf_counter()
        sc.start(c).wait(10)
        dt = time.perf_counter() - t0
    print(f"\nseed {args.records} faker records: {dt:.2f} s, {args.records / dt:,.0f} records/s")

    from confluent_kafka.admin import AdminClient, NewPartitions

    react = load_text(REACT)
    delays = []
    with mockkafka.Cluster() as c:
        admin = AdminClient({"bootstrap.servers": c.bootstrap_servers, "log_level": 0})
        for i in range(20):
            c.reset()
            run = react.start(c)
            epoch = c.topic("t").partitions[0].leader_epoch
            t0 = time.perf_counter()
            admin.create_partitions([NewPartitions("t", 2 + i % 1)])["t"].result(10)
            for _ in range(10_000):
                if c.topic("t").partitions[0].leader_epoch > epoch:
                    break
                time.sleep(0.0002)
            delays.append(time.perf_counter() - t0)
            run.stop()
    print(
        f"step reaction (request answered -> verb applied, incl. the admin round trip): "
        f"median {statistics.median(delays) * 1000:.1f} ms, max {max(delays) * 1000:.1f} ms"
    )


if __name__ == "__main__":
    main()

"""The oracle tier's cost: a real Apache Kafka broker's start beside mockkafka's, the same
differential sessions on each, and the whole ``kafka_oracle`` test tier, in one run.

    python benchmarks/bench_oracle.py [--starts 3] [--no-tier]

* start: ``KafkaBroker().start()`` (storage format + JVM start + first Metadata answer)
  against ``mockkafka.Cluster().start()``, median of ``--starts``;
* sessions: every differential session (``tests/oracle/sessions.py``) against each broker;
* tier: ``python -m pytest -m kafka_oracle`` in a subprocess (serial, 600 s bound), unless
  ``--no-tier``.

Needs Java 17+ and Maven (the broker jars are fetched once into ``~/.m2``).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import mockkafka  # noqa: E402
from mockkafka.kafka_broker import KafkaBroker  # noqa: E402
from tests.oracle.differential import common_versions  # noqa: E402
from tests.oracle.harness import run_session  # noqa: E402
from tests.oracle.sessions import HANDWRITTEN, sweep_sessions, versioned_sessions  # noqa: E402


def _port(cluster: mockkafka.Cluster) -> int:
    return int(cluster.bootstrap_servers.split(",")[0].rsplit(":", 1)[1])


def starts(n: int) -> tuple[list[float], list[float]]:
    kafka, fake = [], []
    for _ in range(n):
        t0 = time.perf_counter()
        broker = KafkaBroker().start()
        kafka.append(time.perf_counter() - t0)
        broker.stop()
        t0 = time.perf_counter()
        cluster = mockkafka.Cluster().start()
        fake.append(time.perf_counter() - t0)
        cluster.stop()
    return kafka, fake


def sessions() -> tuple[float, float, int]:
    with KafkaBroker() as kafka, mockkafka.Cluster() as fake:
        versions = common_versions(_port(fake), kafka.port)
        todo = {**sweep_sessions(versions), **versioned_sessions(versions), **HANDWRITTEN}
        exchanges = 0
        t0 = time.perf_counter()
        for name, session in todo.items():
            exchanges += len(run_session(_port(fake), name, session))
        on_fake = time.perf_counter() - t0
        t0 = time.perf_counter()
        for name, session in todo.items():
            run_session(kafka.port, name, session)
        on_kafka = time.perf_counter() - t0
    return on_fake, on_kafka, exchanges


def tier() -> tuple[float, str]:
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "kafka_oracle"]
    t0 = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600)
        summary = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else "no output"
    except subprocess.TimeoutExpired:
        summary = "stopped at 600 s"
    return time.monotonic() - t0, summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=3)
    parser.add_argument("--no-tier", action="store_true")
    args = parser.parse_args()
    kafka, fake = starts(max(1, min(args.starts, 10)))
    print(
        f"start: Apache Kafka {statistics.median(kafka):.2f} s (runs {', '.join(f'{x:.2f}' for x in kafka)}); "
        f"mockkafka {statistics.median(fake) * 1000:.1f} ms"
    )
    on_fake, on_kafka, n = sessions()
    print(
        f"differential sessions ({n} exchanges): mockkafka {on_fake:.1f} s, Apache Kafka {on_kafka:.1f} s"
    )
    if not args.no_tier:
        wall, summary = tier()
        print(f"kafka_oracle tier (pytest -m kafka_oracle, serial): {wall:.1f} s -- {summary}")


if __name__ == "__main__":
    main()

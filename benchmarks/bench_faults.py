"""What the fault stage of dispatch costs per request: broker CPU per Produce, by rule set.

A raw client (blocking socket, frames encoded once up front, responses read without
decoding, as ``bench_requests.py``) sends Produce v9 requests of one 100-byte record one at
a time to an in-process 1-broker cluster and waits for each answer. The broker thread's CPU
time (from /proc, Linux only) divided by the requests is the cost of dispatching one
request; the cases differ only in the fault rules the cluster holds:

    python benchmarks/bench_faults.py --case none        # no rules
    python benchmarks/bench_faults.py --case nonmatching # 100 rules on other topics
    python benchmarks/bench_faults.py --case some        # 100 rules, 10 of them observe
                                                         # every Produce to the topic
    python benchmarks/bench_faults.py                    # all three, one after the other

``--traffic`` records traffic as the pytest fixture does (off by default: the fault stage
alone). Prints the median over ``--rounds`` of broker CPU and wall time per request.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import mockkafka  # noqa: E402

sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_requests import produce_cost  # noqa: E402


def _no_rules(cluster: mockkafka.Cluster) -> None:
    return None


def _nonmatching(cluster: mockkafka.Cluster) -> None:
    for i in range(100):
        cluster.faults.on("Produce", topic=f"other-{i}").every_time().delay(ms=1)


def _some_matching(cluster: mockkafka.Cluster) -> None:
    for i in range(90):
        cluster.faults.on("Produce", topic=f"other-{i}").every_time().delay(ms=1)
    for _ in range(10):
        cluster.faults.on("Produce", topic="t").every_time().observe()


CASES: dict[str, tuple[str, Callable[[mockkafka.Cluster], None]]] = {
    "none": ("no rules", _no_rules),
    "nonmatching": ("100 non-matching rules", _nonmatching),
    "some": ("100 rules, 10 matching", _some_matching),
}


def one_round(
    requests: int, setup: Callable[[mockkafka.Cluster], None], traffic: bool
) -> tuple[float, float]:
    """(broker CPU us, wall us) per Produce request under the rules ``setup`` adds."""
    with mockkafka.Cluster(brokers=1, record_traffic=traffic) as cluster:
        cluster.create_topic("t", partitions=1, replication_factor=1)
        setup(cluster)
        try:
            return produce_cost(cluster, requests, who="bench_faults")
        finally:
            cluster.faults.clear()  # never-fired rules are the point here, not a test failure


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--case", choices=[*CASES, "all"], default="all")
    ap.add_argument("--requests", type=int, default=3000, help="requests per round (3000)")
    ap.add_argument("--rounds", type=int, default=5, help="rounds; medians are printed (5)")
    ap.add_argument("--traffic", action="store_true", help="record traffic (as the fixture)")
    args = ap.parse_args(argv)
    chosen = list(CASES) if args.case == "all" else [args.case]
    print(f"{'rules':<24} {'broker CPU us/req':>18} {'wall us/req':>12}")
    for key in chosen:
        label, setup = CASES[key]
        cpu, wall = zip(
            *(one_round(args.requests, setup, args.traffic) for _ in range(args.rounds)),
            strict=True,
        )
        print(f"{label:<24} {statistics.median(cpu):>18.1f} {statistics.median(wall):>12.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

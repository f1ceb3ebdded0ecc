"""How fast property-based fuzzing runs: examples per second.

Run ``python benchmarks/bench_fuzz.py`` (``--examples N``, default 100; about 30 s).

Rows, each the wall time of N hypothesis examples (database off, derandomized):

- ``fault_plans()`` draws: drawing a plan only (the strategy's own cost).
- ``ClusterStateMachine``, no client: a fresh 1-broker cluster per example, up to 10 steps
  of drawn faults and verbs with the cluster invariants checked after each (the harness's
  own cost).
- ``ClusterStateMachine`` + confluent-kafka idempotent producer: the same, with a real
  producer producing and flushing on its rules (what a user's state machine pays).
- ``examples/fuzz_worker`` property: a fresh cluster, a drawn plan of up to 3 faults and the
  fixed billing worker (a consumer group member and a producer) run to completion.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples" / "fuzz_worker"))

from confluent_kafka import Producer
from hypothesis import given, settings
from hypothesis.stateful import rule, run_state_machine_as_test

from mockkafka.stateful import ClusterStateMachine
from mockkafka.strategies import FaultPlan, fault_plans


class Bare(ClusterStateMachine):
    brokers = 2

    @rule()
    def produce(self) -> None:
        self.cluster.produce("orders", b"x")


class WithProducer(ClusterStateMachine):
    fault_apis = ("Produce", "Metadata")
    fault_errors = ("NOT_LEADER_OR_FOLLOWER", "REQUEST_TIMED_OUT")

    def __init__(self) -> None:
        super().__init__()
        conf = {"bootstrap.servers": self.cluster.bootstrap_servers, "log_level": 0}
        self.producer = Producer({**conf, "enable.idempotence": True, "retry.backoff.ms": 10})

    @rule()
    def produce(self) -> None:
        self.producer.produce("orders", b"x")
        self.producer.flush(10)

    def teardown(self) -> None:
        self.producer.flush(1)
        super().teardown()


def timed(n: int, fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=100)
    n = parser.parse_args().examples
    opts = settings(
        max_examples=n, stateful_step_count=10, deadline=None, database=None, derandomize=True
    )

    @opts
    @given(plan=fault_plans(topics={"orders": 2}, groups=["g"], brokers=3))
    def draw(plan: FaultPlan) -> None:
        pass

    import test_worker

    @opts
    @given(plan=test_worker.PLANS)
    def worker(plan: FaultPlan) -> None:
        test_worker.check_every_order_invoiced(plan)

    rows = [
        ("fault_plans() draws", lambda: draw()),
        ("ClusterStateMachine, no client", lambda: run_state_machine_as_test(Bare, settings=opts)),
        (
            "ClusterStateMachine + idempotent producer",
            lambda: run_state_machine_as_test(WithProducer, settings=opts),
        ),
        ("examples/fuzz_worker property", lambda: worker()),
    ]
    print(f"{'case':45} {'examples':>8} {'seconds':>8} {'examples/s':>10}")
    for name, fn in rows:
        s = timed(n, fn)
        print(f"{name:45} {n:8d} {s:8.2f} {n / s:10.1f}")


if __name__ == "__main__":
    main()

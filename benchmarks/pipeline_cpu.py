"""Where a pipeline's broker CPU goes, per API and per stage of the connection loop.

    python benchmarks/pipeline_cpu.py                                  # group-eager, 500,000
    python benchmarks/pipeline_cpu.py --variant txn -n 300000
    python benchmarks/pipeline_cpu.py --variant group-consumer --by-stage

Runs the broker as ``mockkafka serve --brokers 3`` does (same options, traffic recorded,
``gc.freeze()``), on this process's trio loop, and the franz-go pipeline of
``bench_pipeline.py`` against it. A trio instrument reads the thread's CPU clock at every
task step, and wrappers around the connection loop's ``dispatch`` and ``flush`` split a
connection task's steps into: reading and decoding frames, each API's dispatch (with
``--by-stage``: its gates, traffic, handler, resumes after a park and finish), and writing
answers; the other tasks (parked requests' watchers, timers, the control endpoint) are
counted by task name, and what no task step holds is trio's own loop (epoll, scheduling).
Also printed: the broker thread's time waiting for a core (``/proc`` schedstat), which on a
loaded 2-core machine is time the pipeline's clients took.

Instrumentation adds ~1 us per task step and per wrapped call: read the shares, compare runs
of this script with each other, and take wall figures from ``bench_pipeline.py``. Bounded:
one run, ``--timeout`` (120 s). Needs Go (the pipeline program is built as for
``bench_pipeline.py``); only 127.0.0.1 is used.
"""

from __future__ import annotations

import argparse
import gc
import inspect
import json
import subprocess
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import peers  # noqa: E402
import trio  # noqa: E402

from mockkafka import cli, open_cluster  # noqa: E402
from mockkafka.protocol import framing  # noqa: E402
from mockkafka.protocol.apis import API_BY_KEY  # noqa: E402
from mockkafka.server import dispatch as dispatch_mod  # noqa: E402
from mockkafka.server import runtime  # noqa: E402

MAX_POLL = 500


class CpuBook(trio.abc.Instrument):
    """Thread CPU seconds by label: each task step is charged to its task's current label;
    the wrappers move a connection task between labels inside one step."""

    def __init__(self) -> None:
        self.cpu: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self.label: dict[Any, str] = {}
        self.mark = 0.0
        self.stepping = 0.0
        self.started = time.thread_time()

    def before_task_step(self, task: Any) -> None:
        self.mark = time.thread_time()

    def after_task_step(self, task: Any) -> None:
        now = time.thread_time()
        label = self.label.get(task)
        if label is None:
            label = "task " + task.name.rsplit(".", 1)[-1]
        self.cpu[label] += now - self.mark
        self.stepping += now - self.mark
        self.mark = now

    def switch(self, label: str) -> str:
        """Charge the step so far to the current task's label and go on as ``label``;
        returns the label it had."""
        task = trio.lowlevel.current_task()
        now = time.thread_time()
        old = self.label.get(task, "read frames")
        self.cpu[old] += now - self.mark
        self.stepping += now - self.mark
        self.mark = now
        self.label[task] = label
        return old


def instrument(book: CpuBook, by_stage: bool) -> None:
    """Wrap the connection loop's dispatch and flush (and, ``by_stage``, each stage)."""
    orig_dispatch = runtime.ClusterServer.dispatch
    orig_flush = runtime.ClusterServer.flush

    async def dispatch(self: Any, conn: Any, req: Any) -> Any:
        api = API_BY_KEY.get(req.header.api_key)
        name = api.name if api is not None else f"api {req.header.api_key}"
        book.calls[name] += 1
        old = book.switch(name)
        try:
            return await orig_dispatch(self, conn, req)
        finally:
            book.switch(old)

    async def flush(self: Any, conn: Any) -> None:
        old = book.switch("write answers")
        try:
            await orig_flush(self, conn)
        finally:
            book.switch(old)

    orig_next = framing.ServerConnection.next_event

    def next_event(self: Any) -> Any:
        old = book.switch("decode requests")
        try:
            return orig_next(self)
        finally:
            book.switch(old)

    framing.ServerConnection.next_event = next_event  # type: ignore[method-assign]
    runtime.ClusterServer.dispatch = dispatch  # type: ignore[method-assign]
    runtime.ClusterServer.flush = flush  # type: ignore[method-assign]
    if not by_stage:
        return

    def staged(stage: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def sync(d: Any, *a: Any) -> Any:
            task = trio.lowlevel.current_task()
            api = book.label.get(task, "?")
            old = book.switch(f"{api}: {stage}")
            try:
                return fn(d, *a)
            finally:
                book.switch(old)

        async def asynchronous(d: Any, *a: Any) -> Any:
            task = trio.lowlevel.current_task()
            api = book.label.get(task, "?")
            old = book.switch(f"{api}: {stage}")
            try:
                return await fn(d, *a)
            finally:
                book.switch(old)

        return asynchronous if inspect.iscoroutinefunction(fn) else sync

    for stage in ("version_gate", "authenticate", "authorize", "quotas", "finish"):
        setattr(dispatch_mod, stage, staged(stage, getattr(dispatch_mod, stage)))
    for stage in ("traffic", "faults_before", "_run", "faults_after"):
        setattr(dispatch_mod, stage, staged(stage, getattr(dispatch_mod, stage)))


def schedstat() -> tuple[float, float]:
    """(CPU seconds, seconds waiting for a core) of this thread, from /proc."""
    tid = threading.get_native_id()
    try:
        with open(f"/proc/self/task/{tid}/schedstat", encoding="ascii") as fp:
            run, wait, _ = fp.read().split()
    except OSError:
        return 0.0, 0.0
    return int(run) / 1e9, int(wait) / 1e9


async def measure(args: argparse.Namespace, binary: Path) -> dict[str, Any]:
    book = CpuBook()
    instrument(book, args.by_stage)
    parsed = cli.build_parser().parse_args(["serve", "--brokers", "3"])
    options = cli.cluster_options(parsed)
    async with open_cluster(**options) as cluster:
        gc.freeze()
        mode, _, balancer = args.variant.partition("-")
        cmd = [str(binary), "-bootstrap", cluster.bootstrap_servers, "-n", str(args.n)]
        cmd += ["-rf", "3", "-mode", mode, "-members", "2", "-max-poll", str(MAX_POLL)]
        cmd += ["-timeout", f"{args.timeout}s"] + (["-balancer", balancer] if balancer else [])
        book.label[trio.lowlevel.current_task()] = "this benchmark"
        book.mark = time.thread_time()
        trio.lowlevel.add_instrument(book)
        loop0, cpu0, wait0, wall0 = time.thread_time(), *schedstat(), time.monotonic()
        out = await trio.to_thread.run_sync(
            lambda: subprocess.run(
                cmd, capture_output=True, text=True, timeout=args.timeout + 30, check=False
            )
        )
        loop1, cpu1, wait1, wall1 = time.thread_time(), *schedstat(), time.monotonic()
        trio.lowlevel.remove_instrument(book)
    if out.returncode:
        raise SystemExit(f"pipeline_cpu: the pipeline failed: {out.stderr.strip()[-500:]}")
    return {
        "seconds": json.loads(out.stdout.strip().splitlines()[-1])["seconds"],
        "wall": wall1 - wall0,
        "thread_cpu": loop1 - loop0,
        "runqueue_wait": wait1 - wait0,
        "stepping": book.stepping,
        "cpu": dict(book.cpu),
        "calls": dict(book.calls),
        "sched_cpu": cpu1 - cpu0,
    }


def report(r: dict[str, Any], variant: str, n: int) -> None:
    total = r["thread_cpu"]
    print(
        f"franz-go {variant}, {n:,} records: pipeline {r['seconds']:.2f} s; broker thread "
        f"CPU {total:.2f} s, waiting for a core {r['runqueue_wait']:.2f} s, "
        f"of {r['wall']:.2f} s"
    )
    rows = sorted(r["cpu"].items(), key=lambda kv: -kv[1])
    rows.append(("trio loop (epoll, scheduling)", total - r["stepping"]))
    print(f"{'where':<40} {'CPU s':>7} {'share':>6} {'requests':>9} {'us/request':>11}")
    for label, cpu in rows:
        calls = r["calls"].get(label, 0)
        per = f"{cpu / calls * 1e6:11.0f}" if calls else f"{'':>11}"
        count = f"{calls:9,}" if calls else f"{'':>9}"
        print(f"{label:<40} {cpu:7.3f} {cpu / total:6.1%} {count} {per}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--variant",
        default="group-eager",
        choices=("group-eager", "group-cooperative", "group-consumer", "txn"),
    )
    ap.add_argument("-n", type=int, default=500_000, help="records (500,000)")
    ap.add_argument("--by-stage", action="store_true", help="split each API by dispatch stage")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds (120)")
    args = ap.parse_args(argv)
    binary = peers.pipeline_binary()
    if isinstance(binary, str):
        print(f"pipeline_cpu: {binary}", file=sys.stderr)
        return 2
    report(trio.run(measure, args, binary), args.variant, args.n)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Run the first-use tier: every (probe, client) in its own fresh interpreter, N times.

    python -m tests.first_use.run                 # each once
    python -m tests.first_use.run --repeat 5      # CI: 5 times each, no retries
    python -m tests.first_use.run --only 'wait_for_group*' --repeat 8 --shuffle 7
    python -m tests.first_use.run --list

Prints one line per finished run and then the table (item, client, k of N, the first
failure's last line); exits 1 when any run failed or overran its bound. A run that hangs
dumps every thread's stack (faulthandler, no GIL needed) a second before it is killed.
"""

from __future__ import annotations

import argparse
import fnmatch
import os
import random
import subprocess
import sys
import time
import traceback
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Outcome:
    item: str
    ok: bool
    seconds: float
    detail: str  # the failure's last line ("" when ok)
    output: str


def child(item_id: str) -> int:
    """Run one probe here (this interpreter is fresh) and report by exit code."""
    import faulthandler

    from tests.first_use.registry import find

    item = find(item_id)
    faulthandler.dump_traceback_later(max(item.seconds - 1.5, 1.0), exit=False)
    try:
        item.fn(item.client)
    except BaseException:
        traceback.print_exc()
        return 1
    return 0


def run_one(item_id: str, seconds: float) -> Outcome:
    started = time.monotonic()
    env = dict(os.environ)
    env.pop("PYTEST_XDIST_WORKER", None)
    env.pop("PYTEST_CURRENT_TEST", None)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "tests.first_use.run", "--child", item_id],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=seconds,
        )
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or "") + (e.stderr or "")
        if isinstance(out, bytes):
            out = out.decode(errors="replace")
        took = time.monotonic() - started
        return Outcome(item_id, False, took, f"hung: killed after {seconds:.0f} s", out)
    took = time.monotonic() - started
    out = proc.stdout + proc.stderr
    if proc.returncode == 0:
        return Outcome(item_id, True, took, "", out)
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    return Outcome(item_id, False, took, lines[-1] if lines else f"exit {proc.returncode}", out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.first_use.run", description=__doc__)
    ap.add_argument("--repeat", type=int, default=1, help="runs of each item (default 1)")
    ap.add_argument("--jobs", type=int, default=2, help="interpreters at once (default 2)")
    ap.add_argument("--only", action="append", help="glob over item ids (repeatable)")
    ap.add_argument("--shuffle", type=int, metavar="SEED", help="run in a random order")
    ap.add_argument(
        "--budget",
        type=float,
        metavar="SECONDS",
        help="start no run after this many seconds (the table counts the runs made)",
    )
    ap.add_argument("--list", action="store_true", help="list the items and exit")
    ap.add_argument("--verbose", action="store_true", help="print each failure's output")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return child(args.child)
    sys.path.insert(0, str(ROOT))
    from tests.first_use.registry import items

    chosen = [
        it for it in items() if not args.only or any(fnmatch.fnmatch(it.id, p) for p in args.only)
    ]
    if args.list:
        for it in chosen:
            print(it.id)
        return 0
    if not chosen:
        print("no item matches", args.only, file=sys.stderr)
        return 2
    # round by round: a run stopped by --budget has run every item as often as it could
    runs = [it for _ in range(args.repeat) for it in chosen]
    if args.shuffle is not None:
        random.Random(args.shuffle).shuffle(runs)
    started = time.monotonic()
    results: dict[str, list[Outcome]] = defaultdict(list)
    budget_end = None if args.budget is None else started + args.budget

    def bounded(item_id: str, seconds: float) -> Outcome | None:
        if budget_end is not None and time.monotonic() > budget_end:
            return None  # over the budget: not run
        return run_one(item_id, seconds)

    unrun = 0
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [pool.submit(bounded, it.id, it.seconds) for it in runs]
        for n, f in enumerate(futures, 1):
            o = f.result()
            if o is None:
                unrun += 1
                continue
            results[o.item].append(o)
            mark = "ok  " if o.ok else "FAIL"
            print(f"[{n}/{len(runs)}] {mark} {o.item} {o.seconds:.1f} s {o.detail}", flush=True)
            if not o.ok and args.verbose:
                print(o.output[-4000:], flush=True)
    if not args.verbose:  # the output of each failed run, so a rare failure can be read
        for got in results.values():
            for o in got:
                if not o.ok:
                    print(f"\n--- {o.item}: {o.detail}\n{o.output[-3000:]}", flush=True)
    failed = 0
    print(
        "\n| item | client | holds | slowest s | first failure |\n| --- | --- | ---: | ---: | --- |"
    )
    for it in chosen:
        got = results[it.id]
        if not got:
            print(f"| {it.name} | {it.client} | not run (budget) | | |")
            continue
        ok = sum(o.ok for o in got)
        failed += len(got) - ok
        first = next((o.detail for o in got if not o.ok), "")
        slowest = max(o.seconds for o in got)
        print(f"| {it.name} | {it.client} | {ok} of {len(got)} | {slowest:.1f} | {first} |")
    total = len(runs) - unrun
    print(
        f"\nfirst-use tier: {total - failed} passed, {failed} failed "
        f"({len(chosen)} items x {args.repeat}) in {time.monotonic() - started:.0f} s"
        + (f"; {unrun} run(s) not started: over the {args.budget:.0f} s budget" if unrun else "")
    )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())

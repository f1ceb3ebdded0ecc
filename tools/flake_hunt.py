"""Hunt flaky user-facing tests: run them N times, each time in a new pytest process (fresh
xdist workers) and a new random order, and report every test that ever failed.

Usage::

    python tools/flake_hunt.py --runs 10                      # the user-facing tests
    python tools/flake_hunt.py --runs 20 tests/interop/test_confluent.py -k group
    python tools/flake_hunt.py --runs 5 --seed 7 --per-run-timeout 900

The default paths are where users meet mockkafka: ``tests/interop`` (real clients over real
sockets), ``examples`` (the documented examples), ``tests/plugin`` (the pytest fixtures),
``tests/scenario`` (the scenario library) and ``tests/first_use`` (each promise in a fresh
interpreter). The order of each run is shuffled with ``--shuffle-seed`` (an option of the
project's root conftest.py; the seed of each run is printed, so a failing order can be
replayed with ``python -m pytest --shuffle-seed SEED ...``). No retries: one failure of a
test in any run is reported, with the run's seed and the failure's first line.

Ends with a table (test, failed k of N, seeds, first failure) and exits 1 when any test
failed, 0 otherwise.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
USER_FACING = ("tests/interop", "examples", "tests/plugin", "tests/scenario", "tests/first_use")


def failures(junit: Path) -> dict[str, str]:
    """{test id: first line of its failure or error} from a junit XML report."""
    out: dict[str, str] = {}
    if not junit.exists():
        return out
    for case in ET.parse(junit).getroot().iter("testcase"):
        for tag in ("failure", "error"):
            bad = case.find(tag)
            if bad is not None:
                name = f"{case.get('classname', '')}::{case.get('name', '')}"
                text = (bad.get("message") or bad.text or tag).strip().splitlines()
                out[name] = text[0][:200] if text else tag
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python tools/flake_hunt.py", description=__doc__)
    ap.add_argument("paths", nargs="*", help=f"test paths (default: {' '.join(USER_FACING)})")
    ap.add_argument("--runs", type=int, default=10, help="runs (default 10)")
    ap.add_argument("--seed", type=int, help="seed of the seeds (default: random)")
    ap.add_argument("-n", "--workers", default="2", help="xdist workers (default 2)")
    ap.add_argument("-k", dest="keyword", help="pytest -k expression")
    ap.add_argument(
        "--per-run-timeout", type=float, default=1800.0, help="seconds one run may take"
    )
    args = ap.parse_args(argv)
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    paths = args.paths or list(USER_FACING)
    master = random.Random(args.seed)
    failed: dict[str, list[tuple[int, str]]] = defaultdict(list)
    outcomes: list[str] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="flake-hunt-") as tmp:
        for run in range(1, args.runs + 1):
            seed = master.randrange(1 << 30)
            junit = Path(tmp) / f"run{run}.xml"
            cmd = [
                sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                "-n", args.workers, "--shuffle-seed", str(seed), f"--junitxml={junit}",
                *(["-k", args.keyword] if args.keyword else []), *paths,
            ]  # fmt: skip
            t0 = time.monotonic()
            try:
                proc = subprocess.run(
                    cmd, cwd=ROOT, capture_output=True, text=True, timeout=args.per_run_timeout
                )
                tail = (proc.stdout.strip().splitlines() or ["(no output)"])[-1]
            except subprocess.TimeoutExpired:
                tail = f"stopped at the {args.per_run_timeout:.0f} s bound"
                failed[f"(run {run} as a whole)"].append((seed, tail))
            line = f"run {run}/{args.runs} seed {seed}: {tail} ({time.monotonic() - t0:.0f} s)"
            outcomes.append(line)
            print(line, flush=True)
            for test, why in failures(junit).items():
                failed[test].append((seed, why))
                print(f"  failed: {test}: {why}", flush=True)
    print(f"\n{args.runs} runs of {' '.join(paths)} in {time.monotonic() - started:.0f} s")
    if not failed:
        print("no test failed in any run")
        return 0
    print("\n| test | failed | seeds | first failure |\n| --- | ---: | --- | --- |")
    for test, seen in sorted(failed.items()):
        seeds = ", ".join(str(s) for s, _ in seen)
        print(f"| {test} | {len(seen)} of {args.runs} | {seeds} | {seen[0][1]} |")
    return 1


if __name__ == "__main__":
    raise SystemExit(main())

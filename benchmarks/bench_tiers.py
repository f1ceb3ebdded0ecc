"""Wall time of the Spark, Java and Go test tiers, one pytest run each (serial, -p no:xdist).

    python benchmarks/bench_tiers.py [--tiers spark,java,go] [--extended]

Each tier runs as ``python -m pytest -m TIER`` in a subprocess with a 900 s bound and the
figure is its wall time, including the JVM start (Spark), the per-session build (Java: mvn
classpath + javac per client version; Go: go build) unless ``.cache/`` already holds it.
``--extended`` adds the Spark fault scenarios (``--run-spark-extended``).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TIMEOUT_S = 900


def run_tier(marker: str, extra: list[str]) -> tuple[float, str]:
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", marker]
    start = time.monotonic()
    try:
        proc = subprocess.run(
            [*cmd, *extra], cwd=REPO, capture_output=True, text=True, timeout=TIMEOUT_S
        )
        summary = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else "no output"
    except subprocess.TimeoutExpired:
        summary = f"stopped at {TIMEOUT_S} s"
    return time.monotonic() - start, summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiers", default="spark,java,go")
    parser.add_argument("--extended", action="store_true")
    args = parser.parse_args()
    print(f"{'tier':<16} {'wall s':>8}  result")
    for tier in args.tiers.split(","):
        extra = ["--run-spark-extended"] if tier == "spark" and args.extended else []
        seconds, summary = run_tier(tier, extra)
        print(f"{tier:<16} {seconds:>8.1f}  {summary}")


if __name__ == "__main__":
    main()

"""Maven for the JVM tiers: one ``mvn dependency:build-classpath`` runner.

Used by :mod:`mockkafka.spark` (Spark's Kafka connector) and :mod:`mockkafka.kafka_broker`
(the Apache Kafka broker): each writes a POM naming what it needs, and this resolves its
runtime classpath into a file, ``-o`` (offline) first when asked.
"""

from __future__ import annotations

import subprocess
from pathlib import Path


def run_mvn(pom_dir: Path, out: Path, *, offline: bool, timeout: float) -> str:
    """Run ``mvn dependency:build-classpath`` in ``pom_dir`` writing the runtime classpath to
    ``out``; returns '' on success, else mvn's complaint (its ERROR lines) for a message."""
    cmd = ["mvn", "-B", "-q", *(["-o"] if offline else [])]
    cmd += ["dependency:build-classpath", "-Dmdep.includeScope=runtime", f"-Dmdep.outputFile={out}"]
    try:
        proc = subprocess.run(
            cmd, cwd=pom_dir, capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return f"mvn timed out after {timeout:.0f} s"
    if proc.returncode == 0 and out.is_file():
        return ""
    lines = [ln for ln in (proc.stdout + proc.stderr).splitlines() if "ERROR" in ln]
    return "\n".join(lines[:6]) or f"mvn exited {proc.returncode}"

"""Spawn ``mockkafka serve --brokers 3`` from a checkout, read its ``bootstrap.servers=``
line, send one ApiVersions v0 request and exit on the answer: the harness that
``farm-bench`` times for "``serve`` start to the first answered request" (issue 28). The
first CreateTopics and Produce answers (issue 33) are timed by ``bench_startup.py
--serve-only`` (``first_answers.py``), whose ``--vs`` times two checkouts alternately.

    farm-bench -n 12 --vs 'python benchmarks/serve_first_answer.py /path/to/before' \\
        -- python benchmarks/serve_first_answer.py .

ROOT (default: this checkout) is put first on the child's ``PYTHONPATH``, so two checkouts
can be timed against each other with one virtualenv. Waits are bounded: the child is killed
after 30 s without an answer, and the harness then exits with status 1.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

TIMEOUT_S = 30.0


def main(argv: list[str]) -> int:
    root = str(Path(argv[0] if argv else Path(__file__).resolve().parent.parent).resolve())
    env = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}
    child = subprocess.Popen(
        [sys.executable, "-m", "mockkafka.cli", "serve", "--brokers", "3"],
        stdout=subprocess.PIPE,
        text=True,
        cwd=root,
        env=env,
    )
    killer = threading.Timer(TIMEOUT_S, child.kill)  # bounds the readline below
    killer.start()
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
        if not line.startswith("bootstrap.servers="):
            print(f"serve did not start: {line!r}", file=sys.stderr)
            return 1
        host, port = line.split("=", 1)[1].split(",")[0].strip().rsplit(":", 1)
        # ApiVersions v0: api key 18, version 0, correlation id 1, client id "b".
        body = (18).to_bytes(2, "big") + (0).to_bytes(2, "big") + (1).to_bytes(4, "big")
        body += (1).to_bytes(2, "big") + b"b"
        with socket.create_connection((host, int(port)), timeout=TIMEOUT_S) as s:
            s.sendall(len(body).to_bytes(4, "big") + body)
            if not s.recv(4):
                print("no answer", file=sys.stderr)
                return 1
        return 0
    finally:
        killer.cancel()
        child.kill()
        child.wait(TIMEOUT_S)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

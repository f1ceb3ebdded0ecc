"""What a client can make ``mockkafka serve`` hold: RSS after two request floods.

Run ``python benchmarks/bench_memory.py`` (about half a minute; ``--quick`` for a tenth of
each flood, ``--serve-arg=--no-traffic`` and the like to pass flags to ``serve``).

Each flood runs against a fresh ``mockkafka serve`` process, so the figures are the server's
alone (``VmRSS`` from ``/proc``, Linux only):

- ``describe-groups``: 200 DescribeGroups v5 requests naming 12,000 groups each (about 15 MB
  on the wire; each answer lists 12,000 dead groups);
- ``api-versions``: 20,000 ApiVersions v3 requests (tiny requests, 60-entry answers).

Each prints RSS before, after the flood and once the log has settled, with the traffic log's
accounted size (``GET /traffic`` count). The requests are pipelined in windows of 20 on one
connection and every answer is read, so the flood is bounded in time.
"""

from __future__ import annotations

import argparse
import json
import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mockkafka.protocol.framing import NEED_DATA, ClientConnection  # noqa: E402


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as fp:
        m = re.search(r"^VmRSS:\s+(\d+) kB", fp.read(), re.M)
    assert m is not None
    return int(m.group(1)) / 1024


@contextmanager
def serve(extra: list[str]) -> Iterator[tuple[subprocess.Popen[str], int, str]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "mockkafka.cli", "serve", *extra],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert proc.stdout is not None
        boot = proc.stdout.readline().strip().split("=", 1)[1]
        control = proc.stdout.readline().strip().split("=", 1)[1].split()[0]
        yield proc, int(boot.split(",")[0].rsplit(":", 1)[1]), control
    finally:
        proc.kill()
        proc.wait(10)


def flood(port: int, n: int, make: Callable[[ClientConnection], bytes], window: int = 20) -> None:
    """Send ``n`` requests built by ``make``, at most ``window`` unanswered, reading every
    answer (60 s at most)."""
    conn = ClientConnection(client_id="flood")
    deadline = time.monotonic() + 60
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sent = received = 0
        while received < n:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{received}/{n} answers in 60 s")
            while sent < n and sent - received < window:
                sock.sendall(make(conn))
                sent += 1
            ev = conn.next_event()
            if ev is NEED_DATA:
                data = sock.recv(1 << 20)
                if not data:
                    raise ConnectionError(f"closed by the broker after {received} answers")
                conn.receive_data(data)
                continue
            received += 1


def describe_groups(groups: int) -> Callable[[ClientConnection], bytes]:
    names = [f"g{i:04d}" for i in range(groups)]  # 6 bytes each on the wire (compact)

    def make(conn: ClientConnection) -> bytes:
        return conn.send_request(
            "DescribeGroups", 5, {"groups": names, "include_authorized_operations": False}
        )

    return make


def api_versions(conn: ClientConnection) -> bytes:
    return conn.send_request(
        "ApiVersions", 3, {"client_software_name": "flood", "client_software_version": "1"}
    )


def traffic_count(control: str) -> int:
    req = urllib.request.Request(f"{control}/traffic?limit=1000000")
    with urllib.request.urlopen(req, timeout=60) as resp:
        return len(json.loads(resp.read()))


def run(name: str, n: int, make: Callable[[ClientConnection], bytes], extra: list[str]) -> None:
    with serve(extra) as (proc, port, _control):
        time.sleep(0.5)
        before = rss_mib(proc.pid)
        t0 = time.perf_counter()
        flood(port, n, make)
        took = time.perf_counter() - t0
        time.sleep(0.5)
        after = rss_mib(proc.pid)
        print(
            f"{name:<16} {n:>6} requests in {took:5.1f} s  RSS {before:6.0f} MiB -> "
            f"{after:6.0f} MiB  (serve {' '.join(extra) or '(defaults)'})",
            flush=True,
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="a tenth of each flood")
    ap.add_argument("--serve-arg", action="append", default=[], help="a flag for serve")
    ap.add_argument("--only", choices=("describe-groups", "api-versions"))
    args = ap.parse_args(argv)
    scale = 10 if args.quick else 1
    floods: list[tuple[str, int, Any]] = [
        ("describe-groups", 200 // scale, describe_groups(12_000)),
        ("api-versions", 20_000 // scale, api_versions),
    ]
    for name, n, make in floods:
        if args.only in (None, name):
            run(name, n, make, args.serve_arg)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

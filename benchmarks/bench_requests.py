"""What one request costs the broker: CPU of the broker's thread and wall time per Produce.

A raw client (blocking socket, frames encoded once up front, responses read without
decoding) sends Produce v9 requests one at a time to an in-process 1-broker cluster
(traffic recording off) and waits for each answer. The broker thread's CPU time (from
/proc, Linux only) divided by the requests is the broker's own cost per request -- what an
in-process test pays in GIL time for each request its client sends -- and the wall time
per request is the round trip without any client library in it.

    python benchmarks/bench_requests.py [--requests 3000] [--rounds 5]

Prints the median over rounds for a 1-record batch and a 130-record batch (100 B values:
the size of librdkafka's batches in ``compare.py``'s produce run).
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import mockkafka  # noqa: E402
from mockkafka.protocol import records as rec  # noqa: E402
from mockkafka.protocol.framing import ClientConnection  # noqa: E402


def thread_cpu(tid: str) -> float:
    """CPU seconds (user + system) of one thread of this process."""
    with open(f"/proc/self/task/{tid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def produce_cost(
    cluster: mockkafka.Cluster, requests: int, records: int = 1, who: str = "bench_requests"
) -> tuple[float, float]:
    """(broker CPU us, wall us) per Produce v9 of ``records`` x 100 B to topic ``t`` of a
    running one-broker ``cluster``, sent one at a time by a raw client (each answer read
    before the next request); ``bench_faults.py`` measures its rules with it too."""
    host, port = cluster.bootstrap_servers.split(",")[0].rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=30)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    conn = ClientConnection(client_id="bench")
    now = int(time.time() * 1000)
    batch = rec.encode_batch([(None, b"x" * 100, (), now) for _ in range(records)])
    body = {
        "acks": -1,
        "timeout_ms": 30000,
        "topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": batch}]}],
    }
    frames = [conn.send_request("Produce", 9, body, expect_response=False) for _ in range(requests)]
    me = str(threading.get_native_id())
    others = [t for t in os.listdir("/proc/self/task") if t != me]
    before = {t: thread_cpu(t) for t in others}
    t0 = time.perf_counter()
    deadline = time.monotonic() + 120
    try:
        for frame in frames:
            sock.sendall(frame)
            read_exactly(sock, int.from_bytes(read_exactly(sock, 4), "big"))
            if time.monotonic() > deadline:
                raise SystemExit(f"{who}: took over 120 s")
        wall = time.perf_counter() - t0
        broker = max(thread_cpu(t) - before[t] for t in others)  # the cluster's thread
    finally:
        sock.close()
    return broker / requests * 1e6, wall / requests * 1e6


def read_exactly(sock: socket.socket, size: int) -> bytes:
    out = b""
    while len(out) < size:
        chunk = sock.recv(size - len(out))
        if not chunk:
            raise SystemExit("closed by the broker")
        out += chunk
    return out


def one_round(requests: int, records: int) -> tuple[float, float]:
    """(broker CPU us, wall us) per Produce request of ``records`` x 100 B."""
    with mockkafka.Cluster(brokers=1, record_traffic=False) as cluster:
        cluster.create_topic("t", partitions=1, replication_factor=1)
        return produce_cost(cluster, requests, records)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=3000, help="requests per round (3000)")
    ap.add_argument("--rounds", type=int, default=5, help="rounds; medians are printed (5)")
    args = ap.parse_args(argv)
    print(f"{'Produce request':<22} {'broker CPU us/req':>18} {'wall us/req':>12}")
    for records in (1, 130):
        cpu, wall = zip(
            *(one_round(args.requests, records) for _ in range(args.rounds)), strict=True
        )
        label = f"{records} x 100 B"
        print(f"{label:<22} {statistics.median(cpu):>18.1f} {statistics.median(wall):>12.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

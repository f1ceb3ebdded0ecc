"""A line-level profile of the broker's Produce path (issue 28's accelerator decision).

    python benchmarks/profile_produce.py                       # 1 x 100 B, 3,000 requests
    python benchmarks/profile_produce.py --records 80 --codec snappy --value-size 8
    python benchmarks/profile_produce.py --lines 12 --traffic  # more lines; traffic recorded

A one-broker cluster runs on this thread's trio loop with ``line_profiler`` tracing the
functions a Produce passes through (the connection loop, the dispatch stages, the handler,
the append path, the record checks, the log); a raw client on another thread sends Produce v9
requests one at a time, as ``bench_requests.py`` does. Prints, for each traced function, its
own time (the time in its lines, calls into other traced functions included) and its share of
the connection loop's, then its costliest lines. Tracing slows every line alike by about
an order of magnitude; read the shares, not the microseconds. Needs ``pip install
line_profiler``. Bounded: ``--requests`` (3,000) requests, 120 s.
"""

from __future__ import annotations

import argparse
import linecache
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import trio  # noqa: E402
from bench_requests import read_exactly  # noqa: E402

from mockkafka import open_cluster  # noqa: E402
from mockkafka.protocol import records as rec  # noqa: E402
from mockkafka.protocol.framing import ClientConnection  # noqa: E402


def traced() -> list[Any]:
    """The functions a Produce passes through, outermost first."""
    from mockkafka.cluster import log, produce, producers
    from mockkafka.handlers import _common, authz
    from mockkafka.handlers import produce as produce_handler
    from mockkafka.protocol import compression, framing
    from mockkafka.server import dispatch, limits, runtime

    return [
        runtime.ClusterServer._serve_connection,
        runtime.ClusterServer.flush,
        framing.ServerConnection.next_event,
        dispatch.dispatch,
        dispatch.version_gate,
        dispatch.authenticate,
        dispatch.authorize,
        dispatch.traffic,
        dispatch.faults_before,
        dispatch.handler,
        dispatch._run,
        dispatch.quotas,
        dispatch.faults_after,
        dispatch.finish,
        produce_handler.handle,
        produce_handler._format_error,
        _common.find_topic,
        _common.find_partition,
        _common.leader_error,
        authz.topic_allowed,
        limits.costly_blobs,
        produce.validation_is_costly,
        compression.decompress,
        produce.append_records,
        produce.validate_batches,
        produce._split,
        rec.split_batches,
        rec._walk,
        rec.verify_crc,
        rec.check_entry,
        rec._check_records,
        rec._check_v2_section,
        rec._uniform_run,
        producers.check_sequence,
        producers.record_append,
        log.PartitionLog.append_batches,
        log.PartitionLog._push,
    ]


CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


def frames(requests: int, records: int, value_size: int, codec: str) -> list[bytes]:
    """Produce v9 frames to topic ``t`` partition 0, idempotent (as every current client)."""
    conn = ClientConnection(client_id="profile")
    now = int(time.time() * 1000)
    out = []
    for i in range(requests):
        batch = rec.encode_batch(
            [(None, b"%0*d" % (value_size, j), (), now) for j in range(records)],
            compression=CODECS[codec],
            producer_id=1000,
            producer_epoch=0,
            base_sequence=(i * records) % (2**31),
        )
        body = {
            "acks": -1,
            "timeout_ms": 30000,
            "topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": batch}]}],
        }
        out.append(conn.send_request("Produce", 9, body, expect_response=False))
    return out


def client(port: int, frames_: list[bytes], done: list[float]) -> None:
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    deadline = time.monotonic() + 120
    try:
        for frame in frames_:
            sock.sendall(frame)
            read_exactly(sock, int.from_bytes(read_exactly(sock, 4), "big"))
            if time.monotonic() > deadline:
                raise SystemExit("profile_produce: took over 120 s")
    finally:
        sock.close()
        done.append(time.monotonic())


async def run(args: argparse.Namespace, profiler: Any) -> None:
    async with open_cluster(brokers=1, record_traffic=args.traffic) as cluster:
        cluster.create_topic("t", partitions=1, replication_factor=1)
        port = int(cluster.bootstrap_servers.rsplit(":", 1)[1])
        # warm up: every handler module imported, the producer state in place
        warm = frames(20, args.records, args.value_size, args.codec)
        done: list[float] = []
        thread = threading.Thread(target=client, args=(port, warm, done), daemon=True)
        thread.start()
        with trio.fail_after(60):
            while not done:
                await trio.sleep(0.01)
        # the profiled run continues the producer's sequence numbers after the warm-up
        frames_ = frames(args.requests + 20, args.records, args.value_size, args.codec)[20:]
        done.clear()
        thread = threading.Thread(target=client, args=(port, frames_, done), daemon=True)
        profiler.enable_by_count()
        try:
            thread.start()
            with trio.fail_after(150):
                while not done:
                    await trio.sleep(0.05)
        finally:
            profiler.disable_by_count()


def report(profiler: Any, lines: int) -> None:
    stats = profiler.get_stats()
    unit = stats.unit
    totals = []
    for (filename, first, name), timings in stats.timings.items():
        total = sum(t for _, _, t in timings) * unit
        totals.append((total, filename, first, name, timings))
    totals.sort(reverse=True)
    loop = next((t for t, _, _, n, _ in totals if n.endswith("_serve_connection")), 0.0) or 1.0
    print(f"{'function':<44} {'time s':>8} {'share of loop':>14}")
    for total, _filename, _first, name, _ in totals:
        if total:
            print(f"{name:<44} {total:>8.3f} {total / loop:>13.0%}")
    for total, filename, _first, name, timings in totals:
        if not total:
            continue
        print(f"\n== {name} ({Path(filename).name}) {total:.3f} s")
        for lineno, hits, t in sorted(timings, key=lambda x: -x[2])[:lines]:
            code = linecache.getline(filename, lineno).strip()[:90]
            print(f"  {t * unit / total:>5.0%} {hits:>8} L{lineno:<5} {code}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=3000)
    ap.add_argument("--records", type=int, default=1, help="records per batch (1)")
    ap.add_argument("--value-size", type=int, default=100, help="bytes per value (100)")
    ap.add_argument("--codec", default="none", choices=tuple(CODECS))
    ap.add_argument("--traffic", action="store_true", help="record traffic (as serve does)")
    ap.add_argument("--lines", type=int, default=6, help="costliest lines per function (6)")
    args = ap.parse_args(argv)
    try:
        from line_profiler import LineProfiler
    except ImportError:
        print("profile_produce: pip install line_profiler", file=sys.stderr)
        return 2
    profiler = LineProfiler()
    for fn in traced():
        profiler.add_function(fn)
    trio.run(run, args, profiler)
    report(profiler, args.lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())

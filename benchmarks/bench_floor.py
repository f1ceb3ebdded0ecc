"""The floor under issue 15's last targets: what Python costs before any broker work is done.

Two measurements, each side by side in one run:

1. **Round trip per request, no client library.** A raw client (blocking socket, frames
   encoded up front, answers read without decoding) sends 1-record Produce v9 requests one
   at a time and waits for each answer, to four servers on 127.0.0.1:

   * ``librdkafka-mock``: librdkafka's mock cluster (C), which handles the Produce;
   * ``python-thread``: a plain Python thread on a blocking socket that reads each frame
     and writes back a canned answer -- no decoding, no broker: the least any Python server
     can do per request;
   * ``trio-canned``: the same canned answer from a trio task reading and writing the file
     descriptor as ``mockkafka``'s connection loop does (``wait_readable``, ``os.read``,
     ``os.write``);
   * ``mockkafka``: ``mockkafka.Cluster(brokers=1, record_traffic=False)``, the real
     handling.

   The "over C" column is each server's time minus the C mock's: what that server adds to
   a client's round trip. Issue 15's round-trip target (p50 <= 1.2x the C mock's, measured
   through librdkafka, whose own share is about two thirds of the C mock's round trip) leaves
   a broker a few microseconds over the C mock.

2. **In-process produce and the GIL.** confluent-kafka produces N x 100 B (acks=all,
   linger.ms=5, 32 partitions, as ``compare.py``) to an in-process ``mockkafka.Cluster`` and
   to librdkafka's mock; the wall time is printed beside the CPU time of the test's own
   thread (the client's Python loop) and of the broker's thread. In-process, the two
   Python threads take turns on the GIL, so the wall time is about their sum; the C mock's
   threads run beside the loop. Throughput >= 1.0x needs the broker's GIL time near zero.

    python benchmarks/bench_floor.py [--requests 5000] [--rounds 3] [--messages 1000000]

Linux only (thread CPU from /proc). Every loop is bounded in count and time.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import struct
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import trio  # noqa: E402
from compare import TOPIC as PRODUCE_TOPIC  # noqa: E402
from compare import LibrdkafkaMock, produce  # noqa: E402

import mockkafka  # noqa: E402
from mockkafka.protocol import records as rec  # noqa: E402
from mockkafka.protocol.framing import ClientConnection  # noqa: E402

TOPIC = "floor"
#: A Produce v9 answer's size for one partition (the canned servers send this many bytes).
CANNED_BODY = bytes(60)


def read_frame(sock: socket.socket) -> bytes | None:
    """One size-prefixed frame's body from a blocking socket; None at end of stream."""
    head = b""
    while len(head) < 4:
        chunk = sock.recv(4 - len(head))
        if not chunk:
            return None
        head += chunk
    size = int.from_bytes(head, "big")
    body = bytearray()
    while len(body) < size:
        chunk = sock.recv(size - len(body))
        if not chunk:
            return None
        body += chunk
    return bytes(body)


def canned_answer(request: bytes) -> bytes:
    """A frame with the request's correlation id and :data:`CANNED_BODY` (v9: flexible
    header, one empty tagged-field byte)."""
    body = request[4:8] + b"\x00" + CANNED_BODY
    return struct.pack(">i", len(body)) + body


# -- servers ------------------------------------------------------------------------------------


@contextmanager
def python_thread_server() -> Iterator[str]:
    """A Python thread answering every frame of one connection with a canned frame."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(30)

    def serve() -> None:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with conn:
            while True:
                request = read_frame(conn)
                if request is None:
                    return
                conn.sendall(canned_answer(request))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{listener.getsockname()[1]}"
    finally:
        listener.close()
        thread.join(10)


@contextmanager
def trio_canned_server() -> Iterator[str]:
    """A trio task on its own thread answering with a canned frame, reading and writing the
    descriptor as mockkafka's connection loop does."""
    ready = threading.Event()
    address: list[str] = []
    stop: list[tuple[trio.CancelScope, trio.lowlevel.TrioToken]] = []

    async def handle(stream: trio.SocketStream) -> None:
        fd = stream.socket.fileno()
        buf = bytearray()
        async with stream:
            while True:
                await trio.lowlevel.wait_readable(fd)
                try:
                    data = os.read(fd, 65536)
                except BlockingIOError:
                    continue
                if not data:
                    return
                buf += data
                out = bytearray()
                while len(buf) >= 4:
                    size = int.from_bytes(buf[:4], "big")
                    if len(buf) < 4 + size:
                        break
                    out += canned_answer(bytes(buf[4 : 4 + size]))
                    del buf[: 4 + size]
                if out:
                    os.write(fd, out)

    async def main() -> None:
        listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
        address.append(f"127.0.0.1:{listeners[0].socket.getsockname()[1]}")
        with trio.CancelScope() as scope:
            stop.append((scope, trio.lowlevel.current_trio_token()))
            ready.set()
            await trio.serve_listeners(handle, listeners)

    thread = threading.Thread(target=trio.run, args=(main,), daemon=True)
    thread.start()
    if not ready.wait(10):
        raise SystemExit("the trio server did not start")
    try:
        yield address[0]
    finally:
        scope, token = stop[0]
        trio.from_thread.run_sync(scope.cancel, trio_token=token)
        thread.join(10)


@contextmanager
def mockkafka_server(brokers: int = 1, topic: str = TOPIC, partitions: int = 1) -> Iterator[str]:
    with mockkafka.Cluster(brokers=brokers, record_traffic=False) as cluster:
        cluster.create_topic(topic, partitions=partitions, replication_factor=brokers)
        yield cluster.bootstrap_servers


@contextmanager
def librdkafka_server(brokers: int = 1, topic: str = TOPIC, partitions: int = 1) -> Iterator[str]:
    mock = LibrdkafkaMock(brokers)
    try:
        mock.create_topic(topic, partitions, brokers)
        yield mock.bootstrap_servers
    finally:
        mock.close()


SERVERS: dict[str, Callable[[], AbstractContextManager[str]]] = {
    "librdkafka-mock": librdkafka_server,
    "python-thread": python_thread_server,
    "trio-canned": trio_canned_server,
    "mockkafka": mockkafka_server,
}


# -- 1. round trip ------------------------------------------------------------------------------


def round_trips(bootstrap: str, requests: int) -> list[float]:
    """Microseconds of each of ``requests`` Produce round trips (1 x 100 B, acks=-1)."""
    host, port = bootstrap.split(",")[0].rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=30)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    conn = ClientConnection(client_id="floor")
    batch = rec.encode_batch([(None, b"x" * 100, (), int(time.time() * 1000))])
    body = {
        "acks": -1,
        "timeout_ms": 30000,
        "topic_data": [{"name": TOPIC, "partition_data": [{"index": 0, "records": batch}]}],
    }
    frames = [conn.send_request("Produce", 9, body, expect_response=False) for _ in range(requests)]
    times: list[float] = []
    deadline = time.monotonic() + 60
    with sock:
        for frame in frames[:50]:  # warm up (connection, first-request paths)
            sock.sendall(frame)
            if read_frame(sock) is None:
                raise SystemExit(f"{bootstrap}: closed by the server")
        for frame in frames[50:]:
            t0 = time.perf_counter()
            sock.sendall(frame)
            if read_frame(sock) is None:
                raise SystemExit(f"{bootstrap}: closed by the server")
            times.append((time.perf_counter() - t0) * 1e6)
            if time.monotonic() > deadline:
                break
    return times


def print_round_trips(requests: int, rounds: int) -> None:
    p50: dict[str, list[float]] = {name: [] for name in SERVERS}
    p99: dict[str, list[float]] = {name: [] for name in SERVERS}
    names = list(SERVERS)
    for r in range(rounds):
        order = names[r % len(names) :] + names[: r % len(names)]  # rotate, as compare.py
        for name in order:
            with SERVERS[name]() as bootstrap:
                times = sorted(round_trips(bootstrap, requests))
            p50[name].append(times[len(times) // 2])
            p99[name].append(times[min(len(times) - 1, len(times) * 99 // 100)])
    print(f"1. Produce round trip, raw client, median of {rounds} rounds x {requests} requests")
    print(f"{'server':<18} {'p50 us':>8} {'p99 us':>8} {'p50 over C, us':>15}")
    base = statistics.median(p50["librdkafka-mock"])
    for name in names:
        m50, m99 = statistics.median(p50[name]), statistics.median(p99[name])
        print(f"{name:<18} {m50:>8.1f} {m99:>8.1f} {m50 - base:>15.1f}")


# -- 2. in-process produce and the GIL ----------------------------------------------------------


def thread_cpu(tid: str) -> float:
    """CPU seconds (user + system) of one thread of this process."""
    with open(f"/proc/self/task/{tid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def produce_with_cpu(target: str, messages: int) -> tuple[float, float, float | None]:
    """(wall s, CPU s of this thread, CPU s of mockkafka's broker thread or None for the C
    mock) of ``compare.produce``."""
    me = str(threading.get_native_id())

    open_target = mockkafka_server if target == "mockkafka" else librdkafka_server
    with open_target(3, PRODUCE_TOPIC, 32) as bootstrap:
        before = {t: thread_cpu(t) for t in os.listdir("/proc/self/task")}
        t0 = time.perf_counter()
        produce(bootstrap, messages, 100, 32)
        wall = time.perf_counter() - t0
        after = {t: thread_cpu(t) for t in os.listdir("/proc/self/task") if t in before}
    main = after[me] - before[me]
    if target != "mockkafka":
        return wall, main, None  # the C mock's threads never take the GIL
    # the cluster's thread: the busiest one that is not librdkafka's (named rdk:*)
    others = [
        after[t] - before[t] for t in after if t != me and not _thread_name(t).startswith("rdk:")
    ]
    return wall, main, max(others, default=0.0)


def _thread_name(tid: str) -> str:
    try:
        with open(f"/proc/self/task/{tid}/comm") as f:
            return f.read().strip()
    except OSError:
        return "?"


def print_gil(messages: int, rounds: int) -> None:
    rows: dict[str, list[tuple[float, float, float | None]]] = {
        "librdkafka-mock": [],
        "mockkafka": [],
    }
    for r in range(rounds):
        for target in (
            ("librdkafka-mock", "mockkafka") if r % 2 == 0 else ("mockkafka", "librdkafka-mock")
        ):
            rows[target].append(produce_with_cpu(target, messages))
    print()
    print(f"2. In-process produce, {messages:,} x 100 B, median of {rounds} rounds")
    print(
        f"{'broker':<18} {'wall s':>7} {'msg/s':>11} {'client loop CPU s':>18} {'broker CPU s':>13}"
    )
    for target, got in rows.items():
        wall = statistics.median(g[0] for g in got)
        main = statistics.median(g[1] for g in got)
        cpu = [g[2] for g in got if g[2] is not None]
        broker = f"{statistics.median(cpu):.2f}" if cpu else "- (C)"
        print(f"{target:<18} {wall:>7.2f} {messages / wall:>11,.0f} {main:>18.2f} {broker:>13}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=5000, help="round trips per round (5000)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds; medians are printed (3)")
    ap.add_argument("--messages", type=int, default=1_000_000, help="produced in part 2")
    args = ap.parse_args(argv)
    if not sys.platform.startswith("linux"):
        raise SystemExit("bench_floor.py reads thread CPU from /proc: Linux only")
    print_round_trips(args.requests, args.rounds)
    print_gil(args.messages, args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""mockkafka side by side with librdkafka's mock cluster, franz-go's kfake and Apache Kafka:
one command, one table of ratios.

    python benchmarks/compare.py            # 1M x 100 B, 3 paired repetitions (a few minutes)
    python benchmarks/compare.py --quick    # 50k messages, smaller everything (~2 minutes)
    python benchmarks/compare.py --start-only --only in-process --only process --only kfake
                                            # start to the first answers only (issue 33)

The table ends with the pipelines of ``bench_pipeline.py`` (franz-go and confluent-kafka;
a producer and three consumer groups under the eager, cooperative and KIP-848 balancers,
and the transactional variant; seconds per run, 500,000 records, ``--quick`` 20,000)
against ``mockkafka serve``, kfake and Kafka (not with ``--quick``; ``--no-pipelines`` skips
them).

Five targets, driven by the same confluent-kafka client in this process:

* ``in-process``: ``mockkafka.Cluster(brokers=3)`` in this process (its broker thread shares
  the GIL with the client's Python loop);
* ``process``: ``mockkafka serve --brokers 3`` in a child process;
* ``librdkafka``: librdkafka's own mock cluster, in this process (C threads). It is the one
  ``test.mock.num.brokers`` starts; it is created here through librdkafka's C API
  (``rd_kafka_mock_cluster_new`` / ``rd_kafka_mock_topic_create``, via ctypes on the library
  confluent-kafka ships) because the mock does not answer CreateTopics and would otherwise
  auto-create every topic with 4 partitions;
* ``kfake``: franz-go's kfake (Go) with 3 brokers in a child process, built from the Go
  module proxy (``benchmarks/peers.py``);
* ``kafka``: Apache Kafka 4.4.0 itself, one KRaft process as broker and controller (so
  replication factor 1), its jars from Maven Central (``benchmarks/peers.py``).

A peer that cannot run here (no Go, no Java, no network for the first build) is left out
and the table says why under it.

Every figure is measured on the three targets in one repetition, back to back (the order
rotates), the ratio mockkafka / librdkafka is taken inside each repetition, and the table
shows the median over repetitions: the machine is shared, so only ratios taken side by side
mean anything. A ratio > 1 means mockkafka is better (faster, or less time), whatever the
unit. Every loop here is bounded in count and time.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from confluent_kafka import (  # noqa: E402
    OFFSET_BEGINNING,
    Consumer,
    KafkaError,
    KafkaException,
    Producer,
    TopicPartition,
)

import mockkafka  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_pipeline  # noqa: E402
import first_answers  # noqa: E402
import peers  # noqa: E402

QUIET = {"log_level": 3}
TOPIC, TXN_TOPIC = "bench", "txn"
TARGETS = ("in-process", "process", "librdkafka", "kfake", "kafka")
#: Why a peer cannot run here (filled by main()); its column stays empty.
UNAVAILABLE: dict[str, str] = {}
#: The Kafka broker's spawn-to-ready of the last one opened (a JVM start is seconds: each
#: repetition's broker gives the figure instead of starting more of them).
KAFKA_READY_MS: list[float] = []


# -- targets ------------------------------------------------------------------------------------


class LibrdkafkaMock:
    """librdkafka's mock cluster through its C API (the library confluent-kafka loaded)."""

    def __init__(self, brokers: int) -> None:
        import confluent_kafka

        libs = Path(confluent_kafka.__file__).resolve().parent.parent / "confluent_kafka.libs"
        found = sorted(libs.glob("librdkafka*.so*"))
        if not found:
            raise SystemExit(f"librdkafka not found in {libs}")
        lib = self._lib = ctypes.CDLL(str(found[0]))
        lib.rd_kafka_conf_new.restype = ctypes.c_void_p
        lib.rd_kafka_conf_set.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]
        lib.rd_kafka_conf_set.argtypes += [ctypes.c_char_p, ctypes.c_size_t]
        lib.rd_kafka_new.restype = ctypes.c_void_p
        lib.rd_kafka_new.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p]
        lib.rd_kafka_new.argtypes += [ctypes.c_size_t]
        lib.rd_kafka_destroy.argtypes = [ctypes.c_void_p]
        lib.rd_kafka_mock_cluster_new.restype = ctypes.c_void_p
        lib.rd_kafka_mock_cluster_new.argtypes = [ctypes.c_void_p, ctypes.c_int]
        lib.rd_kafka_mock_cluster_destroy.argtypes = [ctypes.c_void_p]
        lib.rd_kafka_mock_cluster_bootstraps.restype = ctypes.c_char_p
        lib.rd_kafka_mock_cluster_bootstraps.argtypes = [ctypes.c_void_p]
        lib.rd_kafka_mock_topic_create.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
        lib.rd_kafka_mock_topic_create.argtypes += [ctypes.c_int, ctypes.c_int]
        errstr = ctypes.create_string_buffer(512)
        conf = lib.rd_kafka_conf_new()
        lib.rd_kafka_conf_set(conf, b"log_level", b"3", errstr, 512)
        self._rk = lib.rd_kafka_new(0, conf, errstr, 512)  # RD_KAFKA_PRODUCER
        if not self._rk:
            raise SystemExit(f"rd_kafka_new: {errstr.value.decode()}")
        self._mc = lib.rd_kafka_mock_cluster_new(self._rk, brokers)
        if not self._mc:
            raise SystemExit("rd_kafka_mock_cluster_new failed")
        self.bootstrap_servers = lib.rd_kafka_mock_cluster_bootstraps(self._mc).decode()

    def create_topic(self, name: str, partitions: int, replication_factor: int) -> None:
        err = self._lib.rd_kafka_mock_topic_create(
            self._mc, name.encode(), partitions, replication_factor
        )
        if err:
            raise SystemExit(f"rd_kafka_mock_topic_create({name}): error {err}")

    def close(self) -> None:
        self._lib.rd_kafka_mock_cluster_destroy(self._mc)
        self._lib.rd_kafka_destroy(self._rk)


class ServeProcess:
    """``mockkafka serve`` in a child process (this checkout's copy)."""

    def __init__(self, brokers: int, topics: list[str]) -> None:
        """Start it and read its ``bootstrap.servers=`` line (printed once it answers)."""
        args = [sys.executable, "-m", "mockkafka.cli", "serve", "--brokers", str(brokers)]
        for t in topics:
            args += ["--topic", t]
        # With bytecode caches, as an installed package has them (without, every start
        # compiles mockkafka from source: ~0.5 s more).
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPATH"] = str(ROOT)
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True, cwd=ROOT, env=env)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()  # the serve command prints it when ready
        if not line.startswith("bootstrap.servers="):
            self.close()
            raise SystemExit(f"mockkafka serve did not start: {line!r}")
        self.bootstrap_servers = line.split("=", 1)[1]

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


@contextmanager
def open_target(name: str, topics: dict[str, int]) -> Iterator[str]:
    """A 3-broker cluster with ``topics`` (name -> partitions, RF 3); yields bootstrap."""
    if name == "in-process":
        with mockkafka.Cluster(brokers=3, record_traffic=False) as c:
            for t, n in topics.items():
                c.create_topic(t, partitions=n, replication_factor=3)
            yield c.bootstrap_servers
    elif name == "process":
        proc = ServeProcess(3, [f"{t}:{n}:3" for t, n in topics.items()])
        try:
            yield proc.bootstrap_servers
        finally:
            proc.close()
    elif name == "kfake":
        kfake = peers.KfakeProcess(3, topics)
        try:
            yield kfake.bootstrap_servers
        finally:
            kfake.close()
    elif name == "kafka":
        broker = peers.KafkaBroker(topics)
        KAFKA_READY_MS.append(broker.ready_ms)
        try:
            yield broker.bootstrap_servers
        finally:
            broker.close()
    else:
        mock = LibrdkafkaMock(3)
        try:
            for t, n in topics.items():
                mock.create_topic(t, n, 3)
            yield mock.bootstrap_servers
        finally:
            mock.close()


# -- measurements (each returns one figure for one target) --------------------------------------


def produce(bootstrap: str, messages: int, size: int, partitions: int) -> float:
    """msg/s of producing ``messages`` x ``size`` B until flush() returns."""
    value = b"x" * size
    p = Producer(
        {
            "bootstrap.servers": bootstrap,
            "acks": "all",
            "linger.ms": 5,
            "queue.buffering.max.messages": max(messages, 100_000),
            **QUIET,
        }
    )
    failed: list[KafkaError] = []

    def on_delivery(err: KafkaError | None, _msg: object) -> None:
        if err is not None:
            failed.append(err)

    p.list_topics(TOPIC, timeout=10)  # connected and warm: measure producing only
    t0 = time.perf_counter()
    for i in range(messages):
        try:
            p.produce(TOPIC, value, partition=i % partitions, on_delivery=on_delivery)
        except BufferError:
            p.poll(0.05)
            p.produce(TOPIC, value, partition=i % partitions, on_delivery=on_delivery)
        if i % 10_000 == 0:
            p.poll(0)
    left = p.flush(120)
    elapsed = time.perf_counter() - t0
    if left or failed:
        raise SystemExit(f"produce: {left} undelivered, {len(failed)} failed: {failed[:3]}")
    return messages / elapsed


def consume(bootstrap: str, messages: int, partitions: int) -> tuple[float, int]:
    """(msg/s, messages held) of reading every partition from the beginning (no group)."""
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "bench",
            "enable.auto.commit": False,
            "fetch.wait.max.ms": 100,
            **QUIET,
        }
    )
    got = 0
    try:
        tps = [TopicPartition(TOPIC, i) for i in range(partitions)]
        marks = [c.get_watermark_offsets(tp, timeout=10) for tp in tps]
        held = sum(hi - lo for lo, hi in marks)  # librdkafka's mock may drop old segments
        t0 = time.perf_counter()
        deadline = time.monotonic() + 120
        c.assign([TopicPartition(TOPIC, i, OFFSET_BEGINNING) for i in range(partitions)])
        while got < held and time.monotonic() < deadline:
            for m in c.consume(10_000, 1.0):
                if m.error() is None:
                    got += 1
        elapsed = time.perf_counter() - t0
    finally:
        c.close()
    if got != held:
        raise SystemExit(f"consume: read {got} of the {held} messages held")
    return held / elapsed, held


def round_trip(bootstrap: str, rounds: int) -> tuple[float, float]:
    """(p50, p99) ms of produce(one message) + flush(), acks=all."""
    p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 0, **QUIET})
    p.produce(TOPIC, b"warm", partition=0)
    p.flush(10)
    times = []
    deadline = time.monotonic() + 60
    for _ in range(rounds):
        t0 = time.perf_counter()
        p.produce(TOPIC, b"x" * 100, partition=0)
        if p.flush(10):
            raise SystemExit("round trip: flush timed out")
        times.append(time.perf_counter() - t0)
        if time.monotonic() > deadline:
            break
    times.sort()
    return times[len(times) // 2] * 1000, times[min(len(times) - 1, len(times) * 99 // 100)] * 1000


def transactions(bootstrap: str, seconds: float, inits: int) -> tuple[float, list[float]]:
    """(commits/s, init_transactions() ms of each fresh producer); 10 records to 3
    partitions per commit. init_transactions() is called right after the producer is
    created, as a test does (its first connection is still being set up)."""
    init_times = []
    rate = 0.0
    for k in range(inits):
        p = Producer(
            {
                "bootstrap.servers": bootstrap,
                "transactional.id": f"bench-{time.monotonic_ns()}-{k}",
                "linger.ms": 0,
                **QUIET,
            }
        )
        t0 = time.perf_counter()
        p.init_transactions(30)
        init_times.append(time.perf_counter() - t0)
        if k == 0:
            n = 0
            start = time.perf_counter()
            while time.perf_counter() - start < seconds and n < 100_000:
                p.begin_transaction()
                for i in range(10):
                    p.produce(TXN_TOPIC, value=b"v%d" % i, partition=i % 3)
                p.commit_transaction(30)
                n += 1
            rate = n / (time.perf_counter() - start)
        p.flush(10)
    return rate, [t * 1000 for t in init_times]


#: The answers start_to_answers() times, after "ready" (the row keys of the table).
FIRST_ANSWERS = ("ApiVersions", "CreateTopics", "Produce")


def start_to_answers(target: str, rounds: int) -> dict[str, float]:
    """Median ms from nothing to: ``ready``, a 3-broker cluster that says it listens (the
    call returned, or a child printed its address); then the answers of the first requests
    of a test's client sent right after it (``first_answers.py``: ApiVersions, CreateTopics,
    Metadata, Produce with acks=all and one record). Stop is excluded. ``mockkafka serve``
    prints its address once it answers them at once (issue 33); librdkafka's mock does not
    answer CreateTopics (its topic is made through the C API, its figure left out)."""
    figures: dict[str, list[float]] = {}

    def ask(bootstrap: str, *, create: bool = True) -> None:
        figures.setdefault("ready", []).append((time.perf_counter() - t0) * 1000)
        for name, ms in first_answers.first_answers(bootstrap, t0, create=create).items():
            figures.setdefault(name, []).append(ms)

    first_answers.prepare()
    for _ in range(rounds):
        t0 = time.perf_counter()
        if target == "in-process":
            c = mockkafka.Cluster(brokers=3).start()
            try:
                ask(c.bootstrap_servers)
            finally:
                c.stop()
        elif target == "process":
            proc = ServeProcess(3, [])
            try:
                ask(proc.bootstrap_servers)
            finally:
                proc.close()
        elif target == "kfake":
            kfake = peers.KfakeProcess(3, {})
            try:
                ask(kfake.bootstrap_servers)
            finally:
                kfake.close()
        elif target == "kafka":  # its first Metadata answer listing the broker, if opened
            ms = KAFKA_READY_MS[-1:]
            return {"ready": ms[0], "ApiVersions": ms[0]} if ms else {}
        else:
            mock = LibrdkafkaMock(3)
            try:
                mock.create_topic(first_answers.TOPIC, 1, 3)
                ask(mock.bootstrap_servers, create=False)
            finally:
                mock.close()
    return {name: statistics.median(v) for name, v in figures.items()}


def fixture_reset(rounds: int) -> float | None:
    """Median ms of ``Cluster.reset()`` after a test's worth of state (None if absent)."""
    if not hasattr(mockkafka.Cluster, "reset"):
        return None
    times = []
    with mockkafka.Cluster(brokers=3) as c:
        for i in range(rounds):
            c.create_topic(f"t{i}", partitions=6, replication_factor=3)
            c.produce(f"t{i}", b"v", partition=0)
            t0 = time.perf_counter()
            c.reset()
            times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


# -- scale curves (time and RSS at 1x, 10x, 100x) ---------------------------------------------


def rss_mb(pid: int | None = None) -> float:
    """Resident set size of this process (or ``pid``) in MiB (Linux /proc)."""
    with open(f"/proc/{pid or 'self'}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


class Raw:
    """A blocking Kafka connection speaking frames through mockkafka's ClientConnection."""

    def __init__(self, bootstrap: str) -> None:
        from mockkafka.protocol.framing import ClientConnection

        host, port = bootstrap.split(",")[0].rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=30)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.conn = ClientConnection(client_id="compare")

    def send(self, api: str, version: int, body: dict[str, Any]) -> None:
        self.sock.sendall(self.conn.send_request(api, version, body))

    def recv(self) -> Any:
        from mockkafka.protocol.framing import NEED_DATA

        while True:
            ev = self.conn.next_event()
            if ev is not NEED_DATA:
                return ev.body
            data = self.sock.recv(1 << 20)
            if not data:
                raise ConnectionError("closed by the broker")
            self.conn.receive_data(data)

    def request(self, api: str, version: int, body: dict[str, Any]) -> Any:
        self.send(api, version, body)
        return self.recv()

    def request_frame(self, api: str, version: int, body: dict[str, Any]) -> int:
        """Send a request and read its whole response frame without decoding it (so a
        timing is the broker's, not this client's codec); returns the frame size."""
        self.sock.sendall(self.conn.send_request(api, version, body, expect_response=False))
        head = b""
        while len(head) < 4:
            head += self.sock.recv(4 - len(head))
        size = int.from_bytes(head, "big")
        got = 0
        while got < size:
            chunk = self.sock.recv(min(1 << 20, size - got))
            if not chunk:
                raise ConnectionError("closed by the broker")
            got += len(chunk)
        return size

    def close(self) -> None:
        self.sock.close()


def timed(fn: Callable[[], object], rounds: int) -> float:
    """Median ms of ``fn()`` over ``rounds`` calls."""
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def scale_metadata(factor: int) -> tuple[float, float]:
    """Metadata (all topics) for 100 x factor partitions (topics of 100, RF 3)."""
    with mockkafka.Cluster(brokers=3, record_traffic=False) as c:
        for i in range(factor):
            c.create_topic(f"m{i}", partitions=100, replication_factor=3)
        raw = Raw(c.bootstrap_servers)
        try:
            ms = timed(lambda: raw.request_frame("Metadata", 12, {"topics": None}), 5)
        finally:
            raw.close()
        return ms, rss_mb()


def scale_idle_connections(count: int) -> tuple[float, float]:
    """produce+flush p50 of an active client while ``count`` idle connections are open.

    Both ends of each connection are in this process: the soft file limit is raised for
    them (a fresh machine often starts at 1024)."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 2 * count + 256
    if soft < want:
        cap = want if hard == resource.RLIM_INFINITY else min(want, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (cap, hard))
        if cap < want:
            raise SystemExit(f"{count} idle connections need {want} open files; the limit is {cap}")
    with mockkafka.Cluster(brokers=1, record_traffic=False) as c:
        c.create_topic(TOPIC, partitions=1)
        idle = []
        try:
            for _ in range(count):
                r = Raw(c.bootstrap_servers)
                r.request("ApiVersions", 3, {"client_software_name": "idle"})
                idle.append(r)
            p50, _ = round_trip(c.bootstrap_servers, 200)
            return p50, rss_mb()
        finally:
            for r in idle:
                r.close()


def scale_group_rebalance(members: int) -> tuple[float, float]:
    """A classic group of ``members`` formed from nothing: every JoinGroup sent at once,
    then every SyncGroup; ms from the first JoinGroup to the last SyncGroup answer, minus
    the 20 ms initial rebalance delay the cluster is started with."""
    delay = 20
    with mockkafka.Cluster(
        brokers=1, record_traffic=False, group_initial_rebalance_delay_ms=delay
    ) as c:
        conns = [Raw(c.bootstrap_servers) for _ in range(members)]
        try:
            join = {
                "group_id": "g",
                "session_timeout_ms": 30_000,
                "rebalance_timeout_ms": 60_000,
                "member_id": "",
                "protocol_type": "consumer",
                "protocols": [{"name": "range", "metadata": b""}],
            }
            t0 = time.perf_counter()
            for r in conns:
                r.send("JoinGroup", 3, join)
            joined = [r.recv() for r in conns]
            if any(j["error_code"] for j in joined):
                raise SystemExit(f"JoinGroup failed: {joined[0]}")
            leader = joined[0]["leader"]
            order = sorted(range(members), key=lambda i: joined[i]["member_id"] != leader)
            for i in order:
                j = joined[i]
                assignments = (
                    [{"member_id": m["member_id"], "assignment": b""} for m in j["members"]]
                    if j["member_id"] == leader
                    else []
                )
                conns[i].send(
                    "SyncGroup",
                    3,
                    {
                        "group_id": "g",
                        "generation_id": j["generation_id"],
                        "member_id": j["member_id"],
                        "assignments": assignments,
                    },
                )
            synced = [conns[i].recv() for i in order]
            elapsed = (time.perf_counter() - t0) * 1000 - delay
            if any(sy["error_code"] for sy in synced):
                raise SystemExit(f"SyncGroup failed: {synced[0]}")
            return elapsed, rss_mb()
        finally:
            for r in conns:
                r.close()


def scale_retention(messages: int) -> tuple[float, float]:
    """(RSS growth / raw batch bytes, RSS MiB) of ``mockkafka serve`` holding ``messages``
    x 100 B produced by confluent-kafka (raw bytes from DescribeLogDirs)."""
    proc = ServeProcess(1, [f"{TOPIC}:8:1"])
    try:
        before = rss_mb(proc.proc.pid)
        produce(proc.bootstrap_servers, messages, 100, 8)
        gc.collect()
        after = rss_mb(proc.proc.pid)
        raw = Raw(proc.bootstrap_servers)
        try:
            dirs = raw.request("DescribeLogDirs", 1, {"topics": None})
        finally:
            raw.close()
        size = sum(
            p["partition_size"]
            for d in dirs["results"]
            for t in d["topics"]
            for p in t["partitions"]
        )
        return (after - before) * 1024 * 1024 / size, after
    finally:
        proc.close()


def scale_fetch_newest(messages: int) -> tuple[float, float]:
    """Fetch of the newest 1,000 records of a ``messages``-record partition (batches of
    1,000 records, 10 B values)."""
    from mockkafka.cluster.produce import append_records
    from mockkafka.protocol import records as rec

    batch = rec.encode_batch([rec.Record(i, 0, None, b"0123456789") for i in range(1000)])
    with mockkafka.Cluster(brokers=1, record_traffic=False) as c:
        c.create_topic(TOPIC, partitions=1)

        def fill(state: Any) -> int:
            t = state.topic(TOPIC)
            p = t.partition(0)
            for _ in range(messages // 1000):
                append_records(state, t, p, batch)
            return int(p.log.high_watermark)

        hw = c.call(fill)
        raw = Raw(c.bootstrap_servers)
        fetch = {
            "replica_id": -1,
            "max_wait_ms": 0,
            "min_bytes": 1,
            "max_bytes": 1 << 20,
            "topics": [
                {
                    "topic": TOPIC,
                    "partitions": [
                        {
                            "partition": 0,
                            "fetch_offset": max(0, hw - 1000),
                            "partition_max_bytes": 1 << 20,
                        }
                    ],
                }
            ],
        }
        try:
            ms = timed(lambda: raw.request_frame("Fetch", 11, fetch), 20)
        finally:
            raw.close()
        return ms, rss_mb()


SCALE_POINTS: dict[str, Callable[[int], tuple[float, float]]] = {
    "metadata": scale_metadata,
    "idle": scale_idle_connections,
    "group": scale_group_rebalance,
    "retention": scale_retention,
    "fetch": scale_fetch_newest,
}


def scale_point(name: str, n: int) -> tuple[float, float]:
    """One point of a curve, measured in a fresh interpreter so that its RSS is its own."""
    out = subprocess.run(
        [sys.executable, __file__, "--scale-point", name, str(n)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    lines = out.stdout.strip().splitlines()
    if out.returncode or not lines:
        raise SystemExit(f"scale point {name} {n} failed:\n{out.stderr[-2000:]}")
    value, rss = lines[-1].split()
    return float(value), float(rss)


def print_scale(quick: bool) -> None:
    curves: list[tuple[str, str, str, list[int], int, str]] = [
        # title, point name, unit, sizes, shown multiplier, target
        ("Metadata (all topics) ms", "metadata", "partitions", [1, 10, 100], 100, "<= 50 ms"),
        (
            "produce+flush p50 ms beside idle connections",
            "idle",
            "idle conns",
            [10, 100, 1000],
            1,
            "flat",
        ),
        ("classic group formed (Join+Sync) ms", "group", "members", [1, 10, 100], 1, ""),
        (
            "retained 100 B messages: RSS growth / raw bytes",
            "retention",
            "messages",
            [1_000, 10_000, 100_000] if quick else [10_000, 100_000, 1_000_000],
            1,
            "<= 1.1",
        ),
        (
            "Fetch newest 1,000 records ms",
            "fetch",
            "log records",
            [1_000, 10_000, 100_000] if quick else [1_000, 100_000, 10_000_000],
            1,
            "flat",
        ),
    ]
    print("\nscale curves (mockkafka; each point in a fresh process: value, and its RSS)")
    for title, name, unit, sizes, shown, target in curves:
        print(f"  {title}  [{target}]" if target else f"  {title}")
        for n in sizes:
            value, rss = scale_point(name, n)
            print(f"    {n * shown:>12,} {unit:<11} {value:9.2f}   RSS {rss:6.0f} MiB")


# -- the table ------------------------------------------------------------------------------


@dataclass
class Row:
    name: str
    unit: str
    higher_is_better: bool
    target: str = ""  # the target for the ratio, as text
    values: dict[str, list[float]] = field(default_factory=dict)

    def add(self, target: str, value: float) -> None:
        self.values.setdefault(target, []).append(value)

    def ratios(self, target: str, ref_target: str = "librdkafka") -> list[float]:
        mine, ref = self.values.get(target, []), self.values.get(ref_target, [])
        out = []
        for a, b in zip(mine, ref, strict=False):
            if a > 0 and b > 0:
                out.append(a / b if self.higher_is_better else b / a)
        return out


def fmt(v: list[float]) -> str:
    if not v:
        return "-"
    m = statistics.median(v)
    return f"{m:,.0f}" if m >= 100 else f"{m:.2f}"


#: Ratio columns: (heading, mockkafka target, reference target).
RATIOS = (
    ("in-p/rdk", "in-process", "librdkafka"),
    ("proc/rdk", "process", "librdkafka"),
    ("proc/kfake", "process", "kfake"),
    ("proc/kafka", "process", "kafka"),
)


def print_table(rows: list[Row], reps: int) -> None:
    print(
        f"\nmedian of {reps} paired repetitions; ratio = mockkafka vs the peer, >1 is better"
        " (kafka: one broker, replication factor 1; the others 3 brokers, RF 3)"
    )
    head = f"{'figure':<34} {'unit':<9}"
    head += "".join(f" {t:>11}" for t in TARGETS)
    head += "".join(f" {h:>10}" for h, _, _ in RATIOS) + "  target"
    print(head)
    print("-" * len(head))
    for r in rows:
        line = f"{r.name:<34} {r.unit:<9}"
        line += "".join(f" {fmt(r.values.get(t, [])):>11}" for t in TARGETS)
        for _, mine, ref in RATIOS:
            rs = r.ratios(mine, ref)
            line += f" {statistics.median(rs):>10.2f}" if rs else f" {'-':>10}"
        print(f"{line}  {r.target}")
    for t, why in UNAVAILABLE.items():
        print(f"{t}: not measured: {why}")


def measure(
    t: str,
    topics: dict[str, int],
    rows: dict[str, Row],
    messages: int,
    partitions: int,
    rt_rounds: int,
    txn_s: float,
    inits: int,
) -> None:
    """One repetition of every figure but start-to-ready on target ``t``."""
    with open_target(t, topics) as bootstrap:
        rows["produce"].add(t, produce(bootstrap, messages, 100, partitions))
        rate, held = consume(bootstrap, messages, partitions)
        rows["consume"].add(t, rate)
        rows["held"].add(t, held)
        p50, p99 = round_trip(bootstrap, rt_rounds)
        rows["rt50"].add(t, p50)
        rows["rt99"].add(t, p99)
        rate, init_ms = transactions(bootstrap, txn_s, inits)
        rows["txn"].add(t, rate)
        rows["init"].add(t, statistics.median(init_ms))
        rows["init_mean"].add(t, statistics.mean(init_ms))


def pipeline_rows(args: argparse.Namespace, targets: list[str], reps: int) -> list[Row]:
    """The pipelines of ``bench_pipeline.py`` as rows: seconds per run, ``process`` beside
    kfake and Kafka (each client's runs take turns on the targets, as the other rows do)."""
    n = args.pipeline_records or (20_000 if args.quick else 500_000)
    # --quick leaves Kafka out of them: a JVM per client and seconds per run (two minutes).
    on = [
        t
        for t in ("process", "kfake", "kafka")
        if t in targets and not (args.quick and t == "kafka")
    ]
    if "process" not in on:
        return []
    # The pipelines take longer than the other figures: --quick runs them once.
    results, missing = bench_pipeline.run(
        on,
        list(bench_pipeline.CLIENTS),
        list(bench_pipeline.VARIANTS),
        n,
        1 if args.quick else reps,
    )
    for what, why in missing.items():
        UNAVAILABLE[f"pipelines on {what}"] = why
    out = []
    for (client, variant), by in results.items():
        short = "franz" if client == "franz-go" else "ck"
        row = Row(f"pipe {short} {variant} {n // 1000}k", "s", False, "<= 1.0x kfake")
        for t, values in by.items():
            row.values[t] = values
        out.append(row)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, for CI and a first look")
    ap.add_argument("--messages", type=int, help="messages produced and consumed (1,000,000)")
    ap.add_argument("--reps", type=int, help="paired repetitions (3; --quick 3)")
    ap.add_argument("--only", choices=TARGETS, action="append", help="restrict targets")
    ap.add_argument("--no-scale", action="store_true", help="skip the scale curves")
    ap.add_argument(
        "--no-pipelines", action="store_true", help="skip the pipeline rows (bench_pipeline.py)"
    )
    ap.add_argument(
        "--pipeline-records",
        type=int,
        help="records per pipeline run (500,000; --quick 20,000)",
    )
    ap.add_argument("--scale-only", action="store_true", help="only the scale curves")
    ap.add_argument(
        "--start-only",
        action="store_true",
        help="only start-to-ready and the first answers (issue 33)",
    )
    ap.add_argument(
        "--scale-point",
        nargs=2,
        metavar=("NAME", "N"),
        help=f"print one point of a scale curve ({', '.join(SCALE_POINTS)}) and its RSS",
    )
    args = ap.parse_args(argv)
    q = args.quick
    messages = args.messages or (50_000 if q else 1_000_000)
    reps = args.reps or 3
    rt_rounds, txn_s, inits, start_rounds = (100, 1.0, 6, 5) if q else (500, 3.0, 12, 20)
    targets = args.only or list(TARGETS)
    for t, problem in (("kfake", peers.kfake_problem), ("kafka", peers.kafka_problem)):
        if t in targets:
            why = problem()
            if why:
                UNAVAILABLE[t] = why
                targets.remove(t)
    partitions = 32
    topics = {TOPIC: partitions, TXN_TOPIC: 3}

    rows = {
        "produce": Row(f"produce {messages:,} x 100 B", "msg/s", True, ">= 1.0"),
        "consume": Row(f"consume {partitions} partitions", "msg/s", True, ">= 1.0"),
        "held": Row("  messages held when consuming", "msgs", True),
        "rt50": Row("produce+flush round trip p50", "ms", False, "<= 1.2x (>= 0.83)"),
        "rt99": Row("produce+flush round trip p99", "ms", False, "<= 1.0x (>= 1.0)"),
        "txn": Row("transactional commits", "commit/s", True, ">= 1.0"),
        "init": Row("init_transactions() median", "ms", False, "<= 1.2x (>= 0.83)"),
        "init_mean": Row("init_transactions() mean", "ms", False, "<= 1.2x (>= 0.83)"),
        "ready": Row("3-broker start-to-ready", "ms", False, "in-p <= 5 ms"),
        "ApiVersions": Row("  first ApiVersions answer", "ms", False),
        "CreateTopics": Row("  first CreateTopics answer", "ms", False, "serve <= 150 ms"),
        "Produce": Row("  first Produce answer (acks=all)", "ms", False, "serve <= 150 ms"),
        "reset": Row("Cluster.reset() (fixture reset)", "ms", False, "<= 2 ms"),
    }
    if args.scale_point:
        value, rss = SCALE_POINTS[args.scale_point[0]](int(args.scale_point[1]))
        print(f"{value} {rss}")
        return 0
    if args.scale_only:
        print_scale(q)
        return 0
    for rep in range(reps):
        order = targets[rep % len(targets) :] + targets[: rep % len(targets)]
        for t in order:
            if t in UNAVAILABLE:
                continue
            print(f"rep {rep + 1}/{reps}: {t} ...", file=sys.stderr, flush=True)
            gc.collect()
            try:
                if args.start_only:
                    start_to_answers(t, 1)  # this process's imports, the child's .pyc
                else:
                    measure(t, topics, rows, messages, partitions, rt_rounds, txn_s, inits)
                # a child process per round: a few are enough for its median
                rounds = min(start_rounds, 3) if t in ("process", "kfake") else start_rounds
                figures = start_to_answers(t, rounds)
                for name in ("ready", *FIRST_ANSWERS):
                    if name in figures:
                        rows[name].add(t, figures[name])
            except (SystemExit, RuntimeError, KafkaException) as exc:
                if t in ("in-process", "process", "librdkafka"):
                    raise
                UNAVAILABLE[t] = f"failed in repetition {rep + 1}: {exc}"
        reset = None if args.start_only else fixture_reset(start_rounds)
        if reset is not None:
            rows["reset"].add("in-process", reset)
    table = list(rows.values())
    if args.start_only:
        print_table([rows[k] for k in ("ready", *FIRST_ANSWERS)], reps)
        return 0
    if not args.no_pipelines:
        table += pipeline_rows(args, targets, reps)
    print_table(table, reps)
    if not args.no_scale:
        print_scale(q)
    return 0


if __name__ == "__main__":
    sys.exit(main())

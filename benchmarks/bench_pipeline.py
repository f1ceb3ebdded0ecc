"""The pipelines users run in tests, against mockkafka, franz-go's kfake and Apache Kafka.

    python benchmarks/bench_pipeline.py            # 500,000 records per run
    python benchmarks/bench_pipeline.py --quick    # 20,000 records per run
    python benchmarks/bench_pipeline.py --client franz-go --variant group-eager -n 100000

One run: a producer writes N records (the value is the record's index) to topic 0; three
consumer groups each consume one topic and produce the next (0 -> 1 -> 2 -> 3); a reader
checks that topic 3 holds every index exactly once. Each group starts with one member and a
second joins while data flows (after a quarter of the records), so every group rebalances
under load. A stage takes at most 500 records per poll (``max.poll.records``' default), and
after producing them commits their offsets before it polls again.

Variants: ``group-eager`` (range), ``group-cooperative`` (cooperative-sticky),
``group-consumer`` (KIP-848, the coordinator assigns), and ``txn``: consume-transform-produce
in transactions, offsets committed in each transaction, read_committed all along.

Clients: ``franz-go`` (``benchmarks/pipeline/main.go``, built from the Go module proxy as
kfake is) and ``confluent-kafka`` (this file, a thread per group member in this process).

Targets: ``process`` (``mockkafka serve --brokers 3``), ``kfake`` (3 brokers) and ``kafka``
(one KRaft broker, replication factor 1, only with ``--kafka``: a JVM start costs seconds).
The figure is the wall time from the producer's start to the reader's last record; the
targets run back to back for each variant. ``benchmarks/compare.py`` prints these rows in its
table. Every loop is bounded in count and time; only 127.0.0.1 is used.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import peers  # noqa: E402

VARIANTS = ("group-eager", "group-cooperative", "group-consumer", "txn")
CLIENTS = ("franz-go", "confluent-kafka")
TARGETS = ("process", "kfake", "kafka")
MAX_POLL = 500
MEMBERS = 2
RUN_TIMEOUT_S = 300.0
QUIET = {"log_level": 3}


# -- franz-go -----------------------------------------------------------------------------


#: With ``--requests``: the franz-go program counts every client's requests per API and the
#: time each waited for its answer; {(variant, target): [{api: {"requests", "wait_ms"}}]}.
REQUESTS: dict[tuple[str, str], list[dict[str, dict[str, float]]]] = {}
COUNT_REQUESTS = [False]


def franz_go(bootstrap: str, variant: str, n: int, rf: int, timeout: float) -> float:
    """Seconds of one run with the franz-go program (raises RuntimeError with its stderr)."""
    binary = peers.pipeline_binary()
    if isinstance(binary, str):
        raise RuntimeError(binary)
    mode, _, balancer = variant.partition("-")
    args = [str(binary), "-bootstrap", bootstrap, "-n", str(n), "-rf", str(rf), "-mode", mode]
    args += ["-members", str(MEMBERS), "-max-poll", str(MAX_POLL), "-timeout", f"{timeout}s"]
    if balancer:
        args += ["-balancer", balancer]
    if COUNT_REQUESTS[0]:
        args.append("-requests")
    try:
        out = subprocess.run(
            args, capture_output=True, text=True, timeout=timeout + 30, check=False
        )
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"franz-go {variant}: no answer in {timeout + 30:.0f} s") from None
    if out.returncode:
        raise RuntimeError(f"franz-go {variant}: {out.stderr.strip()[-500:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    if "requests" in result:
        REQUESTS.setdefault((variant, _TARGET[0]), []).append(result["requests"])
    return float(result["seconds"])


# -- confluent-kafka ----------------------------------------------------------------------


def confluent(bootstrap: str, variant: str, n: int, rf: int, timeout: float) -> float:
    """Seconds of one run with confluent-kafka (raises RuntimeError on a failed check)."""
    from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    prefix = f"pipe-{uuid.uuid4().hex[:8]}"
    topics = [f"{prefix}-t{i}" for i in range(4)]
    admin = AdminClient({"bootstrap.servers": bootstrap, **QUIET})
    for name, fut in admin.create_topics(
        [NewTopic(t, 6, rf) for t in topics], operation_timeout=30
    ).items():
        try:
            fut.result(60)
        except KafkaException as exc:
            raise RuntimeError(f"creating {name}: {exc}") from None
    mode, _, balancer = variant.partition("-")
    txn = mode == "txn"
    retry_commit = {
        KafkaError.REBALANCE_IN_PROGRESS,
        KafkaError.ILLEGAL_GENERATION,
        KafkaError.UNKNOWN_MEMBER_ID,
        KafkaError.STALE_MEMBER_EPOCH,
    }
    deadline = time.monotonic() + timeout
    stop = threading.Event()
    forwarded = [0, 0, 0]
    lock = threading.Lock()
    errors: list[str] = []

    def consumer_conf(group: str) -> dict[str, Any]:
        conf: dict[str, Any] = {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            **QUIET,
        }
        if txn:
            conf["isolation.level"] = "read_committed"
        elif balancer == "consumer":
            conf["group.protocol"] = "consumer"
        else:
            conf["partition.assignment.strategy"] = (
                "range" if balancer == "eager" else "cooperative-sticky"
            )
        return conf

    def member(stage: int, index: int) -> None:
        want = n * index // (2 * MEMBERS)
        while forwarded[stage] < want and not stop.is_set() and time.monotonic() < deadline:
            time.sleep(0.002)
        if stop.is_set():
            return
        src, dst = topics[stage], topics[stage + 1]
        c = Consumer(consumer_conf(f"{prefix}-g{stage + 1}"))
        pconf: dict[str, Any] = {"bootstrap.servers": bootstrap, "linger.ms": 5, **QUIET}
        if txn:
            pconf["transactional.id"] = f"{prefix}-g{stage + 1}-{index}"
        p = Producer(pconf)
        # Offsets produced downstream but not committed yet: a commit refused while the
        # group rebalances (REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION: the cooperative
        # protocol keeps consuming meanwhile) is retried with the next batch, and the
        # offsets of partitions about to be revoked are committed in on_revoke, before
        # another member takes them over (else it would consume them again).
        pending: dict[int, int] = {}

        def commit(partitions: set[int] | None = None) -> None:
            chosen = {k: v for k, v in pending.items() if partitions is None or k in partitions}
            if not chosen:
                return
            try:
                c.commit(
                    offsets=[TopicPartition(src, k, v) for k, v in chosen.items()],
                    asynchronous=False,
                )
            except KafkaException as exc:
                if exc.args[0].code() not in retry_commit:
                    raise
                return
            for k, v in chosen.items():
                if pending.get(k) == v:
                    del pending[k]

        def on_revoke(_c: Any, parts: list[Any]) -> None:
            if not txn:
                commit({tp.partition for tp in parts})

        try:
            if txn:
                p.init_transactions(30)
            c.subscribe([src], on_revoke=on_revoke)
            while not stop.is_set() and time.monotonic() < deadline:
                msgs = [m for m in c.consume(MAX_POLL, 0.2) if m.error() is None]
                if not msgs:
                    continue
                if txn:
                    p.begin_transaction()
                for m in msgs:
                    while True:
                        try:
                            p.produce(dst, m.value(), m.key())
                            break
                        except BufferError:
                            p.poll(0.01)
                if txn:
                    p.send_offsets_to_transaction(
                        c.position(c.assignment()), c.consumer_group_metadata(), 30
                    )
                    p.commit_transaction(30)
                else:
                    if p.flush(30):
                        raise RuntimeError(f"stage {stage + 1}: produce did not complete")
                    for m in msgs:
                        pending[m.partition()] = max(pending.get(m.partition(), 0), m.offset() + 1)
                    commit()
                with lock:
                    forwarded[stage] += len(msgs)
        except Exception as exc:  # reported by the check below
            errors.append(f"stage {stage + 1} member {index}: {exc!r}")
        finally:
            c.close()
            p.flush(10)

    def producer() -> None:
        p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, **QUIET})
        for i in range(n):
            v = str(i).encode()
            while True:
                try:
                    p.produce(topics[0], v, v)
                    break
                except BufferError:
                    p.poll(0.01)
        if p.flush(60):
            errors.append("producer: flush timed out")

    reader_conf = consumer_conf(f"{prefix}-reader")
    reader_conf.pop("group.protocol", None)
    reader_conf.pop("partition.assignment.strategy", None)
    reader = Consumer(reader_conf)
    from confluent_kafka import OFFSET_BEGINNING

    reader.assign([TopicPartition(topics[3], i, OFFSET_BEGINNING) for i in range(6)])
    threads = [
        threading.Thread(target=member, args=(s, i), daemon=True)
        for s in range(3)
        for i in range(MEMBERS)
    ]
    start = time.perf_counter()
    for t in threads:
        t.start()
    prod = threading.Thread(target=producer, daemon=True)
    prod.start()
    seen = bytearray(n)
    unique = dupes = alien = 0

    def count(msgs: list[Any]) -> None:
        nonlocal unique, dupes, alien
        for m in msgs:
            if m.error() is not None:
                continue
            try:
                i = int(m.value())
            except (TypeError, ValueError):
                alien += 1
                continue
            if not 0 <= i < n:
                alien += 1
            elif seen[i]:
                dupes += 1
            else:
                seen[i] = 1
                unique += 1

    try:
        while unique < n and time.monotonic() < deadline and not errors:
            count(reader.consume(10_000, 0.2))
        elapsed = time.perf_counter() - start
        stop.set()
        tail = time.monotonic() + 0.5
        while time.monotonic() < tail:
            count(reader.consume(10_000, 0.1))
    finally:
        stop.set()
        reader.close()
        for t in [*threads, prod]:
            t.join(60)
    if unique < n or dupes or alien or errors:
        raise RuntimeError(
            f"confluent-kafka {variant}: topic 3 holds {unique} of {n} records, {dupes}"
            f" duplicates, {alien} foreign; {errors[:3]}"
        )
    return elapsed


CLIENT_RUNS: dict[str, Callable[[str, str, int, int, float], float]] = {
    "franz-go": franz_go,
    "confluent-kafka": confluent,
}


# -- targets ------------------------------------------------------------------------------


#: The pid of the ``mockkafka serve`` that ``open_target("process")`` runs (None outside).
_SERVE_PID: list[int | None] = [None]

_TARGET = [""]  # the target being measured (for REQUESTS)

#: {(client, variant): [CPU seconds the ``serve`` process spent on each run]}, filled by
#: :func:`run` (Linux: from /proc; empty elsewhere).
SERVER_CPU: dict[tuple[str, str], list[float]] = {}


def process_cpu(pid: int | None) -> float | None:
    """User + system CPU seconds of process ``pid`` so far (None: not on Linux, or gone)."""
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fp:
            fields = fp.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _first_answer(bootstrap: str, timeout: float = 30.0) -> None:
    """Send ApiVersions v0 to the first broker and wait for its answer (``serve`` prints
    its line once it answers, issue 33: this only checks that it does)."""
    host, port = bootstrap.split(",")[0].rsplit(":", 1)
    # api key 18, version 0, correlation id 1, client id "b"
    body = (18).to_bytes(2, "big") + (0).to_bytes(2, "big") + (1).to_bytes(4, "big")
    body += (1).to_bytes(2, "big") + b"b"
    with socket.create_connection((host, int(port)), timeout=timeout) as s:
        s.sendall(len(body).to_bytes(4, "big") + body)
        if not s.recv(4):
            raise RuntimeError("mockkafka serve closed the connection before answering")


@contextmanager
def open_target(name: str) -> Iterator[tuple[str, int]]:
    """(bootstrap servers, replication factor) of a fresh cluster."""
    if name == "process":
        root = HERE.parent
        proc = subprocess.Popen(
            [sys.executable, "-m", "mockkafka.cli", "serve", "--brokers", "3"],
            stdout=subprocess.PIPE,
            text=True,
            cwd=root,
        )
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline().strip()
            if not line.startswith("bootstrap.servers="):
                raise RuntimeError(f"mockkafka serve did not start: {line!r}")
            bootstrap = line.split("=", 1)[1]
            _first_answer(bootstrap)  # the import is over: serve CPU counts requests only
            _SERVE_PID[0] = proc.pid
            yield bootstrap, 3
        finally:
            _SERVE_PID[0] = None
            proc.terminate()
            proc.wait(20)
    elif name == "kfake":
        kfake = peers.KfakeProcess(3, {})
        try:
            yield kfake.bootstrap_servers, 3
        finally:
            kfake.close()
    else:
        broker = peers.KafkaBroker({})
        try:
            yield broker.bootstrap_servers, 1
        finally:
            broker.close()


def run(
    targets: list[str],
    clients: list[str],
    variants: list[str],
    n: int,
    reps: int = 1,
    log: Callable[[str], None] = lambda s: print(s, file=sys.stderr, flush=True),
) -> tuple[dict[tuple[str, str], dict[str, list[float]]], dict[str, str]]:
    """({(client, variant): {target: [seconds per repetition]}}, {what: why it is missing}).

    One cluster per (target, client, repetition) serves every variant (each run makes its
    own topics and groups); the targets take turns, their order rotating per repetition.
    A run that fails its check (a record missing or duplicated, an error, the deadline) is
    reported under ``"CLIENT VARIANT on TARGET"`` and the others go on; a peer that cannot
    start is left out under its name."""
    results: dict[tuple[str, str], dict[str, list[float]]] = {}
    missing: dict[str, str] = {}
    for t, problem in (("kfake", peers.kfake_problem), ("kafka", peers.kafka_problem)):
        if t in targets:
            why = problem()
            if why:
                missing[t] = why
    if "franz-go" in clients:
        why = peers.pipeline_problem()
        if why:
            missing["franz-go"] = why
    live = [t for t in targets if t not in missing]
    for rep in range(reps):
        order = live[rep % max(1, len(live)) :] + live[: rep % max(1, len(live))]
        for client in clients:
            if client in missing:
                continue
            for t in order:
                if t in missing:
                    continue
                try:
                    with open_target(t) as (bootstrap, rf):
                        for v in variants:
                            log(f"pipeline rep {rep + 1}/{reps}: {client} {v} on {t} ...")
                            _TARGET[0] = t
                            cpu0 = process_cpu(_SERVE_PID[0]) if t == "process" else None
                            try:
                                s = CLIENT_RUNS[client](bootstrap, v, n, rf, RUN_TIMEOUT_S)
                            except RuntimeError as exc:
                                missing[f"{client} {v} on {t}"] = f"FAILED: {exc}"
                                continue
                            results.setdefault((client, v), {}).setdefault(t, []).append(s)
                            cpu1 = process_cpu(_SERVE_PID[0]) if cpu0 is not None else None
                            if cpu0 is not None and cpu1 is not None:
                                SERVER_CPU.setdefault((client, v), []).append(cpu1 - cpu0)
                except RuntimeError as exc:  # the target did not start
                    missing[t] = f"failed: {exc}"
    return results, missing


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="20,000 records per run")
    ap.add_argument("-n", type=int, help="records per run (500,000)")
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--client", choices=CLIENTS, action="append")
    ap.add_argument("--variant", choices=VARIANTS, action="append")
    ap.add_argument("--target", choices=TARGETS, action="append")
    ap.add_argument("--kafka", action="store_true", help="also Apache Kafka (a JVM start)")
    ap.add_argument(
        "--requests",
        action="store_true",
        help="franz-go: print each API's requests and mean answer wait per target",
    )
    args = ap.parse_args(argv)
    COUNT_REQUESTS[0] = args.requests
    n = args.n or (20_000 if args.quick else 500_000)
    targets = args.target or (["process", "kfake", "kafka"] if args.kafka else ["process", "kfake"])
    results, missing = run(
        targets, args.client or list(CLIENTS), args.variant or list(VARIANTS), n, args.reps
    )
    import statistics

    print(
        f"\npipelines, {n:,} records, seconds (median of {args.reps}); ratio >1: mockkafka faster"
    )
    print(
        f"{'client':<16} {'variant':<18}"
        + "".join(f" {t:>9}" for t in targets)
        + "  proc/kfake  serve CPU s"
    )
    for (client, v), by in results.items():
        line = f"{client:<16} {v:<18}"
        line += "".join(
            f" {statistics.median(by[t]):>9.2f}" if t in by else f" {'-':>9}" for t in targets
        )
        if "process" in by and "kfake" in by:
            ratio = statistics.median(
                k / p for p, k in zip(by["process"], by["kfake"], strict=False)
            )
            line += f"  {ratio:10.2f}"
        else:
            line += f"  {'-':>10}"
        cpu = SERVER_CPU.get((client, v))
        if cpu:
            line += f"  {statistics.median(cpu):11.2f}"
        print(line)
    for t, why in missing.items():
        print(f"{t}: not measured: {why}")
    if REQUESTS:
        print_requests(targets)
    # a failed check on mockkafka is a finding: say it with the exit status
    return 1 if any(k.endswith(" on process") or k == "process" for k in missing) else 0


def print_requests(targets: list[str]) -> None:
    """Per variant and API: requests per run and the mean wait for an answer (ms), per
    target (medians over the repetitions): what the broker was asked, what clients waited."""
    import statistics

    for variant in dict.fromkeys(v for v, _ in REQUESTS):
        by = {t: REQUESTS.get((variant, t), []) for t in targets}
        apis = sorted({api for runs in by.values() for run in runs for api in run})
        print(f"\nfranz-go {variant}: requests per run / mean wait ms, per target")
        print(f"{'api':<24}" + "".join(f" {t:>20}" for t in targets if by[t]))
        for api in apis:
            cells = []
            for t in targets:
                if not by[t]:
                    continue
                got = [run.get(api, {"requests": 0, "wait_ms": 0.0}) for run in by[t]]
                count = statistics.median(g["requests"] for g in got)
                waits = [g["wait_ms"] / g["requests"] for g in got if g["requests"]]
                mean = statistics.median(waits) if waits else 0.0
                cells.append(f" {count:>10,.0f} / {mean:>6.2f}")
            print(f"{api:<24}" + "".join(cells))


if __name__ == "__main__":
    sys.exit(main())

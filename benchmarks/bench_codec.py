"""Wire-codec throughput: decode and encode ops/s of three message shapes brokers see most.

Run ``python benchmarks/bench_codec.py`` (``--seconds`` sets the time per case; the default
run takes about 10 s). It prints one row per (message, direction) with ops/s and the size
of the encoded message. The shapes:

- Produce v9 request: 10 topics x 10 partitions, each with a ~1 KiB records blob.
- Fetch v13 response: the same shape, answering a fetch.
- Metadata v12 response: 3 brokers and 10 topics x 10 partitions (100 partitions).

Records stay opaque bytes in the codec (``records.py`` looks inside), so the blob is random
bytes of the right size.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mockkafka.protocol.codec import Message, MessageCodec, codec

TOPICS = 10
PARTITIONS = 10
RECORDS_SIZE = 1024


def produce_request() -> Message:
    blob = os.urandom(RECORDS_SIZE)
    return {
        "transactional_id": None,
        "acks": -1,
        "timeout_ms": 30000,
        "topic_data": [
            {
                "name": f"topic-{t}",
                "partition_data": [{"index": p, "records": blob} for p in range(PARTITIONS)],
            }
            for t in range(TOPICS)
        ],
    }


def fetch_response() -> Message:
    blob = os.urandom(RECORDS_SIZE)
    return {
        "throttle_time_ms": 0,
        "error_code": 0,
        "session_id": 12345,
        "responses": [
            {
                "topic": f"topic-{t}",  # v12 and older; v13+ carries topic_id
                "topic_id": uuid.uuid4(),
                "partitions": [
                    {
                        "partition_index": p,
                        "error_code": 0,
                        "high_watermark": 1000 + p,
                        "last_stable_offset": 1000 + p,
                        "log_start_offset": 0,
                        "aborted_transactions": None,
                        "preferred_read_replica": -1,
                        "records": blob,
                    }
                    for p in range(PARTITIONS)
                ],
            }
            for t in range(TOPICS)
        ],
    }


def metadata_response() -> Message:
    brokers = [
        {"node_id": i, "host": "127.0.0.1", "port": 9092 + i, "rack": None} for i in range(3)
    ]
    return {
        "throttle_time_ms": 0,
        "brokers": brokers,
        "cluster_id": "mockkafka-bench",
        "controller_id": 0,
        "topics": [
            {
                "error_code": 0,
                "name": f"topic-{t}",
                "topic_id": uuid.uuid4(),
                "is_internal": False,
                "partitions": [
                    {
                        "error_code": 0,
                        "partition_index": p,
                        "leader_id": p % 3,
                        "leader_epoch": 5,
                        "replica_nodes": [0, 1, 2],
                        "isr_nodes": [0, 1, 2],
                        "offline_replicas": [],
                    }
                    for p in range(PARTITIONS)
                ],
                "topic_authorized_operations": -2147483648,
            }
            for t in range(TOPICS)
        ],
    }


CASES: list[tuple[str, int, Callable[[], Message]]] = [
    ("ProduceRequest", 9, produce_request),
    ("FetchResponse", 13, fetch_response),
    ("MetadataResponse", 12, metadata_response),
]


def ops_per_second(fn: Callable[[], Any], seconds: float) -> float:
    """Best of three timed batches of ``fn`` calls (after a warm-up), in calls per second."""
    fn()
    n = 1
    while True:  # calibrate: a batch of about seconds / 6
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t0
        if dt >= seconds / 6:
            break
        n *= 2
    best = dt / n
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - t0) / n)
    return 1.0 / best


def _decoder(c: MessageCodec, data: bytes) -> Callable[[], Any]:
    return lambda: c.decode(data)


def _encoder(c: MessageCodec, msg: Message) -> Callable[[], Any]:
    return lambda: c.encode(msg)


def run(seconds: float) -> list[tuple[str, str, float, int]]:
    rows = []
    for name, version, build in CASES:
        c = codec(name, version)
        msg = build()
        data = c.encode(msg)
        decoded, end = c.decode(data)
        assert end == len(data) and c.encode(decoded) == data, name
        label = f"{name} v{version}"
        rows.append((label, "decode", ops_per_second(_decoder(c, data), seconds), len(data)))
        rows.append((label, "encode", ops_per_second(_encoder(c, msg), seconds), len(data)))
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--seconds", type=float, default=1.5, help="time per case (default 1.5)")
    args = ap.parse_args(argv)
    rows = run(args.seconds)
    print(f"{'message':<24} {'op':<7} {'ops/s':>10} {'bytes':>8} {'MB/s':>8}")
    for label, op, ops, size in rows:
        print(f"{label:<24} {op:<7} {ops:>10,.0f} {size:>8,} {ops * size / 1e6:>8,.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

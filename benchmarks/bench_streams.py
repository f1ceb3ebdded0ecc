"""A Kafka Streams word count end to end on a streams group (KIP-1071), records per second.

Run ``python benchmarks/bench_streams.py`` (``--lines`` / ``--rounds``; needs Java, Maven and
the kafka-streams 4.4.0 jars, as the Java tier does; about half a minute per round). The
Streams application (``tests/interop/java/streams/src/WordCount.java``, compiled once into
``.cache/``) runs against a three-broker ``mockkafka.Cluster`` in this process, with
``group.protocol=streams`` and the record cache off. Once it is RUNNING, ``--lines`` lines of
five words are produced to a four-partition input topic; the figure is input records per
second from the first produce until the output topic holds the final count of every word
(through the repartition topic and the changelogged store). Median over the rounds.
"""

from __future__ import annotations

import argparse
import statistics
import struct
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]


def one_round(lines: int) -> float:
    """Seconds from the first input record to the last final count."""
    import confluent_kafka as ck

    import mockkafka
    from tests.interop._build import build_java_streams

    program = build_java_streams("4.4.0")
    text = [" ".join(WORDS[(i + k) % len(WORDS)] for k in range(5)) for i in range(lines)]
    want = Counter(w for line in text for w in line.split())
    with mockkafka.Cluster(brokers=3) as cluster, tempfile.TemporaryDirectory() as tmp:
        cluster.create_topic("text", partitions=4, replication_factor=3)
        cluster.create_topic("counts", partitions=4, replication_factor=3)
        stop = Path(tmp) / "stop"
        proc = program.start(
            cluster.bootstrap_servers, "text", "counts", "bench-wc", tmp, str(stop)
        )
        try:
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == "RUNNING", "WordCount did not start"
            producer = ck.Producer({"bootstrap.servers": cluster.bootstrap_servers, "linger.ms": 5})
            start = time.perf_counter()
            for i, line in enumerate(text):
                producer.produce("text", line.encode(), key=str(i).encode())
                if i % 5000 == 0:
                    producer.poll(0)
            assert producer.flush(60) == 0
            deadline = start + 300
            while time.perf_counter() < deadline:
                got = {
                    r.key.decode(): struct.unpack(">q", r.value)[0]
                    for r in cluster.topic("counts").records()
                    if r.key is not None and r.value is not None
                }
                if got == dict(want):
                    break
                time.sleep(0.1)
            else:
                raise AssertionError(f"counts never complete: {got}")
            return time.perf_counter() - start
        finally:
            stop.touch()
            try:
                proc.communicate(timeout=60)
            except Exception:
                proc.kill()
                proc.communicate()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lines", type=int, default=20_000)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    times = [one_round(a.lines) for _ in range(a.rounds)]
    med = statistics.median(times)
    print("| figure | value |\n| --- | ---: |")
    print(
        f"| Streams word count end to end ({a.lines:,} lines of 5 words), input records/s "
        f"| {a.lines / med:,.0f} |"
    )


if __name__ == "__main__":
    main()

"""Share-group (KIP-932) delivery throughput of the broker state machine, sans-IO.

Run ``python benchmarks/bench_share.py`` (``--records`` / ``--batch`` / ``--rounds``; a few
seconds). One member of a share group drains a one-partition topic holding ``--records``
records in batches of ``--batch``: each ShareFetch acquires (at most 500 records, Kafka
4.0's per-partition limit) and acknowledges (ACCEPT) what the previous one acquired, as the
Java share consumer does with explicit acknowledgement. The figure is records delivered and
acknowledged per second through the ShareFetch handler (request decoding and the socket are
not included: see ``compare.py`` for the wire figures). Median over the rounds.

``--client confluent`` measures the same over sockets with a real client instead:
confluent-kafka's ``ShareConsumer`` (explicit acknowledgement, ShareFetch v1+) drains the
topic from a three-broker ``mockkafka.Cluster`` in this process; the figure is records
received and acknowledged per second, from the first poll to the last record.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mockkafka.cluster.configs import ResourceType, resource_configs
from mockkafka.cluster.produce import append_records
from mockkafka.cluster.state import ClusterConfig, ClusterState, ManualClock
from mockkafka.handlers.base import call_handler, load_handlers
from mockkafka.protocol import records as rec
from mockkafka.protocol.codec import codec

GROUP = "bench"


def _request(api: str, body: dict[str, Any]) -> dict[str, Any]:
    full: dict[str, Any] = codec(f"{api}Request", 0).default()
    full.update(body)
    return full


def one_round(records: int, batch: int) -> float:
    """Seconds to deliver and acknowledge every record once."""
    state = ClusterState(ClusterConfig(brokers=1), clock=ManualClock())
    load_handlers()
    topic = state.create_topic("t", 1, 1)
    p = topic.partition(0)
    data = rec.encode_batch([(None, b"x" * 100, None, 0) for _ in range(batch)])
    for _ in range(0, records, batch):
        append_records(state, topic, p, data)
    resource_configs(state, ResourceType.GROUP, GROUP)["share.auto.offset.reset"] = "earliest"
    corr = iter(range(1, 1 << 30))

    def call(api: str, body: dict[str, Any]) -> Any:
        return call_handler(
            state,
            api,
            _request(api, body),
            version=0,
            broker_id=1,
            client_id="bench",
            correlation_id=next(corr),
            codec_roundtrip=False,
        )

    hb = call(
        "ShareGroupHeartbeat",
        {"group_id": GROUP, "member_epoch": 0, "subscribed_topic_names": ["t"]},
    )
    member = hb["member_id"]
    acks: list[dict[str, Any]] = []
    done = 0
    epoch = 0
    start = time.perf_counter()
    deadline = start + 60
    while done < records and time.perf_counter() < deadline:
        resp = call(
            "ShareFetch",
            {
                "group_id": GROUP,
                "member_id": member,
                "share_session_epoch": epoch,
                "topics": [
                    {
                        "topic_id": topic.topic_id,
                        "partitions": [
                            {
                                "partition_index": 0,
                                "partition_max_bytes": 1 << 20,
                                "acknowledgement_batches": acks,
                            }
                        ],
                    }
                ],
            },
        )
        epoch += 1
        acquired = [
            a for t in resp["responses"] for q in t["partitions"] for a in q["acquired_records"]
        ]
        acks = [
            {
                "first_offset": a["first_offset"],
                "last_offset": a["last_offset"],
                "acknowledge_types": [1],
            }
            for a in acquired
        ]
        done += sum(a["last_offset"] - a["first_offset"] + 1 for a in acquired)
    elapsed = time.perf_counter() - start
    assert done >= records, f"only {done} of {records} delivered"
    return elapsed


def one_wire_round(records: int, batch: int) -> float:
    """Seconds for confluent-kafka's ShareConsumer to receive and acknowledge every record."""
    import confluent_kafka as ck

    import mockkafka

    with mockkafka.Cluster(brokers=3) as cluster:
        cluster.create_topic("t", partitions=3, replication_factor=3)
        cluster.set_group_config(GROUP, {"share.auto.offset.reset": "earliest"})
        producer = ck.Producer(
            {
                "bootstrap.servers": cluster.bootstrap_servers,
                "linger.ms": 20,
                "batch.num.messages": batch,
            }
        )
        for i in range(records):
            producer.produce("t", b"x" * 100, partition=i % 3)
            if i % 10_000 == 0:
                producer.poll(0)
        assert producer.flush(60) == 0
        consumer = ck.ShareConsumer(
            {
                "bootstrap.servers": cluster.bootstrap_servers,
                "group.id": GROUP,
                "share.acknowledgement.mode": "explicit",
            }
        )
        consumer.subscribe(["t"])
        got = 0
        start = time.perf_counter()
        deadline = start + 120
        try:
            while got < records and time.perf_counter() < deadline:
                for m in consumer.poll(0.5) or []:
                    if m.error() is None:
                        consumer.acknowledge(m)
                        got += 1
                consumer.commit_async()
            elapsed = time.perf_counter() - start
        finally:
            consumer.close()
        assert got >= records, f"only {got} of {records} delivered"
        return elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--records", type=int, default=100_000)
    ap.add_argument("--batch", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--client", choices=("none", "confluent"), default="none")
    a = ap.parse_args()
    run = one_wire_round if a.client == "confluent" else one_round
    times = [run(a.records, a.batch) for _ in range(a.rounds)]
    med = statistics.median(times)
    how = "confluent-kafka ShareConsumer over sockets" if a.client == "confluent" else "sans-IO"
    print("| figure | value |\n| --- | ---: |")
    print(
        f"| share delivery ({how}), {a.records:,} records in batches of {a.batch}, "
        f"records/s | {a.records / med:,.0f} |"
    )


if __name__ == "__main__":
    main()

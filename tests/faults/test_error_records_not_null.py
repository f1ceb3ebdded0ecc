"""A partition error injected into a Fetch response leaves its records empty, never null.

Kafka sends an empty record set with a partition error; librdkafka rejects a null one as a
protocol error ("invalid MessageSetSize -1"). The soak test found this.
"""

from __future__ import annotations

import mockkafka
from tests.robustness._wire import Raw


def test_fault_partition_error_in_fetch_has_empty_records() -> None:
    with mockkafka.Cluster() as cluster:
        cluster.create_topic("t", partitions=1)
        cluster.produce("t", b"v")
        cluster.faults.on("Fetch").error("NOT_LEADER_OR_FOLLOWER")
        b = cluster.brokers[0]
        with Raw(b.host, b.port) as c:
            body = c.request(
                "Fetch",
                16,
                {
                    "max_wait_ms": 0,
                    "min_bytes": 1,
                    "max_bytes": 1 << 20,
                    "topics": [
                        {
                            "topic_id": cluster.topic("t").topic_id,
                            "partitions": [
                                {"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20}
                            ],
                        }
                    ],
                },
            )
        part = body["responses"][0]["partitions"][0]
        assert part["error_code"] == 6
        assert part["records"] is not None and len(part["records"]) == 0

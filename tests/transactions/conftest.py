"""Sans-IO harness for the transaction coordinator: ClusterState + handlers + ManualClock.

:class:`Broker` sends a request dict to a handler as if it arrived on broker ``node``: the
request is encoded and decoded at the given version first and the response afterwards, so
what a test reads is exactly what a client would.
"""

from __future__ import annotations

from typing import Any

import pytest

from mockkafka.cluster.coordinators import GROUP, TRANSACTION
from mockkafka.cluster.state import ClusterConfig, ClusterState, ManualClock
from mockkafka.handlers.base import call_handler
from mockkafka.protocol.records import encode_batch


class Harness:
    """A three-broker cluster in memory with topics ``a`` (3 partitions) and ``b`` (1)."""

    def __init__(self) -> None:
        self.clock = ManualClock()
        self.state = ClusterState(ClusterConfig(brokers=3), clock=self.clock)
        self.state.create_topic("a", 3, 3)
        self.state.create_topic("b", 1, 3)
        self._corr = 0

    def send(self, api: str, version: int, body: dict[str, Any], *, broker: int) -> Any:
        self._corr += 1
        result = call_handler(
            self.state, api, body, version=version, broker_id=broker, correlation_id=self._corr
        )
        assert isinstance(result, dict), result
        return result

    def txn_coordinator(self, tid: str) -> int:
        return self.state.coordinators.coordinator(TRANSACTION, tid)

    def group_coordinator(self, group: str) -> int:
        return self.state.coordinators.coordinator(GROUP, group)

    def init(self, tid: str, *, timeout_ms: int = 60_000, version: int = 4, **kw: Any) -> Any:
        body = {"transactional_id": tid, "transaction_timeout_ms": timeout_ms, **kw}
        return self.send("InitProducerId", version, body, broker=self.txn_coordinator(tid))

    def add_partitions(
        self, tid: str, pid: int, epoch: int, parts: dict[str, list[int]], *, version: int = 3
    ) -> dict[tuple[str, int], int]:
        body = {
            "v3_and_below_transactional_id": tid,
            "v3_and_below_producer_id": pid,
            "v3_and_below_producer_epoch": epoch,
            "v3_and_below_topics": [{"name": t, "partitions": ps} for t, ps in parts.items()],
        }
        r = self.send("AddPartitionsToTxn", version, body, broker=self.txn_coordinator(tid))
        return {
            (t["name"], p["partition_index"]): p["partition_error_code"]
            for t in r["results_by_topic_v3_and_below"]
            for p in t["results_by_partition"]
        }

    def produce(
        self,
        topic: str,
        idx: int,
        pid: int,
        epoch: int,
        seq: int,
        values: list[bytes],
        *,
        tid: str | None = None,
        version: int = 9,
    ) -> int:
        data = encode_batch(
            [(None, v) for v in values],
            producer_id=pid,
            producer_epoch=epoch,
            base_sequence=seq,
            is_transactional=tid is not None,
        )
        p = self.state.partition(topic, idx)
        body = {
            "transactional_id": tid,
            "acks": -1,
            "timeout_ms": 1000,
            "topic_data": [{"name": topic, "partition_data": [{"index": idx, "records": data}]}],
        }
        r = self.send("Produce", version, body, broker=p.leader)
        code: int = r["responses"][0]["partition_responses"][0]["error_code"]
        return code

    def end(self, tid: str, pid: int, epoch: int, commit: bool, *, version: int = 3) -> int:
        body = {
            "transactional_id": tid,
            "producer_id": pid,
            "producer_epoch": epoch,
            "committed": commit,
        }
        code: int = self.send("EndTxn", version, body, broker=self.txn_coordinator(tid))[
            "error_code"
        ]
        return code

    def fetch(self, topic: str, idx: int, *, committed: bool, offset: int = 0) -> Any:
        p = self.state.partition(topic, idx)
        body = {
            "replica_id": -1,
            "max_wait_ms": 0,
            "min_bytes": 0,
            "max_bytes": 1 << 20,
            "isolation_level": 1 if committed else 0,
            "topics": [
                {
                    "topic": topic,
                    "partitions": [
                        {"partition": idx, "fetch_offset": offset, "partition_max_bytes": 1 << 20}
                    ],
                }
            ],
        }
        r = self.send("Fetch", 11, body, broker=p.leader)
        return r["responses"][0]["partitions"][0]


@pytest.fixture
def h() -> Harness:
    return Harness()

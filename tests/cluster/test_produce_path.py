"""The produce path, sans-IO: Produce handler + append_records + idempotent sequences."""

from __future__ import annotations

from typing import Any

import crc32c
import pytest

from mockkafka.cluster.produce import append_records
from mockkafka.cluster.producers import (
    BatchMetadata,
    ProducerPartitionState,
    check_sequence,
    next_seq,
)
from mockkafka.cluster.state import ClusterConfig, ClusterState, ManualClock
from mockkafka.errors import ErrorCode
from mockkafka.handlers.base import NO_RESPONSE, call_handler
from mockkafka.protocol import records as rec


def call(state: ClusterState, api: str, version: int, body: dict[str, Any], broker: int) -> Any:
    return call_handler(state, api, body, version=version, broker_id=broker, codec_roundtrip=False)


def produce(
    state: ClusterState,
    topic: str,
    data: bytes,
    *,
    acks: int = -1,
    partition: int = 0,
    version: int = 9,
    broker: int | None = None,
) -> Any:
    if broker is None:
        broker = state.partition(topic, partition).leader
    body = {
        "acks": acks,
        "timeout_ms": 1000,
        "topic_data": [{"name": topic, "partition_data": [{"index": partition, "records": data}]}],
    }
    resp = call(state, "Produce", version, body, broker)
    if resp is NO_RESPONSE:
        return resp
    return resp["responses"][0]["partition_responses"][0]


def batch(*values: str, pid: int = -1, epoch: int = -1, seq: int = -1, ts: int = 1000) -> bytes:
    return rec.encode_batch(
        [(None, v.encode(), None, ts) for v in values],
        producer_id=pid,
        producer_epoch=epoch,
        base_sequence=seq,
    )


@pytest.fixture
def state() -> ClusterState:
    s = ClusterState(ClusterConfig(brokers=3), clock=ManualClock())
    s.create_topic("t", 2, 3)
    return s


def test_acks_all_and_one_answer_with_offsets(state: ClusterState) -> None:
    r1 = produce(state, "t", batch("a", "b"), acks=-1)
    r2 = produce(state, "t", batch("c"), acks=1)
    assert (r1["error_code"], r1["base_offset"]) == (0, 0)
    assert (r2["error_code"], r2["base_offset"]) == (0, 2)
    assert r2["log_append_time_ms"] == -1
    assert r2["log_start_offset"] == 0


def test_acks_zero_sends_no_response_but_appends(state: ClusterState) -> None:
    assert produce(state, "t", batch("a"), acks=0) is NO_RESPONSE
    assert [r.value for r in state.partition("t", 0).records()] == [b"a"]


def test_invalid_acks_is_refused(state: ClusterState) -> None:
    r = produce(state, "t", batch("a"), acks=2)
    assert r["error_code"] == ErrorCode.INVALID_REQUIRED_ACKS
    assert state.partition("t", 0).log.log_end_offset == 0


def test_only_the_leader_accepts_and_names_the_current_leader(state: ClusterState) -> None:
    p = state.partition("t", 0)
    other = next(b for b in state.brokers if b != p.leader)
    r = produce(state, "t", batch("a"), broker=other, version=10)
    assert r["error_code"] == ErrorCode.NOT_LEADER_OR_FOLLOWER
    assert r["current_leader"] == {"leader_id": p.leader, "leader_epoch": p.leader_epoch}
    assert p.log.log_end_offset == 0


def test_unknown_topic_and_partition(state: ClusterState) -> None:
    assert produce(state, "t", batch("a"), partition=5, broker=1)["error_code"] == (
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    )
    body = {"acks": 1, "topic_data": [{"name": "nope", "partition_data": [{"index": 0}]}]}
    resp = call(state, "Produce", 9, body, 1)
    assert resp["responses"][0]["partition_responses"][0]["error_code"] == (
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    )


def test_acks_all_needs_min_insync_replicas(state: ClusterState) -> None:
    state.create_topic("strict", 1, 3, {"min.insync.replicas": "2"})
    p = state.partition("strict", 0)
    state.set_isr("strict", 0, [p.leader])
    assert produce(state, "strict", batch("a"), acks=-1)["error_code"] == (
        ErrorCode.NOT_ENOUGH_REPLICAS
    )
    assert produce(state, "strict", batch("a"), acks=1)["error_code"] == 0


def test_min_insync_replicas_above_the_replica_count_refuses_no_write(state: ClusterState) -> None:
    """Kafka's effectiveMinIsr caps min.insync.replicas by the replica count (checked
    against Kafka 4.4 in tests/oracle/test_error_contexts.py)."""
    state.create_topic("single", 1, 1, {"min.insync.replicas": "2"})
    assert produce(state, "single", batch("a"), acks=-1)["error_code"] == 0


def test_max_message_bytes_refuses_the_whole_batch(state: ClusterState) -> None:
    state.create_topic("small", 1, 1, {"max.message.bytes": "200"})
    r = produce(state, "small", batch("x" * 500))
    assert r["error_code"] == ErrorCode.MESSAGE_TOO_LARGE
    assert produce(state, "small", batch("ok"))["error_code"] == 0


def test_corrupt_records_are_refused(state: ClusterState) -> None:
    data = bytearray(batch("a"))
    data[-1] ^= 0x55
    assert produce(state, "t", bytes(data))["error_code"] == ErrorCode.CORRUPT_MESSAGE
    assert produce(state, "t", b"\x00\x01")["error_code"] == ErrorCode.CORRUPT_MESSAGE
    assert state.partition("t", 0).log.log_end_offset == 0


def test_log_append_time_topic_reports_the_append_time(state: ClusterState) -> None:
    state.create_topic("lat", 1, 1, {"message.timestamp.type": "LogAppendTime"})
    r = produce(state, "lat", batch("a", ts=5))
    assert r["log_append_time_ms"] == state.now_ms()
    assert [x.timestamp for x in state.partition("lat", 0).records()] == [state.now_ms()]


def test_produce_wakes_waiters_on_the_partition(state: ClusterState) -> None:
    seen: list[object] = []
    state.add_waker(seen.append)
    produce(state, "t", batch("a"), partition=1)
    assert ("partition", "t", 1) in seen


def test_legacy_v0_v1_message_sets_accepted(state: ClusterState) -> None:
    for magic, version in ((0, 1), (1, 2)):
        data = rec.encode_batch([(b"k", b"v")], magic=magic)
        assert produce(state, "t", data, version=version)["error_code"] == 0
    assert [r.value for r in state.partition("t", 0).records()] == [b"v", b"v"]


# -- idempotence -----------------------------------------------------------------------------


def test_duplicate_batch_is_acknowledged_with_its_original_offsets(state: ClusterState) -> None:
    pid = state.allocate_producer_id()
    first = produce(state, "t", batch("a", "b", pid=pid, epoch=0, seq=0))
    produce(state, "t", batch("c", pid=pid, epoch=0, seq=2))
    again = produce(state, "t", batch("a", "b", pid=pid, epoch=0, seq=0))
    assert (again["error_code"], again["base_offset"]) == (0, first["base_offset"])
    assert [r.value for r in state.partition("t", 0).records()] == [b"a", b"b", b"c"]


def test_sequence_gap_is_out_of_order(state: ClusterState) -> None:
    pid = state.allocate_producer_id()
    produce(state, "t", batch("a", pid=pid, epoch=0, seq=0))
    r = produce(state, "t", batch("c", pid=pid, epoch=0, seq=5))
    assert r["error_code"] == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert produce(state, "t", batch("b", pid=pid, epoch=0, seq=1))["error_code"] == 0


def test_first_batch_of_unknown_producer_must_start_at_zero(state: ClusterState) -> None:
    r = produce(state, "t", batch("a", pid=4242, epoch=0, seq=7))
    assert r["error_code"] == ErrorCode.UNKNOWN_PRODUCER_ID


def test_older_epoch_is_fenced_and_newer_epoch_restarts_at_zero(state: ClusterState) -> None:
    pid = state.allocate_producer_id()
    produce(state, "t", batch("a", pid=pid, epoch=1, seq=0))
    assert produce(state, "t", batch("x", pid=pid, epoch=0, seq=1))["error_code"] == (
        ErrorCode.INVALID_PRODUCER_EPOCH
    )
    assert produce(state, "t", batch("x", pid=pid, epoch=2, seq=3))["error_code"] == (
        ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    )
    assert produce(state, "t", batch("x", pid=pid, epoch=2, seq=0))["error_code"] == 0


def test_old_duplicate_beyond_the_cache_is_duplicate_sequence(state: ClusterState) -> None:
    pid = state.allocate_producer_id()
    for seq in range(7):
        produce(state, "t", batch(f"v{seq}", pid=pid, epoch=0, seq=seq))
    r = produce(state, "t", batch("v0", pid=pid, epoch=0, seq=0))
    assert r["error_code"] == ErrorCode.DUPLICATE_SEQUENCE_NUMBER
    assert state.partition("t", 0).log.log_end_offset == 7


def test_sequences_are_tracked_per_partition(state: ClusterState) -> None:
    pid = state.allocate_producer_id()
    assert produce(state, "t", batch("a", pid=pid, epoch=0, seq=0), partition=0)["error_code"] == 0
    assert produce(state, "t", batch("b", pid=pid, epoch=0, seq=0), partition=1)["error_code"] == 0


def test_sequence_wraps_at_int32_max() -> None:
    top = 2**31 - 1
    assert next_seq(top, 1) == 0
    st = ProducerPartitionState(0)
    st.batches.append(BatchMetadata(top - 1, top, 10, 11, -1))
    ok = check_sequence(st, producer_epoch=0, base_sequence=0, record_count=3, transactional=False)
    assert ok.error == ErrorCode.NONE and ok.duplicate_of is None


def test_append_records_helper_is_the_same_path(state: ClusterState) -> None:
    t = state.topic("t")
    res = append_records(state, t, t.partition(0), batch("a"))
    assert (res.error, res.base_offset) == (ErrorCode.NONE, 0)
    assert append_records(state, t, t.partition(0), None).error == ErrorCode.CORRUPT_MESSAGE


def test_v3_plus_needs_exactly_one_v2_batch(state: ClusterState) -> None:
    two = batch("a") + batch("b")
    r = produce(state, "t", two, version=3)
    assert r["error_code"] == ErrorCode.INVALID_RECORD
    legacy = rec.encode_batch([(b"k", b"v")], magic=1)
    assert produce(state, "t", legacy, version=9)["error_code"] == ErrorCode.INVALID_RECORD
    assert produce(state, "t", two, version=2)["error_code"] == 0  # older versions: any sets
    assert state.partition("t", 0).log.log_end_offset == 2


def test_zstd_needs_produce_v7(state: ClusterState) -> None:
    data = rec.encode_batch([(None, b"z" * 100)], compression=rec.CompressionType.ZSTD)
    assert produce(state, "t", data, version=6)["error_code"] == (
        ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
    )
    assert produce(state, "t", data, version=7)["error_code"] == 0


def test_a_compressed_batch_is_split_and_inflated_once_per_produce(
    state: ClusterState, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server asks validation_is_costly first (it splits the blob and inflates a
    compressed batch to size it), then the handler validates and appends: the blob is split
    once and its records inflated once, and all of them are stored."""
    from mockkafka.cluster import produce as produce_mod
    from mockkafka.protocol import records as records_mod

    data = rec.encode_batch(
        [(None, b"v%d" % i) for i in range(50)], compression=rec.CompressionType.GZIP
    )
    inflated: list[int] = []
    splits: list[int] = []
    real, real_split = produce_mod.decompress, records_mod.split_batches

    def counting(*args: Any, **kwargs: Any) -> bytes:
        inflated.append(1)
        return real(*args, **kwargs)

    def counting_split(*args: Any, **kwargs: Any) -> Any:
        splits.append(1)
        return real_split(*args, **kwargs)

    monkeypatch.setattr(produce_mod, "decompress", counting)
    monkeypatch.setattr(records_mod, "decompress", counting)
    monkeypatch.setattr(records_mod, "split_batches", counting_split)
    assert produce_mod.validation_is_costly(data) is False
    assert produce(state, "t", data)["error_code"] == ErrorCode.NONE
    assert (len(inflated), len(splits)) == (1, 1)
    assert state.partition("t", 0).log.log_end_offset == 50
    # without the sizing step (a direct append) the append splits and inflates it itself
    assert produce(state, "t", data)["error_code"] == ErrorCode.NONE
    assert (len(inflated), len(splits)) == (2, 2)
    assert state.partition("t", 0).log.log_end_offset == 100
    values = [r.value for r in state.partition("t", 0).log.records()]
    assert values == [b"v%d" % i for i in range(50)] * 2


def test_a_blob_sized_but_then_refused_does_not_leave_its_batches_to_a_later_produce(
    state: ClusterState,
) -> None:
    """A blob whose request was answered some other way (an ACL, a fault) is dropped from
    what the sizing step kept once another blob is produced; a new blob with equal bytes is
    split on its own and stored."""
    from mockkafka.cluster import produce as produce_mod

    first = rec.encode_batch([(None, b"a")], compression=rec.CompressionType.GZIP)
    assert produce_mod.validation_is_costly(first) is False
    second = bytes(bytearray(first))  # equal bytes, another object
    assert second is not first
    assert produce(state, "t", second)["error_code"] == ErrorCode.NONE
    assert produce(state, "t", first)["error_code"] == ErrorCode.NONE
    assert state.partition("t", 0).log.log_end_offset == 2


def test_an_inflated_batch_bigger_than_the_broker_allows_is_still_refused(
    state: ClusterState,
) -> None:
    data = rec.encode_batch([(None, b"z" * 4000)], compression=rec.CompressionType.GZIP)
    from mockkafka.cluster.produce import validation_is_costly

    state.broker_configs["mockkafka.max.decompressed.batch.bytes"] = "1000"
    assert validation_is_costly(data) is False  # sized under the 1 MiB inline bound
    assert produce(state, "t", data)["error_code"] == ErrorCode.CORRUPT_MESSAGE
    assert state.partition("t", 0).log.log_end_offset == 0


def test_a_corrupt_compressed_section_is_refused_after_sizing(state: ClusterState) -> None:
    """A batch whose CRC is right but whose inflated records do not parse: refused as
    before, from the section the sizing step kept."""
    from mockkafka.cluster.produce import validation_is_costly
    from mockkafka.protocol.compression import compress

    good = rec.encode_batch([(None, b"abc")], compression=rec.CompressionType.GZIP)
    header = bytearray(good[: rec.V2_HEADER_SIZE])
    payload = compress(rec.CompressionType.GZIP, b"\x7f" * 20)  # not a record
    data = header + payload
    data[8:12] = (len(data) - rec.LOG_OVERHEAD).to_bytes(4, "big")
    data[17:21] = crc32c.crc32c(bytes(data[21:])).to_bytes(4, "big")  # CRC32C from attributes
    assert validation_is_costly(bytes(data)) is False
    assert produce(state, "t", bytes(data))["error_code"] == ErrorCode.CORRUPT_MESSAGE
    assert state.partition("t", 0).log.log_end_offset == 0

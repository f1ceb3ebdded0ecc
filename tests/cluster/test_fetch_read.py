"""The fetch read path, sans-IO: ``read_partition`` and its broker rules."""

from __future__ import annotations

from mockkafka.cluster.fetch import read_partition
from mockkafka.cluster.produce import append_records
from mockkafka.cluster.state import ClusterConfig, ClusterState, ManualClock, Partition
from mockkafka.errors import ErrorCode
from mockkafka.protocol import records as rec


def _partition(*batches: bytes) -> Partition:
    state = ClusterState(ClusterConfig(), clock=ManualClock())
    topic = state.create_topic("t", 1, 1)
    p = topic.partition(0)
    for data in batches:
        assert append_records(state, topic, p, data).error == ErrorCode.NONE
    return p


def _batch(*values: bytes, compression: int = rec.CompressionType.NONE) -> bytes:
    return rec.encode_batch([(None, v, None, 1000) for v in values], compression=compression)


def _values(chunks: list[bytes]) -> list[bytes | None]:
    return [r.value for c in chunks for r in rec.decode_records(c)]


def test_reads_from_the_offset_and_refuses_offsets_outside_the_log() -> None:
    p = _partition(_batch(b"a", b"b"), _batch(b"c"))
    got = read_partition(p, fetch_offset=2, partition_max_bytes=1 << 20, budget=1 << 20, first=True)
    assert got.error == ErrorCode.NONE and _values(got.chunks) == [b"c"]
    for offset in (-1, 4):
        out = read_partition(
            p, fetch_offset=offset, partition_max_bytes=100, budget=100, first=True
        )
        assert out.error == ErrorCode.OFFSET_OUT_OF_RANGE and out.chunks == []


def test_only_the_first_partition_with_data_may_exceed_the_limits() -> None:
    p = _partition(_batch(b"x" * 500))
    first = read_partition(p, fetch_offset=0, partition_max_bytes=10, budget=10, first=True)
    assert _values(first.chunks) == [b"x" * 500]  # KIP-74: one whole batch anyway
    later = read_partition(p, fetch_offset=0, partition_max_bytes=10, budget=10, first=False)
    assert later.chunks == [] and later.error == ErrorCode.NONE


def test_a_mismatched_last_fetched_epoch_reports_divergence_instead_of_data() -> None:
    p = _partition(_batch(b"a"))
    out = read_partition(
        p, fetch_offset=1, last_fetched_epoch=5, partition_max_bytes=100, budget=100, first=True
    )
    assert out.diverging_epoch is not None and out.chunks == []


def test_zstd_is_refused_to_fetches_older_than_v10() -> None:
    p = _partition(_batch(b"z", compression=rec.CompressionType.ZSTD))
    old = read_partition(
        p, fetch_offset=0, partition_max_bytes=100, budget=100, first=True, zstd_allowed=False
    )
    assert old.error == ErrorCode.UNSUPPORTED_COMPRESSION_TYPE and old.chunks == []
    new = read_partition(p, fetch_offset=0, partition_max_bytes=100, budget=100, first=True)
    assert _values(new.chunks) == [b"z"]

"""PartitionLog: offsets, watermarks, reads, timestamps, epochs, truncation (sans-IO)."""

from __future__ import annotations

import pytest

from mockkafka.cluster.log import PartitionLog
from mockkafka.protocol import records as rec
from mockkafka.protocol.errors import ProtocolError

NOW = 1_700_000_000_000


def batch(*values: str, ts: int = 1000, **kw: object) -> bytes:
    return rec.encode_batch([(None, v.encode(), None, ts + i) for i, v in enumerate(values)], **kw)  # type: ignore[arg-type]


def values(log: PartitionLog) -> list[bytes | None]:
    return [r.value for r in log.records()]


def test_append_assigns_consecutive_offsets_across_batches() -> None:
    log = PartitionLog()
    r1 = log.append(batch("a", "b", "c"), leader_epoch=0, now_ms=NOW)
    r2 = log.append(batch("d") + batch("e", "f"), leader_epoch=0, now_ms=NOW)
    assert (r1.base_offset, r1.last_offset) == (0, 2)
    assert (r2.base_offset, r2.last_offset) == (3, 5)
    assert log.high_watermark == log.log_end_offset == 6
    assert [r.offset for r in log.records()] == list(range(6))
    assert values(log) == [b"a", b"b", b"c", b"d", b"e", b"f"]


def test_stored_batches_carry_offset_and_leader_epoch_and_valid_crc() -> None:
    log = PartitionLog()
    log.append(batch("x"), leader_epoch=0, now_ms=NOW)
    log.append(batch("y", "z"), leader_epoch=7, now_ms=NOW)
    ((h, raw),) = rec.split_batches(log.batches[1].data, allow_partial=False)
    assert h.base_offset == 1
    assert h.partition_leader_epoch == 7
    assert rec.verify_crc(h, raw)


def test_corrupt_or_truncated_blob_appends_nothing() -> None:
    log = PartitionLog()
    good = batch("a", "b")
    bad = bytearray(good)
    bad[-1] ^= 0xFF  # payload change -> CRC mismatch
    with pytest.raises(ProtocolError):
        log.append(bytes(bad), leader_epoch=0, now_ms=NOW)
    with pytest.raises(ProtocolError):
        log.append(good + good[:20], leader_epoch=0, now_ms=NOW)
    assert log.log_end_offset == 0 and log.batches == []


def test_log_append_time_replaces_timestamps() -> None:
    log = PartitionLog()
    res = log.append(batch("a", "b", ts=5), leader_epoch=0, now_ms=NOW, log_append_time=True)
    assert res.log_append_time == NOW
    assert [r.timestamp for r in log.records()] == [NOW, NOW]


def test_read_returns_at_least_one_batch_even_over_max_bytes() -> None:
    log = PartitionLog()
    for i in range(5):
        log.append(batch(f"v{i}" * 100), leader_epoch=0, now_ms=NOW)
    size = log.batches[0].size
    assert len(log.read(0, 1)) == 1  # KIP-74: never stuck behind a big batch
    assert len(log.read(0, size * 2)) == 2
    assert len(log.read(0, size * 100)) == 5
    assert log.read(5, 10_000) == []


def test_read_from_mid_batch_offset_returns_the_whole_batch() -> None:
    log = PartitionLog()
    log.append(batch("a", "b", "c"), leader_epoch=0, now_ms=NOW)
    log.append(batch("d"), leader_epoch=0, now_ms=NOW)
    out = log.read(1, 1 << 20)
    assert len(out) == 2
    assert [r.offset for r in rec.decode_records(b"".join(out))] == [0, 1, 2, 3]


def test_read_stops_at_upto() -> None:
    log = PartitionLog()
    log.append(batch("a"), leader_epoch=0, now_ms=NOW)
    log.append(batch("b"), leader_epoch=0, now_ms=NOW)
    assert len(log.read(0, 1 << 20, upto=1)) == 1


def test_read_down_converts_for_old_magic() -> None:
    log = PartitionLog()
    log.append(batch("a", "b"), leader_epoch=0, now_ms=NOW)
    for magic in (0, 1):
        (data,) = log.read(0, 1 << 20, magic=magic)
        (h, _raw), *_ = rec.split_batches(data, allow_partial=False)
        assert h.magic == magic
        assert [r.value for r in rec.decode_records(data)] == [b"a", b"b"]


def test_offset_for_timestamp_finds_first_record_at_or_after() -> None:
    log = PartitionLog()
    log.append(batch("a", "b", "c", ts=100), leader_epoch=0, now_ms=NOW)  # 100, 101, 102
    log.append(batch("d", "e", ts=200), leader_epoch=0, now_ms=NOW)  # 200, 201
    assert log.offset_for_timestamp(0) == (0, 100)
    assert log.offset_for_timestamp(101) == (1, 101)
    assert log.offset_for_timestamp(150) == (3, 200)
    assert log.offset_for_timestamp(202) == (-1, -1)
    assert log.max_timestamp_offset() == (4, 201)


def test_delete_before_moves_log_start_and_hides_records() -> None:
    log = PartitionLog()
    log.append(batch("a", "b"), leader_epoch=0, now_ms=NOW)
    log.append(batch("c", "d"), leader_epoch=0, now_ms=NOW)
    assert log.delete_before(3) == 3
    assert log.log_start_offset == 3
    assert values(log) == [b"d"]
    assert len(log.batches) == 1  # the first batch is gone whole
    assert log.delete_before(1) == 3  # never moves back
    assert log.delete_before(99) == 4  # capped at the log end


def test_truncate_drops_whole_batches_and_later_epochs() -> None:
    log = PartitionLog()
    log.append(batch("a", "b"), leader_epoch=0, now_ms=NOW)
    log.start_new_epoch(1)
    log.append(batch("c", "d"), leader_epoch=1, now_ms=NOW)
    log.truncate(3)  # inside the second batch: the whole batch goes
    assert log.log_end_offset == 2
    assert values(log) == [b"a", b"b"]
    assert log.end_offset_for_epoch(1, current_epoch=1) == (1, 2)
    nxt = log.append(batch("e"), leader_epoch=1, now_ms=NOW)
    assert nxt.base_offset == 2


def test_end_offset_for_epoch_follows_leader_changes() -> None:
    log = PartitionLog()
    log.append(batch("a", "b"), leader_epoch=0, now_ms=NOW)
    log.start_new_epoch(2)
    log.append(batch("c"), leader_epoch=2, now_ms=NOW)
    assert log.end_offset_for_epoch(0, current_epoch=2) == (0, 2)
    assert log.end_offset_for_epoch(1, current_epoch=2) == (0, 2)  # largest epoch <= 1 is 0
    assert log.end_offset_for_epoch(2, current_epoch=2) == (2, 3)
    assert log.end_offset_for_epoch(3, current_epoch=2) == (-1, -1)  # newer than the leader
    # A new leader that has written nothing answers its own epoch at the log end offset.
    assert PartitionLog().end_offset_for_epoch(0, current_epoch=0) == (0, 0)
    assert PartitionLog().end_offset_for_epoch(-1, current_epoch=0) == (-1, -1)


def test_legacy_message_sets_get_offsets_too() -> None:
    log = PartitionLog()
    for magic in (0, 1):
        data = rec.encode_batch([(b"k", b"v0"), (b"k", b"v1")], magic=magic)
        res = log.append(data, leader_epoch=0, now_ms=NOW)
        assert res.last_offset - res.base_offset == 1
    assert [r.offset for r in log.records()] == [0, 1, 2, 3]

"""Reading a fetch's records from a partition leader, with every broker rule.

:func:`read_partition` is the read path of the Fetch handler (as
:func:`~mockkafka.cluster.produce.append_records` is the write path of Produce): the offset
range check, divergence detection against the leader-epoch history (KIP-320), the read up to
the high watermark or -- for read_committed -- the last stable offset, the byte limits with
the first-partition exception (KIP-74), the refusal of zstd data to fetches older than v10
(KIP-110), and the aborted transactions a read_committed consumer must skip. The caller has
found the partition and checked that this broker leads it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mockkafka.cluster.state import Partition
from mockkafka.errors import ErrorCode
from mockkafka.protocol.compression import UnsupportedCodecError

ZSTD = 4


@dataclass(slots=True)
class PartitionRead:
    """What one partition answers a fetch: an error, or records (raw batches) and the
    aborted transactions among them; ``diverging_epoch`` is (epoch, end offset) when the
    consumer's last fetched epoch does not match the log."""

    error: ErrorCode = ErrorCode.NONE
    chunks: list[bytes] = field(default_factory=list)
    aborted: list[tuple[int, int]] | None = None
    diverging_epoch: tuple[int, int] | None = None

    @property
    def size(self) -> int:
        return sum(len(c) for c in self.chunks)


def _is_zstd(batch: bytes) -> bool:
    """Whether ``batch`` is a zstd-compressed v2 batch (attributes low bits)."""
    return len(batch) > 22 and batch[16] >= 2 and batch[22] & 0x07 == ZSTD


def read_partition(
    p: Partition,
    *,
    fetch_offset: int,
    last_fetched_epoch: int = -1,
    read_committed: bool = False,
    list_aborted: bool = False,
    partition_max_bytes: int,
    budget: int,
    first: bool,
    magic: int = 2,
    zstd_allowed: bool = True,
) -> PartitionRead:
    """Read from ``fetch_offset`` of ``p`` (led by the asking broker).

    ``budget`` is what is left of the response's ``max_bytes``; ``first`` says no earlier
    partition of the response returned data, so this one may exceed the limits by one batch
    (KIP-74). ``magic`` < 2 down-converts for old fetch versions; ``zstd_allowed`` is False
    before Fetch v10; ``list_aborted`` asks for the aborted transactions (read_committed,
    v4+).
    """
    log = p.log
    if fetch_offset < log.log_start_offset or fetch_offset > log.log_end_offset:
        return PartitionRead(ErrorCode.OFFSET_OUT_OF_RANGE)
    if last_fetched_epoch >= 0:
        epoch, end = log.end_offset_for_epoch(last_fetched_epoch, current_epoch=p.leader_epoch)
        if epoch != last_fetched_epoch or end < fetch_offset:
            return PartitionRead(diverging_epoch=(epoch, end))
    upto = log.last_stable_offset if read_committed else log.high_watermark
    limit = min(partition_max_bytes, budget)
    chunks: list[bytes] = []
    zstd = False
    if first or budget > 0:
        try:
            chunks = log.read(fetch_offset, max(limit, 1), upto=upto, magic=magic)
        except UnsupportedCodecError:
            zstd = True
    out = PartitionRead()
    if not zstd_allowed and (zstd or any(_is_zstd(c) for c in chunks)):
        # Fetch < v10 predates zstd (KIP-110): Kafka refuses, never converts.
        out.error = ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
        chunks = []
    if not first and chunks and len(chunks[0]) > limit:
        chunks = []  # only the first partition with data may exceed the limits (KIP-74)
    out.chunks = chunks
    if list_aborted:
        end = upto if chunks else fetch_offset + 1
        out.aborted = log.aborted_in_range(fetch_offset, end)
    return out

"""Topics and partitions: the replicas, ISR, leader, leader epoch and log of each partition.

Plain data below :mod:`mockkafka.cluster.state` (which re-exports both names and creates and
changes them); the parts of the state that read topics (groups, transactions) import them
from here.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from mockkafka.cluster.configs import TOPIC_DEFAULTS, TOPIC_TO_BROKER
from mockkafka.cluster.log import PartitionLog
from mockkafka.cluster.producers import ProducerPartitionState
from mockkafka.errors import ConfigError, ErrorCode, KafkaApiError

__all__ = ["Partition", "Topic"]


@dataclass(slots=True)
class Partition:
    """One partition: replicas, ISR, leader and leader epoch, and its log."""

    topic: str
    index: int
    replicas: list[int]
    isr: list[int]
    leader: int
    leader_epoch: int = 0
    partition_epoch: int = 0
    log: PartitionLog = field(default_factory=PartitionLog)
    # Idempotent producer state kept by the leader: producer_id -> state.
    producers: dict[int, ProducerPartitionState] = field(default_factory=dict)

    @property
    def offline_replicas(self) -> list[int]:
        return []

    def records(self, *, include_control: bool = False) -> list[Any]:
        """Every record the partition holds, decoded now (for assertions)."""
        return self.log.records(include_control=include_control)

    @property
    def high_watermark(self) -> int:
        return self.log.high_watermark

    @property
    def log_start_offset(self) -> int:
        return self.log.log_start_offset

    @property
    def last_stable_offset(self) -> int:
        return self.log.last_stable_offset


@dataclass(slots=True)
class Topic:
    """A topic: name, id, partitions and the configs set on it (others take defaults)."""

    name: str
    topic_id: uuid.UUID
    partitions: list[Partition]
    configs: dict[str, str] = field(default_factory=dict)
    is_internal: bool = False
    # The cluster's broker configs (shared): they supply topic defaults, as in Kafka.
    broker_configs: dict[str, str] = field(default_factory=dict)

    def config(self, key: str) -> str:
        """The effective value of a topic config: set on the topic, else the broker config
        that supplies its default (``message.max.bytes`` for ``max.message.bytes``), else
        Kafka's default."""
        v = self.configs.get(key)
        if v is not None:
            return v
        broker_key = TOPIC_TO_BROKER.get(key)
        if broker_key is not None:
            v = self.broker_configs.get(broker_key)
            if v is not None:
                return v
        return TOPIC_DEFAULTS.get(key, "")

    def config_int(self, key: str) -> int:
        return int(self.config(key))

    def partition(self, index: int) -> Partition:
        """Partition ``index``; raises KafkaApiError UNKNOWN_TOPIC_OR_PARTITION if absent
        (ConfigError when ``index`` is not an int: a verb takes one partition at a time)."""
        if isinstance(index, bool) or not isinstance(index, int):
            raise ConfigError(
                f"partition must be a partition number of topic {self.name!r} (0 to "
                f"{len(self.partitions) - 1}), got {index!r}; for every partition, call the "
                "verb once per partition (a scenario step takes partition: all)"
            )
        if not 0 <= index < len(self.partitions):
            raise KafkaApiError(
                ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                f"topic {self.name!r} has {len(self.partitions)} partitions, no {index}",
            )
        return self.partitions[index]

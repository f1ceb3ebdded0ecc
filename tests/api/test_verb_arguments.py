"""A verb given a partition that is not a partition number says so (not a TypeError)."""

from __future__ import annotations

import pytest

import mockkafka


@pytest.mark.parametrize("partition", ["all", "0", None, True, 1.0])
def test_a_partition_that_is_not_a_number_is_a_config_error(partition: object) -> None:
    with mockkafka.Cluster(brokers=3) as cluster:
        cluster.create_topic("t", partitions=2, replication_factor=3)
        with pytest.raises(mockkafka.ConfigError, match=r"partition must be a partition number"):
            cluster.move_leader("t", partition, to=2)  # type: ignore[arg-type]
        with pytest.raises(mockkafka.ConfigError, match=r"0 to 1\), got"):
            cluster.truncate_log("t", partition, to_offset=0)  # type: ignore[arg-type]
        assert [p.leader_epoch for p in cluster.topic("t").partitions] == [0, 0]

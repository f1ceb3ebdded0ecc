"""Broker configs set by name: ``Cluster(config=...)``, ``serve --config``, the marker and
ini option, ``set_broker_config``, and what real clients see of them."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource
from kafka import KafkaConsumer

import mockkafka
from tests.cli.test_serve import serving


def _describe_broker(bootstrap: str, broker: int, *names: str) -> dict[str, tuple[str, int]]:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    res = ConfigResource(ConfigResource.Type.BROKER, str(broker))
    entries = admin.describe_configs([res])[res].result(10)
    return {n: (entries[n].value, entries[n].source) for n in names}


def test_unknown_config_name_is_refused_with_a_did_you_mean() -> None:
    with pytest.raises(mockkafka.ConfigError, match=r"did you mean num\.partitions"):
        mockkafka.Cluster(config={"num.partitons": 3})
    with pytest.raises(mockkafka.ConfigError, match="topic config: its broker default is"):
        mockkafka.Cluster(config={"retention.ms": 1000})
    with pytest.raises(mockkafka.ConfigError, match="Not a number of type INT"):
        mockkafka.Cluster(config={"message.max.bytes": "lots"})


def test_auto_created_topic_takes_num_partitions_given_by_name() -> None:
    config = {"num.partitions": 3, "auto.create.topics.enable": "true"}
    with mockkafka.Cluster(config=config) as cluster:
        p = Producer({"bootstrap.servers": cluster.bootstrap_servers})
        p.produce("auto", b"x")
        assert p.flush(10) == 0
        assert len(cluster.topic("auto").partitions) == 3
        got = _describe_broker(cluster.bootstrap_servers, 1, "num.partitions")
        assert got["num.partitions"] == ("3", ConfigSource.STATIC_BROKER_CONFIG.value)


def test_consumer_with_session_timeout_3000_joins_by_default_and_6000_minimum_refuses() -> None:
    with mockkafka.Cluster() as cluster:
        cluster.create_topic("t")
        c = KafkaConsumer(
            "t",
            bootstrap_servers=cluster.bootstrap_servers,
            group_id="g",
            session_timeout_ms=3000,
            heartbeat_interval_ms=500,
        )
        try:
            deadline = time.monotonic() + 15
            while not c.assignment() and time.monotonic() < deadline:
                c.poll(200)
            assert c.assignment()
        finally:
            c.close()
    with mockkafka.Cluster(config={"group.min.session.timeout.ms": 6000}) as cluster:
        cluster.create_topic("t")
        errors: list[str] = []
        consumer = Consumer(
            {
                "bootstrap.servers": cluster.bootstrap_servers,
                "group.id": "g",
                "session.timeout.ms": 3000,
                "error_cb": lambda e: errors.append(e.name()),
            }
        )
        try:
            consumer.subscribe(["t"])
            deadline = time.monotonic() + 15
            while not errors and time.monotonic() < deadline:
                consumer.poll(0.2)
        finally:
            consumer.close()
        joins = cluster.traffic.requests(api="JoinGroup")
        assert joins and all(r.response["error_code"] == 26 for r in joins)  # type: ignore[index]


def test_first_node_id_zero_makes_broker_zero_the_replica_and_controller() -> None:
    with mockkafka.Cluster(brokers=2, first_node_id=0) as cluster:
        cluster.create_topic("t", assignments=[[0]])
        admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
        md = admin.list_topics(timeout=10)
        assert sorted(md.brokers) == [0, 1]
        assert md.controller_id == 0
        assert md.topics["t"].partitions[0].leader == 0


def test_set_broker_config_is_reported_as_dynamic_default_then_per_broker() -> None:
    with mockkafka.Cluster(brokers=2) as cluster:
        cluster.set_broker_config({"log.retention.ms": 1000})
        got = _describe_broker(cluster.bootstrap_servers, 1, "log.retention.ms")
        assert got["log.retention.ms"] == (
            "1000",
            ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG.value,
        )
        cluster.set_broker_config({"log.retention.ms": 2000}, broker=2)
        got = _describe_broker(cluster.bootstrap_servers, 2, "log.retention.ms")
        assert got["log.retention.ms"] == ("2000", ConfigSource.DYNAMIC_BROKER_CONFIG.value)
        cluster.set_broker_config({"log.retention.ms": None})
        got = _describe_broker(cluster.bootstrap_servers, 1, "log.retention.ms")
        assert got["log.retention.ms"] == ("604800000", ConfigSource.DEFAULT_CONFIG.value)
        with pytest.raises(mockkafka.KafkaApiError, match="dynamically"):
            cluster.set_broker_config({"num.partitions": 3})
        with pytest.raises(mockkafka.ConfigError, match="did you mean"):
            cluster.set_broker_config({"log.retention.msec": 3})


def test_log_retention_hours_sets_the_topic_retention_default() -> None:
    with mockkafka.Cluster(config={"log.retention.hours": 1}) as cluster:
        cluster.create_topic("t")
        admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
        res = ConfigResource(ConfigResource.Type.TOPIC, "t")
        entry = admin.describe_configs([res])[res].result(10)["retention.ms"]
        assert entry.value == "3600000"
        assert entry.source == ConfigSource.STATIC_BROKER_CONFIG.value


def test_serve_config_flags_reach_the_broker() -> None:
    flags = ["--first-node-id", "0", "--config", "num.partitions=4"]
    with serving(*flags, "--config", "auto.create.topics.enable=true") as (_proc, bootstrap):
        got = _describe_broker(bootstrap, 0, "num.partitions", "auto.create.topics.enable")
        assert got["num.partitions"] == ("4", ConfigSource.STATIC_BROKER_CONFIG.value)
        assert got["auto.create.topics.enable"][0] == "true"


def test_serve_refuses_an_unknown_config_with_a_did_you_mean() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "mockkafka.cli", "serve", "--config", "num.partition=2"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert r.returncode == 2
    assert "did you mean num.partitions" in r.stderr


def test_serve_refuses_a_flag_and_a_config_setting_the_same_option() -> None:
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "mockkafka.cli",
            "serve",
            "--default-partitions",
            "2",
            "--config",
            "num.partitions=3",
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1, r.stderr
    assert "default_partitions already give; use one" in r.stderr


@pytest.mark.timeout(60)
def test_marker_and_ini_config_merge_key_by_key(pytester: pytest.Pytester) -> None:
    pytester.makeini(
        """
        [pytest]
        kafka_config =
            num.partitions=2
            message.max.bytes=2000000
        """
    )
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.kafka_cluster(config={"num.partitions": 5}, first_node_id=0)
        def test_marker(kafka_cluster):
            assert kafka_cluster.state.config.default_partitions == 5
            assert kafka_cluster.state.broker_configs["message.max.bytes"] == "2000000"
            assert [b.node_id for b in kafka_cluster.brokers] == [0]

        @pytest.mark.kafka_cluster(config={"num.partiton": 5})
        def test_bad(kafka_cluster):
            pass
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*did you mean num.partitions*"])

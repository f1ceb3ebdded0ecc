"""Release presets: a cluster that advertises exactly what one Kafka release advertises."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer

import mockkafka
from mockkafka.protocol.releases import release_api_versions
from tests.cli.test_serve import serving


@pytest.mark.parametrize(
    ("release", "inferred"),
    [("0.10.2", (0, 10, 2)), ("1.1", (1, 1)), ("2.8", (2, 8)), ("3.9", (3, 9)), ("4.0", (4, 0))],
)
def test_kafka_python_infers_the_preset_release(release: str, inferred: tuple[int, ...]) -> None:
    with mockkafka.Cluster(kafka_version=release) as cluster:
        admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
        try:
            assert admin._manager.broker_version == inferred
        finally:
            admin.close()


@pytest.mark.parametrize("release", ["0.9", "0.11", "3.9"])
def test_kafka_python_produces_and_consumes_against_an_old_release(release: str) -> None:
    # Before 0.10 brokers had no ApiVersions: clients are told the release, as in production.
    pinned = {"api_version": (0, 9)} if release == "0.9" else {}
    with mockkafka.Cluster(kafka_version=release) as cluster:
        cluster.create_topic("t")
        p = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, **pinned)
        for i in range(5):
            p.send("t", b"m%d" % i)
        p.flush(10)
        p.close()
        c = KafkaConsumer(
            bootstrap_servers=cluster.bootstrap_servers,
            auto_offset_reset="earliest",
            consumer_timeout_ms=5000,
            **pinned,
        )
        c.assign([__import__("kafka").TopicPartition("t", 0)])
        got = [m.value for m in c]
        c.close()
        assert got == [b"m%d" % i for i in range(5)]
        advertised = release_api_versions(cluster.state.config.kafka_version or "")
        for r in cluster.traffic.requests():
            assert r.api_key in advertised, r.api
            if r.api == "ApiVersions" and r.version > advertised[r.api_key][1]:
                # Clients open with their newest ApiVersions; an older broker says so.
                assert r.response is not None and r.response["error_code"] == 35
                continue
            lo, hi = advertised[r.api_key]
            assert lo <= r.version <= hi, (r.api, r.version)


def test_pre_0_10_preset_closes_the_connection_on_api_versions() -> None:
    import socket

    from mockkafka.protocol.framing import ClientConnection

    with mockkafka.Cluster(kafka_version="0.9") as cluster:
        b = cluster.brokers[0]
        with socket.create_connection((b.host, b.port), timeout=5) as sock:
            sock.sendall(ClientConnection().send_request("ApiVersions", 0, {}))
            assert sock.recv(100) == b""  # closed, as a 0.9 broker does


def test_librdkafka_negotiates_the_preset_versions() -> None:
    with mockkafka.Cluster(kafka_version="2.0") as cluster:
        cluster.create_topic("t")
        p = Producer({"bootstrap.servers": cluster.bootstrap_servers})
        p.produce("t", b"x")
        assert p.flush(10) == 0
        c = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": "g"})
        try:
            c.assign([TopicPartition("t", 0, 0)])
            deadline = time.monotonic() + 10
            m = None
            while m is None and time.monotonic() < deadline:
                m = c.poll(0.2)
            assert m is not None and m.value() == b"x"
        finally:
            c.close()
        produce = cluster.traffic.requests(api="Produce")
        fetch = cluster.traffic.requests(api="Fetch")
        assert max(r.version for r in produce) == 6  # Kafka 2.0 serves Produce v0-6
        assert max(r.version for r in fetch) == 8  # and Fetch v0-8


def test_unknown_release_is_refused_with_a_did_you_mean() -> None:
    with pytest.raises(mockkafka.ConfigError, match="did you mean"):
        mockkafka.Cluster(kafka_version="3.10")


def test_serve_kafka_version_flag() -> None:
    with serving("--kafka-version", "2.8") as (_proc, bootstrap):
        admin = KafkaAdminClient(bootstrap_servers=bootstrap)
        try:
            assert admin._manager.broker_version == (2, 8)
        finally:
            admin.close()


@pytest.mark.timeout(60)
def test_marker_and_ini_option_select_the_release(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nkafka_kafka_version = 3.9\n")
    pytester.makepyfile(
        """
        import pytest

        def test_ini(kafka_cluster):
            assert kafka_cluster.state.config.kafka_version == "3.9"

        @pytest.mark.kafka_cluster(kafka_version="1.0")
        def test_marker(kafka_cluster):
            assert kafka_cluster.state.config.kafka_version == "1.0"
        """
    )
    pytester.runpytest().assert_outcomes(passed=2)


# -- configs as the release reports them ----------------------------------------------------


@pytest.mark.parametrize(
    ("release", "values", "absent"),
    [
        (
            "3.9",
            {"log.message.format.version": "3.0-IV1", "offsets.retention.minutes": "10080"},
            ["group.share.enable", "group.streams.heartbeat.interval.ms"],
        ),
        (
            "2.8",
            {"log.message.format.version": "2.8-IV1", "group.max.session.timeout.ms": "1800000"},
            ["group.consumer.heartbeat.interval.ms", "process.roles"],
        ),
        (None, {}, ["zookeeper.connect", "log.message.format.version"]),
    ],
)
def test_confluent_describe_configs_reports_the_presets_configs(
    release: str | None, values: dict[str, str], absent: list[str]
) -> None:
    from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource

    with mockkafka.Cluster(kafka_version=release) as cluster:
        cluster.create_topic("t")
        admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
        broker = ConfigResource("broker", str(cluster.brokers[0].node_id))
        topic = ConfigResource("topic", "t")
        futures = admin.describe_configs([broker, topic])
        configs = futures[broker].result(10)
        topic_configs = futures[topic].result(10)
    for name, value in values.items():
        assert configs[name].value == value, name
        assert configs[name].source == ConfigSource.DEFAULT_CONFIG.value
        assert configs[name].is_default
    for name in absent:
        assert name not in configs, name
    if release is None:  # Kafka 4's set
        assert "group.share.enable" in configs
        assert "message.format.version" not in topic_configs
    else:
        assert configs["zookeeper.connect"].is_read_only
        assert configs["zookeeper.connect"].value is None
        fmt = topic_configs["message.format.version"]
        assert fmt.value == values["log.message.format.version"]
        assert "log.message.format.version" in fmt.synonyms


@pytest.mark.parametrize(("release", "retention"), [("1.1", "1440"), ("2.8", "10080")])
def test_kafka_python_describe_configs_reports_the_releases_defaults(
    release: str, retention: str
) -> None:
    from kafka.admin import ConfigResource, ConfigResourceType

    with mockkafka.Cluster(kafka_version=release) as cluster:
        node = str(cluster.brokers[0].node_id)
        admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
        try:
            got = admin.describe_configs(
                [ConfigResource(ConfigResourceType.BROKER, node)],
                include_synonyms=True,
                config_filter="all",
            )["broker"][node]
        finally:
            admin.close()
        assert cluster.traffic.requests("DescribeConfigs")
    entry = got["offsets.retention.minutes"]
    assert (entry["value"], entry["config_source"], entry["read_only"]) == (
        retention,
        "DEFAULT_CONFIG",
        True,
    )
    assert entry["synonyms"] == [
        {"name": "offsets.retention.minutes", "value": retention, "source": "DEFAULT_CONFIG"}
    ]
    assert "zookeeper.connect" in got and "group.share.enable" not in got
    # Dynamic update modes arrived in 1.1: message.max.bytes is cluster-wide there
    assert got["message.max.bytes"]["read_only"] is False


def test_altering_a_config_the_release_did_not_have_is_refused_naming_it() -> None:
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import (
        AdminClient,
        AlterConfigOpType,
        ConfigEntry,
        ConfigResource,
    )

    with mockkafka.Cluster(kafka_version="2.8") as cluster:
        cluster.create_topic("t")
        admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
        res = ConfigResource(
            "topic",
            "t",
            incremental_configs=[
                ConfigEntry(
                    "remote.storage.enable", "true", incremental_operation=AlterConfigOpType.SET
                )
            ],
        )
        with pytest.raises(KafkaException, match=r"Kafka 2\.8 has no such topic config"):
            admin.incremental_alter_configs([res])[res].result(10)
        # one the release had is set, and then reported as set
        res = ConfigResource(
            "topic",
            "t",
            incremental_configs=[
                ConfigEntry(
                    "message.format.version",
                    "2.1-IV2",
                    incremental_operation=AlterConfigOpType.SET,
                )
            ],
        )
        admin.incremental_alter_configs([res])[res].result(10)
        res = ConfigResource("topic", "t")
        entry = admin.describe_configs([res])[res].result(10)["message.format.version"]
        assert (entry.value, entry.is_default) == ("2.1-IV2", False)


@pytest.mark.timeout(60)
def test_plugin_checks_config_names_against_the_preset_release(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini("[pytest]\nkafka_kafka_version = 3.9\n")
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.kafka_cluster(config={"zookeeper.connect": "zk:2181"})
        def test_3_9_name(kafka_cluster):
            assert dict(kafka_cluster.state.config.broker_configs)["zookeeper.connect"]

        @pytest.mark.kafka_cluster(config={"group.share.enable": "true"})
        def test_4_0_name(kafka_cluster):
            pass
        """
    )
    # this checkout's plugin (the installed one may be another checkout's)
    result = pytester.runpytest("-p", "no:mockkafka", "-p", "pytest_plugin.plugin")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*'group.share.enable' is not a Kafka 3.9 broker config*"])

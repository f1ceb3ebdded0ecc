"""Strict by default: bad options, queries and rules are refused at once; unfired rules are
reported."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from confluent_kafka import Producer

import mockkafka
from mockkafka.protocol.errors import FrameTooLarge, UnsupportedVersion
from tests.interop.conftest import unique


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"brokers": "3"}, ["brokers must be an int", "'3'"]),
        ({"auto_create_topics": "false"}, ["auto_create_topics must be True or False"]),
        (
            {"auto_create_topic": True},
            ["unknown cluster option", "did you mean 'auto_create_topics'"],
        ),
        ({"brokers": 3, "racks": ["a"]}, ["racks must name one rack", "3 brokers"]),
        ({"racks": [1]}, ["racks must be a list of rack names"]),
        ({"port": 70000}, ["ports must be in 1..65535"]),
        ({"brokers": 3, "port": 65534}, ["65534..65536"]),
        ({"port": "9092"}, ["port must be an int"]),
        ({"record_traffic": 1}, ["record_traffic must be True or False"]),
        ({"strict_faults": "yes"}, ["strict_faults must be True or False"]),
        ({"host": ""}, ["host must be a non-empty str"]),
    ],
)
def test_bad_cluster_arguments_raise_config_error_naming_them(
    kwargs: dict[str, Any], words: list[str]
) -> None:
    with pytest.raises(mockkafka.ConfigError) as info:
        mockkafka.Cluster(**kwargs)
    for w in words:
        assert w in str(info.value)


def test_bootstrap_servers_before_start_raises() -> None:
    cluster = mockkafka.Cluster()
    with pytest.raises(mockkafka.MockKafkaError, match="call start"):
        _ = cluster.bootstrap_servers
    assert "not started" in repr(cluster)


def test_every_exception_mockkafka_raises_is_a_mockkafka_error() -> None:
    for exc in (
        mockkafka.ProtocolError,
        UnsupportedVersion,
        FrameTooLarge,
        mockkafka.ConfigError,
        mockkafka.KafkaApiError,
        mockkafka.BrokerError,
        mockkafka.WaitTimeout,
        mockkafka.UnfiredRulesError,
    ):
        assert issubclass(exc, mockkafka.MockKafkaError), exc
    with pytest.raises(mockkafka.ConfigError, match="did you mean NOT_LEADER_OR_FOLLOWER"):
        mockkafka.error_code("NOT_LEADER_OR_FOLOWER")


def test_traffic_queries_check_api_names_and_filter_like_rules() -> None:
    with mockkafka.Cluster(brokers=2) as cluster:
        a, b = unique("a"), unique("b")
        cluster.create_topic(a, partitions=2, replication_factor=2)
        cluster.create_topic(b, replication_factor=2)
        p = Producer({"bootstrap.servers": cluster.bootstrap_servers, "client.id": "svc-1"})
        p.produce(a, b"x", partition=1)
        assert p.flush(10) == 0
        p.produce(b, b"y", partition=0)
        assert p.flush(10) == 0
        with pytest.raises(mockkafka.ConfigError, match="did you mean Produce"):
            cluster.traffic.requests("Produc")
        to_a = cluster.traffic.requests("Produce", topic=a)
        assert len(to_a) == 1 and to_a[0].request_info().partitions == {(a, 1)}
        assert cluster.traffic.requests("Produce", topic=a, partition=0) == []
        assert len(cluster.traffic.requests("Produce", topic="?-*")) == 2
        assert cluster.traffic.count("Produce", client_id="svc-*") == 2
        assert cluster.traffic.count("Produce", client_id="other") == 0


def test_unfired_rules_warn_at_teardown_and_fail_when_strict() -> None:
    with (
        pytest.warns(mockkafka.UnfiredRuleWarning, match="1 fault rule"),
        mockkafka.Cluster() as cluster,
    ):
        cluster.faults.on("Produce").error("NOT_LEADER_OR_FOLLOWER")
    with (
        pytest.raises(mockkafka.UnfiredRulesError, match="never fired") as info,
        mockkafka.Cluster(strict_faults=True) as cluster,
    ):
        rule = cluster.faults.on("Fetch").named("fetch-error").error("UNKNOWN_SERVER_ERROR")
        assert cluster.unfired_rules() == [rule]
    assert "fetch-error" in str(info.value)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with mockkafka.Cluster(strict_faults=True) as cluster:
            topic = unique("t")
            cluster.create_topic(topic)
            rule = cluster.faults.on("Produce").once().error("NOT_LEADER_OR_FOLLOWER")
            p = Producer({"bootstrap.servers": cluster.bootstrap_servers})
            p.produce(topic, b"x")
            assert p.flush(10) == 0
            assert rule.fired == 1 and cluster.unfired_rules() == []


def test_rules_that_could_never_fire_are_refused_when_made() -> None:
    with mockkafka.Cluster(brokers=3) as cluster:
        with pytest.raises(mockkafka.ConfigError, match=r"broker=7: this cluster has brokers"):
            cluster.faults.on("Fetch", broker=7)
        with pytest.raises(mockkafka.ConfigError, match="only Fetch"):
            cluster.faults.on("Produce").partial_trailing_batch()
        with pytest.raises(mockkafka.ConfigError, match="only Fetch"):
            cluster.faults.on("Produce").corrupt_batch()
        assert cluster.faults.rules() == []


def test_verbs_refuse_bad_arguments_with_a_mockkafka_error() -> None:
    with mockkafka.Cluster() as cluster:
        cluster.create_topic("t")
        with pytest.raises(mockkafka.ConfigError, match="value must be bytes, str or None"):
            cluster.produce("t", 42)  # type: ignore[arg-type]
        with pytest.raises(mockkafka.ConfigError, match="timestamp must be an int"):
            cluster.produce("t", b"x", timestamp="now")  # type: ignore[arg-type]
        with pytest.raises(mockkafka.ConfigError, match="partitions must be an int"):
            cluster.create_topic("u", partitions="3")  # type: ignore[arg-type]
        with pytest.raises(mockkafka.ConfigError, match="give group= or transactional_id="):
            cluster.coordinator()
        with pytest.raises(mockkafka.ConfigError, match="not both"):
            cluster.move_coordinator(group="g", transactional_id="t", to=1)
        with pytest.raises(mockkafka.ConfigError, match="did you mean 'Ongoing'"):
            cluster.transactions(state="ongoing")
        with pytest.raises(mockkafka.ConfigError, match="caps"):
            cluster.cap_api_versions({"Fetchh": 3})
        cluster.commit_offsets("g", {("t", 0): 1})
        with pytest.raises(mockkafka.KafkaApiError, match="UNKNOWN_MEMBER_ID"):
            cluster.group("g").member("nobody")

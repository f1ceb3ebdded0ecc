"""A release preset reports configs as that Kafka release did (sans-IO, no sockets).

The per-release tables come from Kafka's generated config reference (see
``tools/gen_release_configs.py``); these tests pin facts of those releases and the layering
on top of them (explicit values, dynamic values, names a release did not have).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import mockkafka
from mockkafka.cluster.config import ClusterConfig
from mockkafka.cluster.configs import (
    ConfigEntry,
    ConfigSource,
    ResourceType,
    describe_broker,
    describe_topic,
    validate_configs,
)
from mockkafka.cluster.release_configs import config_set
from mockkafka.cluster.state import ClusterState
from mockkafka.errors import ConfigError, ErrorCode, KafkaApiError

ROOT = Path(__file__).resolve().parents[2]


def _state(**options: object) -> ClusterState:
    return ClusterState(ClusterConfig(**options))  # type: ignore[arg-type]


def _broker(state: ClusterState) -> dict[str, ConfigEntry]:
    return {e.name: e for e in describe_broker(state, state.controller_id)}


def test_3_9_has_zookeeper_era_names_and_no_share_enable_or_streams_groups() -> None:
    sets = config_set("3.9")
    assert {"zookeeper.connect", "log.message.format.version"} <= set(sets.broker)
    assert "inter.broker.protocol.version" in sets.broker
    # 3.9 listed the share-group tuning configs (KIP-932 early access) but not the switch
    assert "group.share.enable" not in sets.broker
    assert "group.share.session.timeout.ms" in sets.broker
    assert not [n for n in sets.broker if n.startswith("group.streams.")]
    assert not [n for n in config_set("3.7").broker if n.startswith("group.share.")]
    assert "message.format.version" in sets.topic
    assert sets.topic_to_broker["message.format.version"] == "log.message.format.version"


def test_kafka_4_and_no_preset_keep_the_kafka_4_model() -> None:
    for release in (None, "4.0", "4.3"):
        sets = config_set(release)
        assert sets.release is None
        assert "group.share.enable" in sets.broker
        assert "zookeeper.connect" not in sets.broker_names


def test_offsets_retention_default_went_from_one_day_to_seven_in_2_0() -> None:
    assert config_set("1.1").broker["offsets.retention.minutes"].default == "1440"
    assert config_set("2.0").broker["offsets.retention.minutes"].default == "10080"
    assert config_set("2.8").broker["offsets.retention.minutes"].default == "10080"


def test_releases_before_0_11_use_the_oldest_reference() -> None:
    assert config_set("0.10.2") is config_set("0.11")


def test_no_broker_config_was_dynamic_before_1_1() -> None:
    assert not [d for d in config_set("1.0").broker.values() if d.dynamic]
    assert config_set("1.1").broker["message.max.bytes"].dynamic
    assert not config_set("1.1").broker["zookeeper.connect"].dynamic


def test_a_3_9_broker_describes_3_9s_config_set() -> None:
    state = _state(kafka_version="3.9")
    entries = _broker(state)
    assert set(entries) >= {"zookeeper.connect", "log.message.format.version"}
    assert "group.share.enable" not in entries
    assert "group.streams.heartbeat.interval.ms" not in entries
    fmt = entries["log.message.format.version"]
    assert (fmt.value, fmt.source, fmt.read_only) == ("3.0-IV1", ConfigSource.DEFAULT_CONFIG, True)
    assert entries["process.roles"].value == "broker,controller"
    # mockkafka's own starting values for configs 3.9 did not have are not reported
    assert "group.coordinator.rebalance.protocols" in entries
    assert "share.coordinator.threads" not in entries


def test_a_2_8_broker_reports_2_8s_defaults_and_zookeeper_mode() -> None:
    state = _state(kafka_version="2.8")
    entries = _broker(state)
    assert entries["offsets.retention.minutes"].value == "10080"
    assert entries["log.message.format.version"].value == "2.8-IV1"
    assert "group.consumer.heartbeat.interval.ms" not in entries
    assert "process.roles" not in entries and "node.id" not in entries  # 2.8 did not list them
    # 3.0-3.2 listed KRaft's process.roles; a ZooKeeper-era preset has none set
    roles = _broker(_state(kafka_version="3.2"))["process.roles"]
    assert (roles.value, roles.source) == ("", ConfigSource.DEFAULT_CONFIG)


def test_a_release_default_that_drives_behaviour_follows_the_release() -> None:
    # message.max.bytes was 1000012 until 2.4 and 1048588 from 2.5.
    old = _state(kafka_version="2.4")
    topic = old.create_topic("t", 1, 1)
    assert topic.config_int("max.message.bytes") == 1000012
    [entry] = describe_topic(old, topic, old.controller_id, ["max.message.bytes"])
    assert (entry.value, entry.source) == ("1000012", ConfigSource.DEFAULT_CONFIG)
    new = _state(kafka_version="2.5")
    assert new.create_topic("t", 1, 1).config_int("max.message.bytes") == 1048588


def test_explicit_and_dynamic_values_still_report_as_set_under_a_preset() -> None:
    state = _state(kafka_version="3.9", broker_configs={"zookeeper.connect": "zk:2181"})
    entries = _broker(state)
    zk = entries["zookeeper.connect"]
    assert (zk.value, zk.source) == ("zk:2181", ConfigSource.STATIC_BROKER_CONFIG)
    state.set_broker_config({"log.retention.ms": "5000"}, None)
    entry = _broker(state)["log.retention.ms"]
    assert entry.value == "5000"
    assert entry.source == ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG


def test_topic_synonyms_follow_the_releases_server_default_properties() -> None:
    state = _state(kafka_version="3.9")
    topic = state.create_topic("t", 1, 1, config={"message.format.version": "2.8-IV1"})
    got = {e.name: e for e in describe_topic(state, topic, state.controller_id)}
    fmt = got["message.format.version"]
    assert fmt.source == ConfigSource.DYNAMIC_TOPIC_CONFIG
    assert fmt.synonyms == [
        ("message.format.version", "2.8-IV1", ConfigSource.DYNAMIC_TOPIC_CONFIG),
        ("log.message.format.version", "3.0-IV1", ConfigSource.DEFAULT_CONFIG),
    ]
    # log.retention.ms has no default of its own: the topic default is reported
    retention = got["retention.ms"]
    assert (retention.value, retention.source) == ("604800000", ConfigSource.DEFAULT_CONFIG)
    assert "remote.log.copy.disable" in got and "message.timestamp.after.max.ms" in got
    assert "remote.log.copy.disable" not in {
        e.name for e in describe_topic(_state(kafka_version="2.8"), topic, 1)
    }


def test_a_broker_config_the_release_did_not_have_is_refused_naming_it() -> None:
    with pytest.raises(ConfigError, match=r"not a Kafka 3\.9 broker config") as info:
        mockkafka.Cluster(kafka_version="3.9", config={"group.share.enable": "true"})
    assert "did you mean" in str(info.value)
    with pytest.raises(ConfigError, match=r"not a Kafka broker config"):
        mockkafka.Cluster(config={"zookeeper.connect": "zk:2181"})
    # 3.9 had it: accepted
    mockkafka.Cluster(kafka_version="3.9", config={"zookeeper.connect": "zk:2181"})


def test_a_topic_config_the_release_did_not_have_is_refused_naming_it() -> None:
    state = _state(kafka_version="2.8")
    with pytest.raises(KafkaApiError, match=r"Kafka 2\.8 has no such topic config") as info:
        state.create_topic("t", 1, 1, config={"remote.storage.enable": "true"})
    assert info.value.error == ErrorCode.INVALID_CONFIG
    topic = state.create_topic("t", 1, 1)
    with pytest.raises(KafkaApiError, match=r"Unknown topic config name: local\.retention\.ms"):
        validate_configs(state, ResourceType.TOPIC, topic.name, {"local.retention.ms": "1"})


def test_values_are_checked_against_the_releases_valid_values() -> None:
    # zstd arrived in 2.1
    state = _state(kafka_version="2.0")
    topic = state.create_topic("t", 1, 1)
    with pytest.raises(KafkaApiError, match=r"compression\.type"):
        validate_configs(state, ResourceType.TOPIC, topic.name, {"compression.type": "zstd"})
    newer = _state(kafka_version="2.1")
    newer.create_topic("t", 1, 1, config={"compression.type": "zstd"})


def test_a_dynamic_update_of_a_read_only_config_is_refused_per_release() -> None:
    # message.max.bytes became dynamic in 1.1
    with pytest.raises(KafkaApiError, match="Cannot update these configs dynamically"):
        _state(kafka_version="1.0").set_broker_config({"message.max.bytes": "2000"}, None)
    _state(kafka_version="1.1").set_broker_config({"message.max.bytes": "2000"}, None)


def test_importing_mockkafka_does_not_load_the_release_tables() -> None:
    code = (
        "import sys, mockkafka\n"
        "c = mockkafka.Cluster()\n"
        "assert 'mockkafka.cluster._release_configs' not in sys.modules, 'loaded'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=60)


def test_generated_release_configs_are_up_to_date() -> None:
    gen = ROOT / "tools" / "gen_release_configs.py"
    site = _site()
    if site is None:
        pytest.skip("no apache/kafka-site checkout ($KAFKA_SITE or ../kafka-site) to compare")
    result = subprocess.run(
        [sys.executable, str(gen), "--site", str(site), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def _site() -> Path | None:
    import os

    given = os.environ.get("KAFKA_SITE")
    candidates = [Path(given)] if given else [ROOT.parent / "kafka-site"]
    return next((p for p in candidates if p.exists()), None)


def test_describe_configs_answers_every_version_with_the_releases_set() -> None:
    from mockkafka.handlers.base import call_handler

    state = _state(kafka_version="1.1")
    state.create_topic("t", 1, 1)
    request = {
        "resources": [
            {"resource_type": 4, "resource_name": "1", "configuration_keys": None},
            {"resource_type": 2, "resource_name": "t", "configuration_keys": None},
        ],
        "include_synonyms": True,
    }
    for version in range(5):
        out = call_handler(state, "DescribeConfigs", request, version=version)
        assert isinstance(out, dict)
        broker, topic = out["results"]
        got = {c["name"]: c for c in broker["configs"]}
        assert got["offsets.retention.minutes"]["value"] == "1440"
        assert got["offsets.retention.minutes"]["read_only"] is True
        assert got["message.max.bytes"]["value"] == "1000012"
        assert "max.connections" not in got  # 2.3 added it
        assert {c["name"] for c in topic["configs"]} >= {"message.format.version"}
        if version >= 1:
            assert got["message.max.bytes"]["synonyms"] == [
                {"name": "message.max.bytes", "value": "1000012", "source": 5}
            ]


def test_group_session_timeout_bound_follows_the_release_unless_given() -> None:
    from mockkafka.handlers.base import call_handler

    def join(state: ClusterState, timeout_ms: int) -> int:
        out = call_handler(
            state,
            "JoinGroup",
            {
                "group_id": "g",
                "session_timeout_ms": timeout_ms,
                "rebalance_timeout_ms": timeout_ms,
                "member_id": "",
                "protocol_type": "consumer",
                "protocols": [{"name": "range", "metadata": b""}],
            },
            version=2,
        )
        assert isinstance(out, dict)
        return int(out["error_code"])

    # 2.2's group.max.session.timeout.ms was 5 minutes
    old = _state(kafka_version="2.2")
    assert _broker(old)["group.max.session.timeout.ms"].value == "300000"
    assert join(old, 400_000) == ErrorCode.INVALID_SESSION_TIMEOUT
    given = _state(kafka_version="2.2", group_max_session_timeout_ms=600_000)
    entry = _broker(given)["group.max.session.timeout.ms"]
    assert (entry.value, entry.source) == ("600000", ConfigSource.STATIC_BROKER_CONFIG)
    assert join(given, 400_000) != ErrorCode.INVALID_SESSION_TIMEOUT


def test_a_0_11_preset_still_deletes_topics_and_says_so() -> None:
    # 0.11's delete.topic.enable defaulted to false; mockkafka keeps deletion on, reported
    # as a value the broker was given
    state = _state(kafka_version="0.11")
    entry = _broker(state)["delete.topic.enable"]
    assert (entry.value, entry.source) == ("true", ConfigSource.STATIC_BROKER_CONFIG)
    assert entry.synonyms[-1] == (
        "delete.topic.enable",
        "false",
        ConfigSource.DEFAULT_CONFIG,
    )


def test_set_broker_config_checks_names_against_the_preset() -> None:
    with mockkafka.Cluster(kafka_version="2.8") as cluster:
        with pytest.raises(ConfigError, match=r"not a Kafka 2\.8 broker config"):
            cluster.set_broker_config({"group.consumer.session.timeout.ms": 45000})
        cluster.set_broker_config({"log.message.downconversion.enable": False})
        entry = _broker(cluster.state)["log.message.downconversion.enable"]
        assert entry.value == "false"
        assert entry.source == ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG


def _generator() -> object:
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "_gen_release_configs_for_test", ROOT / "tools" / "gen_release_configs.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# The three layouts of Kafka's generated config reference, with made-up descriptions.
_TABLE = """<table class="data-table"><tbody>
<tr>
<th>Name</th>
<th>Description</th>
<th>Type</th>
<th>Default</th>
<th>Valid Values</th>
<th>Importance</th>
<th>Dynamic Update Mode</th>
</tr>
<tr>
<td>a.b</td></td><td>Text
over <b>two</b> lines</td></td><td>int</td></td><td>7</td></td><td>[1,...]</td></td><td>high</td></td><td>cluster-wide</td></tr>
<tr>
<td>c.d</td><td>Text</td><td>string</td><td></td><td></td><td>high</td><td>read-only</td></tr>
"""
_HORIZONTAL = """<ul class="config-list">
<li><b>a.b</b>: Text <ul><li>nested</ul><br/><ul class="horizontal-list"><li><b>Type</b>: long</li><li><b>Default</b>: 604800000 (7 days)</li><li><b>Valid Values</b>: [x, y]</li><li><b>Importance</b>: high</li><li><b>Update Mode</b>: per-broker</li></ul></li>
<li><b>c.d</b>: Text<br/><ul class="horizontal-list"><li><b>Type</b>: list</li><li><b>Default</b>: ""</li><li><b>Valid Values</b>: </li><li><b>Importance</b>: low</li><li><b>Update Mode</b>: read-only</li></ul></li>
</ul>"""
_HEADED = """<ul class="config-list">
<li>
<h4 class="anchor-heading">
   <a class="anchor-link" id="a.b"></a>
   <a href="#a.b">a.b</a>
</h4>
<p>Text <ul> <li>unclosed item <li>another</ul></p>
<table><tbody>
<tr><th>Type:</th><td>boolean</td></tr>
<tr><th>Default:</th><td>null</td></tr>
<tr><th>Valid Values:</th><td></td></tr>
<tr><th>Importance:</th><td>medium</td></tr>
<tr><th>Update Mode:</th><td>read-only</td></tr>
</tbody></table>
</li>
</ul>"""


def test_the_generator_reads_every_layout_of_the_config_reference() -> None:
    gen = _generator()
    parse = gen.parse_reference  # type: ignore[attr-defined]
    default = gen._default  # type: ignore[attr-defined]
    table = parse(_TABLE)
    assert [(r["Name"], r["Type"], r["Default"], r["Dynamic Update Mode"]) for r in table] == [
        ("a.b", "int", "7", "cluster-wide"),
        ("c.d", "string", "", "read-only"),
    ]
    horizontal = parse(_HORIZONTAL)
    assert [(r["Name"], r["Default"], r["Valid Values"]) for r in horizontal] == [
        ("a.b", "604800000 (7 days)", "[x, y]"),
        ("c.d", '""', ""),
    ]
    [headed] = parse(_HEADED)
    assert (headed["Name"], headed["Type"], headed["Update Mode"]) == (
        "a.b",
        "boolean",
        "read-only",
    )
    assert [default(x) for x in ("", "null", '""', "604800000 (7 days)", "GSSAPI")] == [
        None,
        None,
        "",
        "604800000",
        "GSSAPI",
    ]

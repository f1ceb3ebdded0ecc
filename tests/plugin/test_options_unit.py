"""Option merging and naming, without pytest sessions or sockets."""

from __future__ import annotations

import pytest

from pytest_plugin._options import OptionsError, TopicSpec, ini_layer, merge, option_keys
from pytest_plugin._report import jsonl_name


def test_later_layers_win_key_by_key_and_remember_their_source() -> None:
    opts = merge(
        [
            ("ini options", {"brokers": 3, "auto_create_topics": True}),
            ("fixture kafka_cluster_options", {"topics": {"a": 2}}),
            ("@pytest.mark.kafka_cluster", {"brokers": 1}),
        ]
    )
    assert opts.brokers == 1
    assert opts.config == {"auto_create_topics": True}
    assert opts.topics == {"a": TopicSpec(partitions=2)}
    assert opts.sources["brokers"] == "@pytest.mark.kafka_cluster"
    assert opts.cluster_kwargs() == {
        "brokers": 1,
        "port": 0,
        "record_traffic": True,
        "auto_create_topics": True,
    }


@pytest.mark.parametrize(
    ("topics", "expected"),
    [
        ({"t": 6}, {"t": TopicSpec(6)}),
        (["a", "b"], {"a": TopicSpec(), "b": TopicSpec()}),
        ({"t": None}, {"t": TopicSpec()}),
        (
            {"t": {"partitions": 2, "replication_factor": 3, "config": {"retention.ms": 5}}},
            {"t": TopicSpec(2, 3, {"retention.ms": "5"})},
        ),
    ],
)
def test_topic_specs(topics: object, expected: dict[str, TopicSpec]) -> None:
    assert merge([("m", {"topics": topics})]).topics == expected


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"brokres": 3}, "m: unknown option 'brokres' (did you mean 'brokers'?)"),
        ({"brokers": "3"}, "m: brokers must be an int, got '3'"),
        ({"auto_create_topics": 1}, "m: auto_create_topics must be True or False"),
        ({"topics": "t"}, "m: topics must be a dict"),
        ({"topics": {"t": {"partitons": 1}}}, "m: topic 't': unknown key(s) partitons"),
        ({"topics": {"t": True}}, "m: topic 't': expected a partition count"),
        ({"record_traffic": "yes"}, "m: record_traffic must be True or False"),
    ],
)
def test_bad_options_name_the_source_and_key(options: dict[str, object], message: str) -> None:
    with pytest.raises(OptionsError) as info:
        merge([("m", options)])
    assert str(info.value).startswith(message)


def test_every_cluster_config_field_is_an_option_and_an_ini_option() -> None:
    keys = option_keys()
    assert {"brokers", "topics", "record_traffic", "auto_create_topics"} <= set(keys)
    ini = {
        "kafka_brokers": "2",
        "kafka_auto_create_topics": "yes",
        "kafka_topics": ["a:3", "b:1:2", "c"],
        "kafka_racks": ["r1", "-"],
        "kafka_broker_configs": ["log.retention.ms=100"],
        "kafka_cluster_id": "abc",
    }
    layer = ini_layer(lambda name: ini.get(name, ""))
    assert layer == {
        "brokers": 2,
        "auto_create_topics": True,
        "topics": {
            "a": {"partitions": 3},
            "b": {"partitions": 1, "replication_factor": 2},
            "c": {},
        },
        "racks": ("r1", None),
        "broker_configs": (("log.retention.ms", "100"),),
        "cluster_id": "abc",
    }
    assert merge([("ini options", layer)]).topics["b"] == TopicSpec(1, 2)


@pytest.mark.parametrize(
    ("ini", "message"),
    [
        ({"kafka_brokers": "x"}, "ini option kafka_brokers: invalid literal"),
        ({"kafka_record_traffic": "maybe"}, "ini option kafka_record_traffic: expected true"),
        ({"kafka_topics": ["a:b"]}, "ini option kafka_topics: invalid literal"),
        ({"kafka_broker_configs": ["novalue"]}, "ini option kafka_broker_configs: expected"),
    ],
)
def test_bad_ini_values_name_the_ini_option(ini: dict[str, object], message: str) -> None:
    with pytest.raises(OptionsError) as info:
        ini_layer(lambda name: ini.get(name, ""))
    assert str(info.value).startswith(message)


def test_jsonl_names_are_safe_and_bounded() -> None:
    assert jsonl_name("tests/test_a.py::TestX::test_b[x-1/2]") == (
        "tests_test_a.py_TestX_test_b_x-1_2"
    )
    long = jsonl_name("t.py::test[" + "x" * 500 + "]")
    assert len(long) == 150
    assert long != jsonl_name("t.py::test[" + "x" * 499 + "]")

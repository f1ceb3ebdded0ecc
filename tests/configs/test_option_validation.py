"""Values that broke the cluster (issue 27) are refused where they are given, by one
validator: ``serve`` flags, ``Cluster(...)``, the marker, the ini, and AlterConfigs /
IncrementalAlterConfigs (INVALID_CONFIG with Kafka's message)."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

import mockkafka
from mockkafka.cluster.limits import limits
from mockkafka.cluster.state import ClusterConfig, ClusterState
from mockkafka.errors import ConfigError, ErrorCode
from mockkafka.handlers.base import call_handler

BROKER = 4

# (serve flags, Cluster options, the message both give)
CASES: list[tuple[list[str], dict[str, Any], str]] = [
    (["--offsets-topic-partitions", "0"], {"offsets_topic_partitions": 0},
     "Invalid value 0 for configuration offsets.topic.num.partitions: Value must be at least 1"),
    (["--max-request-size", "-1"], {"max_request_size": -1},
     "Invalid value -1 for configuration socket.request.max.bytes: Value must be at least 1"),
    (["--brokers", "100000"], {"brokers": 100_000},
     "brokers must be between 1 and 64, got 100000"),
    (["--cluster-id", ""], {"cluster_id": ""}, "cluster_id '' is not a base64 UUID"),
    (["--cluster-id", "my-cluster"], {"cluster_id": "my-cluster"},
     "cluster_id 'my-cluster' is not a base64 UUID"),
    (["--config", "offsets.topic.num.partitions=0"], {"config": {"offsets.topic.num.partitions": 0}},
     "Value must be at least 1"),
    (["--transaction-max-timeout-ms", "0"], {"transaction_max_timeout_ms": 0},
     "Invalid value 0 for configuration transaction.max.timeout.ms: Value must be at least 1"),
    (["--max-request-size", "4294967296"], {"max_request_size": 2**32},
     "Not a number of type INT"),
    (["--config", "mockkafka.max.wait.ms=soon"], {"config": {"mockkafka.max.wait.ms": "soon"}},
     "Invalid value soon for configuration mockkafka.max.wait.ms: Not a number of type LONG"),
]  # fmt: skip


@pytest.mark.parametrize(("flags", "options", "message"), CASES)
def test_cluster_refuses_values_that_broke_it(
    flags: list[str], options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError) as info:
        mockkafka.Cluster(**options)
    assert message in str(info.value)


def test_serve_refuses_them_in_one_line_with_status_2() -> None:
    """One process per case would take seconds: the flags are checked before anything
    listens, so the checks are run in-process for all but one."""
    from mockkafka import cli

    for flags, _options, message in CASES:
        err = _serve_error(cli, flags)
        assert message in err, (flags, err)
    proc = subprocess.run(
        [sys.executable, "-m", "mockkafka.cli", "serve", "--offsets-topic-partitions", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("mockkafka serve: cluster option offsets_topic_partitions")


def _serve_error(cli: Any, flags: list[str]) -> str:
    """What ``serve FLAGS`` says before starting (the checks ``main`` runs first)."""
    args = cli.build_parser().parse_args(["serve", *flags])
    with pytest.raises(cli.UsageProblem) as info:
        cli.load_scenario(args)
        cli.check_args(args)
    return str(info.value)


def test_the_marker_and_the_ini_refuse_them(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nkafka_cluster_id = not-a-uuid\n")
    pytester.makepyfile(
        """
        import pytest

        def test_ini(kafka_cluster):
            pass

        @pytest.mark.kafka_cluster(cluster_id="MkU3OEVBNTcwNTJENDM2Qg",
                                   offsets_topic_partitions=0)
        def test_marker(kafka_cluster):
            pass
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(
        [
            "*usage error: cluster_id 'not-a-uuid' is not a base64 UUID*",
            "*usage error: cluster option offsets_topic_partitions (offsets.topic.num.partitions): "
            "Invalid value 0 for configuration offsets.topic.num.partitions: Value must be at "
            "least 1*",
        ]
    )


def test_a_valid_cluster_id_is_reported_in_metadata() -> None:
    with mockkafka.Cluster(cluster_id="MkU3OEVBNTcwNTJENDM2Qg") as c:
        assert c.state.cluster_id == "MkU3OEVBNTcwNTJENDM2Qg"


def _incremental(state: ClusterState, key: str, value: str) -> tuple[int, str | None]:
    result = call_handler(
        state,
        "IncrementalAlterConfigs",
        {
            "resources": [
                {
                    "resource_type": BROKER,
                    "resource_name": "",
                    "configs": [{"name": key, "config_operation": 0, "value": value}],
                }
            ],
            "validate_only": False,
        },
    )
    assert isinstance(result, dict)
    [r] = result["responses"]
    return r["error_code"], r["error_message"]


def test_incremental_alter_configs_answers_invalid_config_with_kafkas_message() -> None:
    state = ClusterState(ClusterConfig())
    assert _incremental(state, "max.connections", "-5") == (
        ErrorCode.INVALID_CONFIG,
        "Invalid value -5 for configuration max.connections: Value must be at least 0",
    )
    assert _incremental(state, "mockkafka.max.wait.ms", "soon") == (
        ErrorCode.INVALID_CONFIG,
        "Invalid value soon for configuration mockkafka.max.wait.ms: Not a number of type LONG",
    )
    # read-only at run time, as in Kafka
    code, _message = _incremental(state, "offsets.topic.num.partitions", "0")
    assert code == ErrorCode.INVALID_REQUEST
    assert _incremental(state, "mockkafka.max.wait.ms", "100") == (0, None)
    assert limits(state).max_wait_ms == 100


def test_a_negative_connections_max_idle_ms_turns_idle_expiry_off_as_in_kafka() -> None:
    """Kafka has no validator for connections.max.idle.ms: its Selector creates no idle
    expiry manager for a negative value, so connections never expire. The same here."""
    c = mockkafka.Cluster(config={"connections.max.idle.ms": "-5"})
    assert limits(c.state).connections_max_idle_ms >= 2**62

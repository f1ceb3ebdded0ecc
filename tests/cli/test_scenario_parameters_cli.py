"""Issue 26 on the command line and the control endpoint: library scenarios bound to your
own names (``--set``, ``"parameters"``), ``mockkafka scenarios --show``, and the rough
edges a newcomer hit (``--broker`` abbreviations, ``--topic NAME:P:RF`` without
``--brokers``, ``POST /faults``, ``/wait`` answers)."""

from __future__ import annotations

import pytest

from mockkafka.cli import main
from tests.cli.test_control import http, serving

pytestmark = pytest.mark.interop


def test_serve_binds_scenario_parameters_and_the_endpoint_too() -> None:
    with serving(
        "--scenario", "leader-failover", "--set", "topic=payments", "--set", "group=ledger",
        "--set", "seed_records=3",
    ) as (_proc, _bootstrap, ctl):  # fmt: skip
        status, state = http("GET", f"{ctl}/state")
        assert status == 200 and list(state["topics"]) == ["payments"]
        assert sum(p["high_watermark"] for p in state["topics"]["payments"]) == 3

        story = {"name": "coordinator-loading", "parameters": {"topic": "audit", "seed_records": 2}}
        # leader-failover still waits for the app's records: a second one is refused...
        status, got = http("POST", f"{ctl}/scenario", story)
        assert status == 409, got
        assert got["error"].startswith(
            "scenario 'leader-failover' is still playing (step 0 of 2 done): wait until "
            'GET /scenario says "finished", or send "replace": true'
        )
        assert "audit" not in http("GET", f"{ctl}/state")[1]["topics"]
        # ...unless it replaces it
        status, got = http("POST", f"{ctl}/scenario", {**story, "replace": True})
        assert status == 202, got
        assert "audit" in http("GET", f"{ctl}/state")[1]["topics"]
        assert http("GET", f"{ctl}/scenario")[1]["name"] == "coordinator-loading"

        # a scenario declaring an existing topic with other partitions: what Kafka says
        other = "name: other\ntopics: {audit: {partitions: 5}}\n"
        status, got = http("POST", f"{ctl}/scenario", {"yaml": other, "replace": True})
        assert status == 409, got
        assert got["error"].startswith(
            "TOPIC_ALREADY_EXISTS: scenario 'other' declares topic 'audit' with 5 partition(s); "
            "the cluster already holds it with 2."
        )
        assert http("GET", f"{ctl}/scenario")[1]["name"] == "coordinator-loading"
        same = "name: same\ntopics: {audit: {partitions: 2}}\n"
        status, got = http("POST", f"{ctl}/scenario", {"yaml": same, "replace": True})
        assert status == 202, got

        status, err = http(
            "POST", f"{ctl}/scenario", {"name": "coordinator-loading", "parameters": {"tpoic": "x"}}
        )
        assert status == 400
        assert "no parameter 'tpoic' (did you mean topic?)" in err["error"]

        # a newcomer's guess: POST /faults is answered with where faults are added
        status, err = http("POST", f"{ctl}/faults", {"on": "Produce", "error": "NOT_LEADER"})
        assert status == 405
        assert err["error"].startswith(
            "POST /faults: use GET, DELETE; to add a fault rule, POST /steps"
        )

        # /wait answers JSON (the condition as an object), not a Python repr
        status, got = http("POST", f"{ctl}/wait", {"after": {"time": "10ms"}})
        assert status == 200 and got == {"reached": {"after": {"time": "10ms"}}}
        status, got = http("POST", f"{ctl}/wait", {"when": {"group": "x"}, "timeout": "50ms"})
        assert status == 408
        assert got["condition"] == {"when": {"group": "x", "state": "Stable"}}


def test_an_unknown_set_parameter_gets_a_did_you_mean(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--scenario", "leader-failover", "--set", "tpoic=payments"]) == 2
    err = capsys.readouterr().err
    assert "has no parameter 'tpoic' (did you mean topic?)" in err
    assert len(err.splitlines()) == 1


def test_set_without_a_scenario_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--set", "topic=payments"]) == 2
    assert "--set and --skip-expect bind a --scenario" in capsys.readouterr().err
    assert main(["proxy", "--upstream", "127.0.0.1:1", "--skip-expect", "committed"]) == 2
    assert "--set and --skip-expect bind a --scenario" in capsys.readouterr().err


def test_proxy_binds_scenario_parameters_and_skips_checks(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # bound before the upstream is reached: a mistake in them is named first
    argv = ["proxy", "--upstream", "127.0.0.1:1", "--scenario", "leader-failover"]
    assert main([*argv, "--set", "tpoic=payments"]) == 2
    assert "has no parameter 'tpoic' (did you mean topic?)" in capsys.readouterr().err
    assert main([*argv, "--skip-expect", "comitted"]) == 2
    assert "has no check 'comitted' (did you mean committed?)" in capsys.readouterr().err
    # good ones get as far as the upstream
    assert main([*argv, "--set", "topic=payments", "--skip-expect", "committed"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mockkafka proxy: ") and "parameter" not in err


def test_scenarios_show_prints_the_parameters_then_the_file(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["scenarios", "--show", "leader-failover"]) == 0
    out = capsys.readouterr().out
    assert "#   topic = 'orders': the topic the app produces to and consumes from" in out
    assert "name: leader-failover\n" in out and "$topic" in out
    assert main(["scenarios", "--show", "leader-failovr"]) == 2
    assert "(did you mean leader-failover?)" in capsys.readouterr().err


def test_a_replication_factor_above_brokers_suggests_the_brokers_flag(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["serve", "--topic", "orders:6:3"]) == 2
    assert "(add --brokers 3)" in capsys.readouterr().err


def test_a_flag_is_not_taken_as_an_abbreviation_of_another(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["serve", "--broker", "3"])
    assert exc.value.code == 2
    assert "unrecognized arguments: --broker 3" in capsys.readouterr().err

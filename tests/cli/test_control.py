"""`mockkafka serve` with scenarios and its HTTP control endpoint, over real HTTP and real
Kafka clients; `mockkafka scenarios` and `mockkafka scenario check`."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer

from mockkafka.control import build_openapi, openapi
from tests.cli.test_serve import serving as serve_process

pytestmark = pytest.mark.interop


@contextmanager
def serving(*args: str) -> Iterator[tuple[subprocess.Popen[str], str, str]]:
    """``mockkafka serve ARGS``: the process, bootstrap.servers and the control URL."""
    with serve_process(*args) as (proc, bootstrap):
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("control=http://127.0.0.1:"), line
        yield proc, bootstrap, line.split("=", 1)[1]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """Run ``mockkafka ARGS`` to completion."""
    return subprocess.run(
        [sys.executable, "-m", "mockkafka.cli", *args], capture_output=True, text=True, timeout=60
    )


def http(method: str, url: str, body: Any = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"} if method in ("POST", "DELETE") else {}
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=20) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_the_control_endpoint_scripts_faults_and_verbs_at_run_time() -> None:
    with serving("--brokers", "3", "--topic", "orders:3:3") as (proc, bootstrap, ctl):
        status, doc = http("GET", f"{ctl}/openapi.json")
        assert status == 200 and doc["openapi"].startswith("3.") and "/steps" in doc["paths"]

        # a fault scripted over HTTP is seen by a real client
        status, got = http(
            "POST",
            f"{ctl}/steps",
            {
                "fault": {
                    "name": "nl",
                    "on": "Produce",
                    "times": 2,
                    "error": "NOT_LEADER_OR_FOLLOWER",
                }
            },
        )
        assert (status, got["rules"]) == (200, ["nl"])
        p = Producer({"bootstrap.servers": bootstrap, "log_level": 0})
        p.produce("orders", value=b"v", partition=0)
        assert p.flush(15) == 0
        status, rules = http("GET", f"{ctl}/faults")
        assert [(r["name"], r["fired"]) for r in rules] == [("nl", 2)]
        status, seen = http("GET", f"{ctl}/traffic?api=Produce")
        assert status == 200 and len(seen) == 3
        assert [
            x["response"]["responses"][0]["partition_responses"][0]["error_code"] for x in seen
        ] == [6, 6, 0]

        # a verb, then the state shows it
        status, _ = http(
            "POST",
            f"{ctl}/steps",
            {"move_leader": {"topic": "orders", "partition": 0, "to": "next"}},
        )
        assert status == 200
        status, state = http("GET", f"{ctl}/state")
        assert state["topics"]["orders"][0]["leader_epoch"] == 1
        assert state["topics"]["orders"][0]["high_watermark"] == 1

        # waits over HTTP: reached, and timed out with what was seen
        status, _ = http(
            "POST", f"{ctl}/wait", {"after": {"requests": {"api": "Produce", "count": 3}}}
        )
        assert status == 200
        status, err = http("POST", f"{ctl}/wait", {"when": {"group": "nobody"}, "timeout": "100ms"})
        assert status == 408 and "the group does not exist" in err["error"]

        status, _ = http("POST", f"{ctl}/reset")
        assert status == 200
        assert http("GET", f"{ctl}/state")[1]["topics"] == {}

        assert http("POST", f"{ctl}/stop") == (200, {"stopping": True})
        assert proc.wait(10) == 0


BAD_REQUESTS = [
    ("POST", "/steps", {"move_leadr": {"topic": "t", "partition": 0, "to": 1}}, 400,
     "unknown step key 'move_leadr' (did you mean move_leader?)"),
    ("POST", "/steps", {"fault": {"on": "Fetc", "error": "NONE"}}, 400,
     "on='Fetc' is not a Kafka API (did you mean Fetch?)"),
    ("POST", "/steps", {"move_leader": {"topic": "nope", "partition": 0, "to": 1}}, 409,
     "UNKNOWN_TOPIC_OR_PARTITION"),
    ("POST", "/steps", {"truncate_log": {"topic": "t", "partition": 0, "to_offset": 5}}, 409,
     "OFFSET_OUT_OF_RANGE: truncate_log: to_offset 5 is outside t-0's log: give 0 (log start "
     "offset) to 0 (high watermark)"),
    ("POST", "/steps", {"move_leader": {"topic": "t", "partition": 0, "to": 1}}, 409,
     "ELECTION_NOT_NEEDED: move_leader: broker 1 already leads t-0"),
    ("POST", "/scenario", {"name": "leader-failovr"}, 400,
     "no library scenario named 'leader-failovr' (did you mean leader-failover?)"),
    ("POST", "/wait", {"after": {"event": {"event": "leader_move"}}}, 400,
     "'leader_move' is not a cluster event (did you mean leader_moved?)"),
    ("GET", "/traffic?api=Prodce", None, 400, "api='Prodce' is not a Kafka API (did you mean Produce"),
    ("GET", "/scenario", None, 409, "no scenario is loaded: POST /scenario first"),
    ("GET", "/nope", None, 404, "no endpoint /nope; endpoints:"),
    ("GET", "/steps", None, 405, "GET /steps: use POST"),
]  # fmt: skip


def test_bad_requests_get_4xx_with_the_python_api_messages() -> None:
    with serving("--topic", "t") as (_proc, _bootstrap, ctl):
        for method, path, body, want_status, want in BAD_REQUESTS:
            status, got = http(method, ctl + path, body)
            assert status == want_status and want in got["error"], (path, body, status, got)
        req = urllib.request.Request(
            f"{ctl}/steps",
            data=b"{not json",
            method="POST",
            headers={"Content-Type": "application/json"},
        )
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(req, timeout=10)
        assert info.value.code == 400 and b"not JSON" in info.value.read()
        # not HTTP at all: a 400, and the endpoint keeps serving
        host, port = ctl.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            sock.sendall(b"HELLO KAFKA\r\n\r\n")
            assert sock.recv(200).startswith(b"HTTP/1.1 400 ")
        assert http("GET", f"{ctl}/faults") == (200, [])


def test_acl_steps_over_http_let_a_sasl_producer_in_and_out() -> None:
    args = ("--topic", "orders", "--security-protocol", "SASL_PLAINTEXT", "--authorizer")
    args += ("--user", "alice:alice-secret")
    args += ("--no-auto-create-topics",)
    with serving(*args) as (_proc, bootstrap, ctl):

        def produce() -> int:
            errors: list[Any] = []
            p = Producer(
                {
                    "bootstrap.servers": bootstrap,
                    "security.protocol": "SASL_PLAINTEXT",
                    "sasl.mechanism": "PLAIN",
                    "sasl.username": "alice",
                    "sasl.password": "alice-secret",
                    "message.timeout.ms": 5000,
                    "log_level": 0,
                }
            )
            p.produce("orders", b"v", on_delivery=lambda err, _msg: errors.append(err))
            p.flush(10)
            assert len(errors) == 1
            return 0 if errors[0] is None else int(errors[0].code())

        assert produce() == 29  # TOPIC_AUTHORIZATION_FAILED
        allow = {"principal": "User:alice", "operations": ["write"], "topic": "orders"}
        assert http("POST", f"{ctl}/steps", {"allow": allow}) == (
            200,
            {"applied": "allow", "rules": []},
        )
        assert produce() == 0
        deny = {"principal": "User:*", "operations": "all", "topic": "ord", "prefixed": True}
        assert http("POST", f"{ctl}/steps", {"deny": deny})[0] == 200
        assert produce() == 29
        assert http("POST", f"{ctl}/steps", {"remove_acls": {"permission": "DENY"}})[0] == 200
        assert produce() == 0
        assert http("GET", f"{ctl}/state")[1]["topics"]["orders"][0]["high_watermark"] == 2

        status, err = http("POST", f"{ctl}/steps", {"allow": {**allow, "operations": "wirte"}})
        assert status == 400 and err["field"] == "allow.operations"
        assert "unknown operation 'wirte' (did you mean 'write'?)" in err["error"]


def test_a_super_user_of_serve_grants_access_with_an_admin_client() -> None:
    """A suite in another language keeps an admin principal for its ACLs: ``--super-user``."""
    from confluent_kafka.admin import (
        AclBinding,
        AclOperation,
        AclPermissionType,
        AdminClient,
        ResourcePatternType,
        ResourceType,
    )

    args = ("--topic", "orders", "--security-protocol", "SASL_PLAINTEXT", "--authorizer")
    args += ("--user", "admin:admin-secret", "--user", "alice:alice-secret")
    args += ("--super-user", "User:admin", "--no-auto-create-topics")
    with serving(*args) as (_proc, bootstrap, _ctl):

        def conf(user: str) -> dict[str, Any]:
            return {
                "bootstrap.servers": bootstrap,
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "PLAIN",
                "sasl.username": user,
                "sasl.password": f"{user}-secret",
                "log_level": 0,
            }

        def produce(user: str) -> int:
            errors: list[Any] = []
            p = Producer({**conf(user), "message.timeout.ms": 5000})
            p.produce("orders", b"v", on_delivery=lambda err, _msg: errors.append(err))
            p.flush(10)
            assert len(errors) == 1
            return 0 if errors[0] is None else int(errors[0].code())

        assert produce("alice") == 29  # TOPIC_AUTHORIZATION_FAILED: no ACL yet
        assert produce("admin") == 0  # a super user needs none
        admin = AdminClient(conf("admin"))
        grant = AclBinding(
            ResourceType.TOPIC,
            "orders",
            ResourcePatternType.LITERAL,
            "User:alice",
            "*",
            AclOperation.WRITE,
            AclPermissionType.ALLOW,
        )
        for f in admin.create_acls([grant]).values():
            assert f.result(10) is None
        assert produce("alice") == 0


def test_serve_plays_a_scenario_and_reports_its_expectations() -> None:
    with serving("--scenario", "unclean-leader-election") as (proc, bootstrap, ctl):
        state = http("GET", f"{ctl}/state")[1]
        assert len(state["brokers"]) == 3 and "orders" in state["topics"]
        p = Producer({"bootstrap.servers": bootstrap, "log_level": 0})
        for i in range(60):
            p.produce("orders", key=b"k%d" % i, value=b"v%d" % i)
            p.flush(10)
        for _ in range(100):
            if http("GET", f"{ctl}/scenario")[1]["finished"]:
                break
            time.sleep(0.05)
        assert http("POST", f"{ctl}/scenario/check") == (200, {"ok": True, "failures": []})
        assert http("POST", f"{ctl}/stop")[0] == 200
        assert proc.wait(10) == 0
        assert proc.stderr is not None
        assert "scenario 'unclean-leader-election': ok" in proc.stderr.read()


def test_a_scenario_can_be_posted_as_yaml() -> None:
    yaml = "name: posted\ntopics: {t: {partitions: 2}}\nexpect:\n  records: {topic: t, count: 5}\n"
    with serving() as (_proc, _bootstrap, ctl):
        assert http("POST", f"{ctl}/scenario", {"yaml": yaml})[0] == 202
        status, got = http("POST", f"{ctl}/scenario/check")
        assert status == 200
        assert got == {"ok": False, "failures": ["Records: t holds 0 records, expected exactly 5"]}


def test_serve_refuses_a_bad_scenario_before_starting(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\nsteps:\n  - at: soon\n    trigger_rebalance: {group: g}\n")
    proc = cli("serve", "--scenario", str(bad))
    assert proc.returncode == 2 and proc.stdout == ""
    assert f"{bad}:3:9: steps[0].at: 'soon' is not valid; expected a duration" in proc.stderr


def test_scenarios_lists_the_library_with_descriptions() -> None:
    out = cli("scenarios")
    assert out.returncode == 0
    lines = out.stdout.splitlines()
    assert len(lines) >= 12
    assert any(
        line.startswith("leader-failover ") and "leader of every partition" in line
        for line in lines
    )


def test_scenario_check_exits_0_or_1_with_the_precise_message(tmp_path: Path) -> None:
    good = cli("scenario", "check", "scenarios/isr-shrink.yaml")
    assert good.returncode == 0 and "ok (isr-shrink: 2 steps, 4 checks)" in good.stdout
    bad = tmp_path / "typo.yaml"
    bad.write_text("name: typo\nexpect:\n  no_dataloss: [t]\n")
    out = cli("scenario", "check", str(bad))
    assert out.returncode == 1
    assert (
        f"{bad}:3:3: expect.no_dataloss: unknown key 'no_dataloss' (did you mean no_data_loss or "
        "data_loss?)" in out.stderr
    )


def test_the_shipped_openapi_document_is_current() -> None:
    assert openapi() == build_openapi(), (
        "regenerate: python -m mockkafka.control > mockkafka/openapi.json"
    )

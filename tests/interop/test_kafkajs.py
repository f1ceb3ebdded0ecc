"""kafkajs (Node.js) against mockkafka: a client with its own protocol implementation.

Needs ``node`` and kafkajs installed under ``<repo>/.node`` (``.ci/run`` does
``npm install --prefix .node kafkajs@2.2.4``); skips, saying so, when either is missing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

import mockkafka
from mockkafka.errors import ErrorCode
from tests.interop.conftest import unique

REPO = Path(__file__).resolve().parent.parent.parent
NODE_MODULES = REPO / ".node" / "node_modules"
SCRIPT = Path(__file__).resolve().parent / "kafkajs" / "roundtrip.js"

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or not (NODE_MODULES / "kafkajs").is_dir(),
    reason="node or kafkajs missing: run `npm install --prefix .node kafkajs@2.2.4`",
)


def run_node(script: Path, *args: str) -> Any:
    """Run a kafkajs script; returns the JSON of its last stdout line."""
    proc = subprocess.run(
        ["node", str(script), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "NODE_PATH": str(NODE_MODULES)},
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_kafkajs_creates_produces_idempotently_and_consumes_in_a_group() -> None:
    with mockkafka.Cluster(brokers=3) as cluster:
        topic, group = unique("js"), unique("jsg")
        result = run_node(SCRIPT, cluster.bootstrap_servers, topic, group, "300")
        assert result["created"] is True
        assert result["partitions"] == 3
        assert sorted(result["seen"]) == sorted(f"v{i}" for i in range(300))
        # The broker holds each record once (idempotent producer), gzip on the wire.
        held = [r.value for r in cluster.topic(topic).records()]
        assert sorted(held) == sorted(f"v{i}".encode() for i in range(300))
        assert cluster.traffic.requests("InitProducerId")
        # The group committed what it consumed.
        committed = cluster.committed_offsets(group)
        assert sum(committed.get((topic, p), 0) for p in range(3)) == 300


CONTROL_SCRIPT = Path(__file__).resolve().parent / "kafkajs" / "control_faults.js"


def test_a_kafkajs_suite_scripts_faults_at_run_time_through_the_control_endpoint() -> None:
    """The documented example of docs/scenarios.md (Live control from other languages)."""
    import sys

    topic = unique("jsctl")
    serve = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mockkafka.cli",
            "serve",
            "--brokers",
            "3",
            "--topic",
            f"{topic}:1:3",
        ],
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    try:
        assert serve.stdout is not None
        bootstrap = serve.stdout.readline().strip().split("=", 1)[1]
        control = serve.stdout.readline().strip().split("=", 1)[1]
        result = run_node(CONTROL_SCRIPT, bootstrap, control, topic)
        assert result["fired"] == 2
        assert result["partition0"]["leader_epoch"] == 1
        assert result["partition0"]["high_watermark"] == 2
        assert "move_leader has no argument 'too' (did you mean to?)" in result["mistake"]
    finally:
        serve.kill()
        serve.wait(10)


ACLS_SCRIPT = Path(__file__).resolve().parent / "kafkajs" / "acls.js"


@pytest.mark.parametrize("mechanism", ["plain", "scram-sha-256"])
def test_kafkajs_user_gets_kafkas_authorization_errors_until_granted(mechanism: str) -> None:
    from tests.interop._acl import USERS, acl_cluster, grant

    with acl_cluster() as cluster:
        cluster.create_topic("orders")
        args = (cluster.bootstrap_servers, "alice", USERS["alice"], mechanism)
        denied = run_node(ACLS_SCRIPT, *args)
        assert denied == {
            "createTopics": "TOPIC_AUTHORIZATION_FAILED",
            "describeConfigs": "TOPIC_AUTHORIZATION_FAILED",
            "deleteTopics": "TOPIC_AUTHORIZATION_FAILED",
            "produce": "TOPIC_AUTHORIZATION_FAILED",
        }
        from confluent_kafka.admin import AclOperation, AdminClient, ResourceType

        admin = AdminClient(cluster.client_config("confluent", user="admin"))
        # (kafkajs reads the new topic's metadata after creating it: DESCRIBE too.)
        grant(admin, ResourceType.TOPIC, "fresh", AclOperation.CREATE, AclOperation.DESCRIBE)
        grant(
            admin, ResourceType.TOPIC, "orders", AclOperation.WRITE, AclOperation.DESCRIBE_CONFIGS
        )
        allowed = run_node(ACLS_SCRIPT, *args)
        assert allowed == {
            "createTopics": "ok",
            "describeConfigs": "ok",
            "deleteTopics": "TOPIC_AUTHORIZATION_FAILED",  # DELETE was not granted
            "produce": "ok",
        }
        assert "fresh" in cluster.topics()
        assert [r.value for r in cluster.topic("orders").records()] == [b"v"]


SECURE_SCRIPT = Path(__file__).resolve().parent / "kafkajs" / "secure.js"


def run_secure(cluster: mockkafka.Cluster, tmp_path: Path, count: int = 50, **kw: Any) -> Any:
    """Run secure.js with ``cluster.client_config("kafkajs", **kw)`` as its options."""
    options = tmp_path / "kafkajs.json"
    options.write_text(json.dumps(cluster.client_config("kafkajs", **kw)))
    return run_node(SECURE_SCRIPT, str(options), unique("jss"), unique("jsg"), str(count))


@pytest.mark.parametrize(
    ("security_protocol", "mechanism"),
    [
        ("SSL", None),
        ("SASL_PLAINTEXT", "PLAIN"),
        ("SASL_PLAINTEXT", "SCRAM-SHA-256"),
        ("SASL_SSL", "SCRAM-SHA-512"),
    ],
)
def test_kafkajs_over_tls_and_sasl(
    tmp_path: Path, security_protocol: str, mechanism: str | None
) -> None:
    """kafkajs with the options ``client_config("kafkajs")`` gives: an idempotent producer
    and a consumer group over each listener kind; the broker saw the user authenticate."""
    users = {"alice": "alice-secret"}
    tls_auth = {"ssl_client_auth": "required"} if security_protocol == "SSL" else {}
    sasl = {"users": users} if mechanism else {}
    with mockkafka.Cluster(security_protocol=security_protocol, **tls_auth, **sasl) as cluster:
        kw = {"user": "alice", "mechanism": mechanism} if mechanism else {}
        result = run_secure(cluster, tmp_path, **kw)
        assert result["acked"] == 50
        assert sorted(result["seen"]) == sorted(f"s{i}" for i in range(50))
        if mechanism:
            handshakes = cluster.traffic.requests("SaslHandshake")
            assert {h.request["mechanism"] for h in handshakes} == {mechanism}


def test_kafkajs_with_a_wrong_password_is_refused(tmp_path: Path) -> None:
    with mockkafka.Cluster(security_protocol="SASL_SSL", users={"alice": "right"}) as cluster:
        options = cluster.client_config("kafkajs", user="alice", mechanism="SCRAM-SHA-256")
        options["sasl"]["password"] = "wrong"
        path = tmp_path / "kafkajs.json"
        path.write_text(json.dumps(options))
        result = run_node(SECURE_SCRIPT, str(path), unique("jss"), unique("jsg"), "1")
        assert result["error"] == "KafkaJSSASLAuthenticationError", result
        # SCRAM: the client-first message is answered, the proof is refused.
        first, last = (
            ex.response["error_code"] for ex in cluster.traffic.requests("SaslAuthenticate")
        )
        assert (first, last) == (0, ErrorCode.SASL_AUTHENTICATION_FAILED)

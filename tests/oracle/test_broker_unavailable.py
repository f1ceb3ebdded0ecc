"""Without Java or Maven the oracle tier and ``--kafka-backend=kafka`` skip, saying why
(no broker is started here)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mockkafka import kafka_broker
from mockkafka.kafka_broker import KafkaBroker, KafkaUnavailable, broker_classpath


@pytest.mark.parametrize("missing", ["java", "mvn"])
def test_a_missing_tool_is_named(monkeypatch: pytest.MonkeyPatch, missing: str) -> None:
    real_which = shutil.which
    monkeypatch.setattr(
        kafka_broker.shutil, "which", lambda name: None if name == missing else real_which(name)
    )
    with pytest.raises(KafkaUnavailable, match=f"`{missing}` is not installed"):
        broker_classpath("4.4.0")


def test_sasl_mechanisms_with_passwords_need_users() -> None:
    with pytest.raises(ValueError, match="need users="):
        KafkaBroker(sasl_mechanisms=("PLAIN",))
    with pytest.raises(ValueError, match="unknown; choose from"):
        KafkaBroker(sasl_mechanisms=("GSSAPI",), users={"alice": "x"})
    with pytest.raises(ValueError, match="cannot carry"):
        KafkaBroker(sasl_mechanisms=("SCRAM-SHA-256",), users={"alice": "a,b"})


def test_plain_and_scram_users_are_configured() -> None:
    broker = KafkaBroker(sasl_mechanisms=("PLAIN", "SCRAM-SHA-512"), users={"alice": "s3cret"})
    props = broker._properties(Path("/tmp/x"), 9999)
    lines = dict(line.split("=", 1) for line in props.splitlines())
    assert lines["sasl.enabled.mechanisms"] == "PLAIN,SCRAM-SHA-512"
    assert 'user_alice="s3cret"' in lines["listener.name.sasl_plaintext.plain.sasl.jaas.config"]
    assert (
        "ScramLoginModule" in lines["listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config"]
    )


def test_the_broker_is_configured_like_a_default_cluster() -> None:
    props = KafkaBroker()._properties(Path("/tmp/x"), 9999)
    lines = dict(line.split("=", 1) for line in props.splitlines())
    assert lines["process.roles"] == "broker,controller"
    assert lines["group.initial.rebalance.delay.ms"] == "0"
    assert lines["offsets.topic.replication.factor"] == "1"
    assert lines["auto.create.topics.enable"] == "true"
    assert lines["listeners"].startswith("PLAINTEXT://127.0.0.1:")

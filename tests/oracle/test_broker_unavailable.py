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


def test_only_oauthbearer_is_set_up_for_sasl() -> None:
    with pytest.raises(ValueError, match="only OAUTHBEARER"):
        KafkaBroker(sasl_mechanisms=("PLAIN",))


def test_the_broker_is_configured_like_a_default_cluster() -> None:
    props = KafkaBroker()._properties(Path("/tmp/x"), 9999)
    lines = dict(line.split("=", 1) for line in props.splitlines())
    assert lines["process.roles"] == "broker,controller"
    assert lines["group.initial.rebalance.delay.ms"] == "0"
    assert lines["offsets.topic.replication.factor"] == "1"
    assert lines["auto.create.topics.enable"] == "true"
    assert lines["listeners"].startswith("PLAINTEXT://127.0.0.1:")

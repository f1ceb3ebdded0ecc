"""Handler modules are imported on the first request of their API (issue 28), from the
index ``tools/gen_handler_index.py`` writes: the index must say what the handlers say."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import mockkafka
from mockkafka.handlers._index import INDEX
from mockkafka.handlers.base import handler_modules, load_handlers

ROOT = Path(__file__).resolve().parents[2]


def test_the_index_matches_the_handlers() -> None:
    assert handler_modules() == INDEX, (
        "mockkafka/handlers/_index.py is stale: python tools/gen_handler_index.py"
    )
    assert {spec.api.name for spec in load_handlers().values()} == set(INDEX)


def test_a_plain_cluster_imports_a_handler_module_on_its_first_request() -> None:
    """In a fresh interpreter: answering ApiVersions loads no group handler; a JoinGroup
    (over a real client) loads it and is answered as before."""
    code = """
import sys
import confluent_kafka
import confluent_kafka.admin
import mockkafka
with mockkafka.Cluster(topics={"t": 1}) as c:
    admin = confluent_kafka.admin.AdminClient({"bootstrap.servers": c.bootstrap_servers})
    admin.list_topics(timeout=10)
    before = "mockkafka.handlers.join_group" in sys.modules
    consumer = confluent_kafka.Consumer({"bootstrap.servers": c.bootstrap_servers,
        "group.id": "g", "auto.offset.reset": "earliest"})
    c.produce("t", b"v")
    consumer.subscribe(["t"])
    msg = None
    for _ in range(100):
        msg = consumer.poll(0.2)
        if msg is not None:
            break
    consumer.close()
    print(before, "mockkafka.handlers.join_group" in sys.modules, msg is not None and msg.value())
"""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True", "b'v'"], out.stdout + out.stderr
    assert mockkafka.__name__ == "mockkafka"

"""Sample user projects for the plugin-environment tier: each is a folder of files a user
could have written, run with the installed wheel's plugin and nothing of this checkout.

They talk to the cluster over a real socket with a hand-built ApiVersions v0 request (no
Kafka client is a neighbour in these environments), so what they prove is that the broker
behind the fixture really serves the test's thread, asyncio loop or trio loop.
"""

from __future__ import annotations

WIRE = '''
"""A raw ApiVersions v0 round trip: the number of API keys the broker advertises."""
import socket
import struct

REQUEST_CORRELATION_ID = 7


def request(client_id: bytes = b"sample") -> bytes:
    body = struct.pack(">hhih", 18, 0, REQUEST_CORRELATION_ID, len(client_id)) + client_id
    return struct.pack(">i", len(body)) + body


def parse(frame: bytes) -> int:
    correlation_id, error_code, count = struct.unpack(">ihi", frame[:10])
    assert correlation_id == REQUEST_CORRELATION_ID, correlation_id
    assert error_code == 0, error_code
    return count


def api_versions(address: str, client_id: bytes = b"sample") -> int:
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(request(client_id))
        size = struct.unpack(">i", _exactly(sock, 4))[0]
        return parse(_exactly(sock, size))


def _exactly(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        assert chunk, "connection closed"
        data += chunk
    return data
'''

NO_KAFKA = {
    "test_plain.py": """
import pytest


def test_arithmetic():
    assert 1 + 1 == 2


@pytest.mark.parametrize("n", [1, 2, 3])
def test_tmp_path(tmp_path, n):
    (tmp_path / "f").write_text(str(n))
    assert (tmp_path / "f").read_text() == str(n)
""",
    "conftest.py": """
import json
import os
import sys

HEAVY = ("trio", "mockkafka.server", "mockkafka._api.cluster", "mockkafka.protocol.codec")


def pytest_sessionfinish(session):
    loaded = sorted(m for m in HEAVY if m in sys.modules)
    with open(os.environ["SAMPLE_REPORT"], "w") as f:
        json.dump(loaded, f)
""",
}

CLUSTER = {
    "wire.py": WIRE,
    "test_cluster.py": """
import pytest

from wire import api_versions


@pytest.mark.kafka_cluster(brokers=3, topics={"orders": 3})
def test_each_broker_answers(kafka_cluster, kafka_bootstrap):
    addresses = kafka_bootstrap.split(",")
    assert len(addresses) == 3
    for address in addresses:
        assert api_versions(address) > 40
    assert len(kafka_cluster.topic("orders").partitions) == 3


def test_a_fault_rule_fires(kafka_cluster):
    rule = kafka_cluster.faults.on("ApiVersions").once().delay(ms=5)
    api_versions(kafka_cluster.bootstrap_servers)
    assert rule.fired == 1


def test_factory_starts_more_clusters(kafka_cluster_factory):
    a = kafka_cluster_factory(brokers=2)
    b = kafka_cluster_factory()
    assert a.bootstrap_servers != b.bootstrap_servers
    assert api_versions(b.bootstrap_servers) > 40


def test_shared_cluster_is_reset(kafka_cluster_shared, kafka_bootstrap_shared):
    assert kafka_cluster_shared.bootstrap_servers == kafka_bootstrap_shared
    assert kafka_cluster_shared.traffic.requests() == []
    assert api_versions(kafka_bootstrap_shared) > 40


def test_shared_cluster_again(kafka_cluster_shared):
    assert kafka_cluster_shared.traffic.requests() == []
""",
}

SCENARIO = {
    "wire.py": WIRE,
    "broker-stops.yaml": """
name: broker-stops
description: broker 2 stops once the app has talked to the cluster
cluster: {brokers: 3}
topics:
  orders: {partitions: 3, replication_factor: 3}
seed:
  orders: {count: 12, key: "order-{{ index }}", value: "v{{ index }}"}
steps:
  - after: {requests: {api: ApiVersions, count: 1}}
    stop_broker: {broker: 2}
expect:
  records: [{topic: orders, count: 12}]
  traffic: [{api: ApiVersions, at_least: 1}]
""",
    "test_scenario.py": """
import pytest

from wire import api_versions


@pytest.mark.kafka_scenario("broker-stops.yaml")
def test_broker_stops_after_first_request(kafka_cluster):
    api_versions(kafka_cluster.bootstrap_servers.split(",")[0])
    kafka_cluster.wait_for_broker(2, up=False, timeout=10)
    assert len(kafka_cluster.topic("orders").records()) == 12
""",
}

FAILING = {
    "wire.py": WIRE,
    "test_fails.py": """
from wire import api_versions


def test_fails_after_talking_to_the_cluster(kafka_cluster):
    api_versions(kafka_cluster.bootstrap_servers)
    assert False, "this test fails on purpose"
""",
}

COVERAGE = {
    "wire.py": WIRE,
    "test_cov.py": """
import pytest

from wire import api_versions


@pytest.mark.parametrize("n", range(4))
def test_delayed_api_versions(kafka_cluster, n):
    kafka_cluster.faults.on("ApiVersions").once().delay(ms=1)
    api_versions(kafka_cluster.bootstrap_servers)
""",
}

ASYNCIO_STRICT = {
    "test_async.py": """
import asyncio
import struct

import pytest

import wire


@pytest.mark.asyncio
async def test_asyncio_client_is_served(kafka_bootstrap):
    host, port = kafka_bootstrap.split(",")[0].rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(wire.request())
    await writer.drain()
    size = struct.unpack(">i", await reader.readexactly(4))[0]
    assert wire.parse(await reader.readexactly(size)) > 40
    writer.close()
    await writer.wait_closed()
""",
    "wire.py": WIRE,
}

ASYNCIO_AUTO = {
    "test_async.py": ASYNCIO_STRICT["test_async.py"].replace("@pytest.mark.asyncio\n", ""),
    "wire.py": WIRE,
}

TRIO = {
    "test_trio.py": """
import struct

import pytest
import trio

import wire


@pytest.mark.trio
async def test_trio_cluster_on_the_test_loop(kafka_cluster_trio):
    host, port = kafka_cluster_trio.bootstrap_servers.split(",")[0].rsplit(":", 1)
    stream = await trio.open_tcp_stream(host, int(port))
    async with stream:
        await stream.send_all(wire.request())
        data = b""
        while len(data) < 4 or len(data) < 4 + struct.unpack(">i", data[:4])[0]:
            chunk = await stream.receive_some()
            assert chunk
            data += chunk
    assert wire.parse(data[4:]) > 40
""",
    "wire.py": WIRE,
}

HYPOTHESIS = {
    "test_fuzz.py": """
from hypothesis import given, settings, strategies as st

from mockkafka.strategies import fault_plans
from wire import api_versions


@settings(max_examples=5, deadline=None)
@given(client_id=st.binary(max_size=30))
def test_any_client_id_is_answered(kafka_bootstrap_shared, client_id):
    assert api_versions(kafka_bootstrap_shared, client_id) > 40


@settings(max_examples=5, deadline=None)
@given(plan=fault_plans(topics={"orders": 2}, max_steps=2))
def test_fault_plans_draw(plan):
    assert "FaultPlan" in repr(plan)
""",
    "wire.py": WIRE,
}

FAKER = {
    "seeded.yaml": """
name: seeded
description: faker seed data
topics:
  orders: {partitions: 1}
seed:
  orders: {count: 5, key: "{{ faker.uuid4 }}", value: "{{ faker.name }}"}
expect:
  records: [{topic: orders, count: 5}]
""",
    "test_faker.py": """
import uuid

import pytest


@pytest.mark.kafka_scenario("seeded.yaml")
def test_seeded_with_faker(kafka_cluster):
    records = kafka_cluster.topic("orders").records()
    assert len(records) == 5
    for record in records:
        uuid.UUID(record.key.decode())


def test_faker_fixture_still_works(faker):
    assert faker.name()
""",
}

PROJECTS: dict[str, dict[str, str]] = {
    "no_kafka": NO_KAFKA,
    "too_old": NO_KAFKA,
    "cluster": CLUSTER,
    "scenario": SCENARIO,
    "failing": FAILING,
    "coverage": COVERAGE,
    "asyncio_strict": ASYNCIO_STRICT,
    "asyncio_auto": ASYNCIO_AUTO,
    "trio": TRIO,
    "hypothesis": HYPOTHESIS,
    "faker": FAKER,
    "help": {},
}

"""Random valid and invalid requests never crash the broker.

Requests of every API and version are drawn from the message schemas
(:func:`mockkafka.strategies.requests`), encoded with the codec and sent over a real socket;
invalid ones are those bytes cut short, with bytes flipped, or garbage. After each, the
broker must still serve a fresh connection, and nothing may have been raised inside it.
Bounded in CI; ``--hypothesis-profile=long`` runs many more examples.
"""

from __future__ import annotations

import atexit
import functools
import socket
import struct
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mockkafka
from mockkafka.protocol.framing import NEED_DATA, ClientConnection
from mockkafka.strategies import DrawnRequest, requests

pytestmark = [pytest.mark.interop, pytest.mark.timeout(120)]

NAMES = ("orders", "billing", "tx-1")
# Examples come from the profile: ``ci`` (the default) or ``long``.
SETTINGS = settings(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@functools.cache
def shared_cluster() -> mockkafka.Cluster:
    """One cluster for every example of this module, stopped at exit. Not a pytest fixture,
    so the property tests also run under HypoFuzz (which calls them without fixtures)."""
    c = mockkafka.Cluster(brokers=1).start()
    atexit.register(c.stop)
    c.create_topic("orders", partitions=2)
    c.produce("orders", b"seed")
    return c


def _short_waits(value: Any) -> Any:
    """Clamp every *_ms field to 100 ms so a drawn request never parks for long."""
    if isinstance(value, dict):
        return {
            k: (min(v, 100) if k.endswith("_ms") and isinstance(v, int) else _short_waits(v))
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_short_waits(v) for v in value]
    return value


def _exchange(cluster: mockkafka.Cluster, data: bytes, conn: ClientConnection | None) -> None:
    """Send ``data``; read until a response, a close or 0.3 s (whichever comes first)."""
    b = cluster.brokers[0]
    with socket.create_connection((b.host, b.port), timeout=0.3) as sock:
        sock.sendall(data)
        try:
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    return  # closed: what Kafka does with what it cannot parse
                if conn is None:
                    return  # it answered something: a request it could read
                conn.receive_data(chunk)
                if conn.next_event() is not NEED_DATA:
                    return
        except (TimeoutError, ConnectionResetError):
            return


def _assert_still_serving(cluster: mockkafka.Cluster) -> None:
    assert not cluster.broker_errors, cluster.broker_errors
    b = cluster.brokers[0]
    conn = ClientConnection(client_id="check")
    with socket.create_connection((b.host, b.port), timeout=5) as sock:
        sock.sendall(conn.send_request("Metadata", 12, {"topics": None}))
        while True:
            chunk = sock.recv(65536)
            assert chunk, "the broker closed a fresh connection"
            conn.receive_data(chunk)
            ev = conn.next_event()
            if ev is not NEED_DATA:
                # (drawn requests may delete or create topics: only the brokers are fixed)
                assert [n["node_id"] for n in ev.body["brokers"]] == [1]  # type: ignore[union-attr]
                return


def _encode(req: DrawnRequest) -> tuple[bytes, ClientConnection]:
    conn = ClientConnection(client_id="fuzz")
    return conn.send_request(req.api, req.version, _short_waits(req.body)), conn


@SETTINGS
@given(req=requests(names=NAMES))
def test_valid_requests_never_crash_the_broker(req: DrawnRequest) -> None:
    cluster = shared_cluster()
    data, conn = _encode(req)
    _exchange(cluster, data, conn)
    _assert_still_serving(cluster)


@SETTINGS
@given(req=requests(names=NAMES), data=st.data())
def test_mangled_requests_never_crash_the_broker(req: DrawnRequest, data: st.DataObject) -> None:
    cluster = shared_cluster()
    frame, _ = _encode(req)
    body = bytearray(frame[4:])
    how = data.draw(st.sampled_from(["truncate", "flip", "append"]))
    if how == "truncate":
        body = body[: data.draw(st.integers(0, max(len(body) - 1, 0)))]
    elif how == "flip":
        for _ in range(data.draw(st.integers(1, 4))):
            i = data.draw(st.integers(0, len(body) - 1))
            body[i] = data.draw(st.integers(0, 255))
    else:
        body += data.draw(st.binary(min_size=1, max_size=16))
    _exchange(cluster, struct.pack(">i", len(body)) + bytes(body), None)
    _assert_still_serving(cluster)


@SETTINGS
@given(payload=st.binary(max_size=64))
def test_garbage_frames_never_crash_the_broker(payload: bytes) -> None:
    cluster = shared_cluster()
    _exchange(cluster, struct.pack(">i", len(payload)) + payload, None)
    _assert_still_serving(cluster)

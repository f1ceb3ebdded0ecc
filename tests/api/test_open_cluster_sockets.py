"""``open_cluster(sockets=, before_serving=)``: serve sockets bound before the cluster existed
(what ``mockkafka serve`` does to print its address early), with the cluster set up before
a request queued on them is read."""

from __future__ import annotations

import socket

import pytest
import trio

import mockkafka
from mockkafka.protocol.framing import NEED_DATA, ClientConnection
from mockkafka.server.prebind import bind_listeners


def _partitions_in_answer(conn: ClientConnection, data: bytes) -> int:
    conn.receive_data(data)
    event = conn.next_event()
    assert event is not NEED_DATA
    (topic,) = event.body["topics"]
    assert topic["error_code"] == 0
    return len(topic["partitions"])


@pytest.mark.trio
async def test_a_request_queued_before_the_cluster_existed_sees_what_before_serving_made() -> None:
    sockets = bind_listeners("127.0.0.1", {1: 0, 2: 0})
    ports = [s.getsockname()[1] for s in sockets.values()]
    # A client connects and asks before there is any cluster: the kernel holds it.
    client = socket.create_connection(("127.0.0.1", ports[0]), timeout=30)
    conn = ClientConnection(client_id="prebound")
    client.sendall(conn.send_request("Metadata", 12, {"topics": [{"name": "queued"}]}))
    made: list[str] = []

    def before_serving(cluster: mockkafka.AsyncCluster) -> None:
        cluster.create_topic("queued", partitions=5, replication_factor=2)
        made.append("queued")

    try:
        async with mockkafka.open_cluster(
            brokers=2, sockets=sockets, before_serving=before_serving
        ) as cluster:
            assert made == ["queued"]
            assert cluster.bootstrap_servers == ",".join(f"127.0.0.1:{p}" for p in ports)
            data = b""
            with trio.fail_after(30):
                while len(data) < 4 or len(data) < 4 + int.from_bytes(data[:4], "big"):
                    chunk = await trio.to_thread.run_sync(client.recv, 1 << 16)
                    assert chunk, "the broker closed the connection"
                    data += chunk
            assert _partitions_in_answer(conn, data) == 5  # not an auto-created 1-partition topic
    finally:
        client.close()
    for s in sockets.values():  # the cluster owned them and closed them
        assert s.fileno() == -1


@pytest.mark.trio
async def test_sockets_are_closed_when_the_options_are_refused() -> None:
    sockets = bind_listeners("127.0.0.1", {1: 0})
    with pytest.raises(mockkafka.MockKafkaError):
        async with mockkafka.open_cluster(brokers=1, sockets=sockets, no_such_option=True):
            pass
    assert all(s.fileno() == -1 for s in sockets.values())

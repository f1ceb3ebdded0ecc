"""The traffic log holds what it says it holds: wire frames, decoded again on read, within
``traffic_limit`` -- whatever a client sends (issue 27: 200 DescribeGroups naming 12,000
groups took ``serve`` from 41 MB to 1.36 GB; 20,000 ApiVersions to 493 MB)."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import pytest

import mockkafka
from mockkafka.errors import ConfigError
from mockkafka.protocol.framing import NEED_DATA, ClientConnection
from tests.cli.test_control import http, serving
from tests.robustness._wire import Raw, broker_process

GROUPS = [f"g{i:04d}" for i in range(12_000)]


def flood_describe_groups(port: int, n: int) -> None:
    """``n`` DescribeGroups v5 naming 12,000 groups each, pipelined 10 deep, every answer
    read (30 s at most)."""
    conn = ClientConnection(client_id="flood")
    body = {"groups": GROUPS, "include_authorized_operations": False}
    deadline = time.monotonic() + 30
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sent = got = 0
        while got < n:
            assert time.monotonic() < deadline, f"{got}/{n} answers in 30 s"
            while sent < n and sent - got < 10:
                sock.sendall(conn.send_request("DescribeGroups", 5, body))
                sent += 1
            ev = conn.next_event()
            if ev is NEED_DATA:
                data = sock.recv(1 << 20)
                assert data, "closed by the broker"
                conn.receive_data(data)
            else:
                got += 1


def test_describe_groups_naming_12000_groups_does_not_grow_rss_by_the_decoded_size() -> None:
    """20 such requests: the old log kept every decoded body (about 6 MB each); now each
    costs its frames (about 250 KB)."""
    with broker_process(topics=()) as broker:
        time.sleep(0.2)
        before = broker.rss_kib()
        flood_describe_groups(broker.port, 20)
        grown_mib = (broker.rss_kib() - before) / 1024
        assert broker.health() < 5000
    assert grown_mib < 60, f"RSS grew by {grown_mib:.0f} MiB"


def test_the_log_keeps_frames_and_decodes_them_on_read() -> None:
    with mockkafka.Cluster(traffic_limit="2MiB") as c:
        host, port = c.bootstrap_servers.split(",")[0].split(":")
        with Raw(host, int(port)) as raw:
            for _ in range(12):
                answer = raw.request(
                    "DescribeGroups", 5, {"groups": GROUPS, "include_authorized_operations": False}
                )
            ok = raw.request(
                "ApiVersions", 3, {"client_software_name": "t", "client_software_version": "1"}
            )
        held = c.traffic.held_bytes
        exchanges = c.traffic.requests("DescribeGroups")
        newest = exchanges[-1]
        assert newest.request is not None and newest.response is not None
        assert newest.request["groups"] == GROUPS
        assert newest.response == answer  # the same answer the client decoded
        assert c.traffic.requests("ApiVersions")[-1].response == ok
        # a 12,000-group answer is ~250 KB of frames: only the newest few fit in 2 MiB
        assert held <= 2 * 1024 * 1024 and 2 <= len(exchanges) < 12
        assert c.traffic.requests("DescribeGroups", group="g0001") == []  # names: over the cap


def test_error_filters_work_on_kept_frames() -> None:
    with mockkafka.Cluster(auto_create_topics=False) as c:
        host, port = c.bootstrap_servers.split(",")[0].split(":")
        with Raw(host, int(port)) as raw:
            raw.request("Metadata", 12, {"topics": [{"name": "nope", "topic_id": None}],
                                         "allow_auto_topic_creation": False,
                                         "include_topic_authorized_operations": False})  # fmt: skip
        got = c.traffic.requests("Metadata", with_error="UNKNOWN_TOPIC_OR_PARTITION")
        assert len(got) == 1 and got[0].error_codes == {3}
        assert c.traffic.requests("Metadata", answered=True) == got


def test_traffic_limit_is_checked_everywhere_with_one_message() -> None:
    with pytest.raises(ConfigError, match="traffic_limit must be a size in bytes such as 64MiB"):
        mockkafka.Cluster(traffic_limit="lots")
    with pytest.raises(ConfigError, match="traffic_limit must be at least 1 byte"):
        mockkafka.Cluster(traffic_limit=0)
    assert mockkafka.ClusterConfig(traffic_limit="512k").traffic_limit == 512 * 1024


def test_serve_no_traffic_and_traffic_limit(tmp_path: Path) -> None:
    jsonl = tmp_path / "t.jsonl"
    with serving("--no-traffic", "--traffic-jsonl", str(jsonl)) as (_p, bootstrap, ctl):
        host, port = bootstrap.split(":")
        with Raw(host, int(port)) as raw:
            raw.request(
                "ApiVersions", 3, {"client_software_name": "t", "client_software_version": "1"}
            )
        status, err = http("GET", f"{ctl}/traffic")
        assert status == 409 and "--no-traffic" in err["error"]
        wait = {"after": {"requests": {"api": "ApiVersions", "count": 1}}, "timeout": "1s"}
        status, err = http("POST", f"{ctl}/wait", wait)
        assert status == 400 and "traffic recording is off" in err["error"]
    # the live JSONL still gets every exchange
    assert [json.loads(x)["api"] for x in jsonl.read_text().splitlines()] == ["ApiVersions"]
    with serving("--traffic-limit", "1MiB") as (_p, _bootstrap, ctl):
        assert http("GET", f"{ctl}/traffic")[0] == 200


def test_the_log_shows_what_went_on_the_wire_for_a_fault_answer() -> None:
    """A fault's Produce error says base_offset -1 on the wire, as Kafka's does (the log now
    decodes the frame, so it shows what the client read: it said 0 before)."""
    from confluent_kafka import Producer

    with mockkafka.Cluster() as c:
        c.create_topic("orders")
        c.faults.on("Produce").times(1).error("NOT_LEADER_OR_FOLLOWER")
        p = Producer({"bootstrap.servers": c.bootstrap_servers, "retry.backoff.ms": 10})
        p.produce("orders", b"v")
        assert p.flush(10) == 0
        failed = c.traffic.requests("Produce", with_error="NOT_LEADER_OR_FOLLOWER")
        assert len(failed) == 1 and failed[0].response is not None
        part = failed[0].response["responses"][0]["partition_responses"][0]
        assert part["base_offset"] == -1

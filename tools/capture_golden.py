"""Capture the request frames real Kafka clients send, for the golden codec tests.

Usage::

    python tools/capture_golden.py [--clients confluent-kafka,kafka-python,aiokafka]
                                   [--out tests/protocol/golden] [--timeout 15]

A small capture broker listens on 127.0.0.1 (an ephemeral port, nothing else). It reads
frames with :class:`~mockkafka.protocol.framing.ServerConnection` and answers just enough to
walk each client through its first requests: ApiVersions (the full ranges of
``apis.API_BY_KEY``), Metadata (one broker -- itself -- and 1-partition topics), Produce,
Fetch (empty, after a short wait), ListOffsets, FindCoordinator (itself), JoinGroup,
SyncGroup, Heartbeat, OffsetFetch/OffsetCommit, LeaveGroup, InitProducerId, CreateTopics.
Anything else gets the schema's default response.

Each client runs in its own subprocess -- a producer, an admin ``create_topics``, then a
consumer in a group -- and is killed after ``--timeout`` seconds. Every distinct request
frame (ignoring the correlation id; at most ``--per-version`` per API version) is written to
``<out>/<client>.jsonl``, one JSON object a line::

    {"client": "kafka-python", "client_version": "3.0.12", "api": "Metadata",
     "api_key": 3, "version": 12, "hex": "<the frame without its 4-byte size prefix>"}

The committed files are the data of ``tests/protocol/test_golden.py``; rerun this tool when
a client library is upgraded.
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mockkafka.protocol.apis import API_BY_KEY  # noqa: E402
from mockkafka.protocol.codec import Message, codec  # noqa: E402
from mockkafka.protocol.errors import ProtocolError  # noqa: E402
from mockkafka.protocol.framing import (  # noqa: E402
    NEED_DATA,
    Request,
    RequestHeader,
    ServerConnection,
)

DEFAULT_OUT = ROOT / "tests" / "protocol" / "golden"
NODE_ID = 1
TOPIC = "golden"
GROUP = "golden-group"
CLUSTER_ID = "golden-cluster-0000000"
UNSUPPORTED_VERSION = 35
MEMBER_ID_REQUIRED = 79
GROUP_ID_NOT_FOUND = 69
ALL_OPERATIONS_OMITTED = -2147483648

# Client programs, run as `python -c SCRIPT BOOTSTRAP`. Each produces to "golden", creates a
# topic with the admin client, then consumes in a group until its deadline.
CLIENT_SCRIPTS: dict[str, str] = {
    "confluent-kafka": """
import sys, time
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic
bs = sys.argv[1]
p = Producer({"bootstrap.servers": bs, "client.id": "golden-confluent",
              "enable.idempotence": True, "linger.ms": 5})
p.produce("golden", b"value-1", key=b"key-1", headers=[("h", b"1")])
p.flush(5)
a = AdminClient({"bootstrap.servers": bs, "client.id": "golden-confluent-admin"})
def attempt(fn):
    try:
        fn()
    except Exception as exc:
        print("admin:", type(exc).__name__, exc)
def wait_all(futures):
    for f in (futures.values() if isinstance(futures, dict) else futures):
        f.result(timeout=3)
attempt(lambda: wait_all(a.create_topics([NewTopic("golden-created", 1, 1)])))
attempt(lambda: wait_all(a.describe_configs([ConfigResource("topic", "golden")])))
attempt(lambda: a.list_consumer_groups().result(timeout=3))
attempt(lambda: wait_all(a.describe_consumer_groups(["golden-group"])))
attempt(lambda: a.describe_cluster().result(timeout=3))
attempt(lambda: wait_all(a.delete_topics(["golden-created"])))
c = Consumer({"bootstrap.servers": bs, "group.id": "golden-group",
              "client.id": "golden-confluent", "auto.offset.reset": "earliest",
              "session.timeout.ms": 6000, "heartbeat.interval.ms": 500,
              "auto.commit.interval.ms": 500})
c.subscribe(["golden"])
end = time.monotonic() + 4
while time.monotonic() < end:
    c.poll(0.2)
c.close()
""",
    "kafka-python": """
import sys, time
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
from kafka.admin import ConfigResource, ConfigResourceType, NewTopic
bs = sys.argv[1]
p = KafkaProducer(bootstrap_servers=bs, client_id="golden-kafka-python", acks=1)
p.send("golden", b"value-1", key=b"key-1", headers=[("h", b"1")]).get(timeout=5)
p.close(timeout=2)
a = KafkaAdminClient(bootstrap_servers=bs, client_id="golden-kafka-python-admin",
                     request_timeout_ms=3000)
def attempt(fn):
    try:
        fn()
    except Exception as exc:
        print("admin:", type(exc).__name__, exc)
attempt(lambda: a.create_topics([NewTopic("golden-created", 1, 1)]))
attempt(lambda: a.describe_configs([ConfigResource(ConfigResourceType.TOPIC, "golden")]))
attempt(lambda: a.list_groups())
attempt(lambda: a.describe_groups(["golden-group"]))
attempt(lambda: a.describe_cluster())
attempt(lambda: a.delete_topics(["golden-created"]))
a.close()
c = KafkaConsumer("golden", bootstrap_servers=bs, group_id="golden-group",
                  client_id="golden-kafka-python", auto_offset_reset="earliest",
                  heartbeat_interval_ms=500, auto_commit_interval_ms=500)
end = time.monotonic() + 4
while time.monotonic() < end:
    c.poll(timeout_ms=200)
c.commit()
c.close()
""",
    "aiokafka": """
import asyncio, sys
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
bs = sys.argv[1]
async def main():
    p = AIOKafkaProducer(bootstrap_servers=bs, client_id="golden-aiokafka")
    await p.start()
    await p.send_and_wait("golden", b"value-1", key=b"key-1", headers=[("h", b"1")])
    await p.stop()
    a = AIOKafkaAdminClient(bootstrap_servers=bs, client_id="golden-aiokafka-admin",
                            request_timeout_ms=3000)
    await a.start()
    async def attempt(coro):
        try:
            await asyncio.wait_for(coro, 3)
        except Exception as exc:
            print("admin:", type(exc).__name__, exc)
    await attempt(a.create_topics([NewTopic("golden-created", 1, 1)]))
    await attempt(a.describe_configs([ConfigResource(ConfigResourceType.TOPIC, "golden")]))
    await attempt(a.list_consumer_groups())
    await attempt(a.describe_consumer_groups(["golden-group"]))
    await attempt(a.delete_topics(["golden-created"]))
    await a.close()
    c = AIOKafkaConsumer("golden", bootstrap_servers=bs, group_id="golden-group",
                         client_id="golden-aiokafka", auto_offset_reset="earliest",
                         heartbeat_interval_ms=500, auto_commit_interval_ms=500)
    await c.start()
    end = asyncio.get_running_loop().time() + 4
    while asyncio.get_running_loop().time() < end:
        await c.getmany(timeout_ms=200)
    await c.commit()
    await c.stop()
asyncio.run(main())
""",
}


def client_version(client: str) -> str:
    """The installed version of a client library, e.g. ``2.16.1 (librdkafka 2.16.0)``."""
    if client == "confluent-kafka":
        import confluent_kafka

        return f"{confluent_kafka.version()[0]} (librdkafka {confluent_kafka.libversion()[0]})"
    if client == "kafka-python":
        import kafka

        return str(kafka.__version__)
    import aiokafka

    return str(aiokafka.__version__)


def topic_id(name: str) -> uuid.UUID:
    return uuid.uuid5(uuid.NAMESPACE_URL, f"mockkafka-golden:{name}")


# ---------------------------------------------------------------------------------------------
# The capture broker
# ---------------------------------------------------------------------------------------------


@dataclass
class Capture:
    """Frames seen from one client run, deduplicated."""

    per_version: int
    frames: list[tuple[int, int, bytes]] = field(default_factory=list)
    _seen: set[bytes] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, api_key: int, version: int, frame: bytes) -> None:
        # The correlation id (bytes 4-8) differs from frame to frame; ignore it when deduping.
        key = frame[:4] + frame[8:]
        with self._lock:
            if key in self._seen:
                return
            same = sum(1 for k, v, _ in self.frames if (k, v) == (api_key, version))
            if same >= self.per_version:
                return
            self._seen.add(key)
            self.frames.append((api_key, version, frame))


class GoldenBroker:
    """A one-node broker on 127.0.0.1 that answers just enough and records every frame."""

    def __init__(self, capture: Capture) -> None:
        self.capture = capture
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._sock.settimeout(0.2)
        self.port: int = self._sock.getsockname()[1]
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._members = 0
        self._lock = threading.Lock()
        self._offsets: dict[str, int] = {}
        self.errors: list[str] = []

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> None:
        t = threading.Thread(target=self._accept_loop, name="golden-accept", daemon=True)
        t.start()
        self._threads.append(t)

    def stop(self) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(timeout=5)
        self._sock.close()

    def _accept_loop(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _addr = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            t = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            t.start()
            self._threads.append(t)

    def _serve(self, conn: socket.socket) -> None:
        server = ServerConnection()
        raw = bytearray()  # the same bytes, to record each frame exactly as it came
        conn.settimeout(0.2)
        with conn:
            while not self._stop.is_set():
                try:
                    data = conn.recv(65536)
                except TimeoutError:
                    continue
                except OSError:
                    return
                if not data:
                    return
                server.receive_data(data)
                raw += data
                while True:
                    try:
                        event = server.next_event()
                    except ProtocolError as exc:
                        self.errors.append(f"{exc}: {bytes(raw[:64]).hex()}")
                        return
                    if event is NEED_DATA:
                        break
                    assert isinstance(event, Request)
                    frame = bytes(raw[4 : 4 + event.size])
                    del raw[: 4 + event.size]
                    self.capture.add(event.header.api_key, event.header.api_version, frame)
                    reply = self._answer(event)
                    if reply is not None:
                        try:
                            conn.sendall(reply)
                        except OSError:
                            return

    # -- answers ------------------------------------------------------------------------------

    def _answer(self, req: Request) -> bytes | None:
        h = req.header
        if req.error is not None or req.body is None:
            if h.api_key == 18:  # ApiVersions of an unknown version: v0 body, error 35
                refusal = self._api_versions()
                refusal["error_code"] = UNSUPPORTED_VERSION
                return ServerConnection.encode_response(h, refusal, version=0)
            return None
        assert req.api is not None
        handler: Callable[[RequestHeader, Message], Message | None] = getattr(
            self, "_" + req.api.name, self._default
        )
        body = handler(h, req.body)
        if body is None:
            return None
        return ServerConnection.encode_response(h, body)

    def _default(self, h: RequestHeader, req: Message) -> Message:
        return codec(API_BY_KEY[h.api_key].response_name, h.api_version).default()

    def _api_versions(self) -> Message:
        return {
            "error_code": 0,
            "api_keys": [
                {"api_key": a.key, "min_version": a.min_version, "max_version": a.max_version}
                for a in API_BY_KEY.values()
            ],
        }

    def _ApiVersions(self, h: RequestHeader, req: Message) -> Message:
        return self._api_versions()

    def _topic(self, name: str) -> Message:
        return {
            "error_code": 0,
            "name": name,
            "topic_id": topic_id(name),
            "is_internal": False,
            "partitions": [
                {
                    "error_code": 0,
                    "partition_index": 0,
                    "leader_id": NODE_ID,
                    "leader_epoch": 0,
                    "replica_nodes": [NODE_ID],
                    "isr_nodes": [NODE_ID],
                    "offline_replicas": [],
                }
            ],
            "topic_authorized_operations": ALL_OPERATIONS_OMITTED,
        }

    def _Metadata(self, h: RequestHeader, req: Message) -> Message:
        wanted = req.get("topics")
        names = [TOPIC] if wanted is None else [t["name"] or TOPIC for t in wanted]
        return {
            "brokers": [{"node_id": NODE_ID, "host": "127.0.0.1", "port": self.port}],
            "cluster_id": CLUSTER_ID,
            "controller_id": NODE_ID,
            "topics": [self._topic(n) for n in names],
            "cluster_authorized_operations": ALL_OPERATIONS_OMITTED,
        }

    def _next_offset(self, topic: str) -> int:
        with self._lock:
            off = self._offsets.get(topic, 0)
            self._offsets[topic] = off + 1
            return off

    def _Produce(self, h: RequestHeader, req: Message) -> Message | None:
        if req["acks"] == 0:
            return None
        return {
            "responses": [
                {
                    "name": t["name"],
                    "topic_id": t.get("topic_id"),
                    "partition_responses": [
                        {
                            "index": p["index"],
                            "error_code": 0,
                            "base_offset": self._next_offset(t["name"]),
                            "log_append_time_ms": -1,
                            "log_start_offset": 0,
                        }
                        for p in t["partition_data"]
                    ],
                }
                for t in req["topic_data"]
            ]
        }

    def _Fetch(self, h: RequestHeader, req: Message) -> Message:
        # Wait like a broker with nothing to send, so a consumer does not spin.
        self._stop.wait(min(req["max_wait_ms"], 300) / 1000)
        return {
            "error_code": 0,
            "session_id": 0,
            "responses": [
                {
                    "topic": t["topic"],
                    "topic_id": t["topic_id"],
                    "partitions": [
                        {
                            "partition_index": p["partition"],
                            "error_code": 0,
                            "high_watermark": 1,
                            "last_stable_offset": 1,
                            "log_start_offset": 0,
                            "aborted_transactions": None,
                            "preferred_read_replica": -1,
                            "records": b"",
                        }
                        for p in t["partitions"]
                    ],
                }
                for t in req["topics"]
            ],
        }

    def _ListOffsets(self, h: RequestHeader, req: Message) -> Message:
        return {
            "topics": [
                {
                    "name": t["name"],
                    "partitions": [
                        {
                            "partition_index": p["partition_index"],
                            "error_code": 0,
                            "old_style_offsets": [0],
                            "timestamp": -1,
                            "offset": 0,
                            "leader_epoch": 0,
                        }
                        for p in t["partitions"]
                    ],
                }
                for t in req["topics"]
            ]
        }

    def _OffsetForLeaderEpoch(self, h: RequestHeader, req: Message) -> Message:
        return {
            "topics": [
                {
                    "topic": t["topic"],
                    "partitions": [
                        {
                            "error_code": 0,
                            "partition": p["partition"],
                            "leader_epoch": 0,
                            "end_offset": 1,
                        }
                        for p in t["partitions"]
                    ],
                }
                for t in req["topics"]
            ]
        }

    def _FindCoordinator(self, h: RequestHeader, req: Message) -> Message:
        keys = req.get("coordinator_keys") or [req.get("key", "")]
        return {
            "error_code": 0,
            "error_message": None,
            "node_id": NODE_ID,
            "host": "127.0.0.1",
            "port": self.port,
            "coordinators": [
                {"key": k, "node_id": NODE_ID, "host": "127.0.0.1", "port": self.port} for k in keys
            ],
        }

    def _JoinGroup(self, h: RequestHeader, req: Message) -> Message:
        protocols = req["protocols"]
        if not req["member_id"] and h.api_version >= 4:
            with self._lock:
                self._members += 1
                member = f"{h.client_id}-member-{self._members}"
            return {"error_code": MEMBER_ID_REQUIRED, "member_id": member, "members": []}
        member = req["member_id"] or f"{h.client_id}-member-0"
        return {
            "error_code": 0,
            "generation_id": 1,
            "protocol_type": req["protocol_type"],
            "protocol_name": protocols[0]["name"],
            "leader": member,
            "member_id": member,
            "members": [
                {
                    "member_id": member,
                    "group_instance_id": req.get("group_instance_id"),
                    "metadata": protocols[0]["metadata"],
                }
            ],
        }

    def _SyncGroup(self, h: RequestHeader, req: Message) -> Message:
        mine = [a["assignment"] for a in req["assignments"] if a["member_id"] == req["member_id"]]
        return {
            "error_code": 0,
            "protocol_type": req.get("protocol_type"),
            "protocol_name": req.get("protocol_name"),
            "assignment": mine[0] if mine else b"",
        }

    def _OffsetFetch(self, h: RequestHeader, req: Message) -> Message:
        def topics(ts: list[Message] | None) -> list[Message]:
            return [
                {
                    "name": t["name"],
                    "partitions": [
                        {
                            "partition_index": p,
                            "committed_offset": -1,
                            "committed_leader_epoch": -1,
                            "metadata": "",
                            "error_code": 0,
                        }
                        for p in t["partition_indexes"]
                    ],
                }
                for t in ts or []
            ]

        return {
            "error_code": 0,
            "topics": topics(req.get("topics")),
            "groups": [
                {"group_id": g["group_id"], "topics": topics(g["topics"]), "error_code": 0}
                for g in req.get("groups") or []
            ],
        }

    def _OffsetCommit(self, h: RequestHeader, req: Message) -> Message:
        return {
            "topics": [
                {
                    "name": t["name"],
                    "partitions": [
                        {"partition_index": p["partition_index"], "error_code": 0}
                        for p in t["partitions"]
                    ],
                }
                for t in req["topics"]
            ]
        }

    def _LeaveGroup(self, h: RequestHeader, req: Message) -> Message:
        return {
            "error_code": 0,
            "members": [
                {
                    "member_id": m["member_id"],
                    "group_instance_id": m.get("group_instance_id"),
                    "error_code": 0,
                }
                for m in req.get("members") or []
            ],
        }

    def _InitProducerId(self, h: RequestHeader, req: Message) -> Message:
        return {"error_code": 0, "producer_id": 1000, "producer_epoch": 0}

    def _DescribeConfigs(self, h: RequestHeader, req: Message) -> Message:
        return {
            "results": [
                {
                    "error_code": 0,
                    "error_message": None,
                    "resource_type": r["resource_type"],
                    "resource_name": r["resource_name"],
                    "configs": [],
                }
                for r in req["resources"]
            ]
        }

    def _DescribeGroups(self, h: RequestHeader, req: Message) -> Message:
        return {
            "groups": [
                {
                    "error_code": 0,
                    "group_id": g,
                    "group_state": "Empty",
                    "protocol_type": "consumer",
                    "protocol_data": "",
                    "members": [],
                    "authorized_operations": ALL_OPERATIONS_OMITTED,
                }
                for g in req["groups"]
            ]
        }

    def _ConsumerGroupDescribe(self, h: RequestHeader, req: Message) -> Message:
        # A classic group: the new-protocol describe says so, and clients fall back.
        return {
            "groups": [
                {"error_code": GROUP_ID_NOT_FOUND, "error_message": None, "group_id": g}
                for g in req["group_ids"]
            ]
        }

    def _DescribeCluster(self, h: RequestHeader, req: Message) -> Message:
        return {
            "error_code": 0,
            "error_message": None,
            "endpoint_type": req.get("endpoint_type", 1),
            "cluster_id": CLUSTER_ID,
            "controller_id": NODE_ID,
            "brokers": [
                {"broker_id": NODE_ID, "host": "127.0.0.1", "port": self.port, "rack": None}
            ],
            "cluster_authorized_operations": ALL_OPERATIONS_OMITTED,
        }

    def _DeleteTopics(self, h: RequestHeader, req: Message) -> Message:
        names = req.get("topic_names") or [t["name"] for t in req.get("topics") or []]
        return {
            "responses": [
                {"name": n, "topic_id": topic_id(n), "error_code": 0, "error_message": None}
                for n in names
            ]
        }

    def _CreateTopics(self, h: RequestHeader, req: Message) -> Message:
        return {
            "topics": [
                {
                    "name": t["name"],
                    "topic_id": topic_id(t["name"]),
                    "error_code": 0,
                    "error_message": None,
                    "num_partitions": max(t["num_partitions"], 1),
                    "replication_factor": max(t["replication_factor"], 1),
                    "configs": [],
                }
                for t in req["topics"]
            ]
        }


# ---------------------------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------------------------


def run_client(client: str, timeout: float, per_version: int) -> tuple[list[dict[str, Any]], str]:
    """Run one client against a fresh capture broker; returns (records, log)."""
    capture = Capture(per_version)
    broker = GoldenBroker(capture)
    broker.start()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-c", CLIENT_SCRIPTS[client], broker.bootstrap],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            out, _ = proc.communicate(timeout=timeout)
            log = f"exit {proc.returncode}\n{out[-2000:]}"
        except subprocess.TimeoutExpired:
            proc.kill()
            out, _ = proc.communicate()
            log = f"killed after {timeout} s\n{out[-2000:]}"
    finally:
        broker.stop()
    if broker.errors:
        log += "\nbroker errors:\n" + "\n".join(broker.errors)
    version = client_version(client)
    records = [
        {
            "client": client,
            "client_version": version,
            "api": API_BY_KEY[k].name if k in API_BY_KEY else f"Unknown({k})",
            "api_key": k,
            "version": v,
            "hex": frame.hex(),
        }
        for k, v, frame in sorted(capture.frames, key=lambda r: (r[0], r[1]))
    ]
    return records, log


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Capture real clients' request frames.")
    ap.add_argument("--clients", default=",".join(CLIENT_SCRIPTS))
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--timeout", type=float, default=15.0, help="seconds per client run")
    ap.add_argument("--per-version", type=int, default=3, help="frames kept per API version")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    status = 0
    for client in args.clients.split(","):
        started = time.monotonic()
        records, log = run_client(client, args.timeout, args.per_version)
        path = args.out / f"{client}.jsonl"
        path.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in records))
        apis = sorted({f"{r['api']} v{r['version']}" for r in records})
        took = time.monotonic() - started
        print(f"{client}: {len(records)} frames in {took:.1f} s -> {path}")
        print("  " + ", ".join(apis))
        if not log.startswith("exit 0") or "broker errors" in log:
            print("  client log:\n    " + log.replace("\n", "\n    "))
            status = 1
    return status


if __name__ == "__main__":
    raise SystemExit(main())

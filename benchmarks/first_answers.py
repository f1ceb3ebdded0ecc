"""Start to the first useful answers: what a test waits for before its first record is
stored (issue 33).

:func:`first_answers` plays the first requests of a test's client against a cluster that
was just started, with a raw socket as fast as the network allows: ApiVersions, CreateTopics
(one topic, one partition, replication factor 3, to the controller; the newest version
both sides speak), Metadata (where the partition's leader is) and Produce (acks=all, one
record, to the leader). It returns the time from ``t0`` (the caller's start of the cluster) to each answer.
``compare.py`` and ``bench_startup.py`` time ``mockkafka serve``, the in-process cluster,
kfake and librdkafka's mock with it.

The frames of every version are encoded before the clock starts and the answers are
decoded after it stops, so the figures are the cluster's, not this client's codec. An
answer with an error code raises ``SystemExit``: a figure of a refused request means
nothing. Every socket operation has a timeout.
"""

from __future__ import annotations

import socket
import sys
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mockkafka.protocol import records as rec
from mockkafka.protocol.apis import (
    API_BY_NAME,
    request_header_version,
    response_header_version,
)
from mockkafka.protocol.codec import codec

TIMEOUT_S = 30.0
TOPIC = "first-answers"
#: What this client sends after ApiVersions, with the highest version it can encode.
CLIENT_MAX = {n: API_BY_NAME[n].max_version for n in ("CreateTopics", "Metadata", "Produce")}
API_VERSIONS = ("ApiVersions", 3, {"client_software_name": "bench", "client_software_version": "1"})


def _frame(api: str, version: int, body: dict[str, Any], correlation_id: int) -> bytes:
    a = API_BY_NAME[api]
    out = bytearray(4)
    header = {
        "request_api_key": a.key,
        "request_api_version": version,
        "correlation_id": correlation_id,
        "client_id": "first-answers",
    }
    codec("RequestHeader", request_header_version(a.key, version)).encode_into(out, header)
    codec(a.request_name, version).encode_into(out, body)
    out[:4] = (len(out) - 4).to_bytes(4, "big")
    return bytes(out)


def _decode(api: str, version: int, frame: bytes) -> dict[str, Any]:
    a = API_BY_NAME[api]
    pos = 4
    if response_header_version(a.key, version) >= 1:
        _, pos = codec("ResponseHeader", 1).decode(frame, 0)
    body, _ = codec(a.response_name, version).decode(frame, pos)
    return body


class _Prepared:
    """Every frame this client may send, encoded before the clock starts."""

    def __init__(self) -> None:
        self.api_versions = _frame(*API_VERSIONS, 1)
        self.api_versions_v0 = _frame("ApiVersions", 0, {}, 1)
        self.create: dict[int, bytes] = {}
        self.metadata: dict[int, bytes] = {}
        self.brokers: dict[int, bytes] = {}  # Metadata of no topic: brokers, controller
        self.batch = rec.encode_batch([rec.Record(0, 0, None, b"first")])
        for v in range(API_BY_NAME["CreateTopics"].min_version, CLIENT_MAX["CreateTopics"] + 1):
            topic = {"name": TOPIC, "num_partitions": 1, "replication_factor": 3}
            self.create[v] = _frame("CreateTopics", v, {"topics": [topic], "timeout_ms": 5000}, 2)
        for v in range(1, CLIENT_MAX["Metadata"] + 1):
            self.metadata[v] = _frame("Metadata", v, {"topics": [{"name": TOPIC}]}, 3)
            self.brokers[v] = _frame("Metadata", v, {"topics": []}, 2)
        # Produce frames name the topic (v13+: its id, known only from CreateTopics: encoded
        # then, a few microseconds of the figure).
        self.produce: dict[int, bytes] = {
            v: self.produce_frame(v, None) for v in range(3, min(CLIENT_MAX["Produce"], 12) + 1)
        }

    def produce_frame(self, version: int, topic_id: uuid.UUID | None) -> bytes:
        key: dict[str, Any] = {"name": TOPIC} if version < 13 else {"topic_id": topic_id}
        data = [{**key, "partition_data": [{"index": 0, "records": self.batch}]}]
        body = {"acks": -1, "timeout_ms": 5000, "topic_data": data}
        return _frame("Produce", version, body, 4)


_PREPARED: _Prepared | None = None


def prepare() -> None:
    """Encode the frames now (the first call takes a while: call it before timing)."""
    global _PREPARED
    if _PREPARED is None:
        _PREPARED = _Prepared()
        for api, v in (("ApiVersions", 0), ("ApiVersions", 3), *CLIENT_MAX.items()):
            codec(API_BY_NAME[api].response_name, v)  # decoded after the clock stops


def _read_frame(sock: socket.socket) -> bytes:
    head = b""
    while len(head) < 4:
        chunk = sock.recv(4 - len(head))
        if not chunk:
            raise SystemExit("the cluster closed the connection")
        head += chunk
    size = int.from_bytes(head, "big")
    body = bytearray()
    while len(body) < size:
        chunk = sock.recv(min(1 << 20, size - len(body)))
        if not chunk:
            raise SystemExit("the cluster closed the connection")
        body += chunk
    return bytes(body)


def _connect(host: str, port: int) -> socket.socket:
    sock = socket.create_connection((host, port), timeout=TIMEOUT_S)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def _ask(sock: socket.socket, frame: bytes) -> bytes:
    sock.sendall(frame)
    return _read_frame(sock)


def first_answers(bootstrap: str, t0: float, *, create: bool = True) -> dict[str, float]:
    """ms from ``t0`` (``time.perf_counter()``) to the answers of the first requests of a
    client, asked right away as a client asks them: ApiVersions and Metadata (the brokers
    and the controller) to ``bootstrap``'s first broker, CreateTopics to the controller,
    Metadata (the partition's leader) and Produce to the leader (one connection per broker,
    as a client has). ``create=False`` for a cluster that does not answer CreateTopics
    (librdkafka's mock): the topic must exist, and its figure is left out."""
    prepare()
    assert _PREPARED is not None
    p = _PREPARED
    at: dict[str, float] = {}
    frames: dict[str, tuple[str, int, bytes]] = {}
    host, port = bootstrap.split(",")[0].strip().rsplit(":", 1)
    conns: dict[tuple[str, int], socket.socket] = {}

    def ask(address: tuple[str, int], frame: bytes) -> bytes:
        sock = conns.get(address)
        if sock is None:
            sock = conns[address] = _connect(*address)
        return _ask(sock, frame)

    first = (host, int(port))
    try:
        versions = _decode("ApiVersions", 3, ask(first, p.api_versions))
        if versions["error_code"] == 35:  # UNSUPPORTED_VERSION (librdkafka's mock): v0
            versions = _decode("ApiVersions", 0, ask(first, p.api_versions_v0))
        at["ApiVersions"] = time.perf_counter() - t0
        served = {k["api_key"]: k["max_version"] for k in versions["api_keys"]}
        v = {
            n: min(CLIENT_MAX[n], served[API_BY_NAME[n].key])
            for n in CLIENT_MAX
            if API_BY_NAME[n].key in served  # librdkafka's mock: no CreateTopics
        }
        cluster = _decode("Metadata", v["Metadata"], ask(first, p.brokers[v["Metadata"]]))
        address = {b["node_id"]: (b["host"], b["port"]) for b in cluster["brokers"]}
        topic_id = None
        if create:
            answer = ask(address[cluster["controller_id"]], p.create[v["CreateTopics"]])
            at["CreateTopics"] = time.perf_counter() - t0
            frames["CreateTopics"] = ("CreateTopics", v["CreateTopics"], answer)
            topic_id = _decode("CreateTopics", v["CreateTopics"], answer)["topics"][0].get(
                "topic_id"
            )
        meta = _decode("Metadata", v["Metadata"], ask(first, p.metadata[v["Metadata"]]))
        at["Metadata"] = time.perf_counter() - t0
        topic_id = topic_id or meta["topics"][0].get("topic_id")
        leader = meta["topics"][0]["partitions"][0]["leader_id"]
        produce = p.produce.get(v["Produce"]) or p.produce_frame(v["Produce"], topic_id)
        answer = ask(address[leader], produce)
        at["Produce"] = time.perf_counter() - t0
        frames["Produce"] = ("Produce", v["Produce"], answer)
    finally:
        for sock in conns.values():
            sock.close()
    for name, (api, version, frame) in frames.items():
        body = _decode(api, version, frame)
        if name == "CreateTopics":
            code = body["topics"][0]["error_code"]
        else:
            code = body["responses"][0]["partition_responses"][0]["error_code"]
        if code:
            raise SystemExit(f"{name} v{version} answered error {code}: {body}")
    return {k: s * 1000 for k, s in at.items()}

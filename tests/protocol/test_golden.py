"""Golden frames: request bytes captured from real clients decode and re-encode identically.

``golden/<client>.jsonl`` holds request frames that confluent-kafka (librdkafka),
kafka-python and aiokafka sent to a capture broker (``tools/capture_golden.py``; rerun it
when a client library is upgraded). Each frame is fed to a :class:`ServerConnection` one
byte at a time, and the decoded header and body are encoded again with a
:class:`ClientConnection` using the same client id and correlation id: the bytes must be the
same. Every captured frame is byte-identical today; no frame needs the weaker
decode -> encode -> decode comparison (which is checked for all frames as well).
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest

from mockkafka.protocol.framing import NEED_DATA, ClientConnection, Request, ServerConnection

GOLDEN = Path(__file__).parent / "golden"
CLIENTS = ("confluent-kafka", "kafka-python", "aiokafka")


def _load() -> list[dict[str, Any]]:
    records = []
    for client in CLIENTS:
        path = GOLDEN / f"{client}.jsonl"
        for i, line in enumerate(path.read_text().splitlines()):
            rec = json.loads(line)
            rec["id"] = f"{client}-{rec['api']}-v{rec['version']}-{i}"
            records.append(rec)
    return records


RECORDS = _load()


def decode_byte_by_byte(frame: bytes) -> Request:
    server = ServerConnection()
    wire = struct.pack(">i", len(frame)) + frame
    for byte in wire[:-1]:
        server.receive_data(bytes([byte]))
        assert server.next_event() is NEED_DATA
    server.receive_data(wire[-1:])
    req = server.next_event()
    assert isinstance(req, Request)
    assert server.next_event() is NEED_DATA
    assert server.buffered == 0
    return req


def reencode(req: Request, body: dict[str, Any]) -> bytes:
    client = ClientConnection(client_id=req.header.client_id)
    frame = client.send_request(
        req.header.api_key, req.header.api_version, body, correlation_id=req.header.correlation_id
    )
    return frame[4:]


@pytest.mark.parametrize("rec", RECORDS, ids=[r["id"] for r in RECORDS])
def test_golden_frame_reencodes_byte_identical(rec: dict[str, Any]) -> None:
    frame = bytes.fromhex(rec["hex"])
    req = decode_byte_by_byte(frame)
    assert req.error is None, req.error
    assert req.header.api_key == rec["api_key"]
    assert req.header.api_version == rec["version"]
    assert req.size == len(frame)
    assert req.body is not None
    again = reencode(req, req.body)
    assert again == frame
    # And the weaker property, which must hold for any frame.
    assert decode_byte_by_byte(again).body == req.body


def test_golden_data_covers_each_clients_first_requests() -> None:
    seen: dict[str, set[str]] = {c: set() for c in CLIENTS}
    for rec in RECORDS:
        seen[rec["client"]].add(rec["api"])
    needed = {
        "ApiVersions",
        "Metadata",
        "Produce",
        "Fetch",
        "ListOffsets",
        "FindCoordinator",
        "JoinGroup",
        "SyncGroup",
        "Heartbeat",
        "LeaveGroup",
        "OffsetFetch",
        "CreateTopics",
    }
    for client, apis in seen.items():
        assert needed <= apis, f"{client} golden data lacks {sorted(needed - apis)}"


def test_golden_frames_use_flexible_and_legacy_headers() -> None:
    # Flexible requests carry request header v2 (client id with a 2-byte length, then a
    # tagged-field section); older ones header v1. Both must be in the data.
    versions = set()
    for rec in RECORDS:
        req = decode_byte_by_byte(bytes.fromhex(rec["hex"]))
        assert req.api is not None
        versions.add(req.api.request_flexible(req.header.api_version))
        assert req.header.client_id is not None
        assert req.header.client_id.startswith("golden-")
    assert versions == {True, False}

"""Strings a client sends with malformed UTF-8 are read the way Kafka reads them.

Kafka decodes every protocol string with ``new String(bytes, UTF_8)``: a malformed byte
becomes U+FFFD and the request is answered. The fake once closed the connection on such a
client id (found by hypothesis in the plugin-environment tier, issue 21).
"""

from __future__ import annotations

import socket
import struct

import pytest

import mockkafka


def _api_versions_v0(address: str, client_id: bytes) -> tuple[int, int]:
    """(error code, number of API keys) of a raw ApiVersions v0 exchange."""
    host, port = address.split(",")[0].rsplit(":", 1)
    body = struct.pack(">hhih", 18, 0, 11, len(client_id)) + client_id
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(struct.pack(">i", len(body)) + body)
        data = b""
        while len(data) < 4 or len(data) < 4 + struct.unpack(">i", data[:4])[0]:
            chunk = sock.recv(65536)
            assert chunk, "the broker closed the connection"
            data += chunk
    correlation_id, error_code, count = struct.unpack(">ihi", data[4:14])
    assert correlation_id == 11
    return error_code, count


@pytest.mark.parametrize("client_id", [b"\xff", b"bad \xc3 byte", b"\xed\xa0\x80"])
def test_a_client_id_with_malformed_utf8_is_answered(client_id: bytes) -> None:
    with mockkafka.Cluster() as cluster:
        error_code, count = _api_versions_v0(cluster.bootstrap_servers, client_id)
        assert (error_code, count > 40) == (0, True)
        [exchange] = cluster.traffic.requests("ApiVersions")
        assert exchange.client_id == client_id.decode("utf-8", "replace")

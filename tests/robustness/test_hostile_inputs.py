"""Hostile input against a broker in a subprocess: it answers or closes, never dies.

Each test throws one family of bad input at ``mockkafka serve`` in a child process and then
asserts what must hold: the process is alive, a fresh connection still gets ApiVersions
answered quickly (``HEALTHY_MS``), nothing was logged as an error inside the broker, and its
file descriptors (and, for the memory probes, its RSS) are back near their baseline.
The counts of inputs tried are printed (``-s``) for the record.
"""

from __future__ import annotations

import random
import socket
import struct
import threading
import time
from collections.abc import Iterator

import pytest

from mockkafka.cluster.state import ClusterState
from mockkafka.handlers.base import served_versions
from mockkafka.protocol.apis import API_BY_KEY
from tests.robustness._wire import (
    HEALTHY_MS,
    BrokerProcess,
    Raw,
    broker_process,
    frame,
    partition_response,
    produce_body,
    raise_own_fd_limit,
    request_header,
)

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def broker() -> Iterator[BrokerProcess]:
    with broker_process() as b:
        yield b


def _after(b: BrokerProcess, fds_before: int) -> None:
    """What must hold after every probe."""
    assert b.alive(), b.stderr()
    assert b.settle_fds(fds_before) <= fds_before + 2
    assert b.health() < HEALTHY_MS
    assert b.broker_errors() == []


def _fire(b: BrokerProcess, data: bytes, *, wait: float = 0.0) -> None:
    """Send ``data`` on a fresh connection, optionally read until the broker answers or
    closes, then close."""
    with socket.create_connection((b.host, b.port), timeout=2) as s:
        try:
            s.sendall(data)
            if wait:
                s.settimeout(wait)
                try:
                    while s.recv(1 << 16):
                        pass
                except (TimeoutError, ConnectionResetError):
                    pass
        except (BrokenPipeError, ConnectionResetError):
            pass


def test_random_bytes(broker: BrokerProcess) -> None:
    fds = broker.fds()
    rng = random.Random(1)
    n = 0
    for _ in range(300):
        size = rng.choice([1, 3, 4, 7, 20, 100, 1000, 5000])
        _fire(broker, rng.randbytes(size))
        n += 1
    # Valid size prefix, random body.
    for _ in range(300):
        body = rng.randbytes(rng.randint(0, 200))
        _fire(broker, frame(body), wait=0.02)
        n += 1
    print(f"random-bytes inputs tried: {n}")
    _after(broker, fds)


def test_absurd_lengths_and_counts(broker: BrokerProcess) -> None:
    fds = broker.fds()
    cases = [
        struct.pack(">i", -1),
        struct.pack(">i", 2**31 - 1) + b"x" * 100,  # over socket.request.max.bytes
        # Metadata v1 with a topics array of 2^31-1 entries and nothing after.
        frame(request_header(3, 1, flexible=False) + struct.pack(">i", 2**31 - 1)),
        # Metadata v9 (flexible) with a compact array length varint of ~2^35.
        frame(request_header(3, 9, flexible=True) + b"\xff\xff\xff\xff\x7f"),
        # A string length of 32767 with 3 bytes of string.
        frame(struct.pack(">hhih", 18, 0, 1, 32767) + b"abc"),
        # A negative client id length other than -1.
        frame(struct.pack(">hhih", 18, 0, 1, -5)),
        # Produce v3 whose records bytes claim 2^31-1.
        frame(
            request_header(0, 3, flexible=False)
            + struct.pack(">hhii", -1, 1, 1000, 1)
            + struct.pack(">h", 1)
            + b"t"
            + struct.pack(">iii", 1, 0, 2**31 - 1)
        ),
    ]
    for c in cases:
        _fire(broker, c, wait=0.2)
    print(f"absurd length/count inputs tried: {len(cases)}")
    _after(broker, fds)


def test_truncations(broker: BrokerProcess) -> None:
    fds = broker.fds()
    with Raw(broker.host, broker.port) as c:
        good = c.conn.send_request(
            "Metadata", 12, {"topics": [{"name": "t"}], "allow_auto_topic_creation": False}
        )
    n = 0
    for cut in range(1, len(good)):
        # The prefix as sent (the broker waits for the rest, then sees EOF) ...
        _fire(broker, good[:cut])
        # ... and re-framed so the frame is whole but its body is cut short.
        if cut > 4:
            _fire(broker, frame(good[4:cut]), wait=0.05)
        n += 2
    print(f"truncated inputs tried: {n}")
    _after(broker, fds)


def test_every_api_and_version_with_garbage_bodies(broker: BrokerProcess) -> None:
    fds = broker.fds()
    rng = random.Random(2)
    versions = served_versions(ClusterState())
    n = 0
    for key, (lo, hi) in versions.items():
        api = API_BY_KEY[key]
        for v in range(lo, hi + 1):
            flexible = api.request_flexible(v)
            hdr = request_header(key, v, flexible=flexible)
            with socket.create_connection((broker.host, broker.port), timeout=2) as s:
                # Several garbage bodies pipelined on one connection (until it is closed).
                try:
                    for size in (0, 1, 8, 64, 512):
                        s.sendall(frame(hdr + rng.randbytes(size)))
                        n += 1
                    s.settimeout(0.05)
                    while s.recv(1 << 16):
                        pass
                except (TimeoutError, ConnectionResetError, BrokenPipeError):
                    pass
    print(f"API x version garbage inputs tried: {n} over {len(versions)} APIs")
    _after(broker, fds)


def test_slow_writers_do_not_slow_others(broker: BrokerProcess) -> None:
    fds = broker.fds()
    with Raw(broker.host, broker.port) as c:
        good = c.conn.send_request(
            "ApiVersions", 3, {"client_software_name": "t", "client_software_version": "1"}
        )
    socks = [socket.create_connection((broker.host, broker.port)) for _ in range(50)]
    try:
        latencies = []
        for i in range(len(good) - 1):  # one byte per round to every slow connection
            for s in socks:
                s.sendall(good[i : i + 1])
            if i % 5 == 0:
                latencies.append(broker.health())
        assert max(latencies) < HEALTHY_MS
    finally:
        for s in socks:
            s.close()
    _after(broker, fds)


def test_connection_churn(broker: BrokerProcess) -> None:
    fds = broker.fds()
    t0 = time.monotonic()
    for i in range(1500):
        s = socket.create_connection((broker.host, broker.port))
        if i % 3 == 0:
            s.sendall(struct.pack(">i", 10))  # half a request, then gone
        s.close()
    print(f"churned 1500 connections in {time.monotonic() - t0:.1f} s")
    _after(broker, fds)


def test_thousand_concurrent_connections() -> None:
    want = 1200
    if raise_own_fd_limit(want + 200) < want + 100:
        pytest.skip("cannot raise this process's open-file limit to hold 1,200 sockets")
    with broker_process(nofile=4096) as b:
        fds = b.fds()
        socks: list[Raw] = []
        try:
            for _ in range(want):
                socks.append(Raw(b.host, b.port))
            # Every one of them is served.
            for i, c in enumerate(socks):
                if i % 10 == 0:
                    assert (
                        c.request(
                            "ApiVersions",
                            3,
                            {"client_software_name": "t", "client_software_version": "1"},
                        )["error_code"]
                        == 0
                    )
            assert b.health() < HEALTHY_MS
            held = b.fds() - fds
            print(f"connections held at once: {held}")
            assert held >= want
        finally:
            for c in socks:
                c.close()
        _after(b, fds)


def test_fd_exhaustion_is_survived() -> None:
    """With only 64 fds the broker runs out: it keeps accepting once fds are free again."""
    raise_own_fd_limit(1024)
    with broker_process(nofile=64) as b:
        fds = b.fds()
        socks = []
        try:
            for _ in range(150):  # well past the limit: the kernel backlog holds the rest
                try:
                    socks.append(socket.create_connection((b.host, b.port), timeout=1))
                except OSError:
                    break
            time.sleep(0.5)  # the broker meets EMFILE in accept() meanwhile
            assert b.alive(), b.stderr()
            assert "Too many open files" in b.stderr() or len(socks) < 150
        finally:
            for s in socks:
                s.close()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                if b.health() < HEALTHY_MS:
                    break
            except OSError:
                time.sleep(0.1)
        _after(b, fds)


def _zstd_bomb(size: int) -> bytes:
    import zstandard

    return zstandard.ZstdCompressor().compress(b"\x00" * size)


def test_memory_returns_after_big_and_rejected_requests() -> None:
    from mockkafka.protocol import records as rec

    with broker_process() as b:
        b.health()
        fds = b.fds()
        base = b.rss_kib()
        with Raw(b.host, b.port, timeout=30) as c:
            # A 1 MB Metadata request (tens of thousands of unknown topics).
            names = [{"name": f"nope-{i:07d}"} for i in range(60_000)]
            c.request("Metadata", 12, {"topics": names, "allow_auto_topic_creation": False})
            # A 50 MB produce that is rejected (records that do not parse).
            junk = bytearray(rec.encode_batch([rec.Record(0, 0, None, b"v")], base_offset=0))
            blob = bytes(junk) + b"\x00" * (50 * 1024 * 1024)
            resp = c.request("Produce", 9, produce_body(blob))
            code = partition_response(resp)["error_code"]
            assert code != 0
            del blob
            # A decompression bomb: 200 MB of zeros in a few KB of zstd.
            bomb = rec.encode_batch([rec.Record(0, 0, None, b"v")], base_offset=0)
            hb = bytearray(bomb[: rec.V2_HEADER_SIZE])
            payload = _zstd_bomb(200 * 1024 * 1024)
            raw = _rebatch(hb, payload, codec=4)
            resp = c.request("Produce", 9, produce_body(raw))
            assert partition_response(resp)["error_code"] == 2  # CORRUPT
        time.sleep(0.3)
        after = b.rss_kib()
        print(f"RSS before {base} KiB, after 1 MB Metadata + 50 MB produce + bomb: {after} KiB")
        assert after - base < 16 * 1024
        _after(b, fds)


def _rebatch(header: bytearray, payload: bytes, *, codec: int) -> bytes:
    """A v2 batch with ``header``'s fields, ``payload`` as its records and a valid CRC."""
    import crc32c

    out = bytearray(header) + payload
    struct.pack_into(">i", out, 8, len(out) - 12)  # batch length
    attrs = struct.unpack_from(">h", out, 21)[0]
    struct.pack_into(">h", out, 21, (attrs & ~7) | codec)
    struct.pack_into(">I", out, 17, crc32c.crc32c(bytes(out[21:])))
    return bytes(out)


def test_bomb_does_not_stall_other_clients() -> None:
    """A batch of 300,000 valid records is validated off the event loop."""
    from mockkafka.protocol import records as rec
    from mockkafka.protocol.compression import CompressionType

    n = 300_000
    blob = rec.encode_batch(
        [rec.Record(i, 0, None, b"") for i in range(n)],
        base_offset=0,
        compression=CompressionType.ZSTD,
    )
    with broker_process() as b:
        fds = b.fds()
        latencies: list[float] = []
        done = threading.Event()

        def probe() -> None:
            while not done.is_set() and len(latencies) < 2000:
                latencies.append(b.health())

        t = threading.Thread(target=probe)
        t.start()
        try:
            with Raw(b.host, b.port, timeout=60) as c:
                resp = c.request("Produce", 9, produce_body(blob))
        finally:
            done.set()
            t.join(10)
        assert partition_response(resp)["error_code"] == 0
        lat = sorted(latencies)
        p90 = lat[int(len(lat) * 0.9)]
        print(
            f"health during a {n}-record produce: {len(lat)} probes, p90 {p90:.1f} ms, max {lat[-1]:.1f} ms"
        )
        # On the loop the validation alone takes ~0.7 s; off it, probes stay fast (the
        # machine is shared, so one slow probe is not a stall: look at the 90th percentile).
        assert p90 < HEALTHY_MS / 4
        assert lat[-1] < 2 * HEALTHY_MS
        _after(b, fds)

"""Helpers for the hostile-input suite: raw frames, a broker in a subprocess, probes.

:class:`BrokerProcess` runs ``mockkafka serve`` in a child process (optionally with a lower
RLIMIT_NOFILE), so its RSS and open file descriptors can be read from ``/proc`` without the
test process's own allocations in the way. :func:`health` times one ApiVersions round trip
on a fresh connection: "other connections keep working with normal latency".
"""

from __future__ import annotations

import os
import re
import resource
import socket
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from mockkafka.protocol.framing import NEED_DATA, ClientConnection, Response

#: Latency an ApiVersions round trip must stay under while the broker is under attack: a
#: stall detector (a loop blocked by one request takes seconds), loose enough for a busy
#: shared machine; the figures themselves are printed with -s.
HEALTHY_MS = 1000.0


def fetch_partition(
    bootstrap: str,
    topic: str,
    *,
    offset: int = 0,
    version: int = 12,
    topic_id: Any = None,
) -> Any:
    """One Fetch of ``topic``-0 from ``offset`` on a fresh connection (answered at once,
    by name, or by ``topic_id`` from v13); the partition's answer."""
    host, port = bootstrap.rsplit(":", 1)
    part = {"partition": 0, "fetch_offset": offset, "partition_max_bytes": 1 << 20}
    named = {"topic_id": topic_id} if topic_id is not None else {"topic": topic}
    body = {
        "replica_id": -1,
        "max_wait_ms": 0,
        "min_bytes": 1,
        "max_bytes": 1 << 20,
        "topics": [{**named, "partitions": [part]}],
    }
    with Raw(host, int(port)) as raw:
        answer = raw.request("Fetch", version, body)
    return answer["responses"][0]["partitions"][0]


def frame(body: bytes) -> bytes:
    """A size-prefixed frame."""
    return struct.pack(">i", len(body)) + body


def request_header(api_key: int, version: int, *, flexible: bool, corr: int = 7) -> bytes:
    """A request header (v1, or v2 with an empty tag buffer when ``flexible``)."""
    client = b"hostile"
    hdr = struct.pack(">hhih", api_key, version, corr, len(client)) + client
    return hdr + (b"\x00" if flexible else b"")


class Raw:
    """A blocking socket with bounded waits, speaking frames through ClientConnection."""

    def __init__(self, host: str, port: int, *, timeout: float = 5.0) -> None:
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.conn = ClientConnection(client_id="hostile")
        self.timeout = timeout

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> Raw:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def request(self, api: str, version: int, body: dict[str, Any]) -> Any:
        self.sock.sendall(self.conn.send_request(api, version, body))
        return self.response().body

    def response(self) -> Response:
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            ev = self.conn.next_event()
            if ev is not NEED_DATA:
                assert isinstance(ev, Response)
                return ev
            data = self.sock.recv(1 << 20)
            if not data:
                raise ConnectionError("closed by the broker")
            self.conn.receive_data(data)
        raise TimeoutError(f"no response within {self.timeout} s")

    def closed_by_broker(self, wait: float = 3.0) -> bool:
        """True when the broker closed the connection (EOF or reset) within ``wait`` s;
        responses received meanwhile are discarded."""
        self.sock.settimeout(0.05)
        deadline = time.monotonic() + wait
        try:
            while time.monotonic() < deadline:
                try:
                    if not self.sock.recv(1 << 16):
                        return True
                except TimeoutError:
                    continue
        except (ConnectionResetError, BrokenPipeError):
            return True
        finally:
            self.sock.settimeout(self.timeout)
        return False


def produce_body(records: bytes, *, topic: str = "t", partition: int = 0) -> dict[str, Any]:
    """A Produce request body (acks=1) carrying ``records`` to one partition."""
    return {
        "acks": 1,
        "timeout_ms": 1000,
        "topic_data": [
            {"name": topic, "partition_data": [{"index": partition, "records": records}]}
        ],
    }


def partition_response(produce_response: dict[str, Any]) -> dict[str, Any]:
    """The only partition's entry of a Produce response."""
    out: dict[str, Any] = produce_response["responses"][0]["partition_responses"][0]
    return out


def fetch_body(
    *,
    max_wait_ms: int,
    max_bytes: int = 1000,
    partition_max_bytes: int = 100,
    topic: str = "t",
    partitions: tuple[int, ...] = (0,),
    session_id: int = 0,
    session_epoch: int = -1,
    current_leader_epoch: int = -1,
) -> dict[str, Any]:
    """A Fetch v4-v12 request body reading ``partitions`` of ``topic`` from offset 0; in
    fetch session ``session_id`` at ``session_epoch`` (v7+; the defaults: no session)."""
    return {
        "replica_id": -1,
        "max_wait_ms": max_wait_ms,
        "min_bytes": 1,
        "max_bytes": max_bytes,
        "isolation_level": 0,
        "session_id": session_id,
        "session_epoch": session_epoch,
        "topics": [
            {
                "topic": topic,
                "partitions": [
                    {
                        "partition": p,
                        "current_leader_epoch": current_leader_epoch,
                        "fetch_offset": 0,
                        "partition_max_bytes": partition_max_bytes,
                    }
                    for p in partitions
                ],
            }
        ],
        "forgotten_topics_data": [],
    }


def health(host: str, port: int) -> float:
    """Milliseconds for connect + ApiVersions v3 + close on a fresh connection."""
    t0 = time.perf_counter()
    with Raw(host, port) as c:
        body = c.request(
            "ApiVersions", 3, {"client_software_name": "h", "client_software_version": "1"}
        )
        assert body["error_code"] == 0
    return (time.perf_counter() - t0) * 1000


def rss_kib(pid: int) -> int:
    """Resident set size of process ``pid`` in KiB."""
    with open(f"/proc/{pid}/status") as fp:
        m = re.search(r"^VmRSS:\s+(\d+) kB", fp.read(), re.M)
    assert m is not None
    return int(m.group(1))


def fd_count(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def raise_own_fd_limit(want: int) -> int:
    """Raise this process's soft RLIMIT_NOFILE towards ``want``; returns the new soft limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = min(want, hard) if hard != resource.RLIM_INFINITY else want
    if soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


class BrokerProcess:
    """``mockkafka serve`` in a child process; see the module docstring."""

    def __init__(
        self,
        *,
        nofile: int | None = None,
        topics: tuple[str, ...] = ("t:3",),
        args: tuple[str, ...] = (),
    ) -> None:
        self._err = tempfile.TemporaryFile()  # noqa: SIM115 - closed by broker_process
        argv = [sys.executable, "-c", "import sys, mockkafka.cli as c; sys.exit(c.main())", "serve"]
        for t in topics:
            argv += ["--topic", t]
        argv += args

        def limit() -> None:  # runs in the child before exec
            if nofile is not None:
                _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
                resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, hard))

        self.proc = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=self._err,
            text=True,
            preexec_fn=limit,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        m = re.fullmatch(r"bootstrap\.servers=([\d.]+):(\d+)", line)
        if m is None:
            self.stop()
            raise RuntimeError(f"mockkafka serve did not start: {line!r} {self.stderr()}")
        self.host, self.port = m.group(1), int(m.group(2))
        # One answer first, so that the fd and memory baselines of the probes are those of
        # a broker that has answered (a connection, its buffers).
        try:
            self.health()
        except Exception as exc:
            self.stop()
            raise RuntimeError(f"mockkafka serve did not answer: {exc!r} {self.stderr()}") from exc
        # The probe's connection closes on the broker's side a moment later: wait for it, so
        # that baselines do not count it.
        deadline = time.monotonic() + 2.0
        last, steady = self.fds(), 0
        while steady < 5 and time.monotonic() < deadline:
            time.sleep(0.02)
            now = self.fds()
            steady = steady + 1 if now == last else 0
            last = now

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def health(self) -> float:
        return health(self.host, self.port)

    def rss_kib(self) -> int:
        return rss_kib(self.pid)

    def fds(self) -> int:
        return fd_count(self.pid)

    def settle_fds(self, baseline: int, *, slack: int = 2, timeout: float = 5.0) -> int:
        """Wait (bounded) until the broker's fd count is back within ``slack`` of
        ``baseline``; returns the last count."""
        deadline = time.monotonic() + timeout
        n = self.fds()
        while n > baseline + slack and time.monotonic() < deadline:
            time.sleep(0.05)
            n = self.fds()
        return n

    def stderr(self) -> str:
        self._err.seek(0)
        return self._err.read().decode(errors="replace")

    def broker_errors(self) -> list[str]:
        """Lines where the broker logged an error inside itself (a mockkafka bug)."""
        return [ln for ln in self.stderr().splitlines() if "error inside the broker" in ln]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


@contextmanager
def broker_process(**kw: Any) -> Iterator[BrokerProcess]:
    b = BrokerProcess(**kw)
    try:
        yield b
    finally:
        b.stop()
        b._err.close()

"""A small blocking Kafka client to the proxy's upstream cluster, for the cluster verbs.

:class:`UpstreamClient` speaks to the real brokers behind a :class:`~mockkafka.Proxy` with
the project's codec (``protocol/framing.ClientConnection``), one socket per broker, each
request answered before the next is sent. It is what ``proxy.create_topic(...)``,
``proxy.topic(...)``, ``proxy.group(...)`` use: the Admin API's requests (CreateTopics,
IncrementalAlterConfigs, ElectLeaders, ...), plus Produce, ListOffsets and Fetch for the
helpers that write and read records. It runs in the caller's thread, never on the proxy's
loop, and its requests do not pass the proxy (they are not in ``proxy.traffic`` and no fault
rule applies to them).

Versions are fixed ones every Kafka from 3.0 to 4.x serves; a broker that refuses one answers
UNSUPPORTED_VERSION, raised as :class:`~mockkafka.errors.KafkaApiError`.
"""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

from mockkafka.errors import ErrorCode, KafkaApiError, MockKafkaError, error_code
from mockkafka.protocol.framing import ClientConnection
from mockkafka.server.upstream import UpstreamAuthFailed, UpstreamSecurity, sasl_exchange

#: The version of each request the client sends (Kafka 3.0 .. 4.x all serve these).
VERSIONS = {
    "Metadata": 12,
    "CreateTopics": 7,
    "DeleteTopics": 6,
    "CreatePartitions": 3,
    "IncrementalAlterConfigs": 1,
    "DescribeConfigs": 4,
    "ElectLeaders": 2,
    "AlterPartitionReassignments": 0,
    "ListOffsets": 7,
    "DeleteRecords": 2,
    "OffsetCommit": 8,
    "OffsetFetch": 8,
    "DescribeGroups": 5,
    "ListGroups": 4,
    "FindCoordinator": 4,
    "Fetch": 12,
    "Produce": 9,
    "DescribeTransactions": 0,
    "ListTransactions": 0,
    "InitProducerId": 4,
    "LeaveGroup": 5,
    "CreateAcls": 3,
    "DeleteAcls": 3,
    "DescribeAcls": 3,
    "AlterClientQuotas": 1,
    "ConsumerGroupDescribe": 0,
}

TIMEOUT_S = 15.0


class UpstreamError(MockKafkaError, OSError):
    """The upstream broker could not be reached or closed the connection."""


class UpstreamClient:
    """Blocking requests to the upstream brokers (thread-safe: one request at a time)."""

    def __init__(
        self,
        bootstrap: list[tuple[str, int]],
        *,
        timeout: float = TIMEOUT_S,
        security: UpstreamSecurity | None = None,
    ) -> None:
        self.bootstrap = list(bootstrap)
        self.timeout = timeout
        #: TLS and the proxy's own SASL login, as the proxy's relaying connections use them
        self.security = security if security is not None else UpstreamSecurity()
        self._lock = threading.Lock()
        self._socks: dict[tuple[str, int], tuple[socket.socket, ClientConnection]] = {}
        #: node id -> (host, port) as the upstream advertises them
        self.brokers: dict[int, tuple[str, int]] = {}

    def close(self) -> None:
        with self._lock:
            for sock, _ in self._socks.values():
                sock.close()
            self._socks.clear()

    def _conn(self, addr: tuple[str, int]) -> tuple[socket.socket, ClientConnection]:
        got = self._socks.get(addr)
        if got is None:
            try:
                sock = socket.create_connection(addr, timeout=self.timeout)
                if self.security.ssl_context is not None:
                    sock = self.security.ssl_context.wrap_socket(sock, server_hostname=addr[0])
            except OSError as exc:
                raise UpstreamError(f"upstream {addr[0]}:{addr[1]}: {exc}") from exc
            got = self._socks[addr] = (sock, ClientConnection(client_id="mockkafka-proxy-admin"))
            if self.security.sasl is not None:
                try:
                    self._login(addr, self.security.sasl)
                except UpstreamAuthFailed:
                    sock.close()
                    self._socks.pop(addr, None)
                    raise
        return got

    def _login(self, addr: tuple[str, int], sasl: tuple[str, str, str]) -> None:
        """The proxy's own SASL login on a new connection: the exchange of
        :func:`mockkafka.server.upstream.sasl_exchange`, as the relaying side's
        :func:`~mockkafka.server.upstream.login` drives it; UpstreamAuthFailed carries
        Kafka's refusal."""
        steps = sasl_exchange(sasl)
        try:
            step = next(steps)
            while True:
                step = steps.send(self._send(addr, *step))
        except StopIteration:
            return

    def _roundtrip(self, addr: tuple[str, int], api: str, body: dict[str, Any]) -> dict[str, Any]:
        self._conn(addr)
        return self._send(addr, api, VERSIONS[api], body)

    def _send(
        self, addr: tuple[str, int], api: str, version: int, body: dict[str, Any]
    ) -> dict[str, Any]:
        sock, conn = self._socks[addr]
        try:
            sock.sendall(conn.send_request(api, version, body))
            while True:
                ev = conn.next_event()
                resp = getattr(ev, "body", None)
                if resp is not None:
                    return dict(resp)
                data = sock.recv(1 << 20)
                if not data:
                    raise OSError("connection closed")
                conn.receive_data(data)
        except OSError as exc:
            sock.close()
            self._socks.pop(addr, None)
            raise UpstreamError(f"upstream {addr[0]}:{addr[1]} {api}: {exc}") from exc

    def request(self, api: str, body: dict[str, Any], *, node: int | None = None) -> dict[str, Any]:
        """Send ``api`` to broker ``node`` (None: any broker) and return the decoded answer."""
        with self._lock:
            if node is not None:
                if node not in self.brokers:
                    self._refresh_brokers()
                if node not in self.brokers:
                    raise KafkaApiError(
                        ErrorCode.BROKER_NOT_AVAILABLE, f"the upstream has no broker {node}"
                    )
                return self._roundtrip(self.brokers[node], api, body)
            problems: list[str] = []
            for addr in [*self.brokers.values(), *self.bootstrap]:
                try:
                    return self._roundtrip(addr, api, body)
                except UpstreamError as exc:
                    problems.append(str(exc))
            raise UpstreamError("no upstream broker answered: " + "; ".join(problems))

    def _refresh_brokers(self) -> None:
        for addr in [*self.brokers.values(), *self.bootstrap]:
            try:
                md = self._roundtrip(addr, "Metadata", {"topics": []})
            except UpstreamError:
                continue
            self.brokers = {b["node_id"]: (b["host"], b["port"]) for b in md["brokers"]}
            return

    def metadata(self, topics: list[str] | None = None) -> dict[str, Any]:
        """Metadata for ``topics`` (None: every topic); learns the broker addresses."""
        body: dict[str, Any] = {
            "topics": None if topics is None else [{"name": t} for t in topics],
            "allow_auto_topic_creation": False,
        }
        md = self.request("Metadata", body)
        self.brokers = {b["node_id"]: (b["host"], b["port"]) for b in md["brokers"]}
        return md

    def coordinator(self, key: str, key_type: int = 0) -> int:
        """The node id coordinating group (``key_type=0``) or transactional id ``key`` (1)."""
        # Kafka answers COORDINATOR_NOT_AVAILABLE until __consumer_offsets (or
        # __transaction_state) exists: retry that for up to ``timeout`` seconds.
        deadline = time.monotonic() + self.timeout
        while True:
            resp = self.request(
                "FindCoordinator", {"key_type": key_type, "coordinator_keys": [key]}
            )
            c = resp["coordinators"][0]
            if c["error_code"] != ErrorCode.COORDINATOR_NOT_AVAILABLE:
                break
            if time.monotonic() >= deadline:
                break
            time.sleep(0.1)
        check(c["error_code"], c.get("error_message"), f"FindCoordinator {key!r}")
        self.brokers.setdefault(c["node_id"], (c["host"], c["port"]))
        return int(c["node_id"])


def check(code: int, message: str | None, what: str) -> None:
    """Raise KafkaApiError for a non-zero error code of an upstream answer."""
    if code:
        name = error_code(code).name
        text = f"{what}: upstream answered {name}"
        raise KafkaApiError(code, text + (f" ({message})" if message else ""))

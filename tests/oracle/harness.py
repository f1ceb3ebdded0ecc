"""Differential harness: the same request sessions against mockkafka and Apache Kafka.

Theory of operation
-------------------
A *session* (``tests/oracle/sessions.py``) is a function that sends raw requests, built with
the project's codec, through a :class:`Client` and may read the answers to build its next
request (a member id, a generation, a producer epoch). It runs once against a fresh
``mockkafka.Cluster()`` and once against the session's real Kafka broker; the client
records every exchange. The names a session uses (topics, groups, transactional ids) come
from :meth:`Client.name` and carry a per-run token, so runs on the shared real broker never
meet; :func:`normalize` turns the token back into ``<run>``.

:func:`normalize` then removes from each answer what is not a contract (explicitly, by field
name: :data:`NORMALIZED`): cluster and node ids, hosts and ports, timestamps, throttle times,
producer ids, member ids, topic ids, session ids and error messages' text. :func:`diff`
compares the two answers field by field and lists the paths that differ. Each difference is
either *allowed* -- matched by an entry of ``tests/oracle/allowed.py``, with its reason -- or
*unexplained*. :func:`compare` returns one :class:`ApiTally` per API: exchanges compared,
identical, allowed, unexplained (``python -m tests.oracle.report`` prints them).

A connection the broker closes instead of answering is recorded as the answer ``"closed"``
(that is how Kafka refuses a request it cannot parse); the client reconnects for the next
request.
"""

from __future__ import annotations

import re
import socket
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from mockkafka.protocol.framing import NEED_DATA, ClientConnection, Response

CLOSED = "closed"
NO_RESPONSE = "no response"


@dataclass
class Exchange:
    """One request and its answer (a decoded body, ``"closed"`` or ``"no response"``)."""

    session: str
    step: int
    api: str
    version: int
    request: dict[str, Any]
    response: Any


class Client:
    """A raw Kafka connection to one broker that records its exchanges.

    ``request(api, version, body)`` returns the decoded answer, or the strings
    ``"closed"`` / ``"no response"``; ``expect_none=True`` (acks=0 Produce) waits briefly
    and records ``"no response"``.
    """

    def __init__(self, port: int, session: str, token: str, *, timeout: float = 10.0) -> None:
        self.port = port
        self.session = session
        self.token = token
        self.timeout = timeout
        self.exchanges: list[Exchange] = []
        self._sock: socket.socket | None = None
        self._conn: ClientConnection | None = None

    def name(self, logical: str) -> str:
        """A topic/group/id name unique to this run; normalized back to ``logical-<run>``."""
        return f"{logical}-{self.token}"

    def _connect(self) -> tuple[socket.socket, ClientConnection]:
        if self._sock is None or self._conn is None:
            self._sock = socket.create_connection(("127.0.0.1", self.port), timeout=self.timeout)
            self._conn = ClientConnection(client_id="mockkafka-oracle")
        return self._sock, self._conn

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
        self._sock = self._conn = None

    def request(
        self, api: str, version: int, body: dict[str, Any], *, expect_none: bool = False
    ) -> Any:
        """Send, record and return the answer. An answer carrying a retriable error a
        client would retry (:data:`RETRIED`: Kafka still creating an internal topic, moving
        leadership, loading a coordinator) is retried, unrecorded, for up to 10 s: timing
        is not what the comparison is about."""
        deadline = time.monotonic() + RETRY_FOR_S
        while True:
            answer = self._send(api, version, body, expect_none=expect_none)
            if time.monotonic() > deadline or not RETRIED & set(_error_codes(answer)):
                break
            time.sleep(0.1)
        self.exchanges.append(
            Exchange(self.session, len(self.exchanges), api, version, body, answer)
        )
        return answer

    def quiet(self, api: str, version: int, body: dict[str, Any]) -> Any:
        """Send without recording (a session waiting for a state both brokers reach)."""
        return self._send(api, version, body, expect_none=False)

    def _send(self, api: str, version: int, body: dict[str, Any], *, expect_none: bool) -> Any:
        sock, conn = self._connect()
        answer: Any
        try:
            sock.sendall(conn.send_request(api, version, body))
            answer = self._read(sock, conn, 0.3 if expect_none else self.timeout)
        except (ConnectionError, OSError):
            answer = CLOSED
        if answer == CLOSED:
            self.close()
        return answer

    def _read(self, sock: socket.socket, conn: ClientConnection, wait: float) -> Any:
        deadline = time.monotonic() + wait
        while True:
            ev = conn.next_event()
            if isinstance(ev, Response):
                return ev.body
            assert ev is NEED_DATA
            left = deadline - time.monotonic()
            if left <= 0:
                self.close()  # its answer may still come: never read it as the next one's
                return NO_RESPONSE
            sock.settimeout(left)
            try:
                data = sock.recv(1 << 20)
            except TimeoutError:
                continue
            if not data:
                return CLOSED
            conn.receive_data(data)


#: LEADER_NOT_AVAILABLE, NOT_LEADER_OR_FOLLOWER, COORDINATOR_LOAD_IN_PROGRESS,
#: COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR, CONCURRENT_TRANSACTIONS: a client retries
#: them.
RETRIED = frozenset({5, 6, 14, 15, 16, 51})
RETRY_FOR_S = 10.0


def _error_codes(value: Any) -> Iterator[int]:
    if isinstance(value, dict):
        for k, v in value.items():
            if k.endswith("error_code") and isinstance(v, int):
                yield v
            else:
                yield from _error_codes(v)
    elif isinstance(value, list):
        for v in value:
            yield from _error_codes(v)


Session = Callable[[Client], None]


def new_token() -> str:
    """A per-run token for :meth:`Client.name` (names unique on a shared broker)."""
    return f"o{uuid.uuid4().hex[:8]}"


def run_session(
    port: int, name: str, session: Session, *, token: str | None = None
) -> list[Exchange]:
    client = Client(port, name, token or new_token())
    try:
        session(client)
    finally:
        client.close()
    for ex in client.exchanges:
        ex.response = _untoken(ex.response, client.token)
        ex.request = _untoken(ex.request, client.token)
    return client.exchanges


def _untoken(value: Any, token: str) -> Any:
    if isinstance(value, str):
        return value.replace(token, "<run>")
    if isinstance(value, dict):
        return {k: _untoken(v, token) for k, v in value.items()}
    if isinstance(value, list):
        return [_untoken(v, token) for v in value]
    return value


# ---------------------------------------------------------------------------------------------
# Normalization: what is not a contract between a broker and its clients.
# ---------------------------------------------------------------------------------------------

#: Field name -> placeholder. Values differ between any two brokers (or runs) by nature.
NORMALIZED: dict[str, str] = {
    "throttle_time_ms": "<throttle>",
    "cluster_id": "<cluster>",
    "controller_id": "<node>",
    "node_id": "<node>",
    "leader_id": "<node>",
    "coordinator_id": "<node>",
    "broker_id": "<node>",
    "host": "<host>",
    "port": "<port>",
    "producer_id": "<producer id>",
    "member_id": "<member id>",
    "leader": "<member id>",
    "assigned_member_id": "<member id>",
    "topic_id": "<topic id>",
    "session_id": "<session id>",
    "log_append_time_ms": "<time>",
    "timestamp": "<time>",
    "current_state_timestamp": "<time>",
    "transaction_start_time_ms": "<time>",
    "last_timestamp": "<time>",
    "issue_timestamp_ms": "<time>",
    "expiry_timestamp_ms": "<time>",
    "max_timestamp_ms": "<time>",
    "incarnation_id": "<incarnation>",
    "error_message": "<message>",
    "document": "<message>",
}
#: Arrays whose order is not a contract (Kafka groups per-group answers by coordinator).
UNORDERED = frozenset({"results", "groups", "config_resources"})
#: Per API: top-level arrays whose order is not a contract there (Kafka answers the topics
#: it cannot delete first; clients match results by name).
UNORDERED_IN: dict[str, frozenset[str]] = {"DeleteTopics": frozenset({"responses"})}
#: Lists of node ids: each element becomes ``<node>``.
NODE_LISTS = frozenset(
    {"replica_nodes", "isr_nodes", "offline_replicas", "eligible_leader_replicas", "last_known_elr"}
)


def normalize(value: Any, key: str = "", api: str = "") -> Any:
    """``value`` with :data:`NORMALIZED` fields replaced (error messages entirely: clients
    print them, and whether Kafka sends null, "" or a text is not a contract; where it is,
    a test pins it, as for OAUTHBEARER in test_known_differences.py)."""
    if isinstance(value, dict):
        return {k: normalize(v, k) for k, v in value.items()}
    if isinstance(value, list) and (key in UNORDERED or key in UNORDERED_IN.get(api, ())):
        return sorted((normalize(v, key) for v in value), key=repr)
    if key in NODE_LISTS and isinstance(value, list):
        return ["<node>" for _ in value]
    if isinstance(value, list):
        return [normalize(v, key) for v in value]
    placeholder = NORMALIZED.get(key)
    if placeholder is None:
        return value
    if value in (-1, None) and placeholder in ("<node>", "<producer id>"):
        return value  # "none" keeps its meaning
    return placeholder


def _top(response: Any, api: str) -> Any:
    """:func:`normalize` a whole answer, with the per-API rules at its top level."""
    if not isinstance(response, dict):
        return response
    return {k: normalize(v, k, api) for k, v in response.items()}


def diff(a: Any, b: Any, path: str = "") -> Iterator[str]:
    """Paths (``topics[0].partitions[1].error_code``) where ``a`` and ``b`` differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            yield from diff(a.get(k), b.get(k), f"{path}.{k}" if path else k)
        return
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            yield f"{path}[len]"
            return
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            yield from diff(x, y, f"{path}[{i}]")
        return
    if a != b:
        yield path or "<answer>"


# ---------------------------------------------------------------------------------------------
# Comparison and the per-API tally.
# ---------------------------------------------------------------------------------------------


@dataclass
class Difference:
    session: str
    step: int
    api: str
    version: int
    path: str
    fake: Any
    kafka: Any
    allowed_by: str | None = None


@dataclass
class ApiTally:
    api: str
    compared: int = 0
    identical: int = 0
    allowed: int = 0
    unexplained: int = 0
    examples: list[Difference] = field(default_factory=list)


def _at(value: Any, path: str) -> Any:
    for part in re.findall(r"[^.\[\]]+|\[\d+\]|\[len\]", path):
        if part == "[len]":
            return len(value) if isinstance(value, list) else value
        if part.startswith("["):
            idx = int(part[1:-1])
            value = value[idx] if isinstance(value, list) and idx < len(value) else None
        elif isinstance(value, dict):
            value = value.get(part)
        else:
            return value
    return value


def compare(
    fake: list[Exchange],
    kafka: list[Exchange],
    allowed: Callable[[Difference], str | None],
) -> dict[str, ApiTally]:
    """Pair the exchanges of the two runs, diff them after :func:`normalize`, and tally per
    API; ``allowed(difference)`` names the allow-list entry that explains it (or None)."""
    tallies: dict[str, ApiTally] = {}
    for f, k in zip(fake, kafka, strict=False):
        t = tallies.setdefault(f.api, ApiTally(f.api))
        t.compared += 1
        nf, nk = _top(f.response, f.api), _top(k.response, k.api)
        paths = list(diff(nf, nk))
        if not paths:
            t.identical += 1
            continue
        diffs = [
            Difference(f.session, f.step, f.api, f.version, p, _at(nf, p), _at(nk, p))
            for p in paths
        ]
        for d in diffs:
            d.allowed_by = allowed(d)
        if all(d.allowed_by for d in diffs):
            t.allowed += 1
        else:
            t.unexplained += 1
        t.examples.extend(diffs)
    if len(fake) != len(kafka):
        t = tallies.setdefault("<sessions>", ApiTally("<sessions>"))
        t.unexplained += 1
    return tallies

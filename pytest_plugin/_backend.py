"""``--kafka-backend=kafka[:VERSION]``: the ``kafka_cluster`` fixtures on a real Apache Kafka.

With ``--kafka-backend=kafka`` (or the ini option ``kafka_backend = kafka``) the
``kafka_cluster`` family of fixtures hands the test a :class:`RealKafkaCluster` instead of a
``mockkafka.Cluster``: one Apache Kafka KRaft broker per session (per xdist worker), started
by ``mockkafka.kafka_broker`` (Java 17+ and Maven needed; the jars are fetched once), with
every user topic and group deleted between tests so each test starts clean. It offers what a
real broker can do -- ``bootstrap_servers``, ``create_topic``, ``client_config`` for
plaintext, and through the test's ``mockkafka.Proxy`` the fault rules, traffic, the cluster
verbs a proxy performs and ``@pytest.mark.kafka_scenario`` scenarios it can run -- and
anything only the fake can do (``truncate_log``, ``set_isr``, ...) skips the test with the
reason, so a nightly run shows which tests lean on the fake. Without Java or Maven every such
test skips, saying why.
"""

from __future__ import annotations

import atexit
import time
from typing import Any

import pytest

BACKENDS = ("mockkafka", "kafka")
_broker: Any = None
_problem: str | None = None


def add_options(parser: pytest.Parser, group: Any) -> None:
    group.addoption(
        "--kafka-backend",
        metavar="mockkafka|kafka[:VERSION]",
        default=None,
        help="what the kafka_cluster fixtures start: the fake (mockkafka, the default) or a "
        "real Apache Kafka broker (kafka, kafka:4.4.0) behind mockkafka's proxy; needs Java "
        "17+ and Maven",
    )
    group.addoption(
        "--kafka-proxy-upstream",
        metavar="HOST:PORT[,...]",
        default=None,
        help="run the kafka_cluster fixtures on an existing Kafka cluster, through mockkafka's "
        "proxy (fault rules and traffic work); topics are created, never deleted",
    )
    parser.addini(
        "kafka_backend",
        "mockkafka: mockkafka (default) or kafka[:VERSION] (a real Apache Kafka broker)",
        type="string",
    )
    parser.addini(
        "kafka_proxy_upstream",
        "mockkafka: HOST:PORT[,...] of an existing Kafka cluster for the kafka_cluster fixtures",
        type="string",
    )


def proxy_upstream(config: pytest.Config) -> str | None:
    """``--kafka-proxy-upstream`` (or the ini option): an existing cluster to test against."""
    raw = config.getoption("kafka_proxy_upstream", None) or config.getini("kafka_proxy_upstream")
    text = str(raw or "").strip()
    return text or None


def backend(config: pytest.Config) -> tuple[str, str | None]:
    """(``mockkafka`` or ``kafka``, Kafka version or None) from the option or ini;
    ``--kafka-proxy-upstream`` means ``kafka``."""
    if proxy_upstream(config):
        return "kafka", None
    raw = config.getoption("kafka_backend", None) or config.getini("kafka_backend") or ""
    name, _, version = raw.strip().partition(":")
    name = name or "mockkafka"
    if name not in BACKENDS:
        raise pytest.UsageError(
            f"mockkafka: --kafka-backend must be mockkafka or kafka[:VERSION], got {raw!r}"
        )
    return name, version or None


def _session_broker(version: str | None) -> Any:
    global _broker, _problem
    from mockkafka.kafka_broker import DEFAULT_VERSION, KafkaBroker, KafkaUnavailable

    if _broker is None and _problem is None:
        try:
            _broker = KafkaBroker(version or DEFAULT_VERSION).start()
            atexit.register(stop_session_broker)
        except KafkaUnavailable as exc:
            _problem = str(exc)
    if _broker is None:
        pytest.skip(f"--kafka-backend=kafka: {_problem}")
    return _broker


def stop_session_broker() -> None:
    global _broker
    if _broker is not None:
        _broker.stop()
        _broker = None


def real_cluster(config: pytest.Config) -> RealKafkaCluster | None:
    """A :class:`RealKafkaCluster` when ``--kafka-backend=kafka``, else None."""
    name, version = backend(config)
    return RealKafkaCluster(version, proxy_upstream(config)) if name == "kafka" else None


def _only_the_fake(what: str) -> None:
    __tracebackhide__ = True
    pytest.skip(
        f"--kafka-backend=kafka: {what} is something only mockkafka can do "
        "(fault rules, cluster verbs, traffic and log views need the fake)"
    )


def check_brokers(real: RealKafkaCluster, brokers: int, source: str | None) -> None:
    """Skip the test (stopping its proxy) when the real cluster has fewer brokers than the
    test asked for, with the reason a scenario asking for as many skips with."""
    __tracebackhide__ = True
    from mockkafka.scenario.on_proxy import too_few_brokers

    short = too_few_brokers(brokers, real.proxy)
    if short is None:
        return
    real.stop()
    pytest.skip(f"--kafka-backend=kafka: {source or 'the options'}: brokers={brokers}: {short}")


class RealKafkaCluster:
    """The ``kafka_cluster`` of a test run with ``--kafka-backend=kafka`` (or
    ``--kafka-proxy-upstream``).

    The test's clients reach the real broker through a ``mockkafka.Proxy`` of its own, so
    ``faults`` and ``traffic`` work as on the fake. ``bootstrap_servers`` (the proxy's),
    ``create_topic(name, partitions=1, replication_factor=1, config=None)``,
    ``client_config(client)`` and ``stop()`` work as on ``mockkafka.Cluster``, and so do the
    cluster verbs, views and waits a proxy can perform (``_api/proxy_verbs.PROXY_VERBS``);
    any other attribute skips the test with the reason (only the fake can do it). On the session's own broker every
    user topic and group a previous test left is deleted first; an existing cluster
    (``--kafka-proxy-upstream``) is never cleaned.
    """

    def __init__(self, version: str | None, upstream: str | None = None) -> None:
        import mockkafka
        from mockkafka._api.proxy import parse_upstream

        if upstream is not None:
            host, port = parse_upstream(upstream)[0]
            self._broker: Any = _Upstream(host, port)
        else:
            self._broker = _session_broker(version)
            self._clean()
        self._proxy = mockkafka.Proxy(upstream=upstream or self._broker.bootstrap_servers)
        try:
            self._proxy.start()
        except mockkafka.MockKafkaError as exc:
            pytest.skip(f"--kafka-proxy-upstream: {exc}")

    @property
    def bootstrap_servers(self) -> str:
        return self._proxy.bootstrap_servers

    @property
    def proxy(self) -> Any:
        """The test's ``mockkafka.Proxy`` in front of the real broker (scenarios play on it)."""
        return self._proxy

    @property
    def faults(self) -> Any:
        """The proxy's fault rules: they fire on the traffic to the real broker."""
        return self._proxy.faults

    @property
    def traffic(self) -> Any:
        """Every exchange between the test's clients and the real broker."""
        return self._proxy.traffic

    def client_config(self, client: str = "confluent", **kw: Any) -> dict[str, Any]:
        """Plaintext settings of ``client`` (confluent, java: ``bootstrap.servers``;
        kafka-python, aiokafka: ``bootstrap_servers``); security options skip the test."""
        if kw:
            _only_the_fake(f"client_config({', '.join(kw)}=...)")
        dotted = client in ("confluent", "java")
        return {"bootstrap.servers" if dotted else "bootstrap_servers": self.bootstrap_servers}

    def reset(self) -> None:
        """What ``kafka_cluster_shared`` does per test: the proxy forgets its rules and
        traffic; on the session's own broker every user topic and group is deleted (an
        existing cluster is never cleaned)."""
        self._proxy.faults.clear()
        self._proxy.traffic.clear()
        if not isinstance(self._broker, _Upstream):
            self._clean()

    def create_topic(
        self,
        name: str,
        partitions: int | None = 1,
        replication_factor: int | None = 1,
        config: dict[str, str] | None = None,
    ) -> None:
        """CreateTopics on the real broker, then wait until every partition has a leader;
        a topic a previous test deleted may still be going away: retried for 10 s."""
        from mockkafka.errors import ErrorCode, KafkaApiError

        topic = {
            "name": name,
            "num_partitions": -1 if partitions is None else partitions,
            "replication_factor": -1 if replication_factor is None else replication_factor,
            "configs": [{"name": k, "value": v} for k, v in (config or {}).items()],
        }
        deadline = time.monotonic() + 10
        while True:
            got = self._broker.request("CreateTopics", 7, {"topics": [topic], "timeout_ms": 10000})
            code = got["topics"][0]["error_code"]
            if code == 0:
                break
            if code != ErrorCode.TOPIC_ALREADY_EXISTS or time.monotonic() > deadline:
                raise KafkaApiError(code, got["topics"][0]["error_message"] or "")
            time.sleep(0.1)
        while time.monotonic() < deadline:
            md = self._broker.request("Metadata", 12, {"topics": [{"name": name}]})
            parts = md["topics"][0]["partitions"]
            if parts and all(p["leader_id"] >= 0 for p in parts):
                return
            time.sleep(0.05)

    def _clean(self) -> None:
        """Delete every non-internal topic and every group a previous test left."""
        md = self._broker.request("Metadata", 12, {"topics": None})
        names = [t["name"] for t in md["topics"] if not t["is_internal"]]
        if names:
            self._broker.request(
                "DeleteTopics", 6, {"topics": [{"name": n} for n in names], "timeout_ms": 10000}
            )
        groups = self._broker.request("ListGroups", 4, {"states_filter": []})["groups"]
        if groups:
            self._broker.request(
                "DeleteGroups", 2, {"groups_names": [g["group_id"] for g in groups]}
            )

    def stop(self) -> None:
        """Stop this test's proxy and report its rules that never fired; the session's
        broker stops at the end of the session."""
        self._proxy.stop()
        self._proxy.check_rules()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        from mockkafka._api.proxy_verbs import PROXY_VERBS, refusal

        if name in PROXY_VERBS:
            why = refusal(name)
            if why is None:
                return getattr(self._proxy, name)
            pytest.skip(f"--kafka-backend=kafka: {why}")
        _only_the_fake(f"kafka_cluster.{name}")
        raise AssertionError("unreachable")  # pragma: no cover


class _Upstream:
    """An existing Kafka cluster named by ``--kafka-proxy-upstream``: raw requests to it."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.bootstrap_servers = f"{host}:{port}"

    def request(self, api: str, version: int, body: dict[str, Any]) -> dict[str, Any]:
        from mockkafka.kafka_broker import request_to

        return request_to(self.host, self.port, api, version, body)

"""A real Apache Kafka broker in a child process: the reference mockkafka is compared with.

Apache Kafka's broker is on Maven Central (``org.apache.kafka:kafka_2.13``, with its
dependencies); Kafka 4 needs no ZooKeeper. You need Java 17+ and Maven (``mvn``) once, to
fetch the jars into ``~/.m2``; after that everything works offline.

Theory of operation: :func:`broker_classpath` writes a POM naming ``kafka_2.13`` at the
version asked for (plus ``log4j-slf4j-impl``, the log4j2 binding of Kafka's slf4j-api 1.7),
asks ``mvn dependency:build-classpath`` for the runtime classpath (``-o`` first, so a warm
``~/.m2`` needs no network; only that when ``MOCKKAFKA_BUILD_OFFLINE=1``) and caches it under
``~/.cache/mockkafka/kafka/``. :class:`KafkaBroker` then runs one KRaft node that is broker and
controller at once (``process.roles=broker,controller``) in a temporary directory: it formats
the storage with ``kafka.tools.StorageTool``, starts ``kafka.Kafka`` on 127.0.0.1 ports the
OS picked, and waits until the broker answers Metadata with itself in it (about 3.5 s on an
idle machine). :meth:`KafkaBroker.stop` kills the process and removes the directory.

The broker is configured like a default :class:`mockkafka.Cluster` where the fake's
defaults differ from Kafka's for speed (:data:`MOCKKAFKA_LIKE_CONFIG`): no initial rebalance
delay, single-replica internal topics, the short group session timeouts and heartbeat
interval of the fake. Pass ``config`` to change anything else.

The oracle tier of the test suite (``tests/oracle``) and the pytest plugin's
``--kafka-backend=kafka`` option are built on this module.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

from mockkafka._maven import run_mvn
from mockkafka.errors import MockKafkaError

__all__ = [
    "DEFAULT_VERSION",
    "MOCKKAFKA_LIKE_CONFIG",
    "KafkaBroker",
    "KafkaCluster",
    "KafkaUnavailable",
    "broker_classpath",
]

#: SASL mechanisms :class:`KafkaBroker` can set up on its SASL_PLAINTEXT listener.
SASL_MECHANISMS = ("OAUTHBEARER", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
#: The Kafka release started when none is named.
DEFAULT_VERSION = "4.4.0"
MVN_TIMEOUT_S = 600.0
START_TIMEOUT_S = 60.0

#: Broker configs that make Kafka behave like a default ``mockkafka.Cluster(brokers=1)``.
MOCKKAFKA_LIKE_CONFIG: dict[str, str] = {
    "auto.create.topics.enable": "true",
    "num.partitions": "1",
    "default.replication.factor": "1",
    "offsets.topic.replication.factor": "1",
    "offsets.topic.num.partitions": "50",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "transaction.state.log.num.partitions": "50",
    "group.initial.rebalance.delay.ms": "0",
    "group.min.session.timeout.ms": "1000",
    "group.consumer.min.heartbeat.interval.ms": "500",
    "group.consumer.heartbeat.interval.ms": "500",
    "group.share.min.heartbeat.interval.ms": "500",
    "group.share.heartbeat.interval.ms": "500",
    "share.coordinator.state.topic.replication.factor": "1",
    "share.coordinator.state.topic.min.isr": "1",
    "delete.topic.enable": "true",
}

_POM = """<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>dev.mockkafka</groupId>
  <artifactId>kafka-broker-classpath</artifactId>
  <version>0</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.kafka</groupId>
      <artifactId>kafka_2.13</artifactId>
      <version>{version}</version>
    </dependency>
    <dependency>
      <groupId>org.apache.logging.log4j</groupId>
      <artifactId>log4j-slf4j-impl</artifactId>
      <version>2.24.3</version>
    </dependency>
    <dependency>
      <groupId>org.apache.logging.log4j</groupId>
      <artifactId>log4j-core</artifactId>
      <version>2.24.3</version>
    </dependency>
  </dependencies>
  <build><plugins><plugin>
    <groupId>org.apache.maven.plugins</groupId>
    <artifactId>maven-dependency-plugin</artifactId>
    <version>3.8.1</version>
  </plugin></plugins></build>
</project>
"""

_LOG4J2 = """Configuration:
  Appenders:
    Console:
      name: STDOUT
      target: SYSTEM_OUT
      PatternLayout:
        pattern: "[%d] %p %m (%c)%n"
  Loggers:
    Root:
      level: WARN
      AppenderRef:
        - ref: STDOUT
"""


class KafkaUnavailable(MockKafkaError):
    """Java, Maven or the Kafka jars cannot be had, or the broker did not start; the message
    says which. The test tiers and the pytest plugin turn it into a skip with this reason."""


def _cache_dir() -> Path:
    """``$MOCKKAFKA_CACHE_DIR/kafka``, else ``$XDG_CACHE_HOME/mockkafka/kafka`` (``~/.cache``)."""
    if os.environ.get("MOCKKAFKA_CACHE_DIR"):
        return Path(os.environ["MOCKKAFKA_CACHE_DIR"]) / "kafka"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mockkafka" / "kafka"


def broker_classpath(version: str = DEFAULT_VERSION, *, timeout: float = MVN_TIMEOUT_S) -> str:
    """The runtime classpath of the Kafka broker ``version`` (resolved once, then cached).

    Raises :class:`KafkaUnavailable` naming what is missing (java, mvn, or the release on
    Maven Central). With ``MOCKKAFKA_BUILD_OFFLINE=1`` only ``~/.m2`` is used.
    """
    for tool in ("java", "mvn"):
        if shutil.which(tool) is None:
            raise KafkaUnavailable(
                f"`{tool}` is not installed: the Kafka broker needs Java 17+ and Maven "
                "(apt-get install openjdk-17-jre-headless maven)"
            )
    key = hashlib.sha256(_POM.format(version=version).encode()).hexdigest()[:12]
    work = _cache_dir() / f"{version}-{key}"
    cached = work / "classpath.txt"
    if cached.is_file():
        jars = cached.read_text().strip().split(os.pathsep)
        if jars and all(Path(j).is_file() for j in jars):
            return os.pathsep.join(jars)
    work.mkdir(parents=True, exist_ok=True)
    (work / "pom.xml").write_text(_POM.format(version=version))
    out = work / f"classpath.{os.getpid()}.txt"
    problem = run_mvn(work, out, offline=True, timeout=timeout)
    if problem and os.environ.get("MOCKKAFKA_BUILD_OFFLINE") != "1":
        problem = run_mvn(work, out, offline=False, timeout=timeout)
    if problem:
        raise KafkaUnavailable(
            f"cannot resolve org.apache.kafka:kafka_2.13:{version} with mvn "
            f"(offline={os.environ.get('MOCKKAFKA_BUILD_OFFLINE') == '1'}):\n{problem}"
        )
    out.replace(cached)  # atomic: pytest-xdist workers may resolve at once
    return cached.read_text().strip()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class KafkaBroker:
    """One Apache Kafka KRaft node (broker and controller) on 127.0.0.1, in a child process.

    ``with KafkaBroker() as kafka: ... kafka.bootstrap_servers``; or :meth:`start` and
    :meth:`stop`. ``sasl_mechanisms`` adds a SASL_PLAINTEXT listener (``sasl_port``):
    OAUTHBEARER with Kafka's unsecured JWS validator needs no users; PLAIN and
    SCRAM-SHA-256/512 need ``users`` (name -> password: PLAIN accounts in the listener's
    JAAS config, SCRAM credentials written into the storage by ``StorageTool format
    --add-scram``). ``tls=True`` adds an SSL listener (``ssl_port``) whose certificate
    (127.0.0.1, localhost) comes from a throwaway trustme CA, handed to Kafka as a PEM
    keystore; clients trust :attr:`ca_file`. ``authorizer=True`` turns on ``StandardAuthorizer`` with
    ``allow.everyone.if.no.acl.found=false``: plaintext clients are ``User:ANONYMOUS``, and
    ``User:admin`` (an unsecured OAUTHBEARER token on ``sasl_port``) is a super user. ``config``
    is laid over :data:`MOCKKAFKA_LIKE_CONFIG`. :meth:`request` sends one raw request.
    """

    def __init__(
        self,
        version: str = DEFAULT_VERSION,
        *,
        config: Mapping[str, str] | None = None,
        sasl_mechanisms: tuple[str, ...] = (),
        users: Mapping[str, str] | None = None,
        tls: bool = False,
        cluster_id: str | None = None,
        node_id: int = 1,
        authorizer: bool = False,
    ) -> None:
        if authorizer:
            sasl_mechanisms = ("OAUTHBEARER",)
        unknown = set(sasl_mechanisms) - set(SASL_MECHANISMS)
        if unknown:
            raise ValueError(
                f"sasl_mechanisms: {sorted(unknown)} unknown; choose from {list(SASL_MECHANISMS)}"
            )
        needs_users = [m for m in sasl_mechanisms if m != "OAUTHBEARER"]
        if needs_users and not users:
            raise ValueError(
                f"sasl_mechanisms {needs_users} need users={{'alice': 'alice-secret'}}: "
                "only OAUTHBEARER (unsecured tokens) is set up without users"
            )
        for name, password in (users or {}).items():
            if not name or any(c in name + password for c in '",=[]\n'):
                raise ValueError(
                    f"users: {name!r} or its password holds a character Kafka's "
                    "JAAS or --add-scram syntax cannot carry"
                )
        self.version = version
        self.config = {**MOCKKAFKA_LIKE_CONFIG, **(config or {})}
        self.sasl_mechanisms = sasl_mechanisms
        self.users = dict(users or {})
        self.tls = tls
        self.cluster_id = cluster_id or _kafka_uuid()
        self.node_id = node_id
        self.authorizer = authorizer
        self.port = 0
        self.sasl_port = 0
        self.ssl_port = 0
        self.controller_port = 0
        #: "id@host:port,..." of every controller (a :class:`KafkaCluster` sets it)
        self.voters = ""
        self.start_seconds = 0.0
        #: the CA that signed the SSL listener's certificate (``tls=True``), PEM file
        self.ca_file: Path | None = None
        self._dir: Path | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._started = 0.0

    @property
    def bootstrap_servers(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def sasl_bootstrap_servers(self) -> str:
        return f"127.0.0.1:{self.sasl_port}"

    @property
    def ssl_bootstrap_servers(self) -> str:
        """The SSL listener (``tls=True``): its certificate names 127.0.0.1 and localhost,
        signed by the CA in :attr:`ca_file`."""
        return f"127.0.0.1:{self.ssl_port}"

    def __enter__(self) -> KafkaBroker:
        return self.start()

    def __exit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def _properties(self, data: Path, controller_port: int) -> str:
        listeners = [f"PLAINTEXT://127.0.0.1:{self.port}"]
        protocols = ["PLAINTEXT:PLAINTEXT", "CONTROLLER:PLAINTEXT"]
        props = {
            "process.roles": "broker,controller",
            "node.id": str(self.node_id),
            "controller.quorum.voters": self.voters
            or f"{self.node_id}@127.0.0.1:{controller_port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "log.dirs": str(data),
        }
        if self.sasl_mechanisms:
            listeners.append(f"SASL_PLAINTEXT://127.0.0.1:{self.sasl_port}")
            protocols.append("SASL_PLAINTEXT:SASL_PLAINTEXT")
            props["sasl.enabled.mechanisms"] = ",".join(self.sasl_mechanisms)
            props["listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config"] = (
                "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
                'unsecuredLoginStringClaim_sub="broker";'
            )
            if "PLAIN" in self.sasl_mechanisms:
                accounts = " ".join(f'user_{u}="{pw}"' for u, pw in self.users.items())
                props["listener.name.sasl_plaintext.plain.sasl.jaas.config"] = (
                    f"org.apache.kafka.common.security.plain.PlainLoginModule required {accounts};"
                )
            for m in self.sasl_mechanisms:
                if m.startswith("SCRAM-"):  # the credentials are written by StorageTool
                    props[f"listener.name.sasl_plaintext.{m.lower()}.sasl.jaas.config"] = (
                        "org.apache.kafka.common.security.scram.ScramLoginModule required;"
                    )
        if self.tls:
            assert self._dir is not None
            listeners.append(f"SSL://127.0.0.1:{self.ssl_port}")
            protocols.append("SSL:SSL")
            props["listener.name.ssl.ssl.keystore.type"] = "PEM"
            props["listener.name.ssl.ssl.keystore.location"] = str(self._dir / "keystore.pem")
        if self.authorizer:
            # Plaintext clients are User:ANONYMOUS, not super users: the broker talks to its
            # controller (and to itself) over OAUTHBEARER as User:broker.
            jaas = props["listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config"]
            protocols[1] = "CONTROLLER:SASL_PLAINTEXT"
            props.update(
                {
                    "authorizer.class.name": (
                        "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
                    ),
                    "super.users": "User:broker;User:admin",
                    "allow.everyone.if.no.acl.found": "false",
                    "inter.broker.listener.name": "SASL_PLAINTEXT",
                    "sasl.mechanism.inter.broker.protocol": "OAUTHBEARER",
                    "sasl.mechanism.controller.protocol": "OAUTHBEARER",
                    "listener.name.controller.sasl.enabled.mechanisms": "OAUTHBEARER",
                    "listener.name.controller.oauthbearer.sasl.jaas.config": jaas,
                }
            )
        props["listeners"] = ",".join([*listeners, f"CONTROLLER://127.0.0.1:{controller_port}"])
        props["advertised.listeners"] = ",".join(listeners)
        props["listener.security.protocol.map"] = ",".join(protocols)
        props.update(self.config)
        return "".join(f"{k}={v}\n" for k, v in props.items())

    def start(self, *, timeout: float = START_TIMEOUT_S) -> KafkaBroker:
        """Format the storage, start the broker, and wait until it serves Metadata.

        Raises :class:`KafkaUnavailable` (with the end of the broker's log) when it does not
        come up within ``timeout`` seconds. The ports are picked free just before the JVM
        binds them; if another process took one meanwhile, the start is tried once more.
        """
        try:
            return self._start(timeout)
        except KafkaUnavailable as exc:
            if "Address already in use" not in str(exc):
                raise
        return self._start(timeout)

    def _start(self, timeout: float) -> KafkaBroker:
        self._pick_ports()
        self._launch(timeout)
        self._wait_ready(self._started + timeout, timeout)
        return self

    def _pick_ports(self) -> None:
        self.port = _free_port()
        self.sasl_port = _free_port() if self.sasl_mechanisms else 0
        self.ssl_port = _free_port() if self.tls else 0
        self.controller_port = _free_port()

    def _launch(self, timeout: float) -> None:
        """Write the configuration, format the storage and start the JVM (no waiting)."""
        classpath = broker_classpath(self.version)
        self._started = time.monotonic()
        self._dir = Path(tempfile.mkdtemp(prefix="mockkafka-kafka-"))
        if self.tls:
            self._write_keystore(self._dir)
        props = self._dir / "server.properties"
        props.write_text(self._properties(self._dir / "data", self.controller_port))
        (self._dir / "log4j2.yaml").write_text(_LOG4J2)
        java = ["java", "-Xms128m", "-Xmx768m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"]
        java += [f"-Dlog4j2.configurationFile={self._dir / 'log4j2.yaml'}", "-cp", classpath]
        fmt = [*java, "kafka.tools.StorageTool", "format", f"--cluster-id={self.cluster_id}"]
        fmt += ["-c", str(props)]
        for m in self.sasl_mechanisms:
            if m.startswith("SCRAM-"):
                for user, password in self.users.items():
                    fmt += ["--add-scram", f"{m}=[name={user},password={password}]"]
        try:
            proc = subprocess.run(fmt, capture_output=True, text=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            self.stop()
            raise KafkaUnavailable(
                f"kafka StorageTool format timed out after {timeout} s"
            ) from None
        if proc.returncode:
            self.stop()
            out = (proc.stdout + proc.stderr)[-2000:]
            raise KafkaUnavailable(
                f"kafka StorageTool format failed (exit {proc.returncode}): {out}"
            )
        log = (self._dir / "broker.log").open("wb")
        self._proc = subprocess.Popen(
            [*java, "kafka.Kafka", str(props)], stdout=log, stderr=subprocess.STDOUT
        )
        log.close()

    def _wait_ready(self, deadline: float, timeout: float) -> None:
        """Wait until the broker answers Metadata naming itself (or raise, stopping it)."""
        assert self._proc is not None
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                break
            if self._serves_metadata():
                self.start_seconds = time.monotonic() - self._started
                return
            time.sleep(0.1)
        tail = self.log()[-3000:]
        self.stop()
        raise KafkaUnavailable(
            f"Kafka {self.version} node {self.node_id} did not start within {timeout} s:\n{tail}"
        )

    def _write_keystore(self, where: Path) -> None:
        """A throwaway CA (trustme) and a certificate for 127.0.0.1/localhost, written as
        the PEM keystore Kafka reads (``ssl.keystore.type=PEM``: PKCS#8 key + chain)."""
        try:
            import trustme
        except ImportError as exc:
            raise KafkaUnavailable(
                "tls=True needs the trustme package (pip install trustme)"
            ) from exc
        from mockkafka.server.tls import _pkcs8_keystore

        ca = trustme.CA(organization_name="mockkafka kafka_broker CA")
        cert = ca.issue_cert("127.0.0.1", "localhost")
        (where / "keystore.pem").write_bytes(_pkcs8_keystore(cert))
        self.ca_file = where / "ca.pem"
        ca.cert_pem.write_to_path(str(self.ca_file))

    def _serves_metadata(self) -> bool:
        try:
            return bool(self.request("Metadata", 12, {"topics": []}, timeout=2.0)["brokers"])
        except OSError:
            return False

    def request(
        self, api: str, version: int, body: dict[str, Any], *, timeout: float = 30.0
    ) -> dict[str, Any]:
        """Send one request on a fresh plaintext connection and return the decoded answer
        (raises OSError when the broker closes the connection instead)."""
        return request_to("127.0.0.1", self.port, api, version, body, timeout=timeout)

    def log(self) -> str:
        """What the broker wrote to stdout/stderr so far (WARN and above)."""
        if self._dir is None or not (self._dir / "broker.log").is_file():
            return ""
        return (self._dir / "broker.log").read_text(errors="replace")

    @property
    def pid(self) -> int | None:
        return None if self._proc is None else self._proc.pid

    def stop(self) -> None:
        """Kill the broker and remove its directory (idempotent)."""
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.kill()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self._proc.wait(10)
            self._proc = None
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None
            self.ca_file = None


#: Broker configs of a :class:`KafkaCluster` laid over :data:`MOCKKAFKA_LIKE_CONFIG`: internal
#: topics replicated to every node, fewer of their partitions (three JVMs start them).
CLUSTER_CONFIG: dict[str, str] = {
    "offsets.topic.num.partitions": "10",
    "transaction.state.log.num.partitions": "10",
    "min.insync.replicas": "1",
}


class KafkaCluster:
    """``brokers`` Apache Kafka KRaft nodes, each broker and controller, on 127.0.0.1.

    ``with KafkaCluster(3) as kafka: ... kafka.bootstrap_servers``. Every node is a
    :class:`KafkaBroker` (``kafka.nodes``, node ids 1..n) formatted with one cluster id and
    one static controller quorum; all are launched before any is waited for (a quorum
    needs a majority up), and :meth:`start` returns once every node answers Metadata listing
    all of them, or raises :class:`KafkaUnavailable` (stopping every node) after
    ``timeout``. Internal topics are replicated to every node (``CLUSTER_CONFIG``);
    ``default.replication.factor`` is the node count. Each JVM takes ~300 MB: keep such
    tests behind a marker.
    """

    def __init__(
        self,
        brokers: int = 3,
        version: str = DEFAULT_VERSION,
        *,
        config: Mapping[str, str] | None = None,
    ) -> None:
        if not 1 <= brokers <= 9:
            raise ValueError(f"brokers: {brokers} is not between 1 and 9")
        n = str(brokers)
        replicated = {
            "offsets.topic.replication.factor": n,
            "transaction.state.log.replication.factor": n,
            "share.coordinator.state.topic.replication.factor": n,
            "default.replication.factor": n,
        }
        merged = {**CLUSTER_CONFIG, **replicated, **(config or {})}
        cluster_id = _kafka_uuid()
        self.version = version
        self.nodes = [
            KafkaBroker(version, config=merged, cluster_id=cluster_id, node_id=i + 1)
            for i in range(brokers)
        ]
        self.start_seconds = 0.0

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(node.bootstrap_servers for node in self.nodes)

    def node(self, node_id: int) -> KafkaBroker:
        """The node with ``node_id`` (1..n)."""
        return self.nodes[node_id - 1]

    def __enter__(self) -> KafkaCluster:
        return self.start()

    def __exit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def start(self, *, timeout: float = 2 * START_TIMEOUT_S) -> KafkaCluster:
        """Launch every node, then wait until each serves Metadata naming all of them."""
        started = time.monotonic()
        deadline = started + timeout
        try:
            for node in self.nodes:
                node._pick_ports()
            voters = ",".join(f"{n.node_id}@127.0.0.1:{n.controller_port}" for n in self.nodes)
            for node in self.nodes:
                node.voters = voters
                node._launch(timeout)
            for node in self.nodes:
                node._wait_ready(deadline, timeout)
            while time.monotonic() < deadline:
                if all(len(self._brokers_seen(n)) == len(self.nodes) for n in self.nodes):
                    self.start_seconds = time.monotonic() - started
                    return self
                time.sleep(0.2)
        except BaseException:
            self.stop()
            raise
        logs = "\n".join(f"node {n.node_id}: {n.log()[-1500:]}" for n in self.nodes)
        self.stop()
        raise KafkaUnavailable(
            f"{len(self.nodes)} Kafka nodes did not all see each other within {timeout} s:\n{logs}"
        )

    @staticmethod
    def _brokers_seen(node: KafkaBroker) -> list[Any]:
        try:
            brokers: list[Any] = node.request("Metadata", 12, {"topics": []}, timeout=2.0)[
                "brokers"
            ]
            return brokers
        except OSError:
            return []

    def stop(self) -> None:
        """Kill every node and remove its directory (idempotent)."""
        for node in self.nodes:
            node.stop()


def request_to(
    host: str, port: int, api: str, version: int, body: dict[str, Any], *, timeout: float = 30.0
) -> dict[str, Any]:
    """One request to a Kafka broker at ``host:port`` on a fresh plaintext connection; the
    decoded answer (OSError when the broker closes the connection instead)."""
    from mockkafka.protocol.framing import NEED_DATA, ClientConnection, Response

    with socket.create_connection((host, port), timeout=timeout) as sock:
        conn = ClientConnection(client_id="mockkafka-kafka-broker")
        sock.sendall(conn.send_request(api, version, body))
        while True:
            ev = conn.next_event()
            if isinstance(ev, Response):
                answer: dict[str, Any] = ev.body
                return answer
            assert ev is NEED_DATA
            data = sock.recv(1 << 20)
            if not data:
                raise ConnectionError(f"Kafka closed the connection on {api} v{version}")
            conn.receive_data(data)


def _kafka_uuid() -> str:
    """A random cluster id the way Kafka writes one (URL-safe base64 of 16 bytes)."""
    import base64

    while True:  # one starting with "-" reads as an option to a command line tool
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


if __name__ == "__main__":  # python -m mockkafka.kafka_broker [VERSION...]: fetch the jars
    import sys

    for v in sys.argv[1:] or [DEFAULT_VERSION]:
        print(f"kafka {v}: {len(broker_classpath(v).split(os.pathsep))} jars")

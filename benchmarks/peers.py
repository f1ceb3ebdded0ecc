"""The other fakes and the real broker that ``compare.py`` measures beside mockkafka.

* :class:`KfakeProcess`: franz-go's kfake (Go), built from the Go module proxy
  (``github.com/twmb/franz-go/pkg/kfake``, pinned in ``benchmarks/kfake/go.mod``) by
  ``go build`` with ``GOFLAGS=-mod=mod``, as the Go interop tier builds its clients, into
  ``.cache/bench/``; a small main (``benchmarks/kfake/main.go``) starts it on 127.0.0.1 and
  prints ``bootstrap.servers=``. The franz-go pipeline program of ``bench_pipeline.py``
  (``benchmarks/pipeline/main.go``, franz-go's kgo client) is built the same way.
* :class:`KafkaBroker`: Apache Kafka itself (``org.apache.kafka:kafka_2.13``, resolved by mvn
  from Maven Central into ``~/.m2`` through ``benchmarks/kafka/pom.xml``, log4j2 as the slf4j
  binding): one KRaft process as broker and controller on 127.0.0.1, its storage formatted
  with ``kafka.tools.StorageTool`` in a temporary directory. The oracle tier of the tests
  needs the same broker; this starter is self-contained so the benchmark does not depend on
  the test suite.

Each ``*_problem()`` function returns why the peer cannot run here ("" when it can), so the
table says why a column is empty instead of failing. With ``MOCKKAFKA_BUILD_OFFLINE=1`` (as
``.ci/run`` sets after its bounded downloads) nothing is downloaded. Every subprocess has a
timeout, every wait a deadline; only 127.0.0.1 is used.
"""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CACHE = ROOT / ".cache" / "bench"
KFAKE_SRC = HERE / "kfake"
PIPELINE_SRC = HERE / "pipeline"
KAFKA_SRC = HERE / "kafka"
BUILD_TIMEOUT_S = 300.0
READY_TIMEOUT_S = 90.0
OFFLINE = os.environ.get("MOCKKAFKA_BUILD_OFFLINE") == "1"


def _run(cmd: list[str], cwd: Path, what: str, env: dict[str, str] | None = None) -> str:
    """Run a build step; '' or why it failed."""
    try:
        proc = subprocess.run(
            cmd,
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT_S,
            env={**os.environ, **(env or {})},
            check=False,
        )
    except subprocess.TimeoutExpired:
        return f"{what} timed out after {BUILD_TIMEOUT_S:.0f} s"
    except OSError as exc:
        return f"{what}: {exc}"
    if proc.returncode:
        tail = " | ".join((proc.stdout + proc.stderr).strip().splitlines()[-3:])
        return f"{what} exited {proc.returncode}: {tail}"
    return ""


def _digest(paths: list[Path]) -> str:
    h = hashlib.sha256()
    for p in sorted(paths):
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:12]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(20)


# -- kfake ------------------------------------------------------------------------------------

_kfake: Path | str | None = None


def kfake_binary() -> Path | str:
    """The built kfake starter, or why it cannot be built (cached per source digest)."""
    global _kfake
    if _kfake is None:
        _kfake = _go_build(KFAKE_SRC, "kfake")
    return _kfake


def kfake_problem() -> str:
    found = kfake_binary()
    return found if isinstance(found, str) else ""


_pipeline: Path | str | None = None


def pipeline_binary() -> Path | str:
    """The franz-go pipeline program (``benchmarks/pipeline``), or why it cannot be built."""
    global _pipeline
    if _pipeline is None:
        _pipeline = _go_build(PIPELINE_SRC, "bench-pipeline")
    return _pipeline


def pipeline_problem() -> str:
    found = pipeline_binary()
    return found if isinstance(found, str) else ""


def _go_build(src: Path, name: str) -> Path | str:
    """Build the Go main package in ``src`` into ``.cache/bench/NAME-DIGEST`` (cached per
    source digest, the Go module proxy unless offline); the binary, or why not."""
    if shutil.which("go") is None:
        return f"`go` is not installed (Go 1.26 or newer, see {src.name}/go.mod)"
    sources = [src / "main.go", src / "go.mod", src / "go.sum"]
    binary = CACHE / f"{name}-{_digest(sources)}"
    if not binary.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        env = {"GOFLAGS": "-mod=mod"}
        if OFFLINE:
            env["GOPROXY"] = "off"
        tmp = binary.with_suffix(".tmp")
        problem = _run(["go", "build", "-o", str(tmp), "."], src, f"go build ({name})", env)
        if problem:
            return problem
        tmp.replace(binary)
    return binary


class KfakeProcess:
    """kfake with ``brokers`` brokers and ``topics`` (name -> partitions) in a child process."""

    def __init__(self, brokers: int, topics: dict[str, int]) -> None:
        binary = kfake_binary()
        if isinstance(binary, str):
            raise RuntimeError(binary)
        args = [str(binary), "-brokers", str(brokers)]
        for name, n in topics.items():
            args += ["-topic", f"{name}:{n}"]
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        if not line.startswith("bootstrap.servers="):
            self.close()
            raise RuntimeError(f"kfake did not start: {line!r}")
        self.bootstrap_servers = line.split("=", 1)[1]

    def close(self) -> None:
        _stop(self.proc)


# -- Apache Kafka -----------------------------------------------------------------------------

_classpath: str | None = None
_classpath_problem = ""


def kafka_classpath() -> str | None:
    """The broker's classpath (mvn, offline first), or None (see :func:`kafka_problem`)."""
    global _classpath, _classpath_problem
    if _classpath is not None or _classpath_problem:
        return _classpath
    for tool in ("java", "mvn"):
        if shutil.which(tool) is None:
            _classpath_problem = f"`{tool}` is not installed (apt-get install openjdk-17-jdk maven)"
            return None
    CACHE.mkdir(parents=True, exist_ok=True)
    out = CACHE / f"kafka-classpath-{_digest([KAFKA_SRC / 'pom.xml'])}.txt"
    if not out.exists():
        step = ["dependency:build-classpath", f"-Dmdep.outputFile={out}"]
        problem = _run(["mvn", "-B", "-q", "-o", *step], KAFKA_SRC, "mvn (offline)")
        if problem and not OFFLINE:
            problem = _run(["mvn", "-B", "-q", *step], KAFKA_SRC, "mvn")
        if problem:
            _classpath_problem = f"the Kafka broker's jars cannot be resolved: {problem}"
            return None
    _classpath = out.read_text().strip()
    return _classpath


def kafka_problem() -> str:
    return "" if kafka_classpath() is not None else _classpath_problem


LOG4J2 = """<?xml version="1.0" encoding="UTF-8"?>
<Configuration status="WARN">
  <Appenders><Console name="err" target="SYSTEM_ERR">
    <PatternLayout pattern="%d %p %c{1}: %m%n"/></Console></Appenders>
  <Loggers><Root level="WARN"><AppenderRef ref="err"/></Root></Loggers>
</Configuration>
"""


class KafkaBroker:
    """One Apache Kafka process (KRaft, broker and controller) on 127.0.0.1 with ``topics``
    (name -> partitions, replication factor 1). ``ready_ms``: spawn of the broker's JVM to
    its first Metadata answer that lists it (storage formatting not included)."""

    def __init__(self, topics: dict[str, int]) -> None:
        classpath = kafka_classpath()
        if classpath is None:
            raise RuntimeError(_classpath_problem)
        self._dir = tempfile.TemporaryDirectory(prefix="bench-kafka-")
        d = Path(self._dir.name)
        port, controller = _free_port(), _free_port()
        props = d / "server.properties"
        props.write_text(
            "\n".join(
                [
                    "process.roles=broker,controller",
                    "node.id=1",
                    f"controller.quorum.voters=1@127.0.0.1:{controller}",
                    f"listeners=PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller}",
                    f"advertised.listeners=PLAINTEXT://127.0.0.1:{port}",
                    "controller.listener.names=CONTROLLER",
                    "inter.broker.listener.name=PLAINTEXT",
                    "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
                    f"log.dirs={d / 'data'}",
                    "num.partitions=1",
                    "offsets.topic.replication.factor=1",
                    "offsets.topic.num.partitions=1",
                    "transaction.state.log.replication.factor=1",
                    "transaction.state.log.min.isr=1",
                    "transaction.state.log.num.partitions=1",
                    "share.coordinator.state.topic.replication.factor=1",
                    "share.coordinator.state.topic.min.isr=1",
                    "group.initial.rebalance.delay.ms=0",
                    "",
                ]
            )
        )
        (d / "log4j2.xml").write_text(LOG4J2)
        java = [
            "java",
            "-Xms256m",
            "-Xmx1g",
            "-XX:+UseG1GC",
            f"-Dlog4j2.configurationFile={d / 'log4j2.xml'}",
            "-cp",
            classpath,
        ]
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        problem = _run(
            # "--cluster-id=": one id in 64 starts with "-", which "-t ID" reads as an option
            [
                *java,
                "kafka.tools.StorageTool",
                "format",
                f"--cluster-id={cluster_id}",
                "-c",
                str(props),
            ],
            d,
            "kafka.tools.StorageTool format",
        )
        if problem:
            self._dir.cleanup()
            raise RuntimeError(problem)
        self._log = open(d / "broker.log", "w")  # noqa: SIM115 - closed in close()
        started = time.perf_counter()
        self.proc = subprocess.Popen(
            [*java, "kafka.Kafka", str(props)],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=d,
        )
        self.bootstrap_servers = f"127.0.0.1:{port}"
        try:
            self._wait_ready()
            self.ready_ms = (time.perf_counter() - started) * 1000
            self._create_topics(topics)
        except BaseException:
            self.close()
            raise

    def _wait_ready(self) -> None:
        from mockkafka.protocol.framing import NEED_DATA, ClientConnection

        host, port = self.bootstrap_servers.rsplit(":", 1)
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"the Kafka broker exited {self.proc.returncode}: {self._tail()}"
                )
            try:
                with socket.create_connection((host, int(port)), timeout=5) as sock:
                    conn = ClientConnection(client_id="bench-ready")
                    sock.sendall(conn.send_request("Metadata", 12, {"topics": []}))
                    for _ in range(1000):
                        ev = conn.next_event()
                        if ev is not NEED_DATA:
                            if ev.body["brokers"]:
                                return
                            break
                        data = sock.recv(65536)
                        if not data:
                            break
                        conn.receive_data(data)
            except OSError:
                pass
            time.sleep(0.005)
        raise RuntimeError(f"the Kafka broker was not ready in {READY_TIMEOUT_S:.0f} s")

    def _create_topics(self, topics: dict[str, int]) -> None:
        if not topics:
            return
        from confluent_kafka.admin import AdminClient, NewTopic

        admin = AdminClient({"bootstrap.servers": self.bootstrap_servers, "log_level": 3})
        futures = admin.create_topics(
            [NewTopic(name, n, 1) for name, n in topics.items()], operation_timeout=30
        )
        for name, future in futures.items():
            try:
                future.result(60)
            except Exception as exc:
                raise RuntimeError(f"creating topic {name} on Kafka: {exc}") from None
        # Leaders are elected by the time CreateTopics answers on one KRaft node, but a
        # client's first Metadata can still miss them: wait until every partition has one.
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            md = admin.list_topics(timeout=10)
            if all(
                name in md.topics
                and len(md.topics[name].partitions) == n
                and all(p.leader >= 0 for p in md.topics[name].partitions.values())
                for name, n in topics.items()
            ):
                return
            time.sleep(0.05)
        raise RuntimeError("Kafka's topics had no leaders after 30 s")

    def _tail(self) -> str:
        try:
            lines = (Path(self._dir.name) / "broker.log").read_text().strip().splitlines()
        except OSError:
            return ""
        return " | ".join(lines[-3:])

    def close(self) -> None:
        _stop(self.proc)
        self._log.close()
        self._dir.cleanup()

"""Test PySpark pipelines that use Spark's own Kafka connector against a mockkafka cluster.

Install with ``pip install '.[spark]'`` in the clone; you also need Java (17 or 21) and Maven (``mvn``)
once, to fetch the connector ``org.apache.spark:spark-sql-kafka-0-10_<scala>:<spark version>``
and its dependencies into ``~/.m2``. After that first run everything works offline.

Theory of operation: :func:`connector_jars` writes a one-dependency POM naming the connector at
the version of the installed pyspark (and the Scala version its jars were built for), asks
``mvn dependency:build-classpath`` for the runtime classpath (``-o`` first, so a warm
``~/.m2`` needs no network), drops the jars pyspark already ships, and caches the list under
``~/.cache/mockkafka/spark/``. :func:`local_spark_session` hands those jars to a ``local[2]``
SparkSession tuned for tests (two shuffle partitions, no UI, everything on 127.0.0.1).

The connector exists on Maven Central for the 3.2 to 3.5 lines (Scala 2.12 and 2.13), 4.0,
4.1 and 4.2.0. Where a pyspark patch release has no connector for its Scala version (pyspark
3.5.8 and 3.5.9 bundle Scala 2.12, whose connector stops at 3.5.7; 4.2.1 has none), the
newest earlier connector of the same ``major.minor`` line is used. pyspark 4.3.0 has no
connector of its line yet, so :class:`SparkUnavailable` says to install ``pyspark==4.2.1``.

The pytest plugin builds its ``spark`` and ``spark_kafka`` fixtures on this module; it imports
it only when a test asks for them.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mockkafka._maven import run_mvn
from mockkafka.errors import MockKafkaError

if TYPE_CHECKING:  # pragma: no cover - typing only
    from pyspark.sql import SparkSession

    from mockkafka._api.cluster import Cluster

__all__ = [
    "KNOWN_GOOD_VERSIONS",
    "SparkKafka",
    "SparkUnavailable",
    "connector_coordinates",
    "connector_jars",
    "local_spark_session",
    "spark_unavailable_reason",
]

#: pyspark versions whose Kafka connector was fetched and tested here (others may work too).
KNOWN_GOOD_VERSIONS = ("3.5.9", "4.0.5", "4.1.1", "4.2.0", "4.2.1")
#: pyspark versions released without a connector on Maven Central.
NO_CONNECTOR_VERSIONS = ("4.3.0",)
SUGGESTED_VERSION = "4.2.1"

MVN_TIMEOUT_S = 600.0

_POM = """<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>dev.mockkafka</groupId>
  <artifactId>spark-kafka-classpath</artifactId>
  <version>0</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>{group}</groupId>
      <artifactId>{artifact}</artifactId>
      <version>{version}</version>
    </dependency>
  </dependencies>
  <build><plugins><plugin>
    <groupId>org.apache.maven.plugins</groupId>
    <artifactId>maven-dependency-plugin</artifactId>
    <version>3.8.1</version>
  </plugin></plugins></build>
</project>
"""


class SparkUnavailable(MockKafkaError):
    """pyspark, Java, Maven or the Kafka connector cannot be had; the message says which.

    The pytest fixtures turn it into a skip with this message as the reason.
    """


def _pyspark() -> tuple[str, Path]:
    """(pyspark version, its ``jars`` directory); SparkUnavailable when not installed."""
    try:
        import pyspark
    except ImportError:
        raise SparkUnavailable(
            "pyspark is not installed: pip install pyspark (the [spark] extra: pip install '.[spark]' in a clone) "
            f"(pyspark {SUGGESTED_VERSION} is the newest that has a Kafka connector on Maven Central)"
        ) from None
    jars = Path(pyspark.__file__).parent / "jars"
    return pyspark.__version__, jars


def _scala_binary_version(jars: Path) -> str:
    for jar in jars.glob("scala-library-*.jar"):
        m = re.match(r"scala-library-(\d+\.\d+)\.", jar.name)
        if m:
            return m.group(1)
    return "2.13"


def connector_coordinates() -> str:
    """``group:artifact:version`` of the Kafka connector matching the installed pyspark."""
    version, jars = _pyspark()
    scala = _scala_binary_version(jars)
    return f"org.apache.spark:spark-sql-kafka-0-10_{scala}:{version}"


def _check_java() -> None:
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        raise SparkUnavailable(
            "Java is not installed (no `java` on PATH, no JAVA_HOME): Spark needs Java 17 or "
            "21, e.g. apt-get install openjdk-17-jre-headless"
        )


def _cache_dir() -> Path:
    """``$MOCKKAFKA_CACHE_DIR``, else ``$XDG_CACHE_HOME/mockkafka/spark`` (``~/.cache``)."""
    if os.environ.get("MOCKKAFKA_CACHE_DIR"):
        return Path(os.environ["MOCKKAFKA_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mockkafka" / "spark"


def connector_jars(*, timeout: float = MVN_TIMEOUT_S) -> list[str]:
    """Paths of the jars to add to pyspark for ``format("kafka")``; cached after the first call.

    Raises :class:`SparkUnavailable` naming what is missing: pyspark, ``mvn``, or the connector
    at this pyspark version on Maven Central (with the versions that have one).
    """
    coords = connector_coordinates()
    _, pyspark_jars = _pyspark()
    shipped = {_artifact_name(j.name) for j in pyspark_jars.glob("*.jar")}
    group, artifact, version = coords.split(":")
    key = hashlib.sha256(f"{coords}|{pyspark_jars}".encode()).hexdigest()[:12]
    work = _cache_dir() / f"{artifact}-{version}-{key}"
    cached = work / "jars.txt"
    if cached.is_file():
        jars = cached.read_text().split()
        if jars and all(Path(j).is_file() for j in jars):
            return jars
    if shutil.which("mvn") is None:
        raise SparkUnavailable(
            f"Maven (`mvn`) is not installed: it fetches {coords} into ~/.m2 once "
            "(apt-get install maven)"
        )
    work.mkdir(parents=True, exist_ok=True)
    out = work / "classpath.txt"
    problem = _resolve(work, out, group, artifact, version, timeout=timeout)
    # PyPI has pyspark patch releases whose connector is missing for their Scala version
    # (pyspark 3.5.8 and 3.5.9 bundle Scala 2.12, whose connector stops at 3.5.7); an
    # earlier connector of the same major.minor line works with them: newest first.
    for earlier in _earlier_patches(version) if problem else ():
        if not _resolve(work, out, group, artifact, earlier, timeout=timeout):
            problem = ""
            break
    if problem:
        hint = ""
        if version in NO_CONNECTOR_VERSIONS or "Missing" in problem or "Could not" in problem:
            hint = (
                f"; pyspark {version} has no Kafka connector on Maven Central: install "
                f"pyspark=={SUGGESTED_VERSION} (known to work: {', '.join(KNOWN_GOOD_VERSIONS)};"
                " the connector exists for the 3.2 to 4.2 lines)"
            )
        raise SparkUnavailable(f"cannot resolve {coords} with mvn{hint}:\n{problem}")
    jars = [
        j
        for j in out.read_text().strip().split(os.pathsep)
        if j and _artifact_name(Path(j).name) not in shipped
    ]
    cached.write_text("\n".join(jars) + "\n")
    return jars


def _resolve(
    work: Path, out: Path, group: str, artifact: str, version: str, *, timeout: float
) -> str:
    """Resolve ``group:artifact:version`` (a version or a Maven range) into ``out``, from
    ``~/.m2`` first and then (unless ``MOCKKAFKA_BUILD_OFFLINE=1``) from Maven Central;
    returns '' or mvn's complaint."""
    (work / "pom.xml").write_text(_POM.format(group=group, artifact=artifact, version=version))
    problem = run_mvn(work, out, offline=True, timeout=timeout)
    if problem and os.environ.get("MOCKKAFKA_BUILD_OFFLINE") != "1":
        problem = run_mvn(work, out, offline=False, timeout=timeout)
    return problem


def _earlier_patches(version: str) -> list[str]:
    """``3.5.2`` -> ``["3.5.1", "3.5.0"]``: the same line's earlier patch releases."""
    m = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)", version)
    if m is None:
        return []
    major, minor, patch = m.groups()
    return [f"{major}.{minor}.{p}" for p in range(int(patch) - 1, -1, -1)]


def _artifact_name(jar_name: str) -> str:
    """``kafka-clients-3.9.2.jar`` -> ``kafka-clients`` (the name without its version)."""
    m = re.match(r"(.+?)-\d+\.\d[^-]*(-[^.]*)?\.jar$", jar_name)
    return m.group(1) if m else jar_name


def spark_unavailable_reason() -> str:
    """'' when a Kafka-enabled SparkSession can be built here, else why not (for a skip)."""
    try:
        _pyspark()
        _check_java()
        connector_jars()
    except SparkUnavailable as exc:
        return str(exc)
    return ""


#: Spark settings for fast, quiet, loopback-only tests.
TEST_CONF: Mapping[str, str] = {
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.adaptive.enabled": "false",
    "spark.sql.streaming.forceDeleteTempCheckpointLocation": "true",
    "spark.sql.streaming.stopTimeout": "30s",
    "spark.driver.memory": "1g",
    "spark.executor.heartbeatInterval": "2s",
}


#: Spark's loggers that print a JVM stack trace for every failed task, write and query. A
#: failure a test expects (``failOnDataLoss``, an aborted write) printed some 300 lines of
#: them; the failure still reaches the test as the query's ``exception()`` or the error an
#: action raises, with its cause.
QUIET_LOGGERS = (
    "org.apache.spark.executor.Executor",
    "org.apache.spark.scheduler.TaskSetManager",
    "org.apache.spark.sql.execution.datasources.v2",
    "org.apache.spark.sql.execution.streaming",
)


def quiet_task_failures(session: SparkSession) -> None:
    """Switch off :data:`QUIET_LOGGERS` (log4j 2, Spark 3.3+); a no-op where that fails."""
    try:
        jvm: Any = session.sparkContext._jvm
        log4j = jvm.org.apache.logging.log4j
        for name in QUIET_LOGGERS:
            log4j.core.config.Configurator.setLevel(name, log4j.Level.OFF)
    except Exception:  # another logging backend (py4j error): keep Spark's output
        return


def local_spark_session(
    *,
    app_name: str = "mockkafka-tests",
    conf: Mapping[str, str] | None = None,
    quiet: bool = True,
) -> SparkSession:
    """A ``local[2]`` SparkSession with the Kafka connector on its classpath, tuned for tests.

    ``conf`` adds or overrides Spark settings. ``quiet`` (the default) keeps the JVM stack
    traces of failed tasks and queries out of the test output (:func:`quiet_task_failures`):
    a failure reaches the test as the query's ``exception()`` or an action's error anyway;
    ``quiet=False`` shows them. Raises :class:`SparkUnavailable` when pyspark, Java or the
    connector is missing. Stop it with ``session.stop()`` when done; the ``spark`` fixture
    shares one per test session.
    """
    _pyspark()
    _check_java()
    jars = connector_jars()
    from pyspark.sql import SparkSession

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = SparkSession.builder.master("local[2]").appName(app_name)
    settings = {**TEST_CONF, "spark.jars": ",".join(jars), **(conf or {})}
    for key, value in settings.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    if quiet:
        quiet_task_failures(session)
    return session


#: Kafka client settings for Spark's consumers and producers that make a test react in seconds
#: (metadata refreshed every second, short backoffs and timeouts).
CLIENT_OPTIONS: Mapping[str, str] = {
    "kafka.metadata.max.age.ms": "1000",
    "kafka.retry.backoff.ms": "50",
    "kafka.reconnect.backoff.ms": "50",
    "kafka.reconnect.backoff.max.ms": "500",
    "kafka.request.timeout.ms": "10000",
    "kafka.default.api.timeout.ms": "20000",
}


@dataclass
class SparkKafka:
    """Points Spark's ``format("kafka")`` sources and sinks at a mockkafka cluster.

    ``spark_kafka.topic("orders", partitions=3)`` creates a topic; ``spark_kafka.read_options
    ("orders")`` and ``spark_kafka.write_options()`` give ``.options(**...)`` for
    ``readStream``/``read`` and ``writeStream``/``write``, with the cluster's
    ``kafka.bootstrap.servers`` and client settings that react within seconds.
    """

    cluster: Cluster
    client_options: Mapping[str, str] = field(default_factory=lambda: dict(CLIENT_OPTIONS))

    @property
    def bootstrap_servers(self) -> str:
        """The cluster's ``bootstrap.servers``, for the ``kafka.bootstrap.servers`` option."""
        return self.cluster.bootstrap_servers

    def topic(self, topic: str, *, partitions: int = 1, replication_factor: int = 1) -> str:
        """Create ``topic`` with ``partitions`` partitions; returns its name for chaining."""
        self.cluster.create_topic(
            topic, partitions=partitions, replication_factor=replication_factor
        )
        return topic

    def topics(self, partitions: Mapping[str, int]) -> list[str]:
        """Create several topics, ``{name: partition count}``; returns their names."""
        return [self.topic(name, partitions=n) for name, n in partitions.items()]

    def read_options(self, topics: str | Iterable[str], **options: str) -> dict[str, str]:
        """Options for ``spark.read``/``readStream.format("kafka")`` subscribed to ``topics``.

        Extra options (``startingOffsets="earliest"``, ``failOnDataLoss="false"`` ...) are
        passed through as given.
        """
        names = [topics] if isinstance(topics, str) else list(topics)
        return {
            "kafka.bootstrap.servers": self.bootstrap_servers,
            "subscribe": ",".join(names),
            **self.client_options,
            **options,
        }

    def write_options(self, topic: str | None = None, **options: str) -> dict[str, str]:
        """Options for ``df.write``/``writeStream.format("kafka")`` (``topic`` optional when
        the DataFrame has a ``topic`` column)."""
        out = {"kafka.bootstrap.servers": self.bootstrap_servers, **self.client_options}
        if topic is not None:
            out["topic"] = topic
        return {**out, **options}

    def fetch_positions(self, topic: str | None = None) -> dict[tuple[str, int], int]:
        """``{(topic, partition): offset}``: how far Spark's consumers have fetched each
        partition, by topic name although Spark's Kafka client fetches by topic id (see
        :meth:`mockkafka.server.traffic.TrafficLog.fetch_positions`)."""
        return self.cluster.traffic.fetch_positions(topic)

    def options(self, **options: Any) -> dict[str, str]:
        """The bare connection options (bootstrap + client settings) plus ``options``."""
        return {
            "kafka.bootstrap.servers": self.bootstrap_servers,
            **self.client_options,
            **{k: str(v) for k, v in options.items()},
        }

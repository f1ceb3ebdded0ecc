"""KIP-1071 streams groups with a real Kafka Streams 4.4 application (``group.protocol=streams``).

``java/streams-src/StreamsInterop.java`` is a word count: lines in, ``groupBy(word).count()``
out, so the broker sees two subtopologies, a repartition topic and a changelog topic it has to
create itself. The tests check the output exactly (the last count per word equals the words
produced), that a second instance takes over half of the tasks, and that the application
rides out errors on StreamsGroupHeartbeat. Skips, saying what is missing, without Java, Maven
or the kafka-streams jars (``.ci/run`` resolves them).
"""

from __future__ import annotations

import collections
import json
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Producer

import mockkafka
from tests.interop._build import Program, build_java_streams
from tests.interop.conftest import unique

pytestmark = [pytest.mark.java, pytest.mark.interop, pytest.mark.timeout(180)]

WORDS = ("kafka", "streams", "group", "task", "topic", "broker", "offset", "epoch")
ALL_TASKS = {"0_0", "0_1", "1_0", "1_1"}  # two subtopologies over two partitions


@pytest.fixture(scope="session")
def java_streams() -> Program:
    return build_java_streams("4.4.0")


class StreamsApp:
    """One running instance of the word count (its own JVM, its own process id)."""

    def __init__(self, program: Program, cluster: mockkafka.Cluster, app_id: str) -> None:
        java, *rest = program.command
        self.log = tempfile.NamedTemporaryFile("w+", suffix=".log", delete=False)  # noqa: SIM115
        self.proc = subprocess.Popen(
            [
                java,
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                *rest,
                cluster.bootstrap_servers,
                app_id,
                "lines",
                "counts",
                "120",
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
        )

    def stop(self) -> dict[str, object]:
        """Close its standard input (it shuts down) and return its JSON report."""
        try:
            out, _ = self.proc.communicate(input="", timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, _ = self.proc.communicate()
        log = Path(self.log.name).read_text()[-4000:]
        lines = out.strip().splitlines()
        assert self.proc.returncode == 0 and lines, f"exit {self.proc.returncode}\n{log}"
        report: dict[str, object] = json.loads(lines[-1])
        return report

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()


@pytest.fixture
def apps(java_streams: Program) -> Iterator[list[StreamsApp]]:
    started: list[StreamsApp] = []
    yield started
    for app in started:
        app.kill()


def produce_lines(cluster: mockkafka.Cluster, n: int, seed: int) -> collections.Counter[str]:
    """``n`` lines of words onto ``lines`` (keyed, so both partitions get some); the counts."""
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers})
    counts: collections.Counter[str] = collections.Counter()
    for i in range(n):
        words = [WORDS[(seed + i * 7 + j * 3) % len(WORDS)] for j in range(1 + i % 4)]
        counts.update(words)
        producer.produce("lines", " ".join(words).encode(), key=f"line-{seed}-{i}".encode())
    assert producer.flush(15) == 0
    return counts


def latest_counts(cluster: mockkafka.Cluster) -> dict[str, int]:
    """The last count per word in ``counts`` (per key, the log order is the update order)."""
    if "counts" not in cluster.topics():
        return {}
    out: dict[str, int] = {}
    for r in cluster.topic("counts").records():
        assert r.key is not None and r.value is not None
        out[r.key.decode()] = int(r.value.decode())
    return out


def wait_for_counts(
    cluster: mockkafka.Cluster, expected: dict[str, int], timeout: float = 60.0
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if latest_counts(cluster) == expected:
            return
        time.sleep(0.2)
    assert latest_counts(cluster) == expected


def tasks_of(view: mockkafka.GroupView) -> dict[str, set[str]]:
    """member id -> its active tasks as Kafka Streams names them (``subtopology_partition``)."""
    return {
        m.member_id: {f"{sid}_{p}" for sid, ps in (m.assignment or {}).items() for p in ps}
        for m in view.members
    }


@pytest.fixture
def cluster() -> Iterator[mockkafka.Cluster]:
    """A one-broker cluster with the word count's input topic (two partitions)."""
    with mockkafka.Cluster() as c:
        c.create_topic("lines", partitions=2)
        yield c


def test_word_count_is_exact_and_the_broker_creates_the_internal_topics(
    java_streams: Program, apps: list[StreamsApp], cluster: mockkafka.Cluster
) -> None:
    app_id = unique("wc")
    expected = produce_lines(cluster, 60, seed=1)
    apps.append(StreamsApp(java_streams, cluster, app_id))
    wait_for_counts(cluster, dict(expected))
    report = apps[0].stop()
    view = cluster.group(app_id)
    assert view.type == "streams"
    assert report["was_running"] and report["tasks"] == " ".join(sorted(ALL_TASKS))
    # The changelog has one partition per task of its subtopology; both are internal
    # topics the coordinator made from the topology, with the configs it names.
    assert len(cluster.topic(f"{app_id}-counts-changelog").partitions) == 2
    assert len(cluster.topic(f"{app_id}-counts-repartition").partitions) == 2
    assert cluster.topic(f"{app_id}-counts-changelog").configs["cleanup.policy"] == "compact"
    assert all(
        x.response is not None and x.response["error_code"] == 0
        for x in cluster.traffic.requests("StreamsGroupHeartbeat")
    )


def test_a_second_instance_takes_over_half_of_the_tasks(
    java_streams: Program, apps: list[StreamsApp], cluster: mockkafka.Cluster
) -> None:
    app_id = unique("wc2")
    expected = produce_lines(cluster, 30, seed=2)
    apps.append(StreamsApp(java_streams, cluster, app_id))
    cluster.wait_for_group(app_id, members=1, timeout=60)
    wait_for_counts(cluster, dict(expected))
    apps.append(StreamsApp(java_streams, cluster, app_id))
    view = cluster.wait_for_group(
        app_id,
        members=2,
        where=lambda v: sorted(len(t) for t in tasks_of(v).values()) == [2, 2],
        timeout=60,
    )
    split = list(tasks_of(view).values())
    assert split[0] | split[1] == ALL_TASKS and not split[0] & split[1]
    expected += produce_lines(cluster, 30, seed=3)
    wait_for_counts(cluster, dict(expected))
    # Stopping one instance hands its tasks to the other: what each held is the broker's view
    # above, not their reports at shutdown.
    assert all(app.stop()["was_running"] for app in apps)


def test_the_application_rides_out_errors_on_its_heartbeats(
    java_streams: Program, apps: list[StreamsApp], cluster: mockkafka.Cluster
) -> None:
    app_id = unique("wcf")
    rule = (
        cluster.faults.on("StreamsGroupHeartbeat", group=app_id)
        .times(2)
        .error("COORDINATOR_NOT_AVAILABLE")
    )
    expected = produce_lines(cluster, 20, seed=4)
    apps.append(StreamsApp(java_streams, cluster, app_id))
    wait_for_counts(cluster, dict(expected))
    report = apps[0].stop()
    assert report["was_running"]
    assert rule.fired == 2
    assert (
        len(
            cluster.traffic.requests(
                "StreamsGroupHeartbeat", with_error="COORDINATOR_NOT_AVAILABLE"
            )
        )
        == 2
    )

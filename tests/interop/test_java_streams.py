"""Kafka Streams 4.4 with its own rebalance protocol (``group.protocol=streams``, KIP-1071)
against mockkafka: a word count whose output is checked exactly, a second instance that takes
over half the tasks, and an error on the streams group heartbeat that the application rides
out.

``java/streams/src/WordCount.java`` (compiled once against kafka-streams 4.4.0) runs until
the test creates its stop file; the test produces the input, reads the output topic from the
cluster and checks the latest count per word. Skips, saying what is missing, without Java,
Maven or the kafka-streams jars.
"""

from __future__ import annotations

import struct
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

import mockkafka
from tests.interop._build import Program, build_java_streams
from tests.interop.conftest import unique

pytestmark = [pytest.mark.java, pytest.mark.interop]

KAFKA_STREAMS_VERSION = "4.4.0"
LINES = [
    "the quick brown fox",
    "jumps over the lazy dog",
    "The dog barks",
    "a fox, a dog and THE end",
]


@pytest.fixture(scope="module")
def word_count() -> Program:
    return build_java_streams(KAFKA_STREAMS_VERSION)


class App:
    """One running WordCount instance (stopped by :meth:`stop`, killed at the latest at
    teardown)."""

    def __init__(
        self, program: Program, cluster: mockkafka.Cluster, names: dict[str, str], tmp: Path
    ):
        self.stop_file = tmp / "stop"
        state_dir = tmp / "state"
        state_dir.mkdir()
        self.proc = program.start(
            cluster.bootstrap_servers,
            names["input"],
            names["output"],
            names["app"],
            str(state_dir),
            str(self.stop_file),
        )

    def wait_running(self, timeout: float = 60) -> None:
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if line.strip() == "RUNNING":
                return
            if not line and self.proc.poll() is not None:
                break
        pytest.fail(f"WordCount never ran: {self.proc.stderr.read() if self.proc.stderr else ''}")

    def stop(self) -> str:
        self.stop_file.touch()
        try:
            out, err = self.proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, err = self.proc.communicate()
        assert self.proc.returncode == 0, err[-3000:]
        return out.strip().splitlines()[-1]


@pytest.fixture
def streams_setup(
    cluster: mockkafka.Cluster, tmp_path: Path
) -> Iterator[tuple[mockkafka.Cluster, dict[str, str], list[App]]]:
    names = {"input": unique("text"), "output": unique("counts"), "app": unique("wc")}
    cluster.create_topic(names["input"], partitions=4, replication_factor=3)
    cluster.create_topic(names["output"], partitions=4, replication_factor=3)
    apps: list[App] = []
    yield cluster, names, apps
    for app in apps:
        if app.proc.poll() is None:
            app.proc.kill()
            app.proc.communicate()


def _counts(cluster: mockkafka.Cluster, topic: str) -> dict[str, int]:
    """The latest count per word in the output topic (log order per partition)."""
    out: dict[str, int] = {}
    for r in cluster.topic(topic).records():
        if r.key is not None and r.value is not None:
            out[r.key.decode()] = struct.unpack(">q", r.value)[0]
    return out


def _expected(lines: list[str]) -> dict[str, int]:
    words = Counter()  # type: Counter[str]
    for line in lines:
        words.update(w for w in "".join(c if c.isalnum() else " " for c in line.lower()).split())
    return dict(words)


def _wait_counts(cluster: mockkafka.Cluster, topic: str, want: dict[str, int]) -> None:
    deadline = time.monotonic() + 60
    got: dict[str, int] = {}
    while time.monotonic() < deadline:
        got = _counts(cluster, topic)
        if got == want:
            return
        time.sleep(0.2)
    pytest.fail(f"word counts never matched: got {got}, want {want}")


def _produce(cluster: mockkafka.Cluster, topic: str, lines: list[str], start: int = 0) -> None:
    for i, line in enumerate(lines, start):
        cluster.produce(topic, line, key=f"line-{i}", partition=i % 4)


def test_a_word_count_runs_on_a_streams_group_and_rides_out_a_heartbeat_error(
    word_count: Program,
    streams_setup: tuple[mockkafka.Cluster, dict[str, str], list[App]],
    tmp_path: Path,
) -> None:
    cluster, names, apps = streams_setup
    rule = (
        cluster.faults.on("StreamsGroupHeartbeat", group=names["app"])
        .nth(3)
        .error("COORDINATOR_NOT_AVAILABLE")
    )
    app = App(word_count, cluster, names, tmp_path)
    apps.append(app)
    app.wait_running()
    _produce(cluster, names["input"], LINES)
    _wait_counts(cluster, names["output"], _expected(LINES))
    view = cluster.group(names["app"])
    assert view.type == "streams" and len(view.members) == 1
    # the coordinator created the repartition and changelog topics, with 4 partitions each
    internal = [t for t in cluster.topics() if t.startswith(names["app"] + "-")]
    assert sorted(t.rsplit("-", 1)[1] for t in internal) == ["changelog", "repartition"]
    assert all(len(cluster.topic(t).partitions) == 4 for t in internal)
    assert cluster.committed_offsets(names["app"])  # progress is committed
    assert {e.version for e in cluster.traffic.requests("StreamsGroupHeartbeat")} == {1}
    assert rule.fired == 1
    assert '"final_state":"RUNNING"' in app.stop()


def test_a_second_instance_takes_over_half_the_tasks(
    word_count: Program,
    streams_setup: tuple[mockkafka.Cluster, dict[str, str], list[App]],
    tmp_path: Path,
) -> None:
    cluster, names, apps = streams_setup
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = App(word_count, cluster, names, tmp_path / "a")
    apps.append(first)
    first.wait_running()
    _produce(cluster, names["input"], LINES[:2])
    _wait_counts(cluster, names["output"], _expected(LINES[:2]))
    second = App(word_count, cluster, names, tmp_path / "b")
    apps.append(second)
    view = cluster.wait_for_group(
        names["app"],
        state=None,
        where=lambda v: (
            len(v.members) == 2
            and all(sum(len(ps) for ps in (m.assignment or {}).values()) == 4 for m in v.members)
        ),
        timeout=60,
    )
    tasks = [{(s, p) for s, ps in (m.assignment or {}).items() for p in ps} for m in view.members]
    assert not tasks[0] & tasks[1] and len(tasks[0] | tasks[1]) == 8  # 2 subtopologies x 4
    _produce(cluster, names["input"], LINES[2:], start=2)
    _wait_counts(cluster, names["output"], _expected(LINES))
    second.stop()
    first.stop()

"""The checks of a scenario's steps that need the whole file: the topics and brokers a step
names exist when it runs.

Theory of operation
-------------------
The runner meets a step on a topic nobody created, on partition 5 of a 3-partition topic or
on broker 2 of a one-broker cluster only when the step's turn comes, after the app started.
:func:`timeline_problems` finds those mistakes in the file instead: it walks the steps in
order with what the file says the cluster holds -- ``cluster.brokers`` brokers (node ids 1
to n) and the topics under ``topics:`` with their partitions, changed by the steps that
create, delete and grow topics -- and checks every argument that names a topic, partition
or broker, as :data:`~mockkafka.scenario.plan.VERBS` declares its kind. Each mistake is one
:class:`ScenarioError` with the path of the argument, so the loader reports them all at once
with file:line. ACL verbs are left out: an ACL may name a topic that does not exist yet,
as in Kafka. Fault rules are left out too: a rule on an absent topic is not an error, it
just never matches (``expect: rules_fired`` says so). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from mockkafka.scenario.plan import (
    ACL_VERBS,
    ASSIGNMENTS,
    BROKER,
    BROKERS,
    OFFSETS,
    TO_BROKER,
    VERBS,
    ClusterSpec,
    Path,
    ScenarioError,
    Step,
    TopicSpec,
    Verb,
    did_you_mean,
)


class _Timeline:
    def __init__(self, cluster: ClusterSpec, topics: Iterable[TopicSpec]) -> None:
        self.brokers = cluster.brokers
        #: topic -> partitions (None: the cluster's default, not known from the file)
        self.topics: dict[str, int | None] = {t.topic: t.partitions for t in topics}
        #: topic -> how it came to exist, for messages
        self.origin: dict[str, str] = {t.topic: "declared under topics" for t in topics}
        self.problems: list[ScenarioError] = []

    def problem(self, path: Path, message: str) -> None:
        self.problems.append(ScenarioError(path, message))

    def broker(self, node_id: Any, path: Path) -> None:
        if isinstance(node_id, int) and not 1 <= node_id <= self.brokers:
            self.problem(
                path,
                f"no broker {node_id}: cluster.brokers is {self.brokers} ("
                + ("node id 1" if self.brokers == 1 else f"node ids 1 to {self.brokers}")
                + f"); raise cluster.brokers to {node_id} or name another broker",
            )

    def topic(self, topic: str, path: Path) -> bool:
        if topic in self.topics:
            return True
        known = sorted(self.topics)
        self.problem(
            path,
            f"topic {topic!r} does not exist when this step runs{did_you_mean(topic, known)}; "
            f"topics then: {', '.join(known) or 'none'} (declare it under topics:, which keeps "
            "a topic that already exists, or create it in an earlier create_topic step)",
        )
        return False

    def partition(self, topic: str, partition: Any, path: Path) -> None:
        have = self.topics.get(topic)
        if isinstance(partition, int) and have is not None and partition >= have:
            self.problem(
                path,
                f"topic {topic!r} has {have} partition(s) when this step runs (0 to "
                f"{have - 1}), no {partition}",
            )

    def step(self, i: int, verb: Verb) -> None:
        name = verb.name
        if name in ACL_VERBS:
            return
        kw = verb.kwargs
        vpath: Path = ("steps", i, name)
        kinds = {p.name: p.kind for p in VERBS[name]}
        for arg, value in kw.items():
            kind = kinds[arg]
            if kind in (BROKER, TO_BROKER):
                self.broker(value, (*vpath, arg))
            elif kind == BROKERS:
                for b in value:
                    self.broker(b, (*vpath, arg))
            elif kind == ASSIGNMENTS:
                for replicas in value:
                    for b in replicas:
                        self.broker(b, (*vpath, arg))
            elif kind == OFFSETS:
                for j, o in enumerate(value):
                    if self.topic(o["topic"], (*vpath, arg, j, "topic")):
                        self.partition(o["topic"], o["partition"], (*vpath, arg, j, "partition"))
        topic = kw.get("topic")
        if topic is None:
            return
        tpath = (*vpath, "topic")
        if name == "create_topic":
            if topic in self.topics:
                self.problem(
                    tpath,
                    f"topic {topic!r} already exists when this step runs "
                    f"({self.origin[topic]}); Kafka answers TOPIC_ALREADY_EXISTS",
                )
                return
            rf = kw.get("replication_factor")
            if rf is not None and rf > self.brokers:
                self.problem(
                    (*vpath, "replication_factor"),
                    f"replication_factor {rf} needs at least {rf} brokers; cluster.brokers is "
                    f"{self.brokers}",
                )
            assignments = kw.get("assignments")
            self.topics[topic] = (
                len(assignments) if assignments else kw.get("partitions")  # None: the default
            )
            self.origin[topic] = f"created by step {i + 1}"
            return
        if not self.topic(topic, tpath):
            return
        if "partition" in kw:
            self.partition(topic, kw["partition"], (*vpath, "partition"))
        if name == "delete_topic":
            del self.topics[topic]
        elif name == "add_partitions":
            have, total = self.topics[topic], kw["total"]
            if have is not None and total <= have:
                self.problem(
                    (*vpath, "total"),
                    f"topic {topic!r} has {have} partition(s) when this step runs; "
                    f"add_partitions total={total} must be more (Kafka answers "
                    "INVALID_PARTITIONS)",
                )
            else:
                self.topics[topic] = total


def timeline_problems(
    cluster: ClusterSpec,
    topics: Iterable[TopicSpec],
    steps: Iterable[tuple[int, Step]],
    *,
    unsure: Iterable[str] = (),
) -> list[ScenarioError]:
    """Every step argument naming a topic, partition or broker that will not exist when the
    step runs. ``steps`` are (index in the file, step); ``unsure`` names topics that steps
    which could not be read may create (no mistake is reported about them)."""
    t = _Timeline(cluster, topics)
    for name in unsure:
        t.topics.setdefault(name, None)
        t.origin.setdefault(name, "created by a step with a mistake")
    for i, step in steps:
        if isinstance(step.action, Verb):
            t.step(i, step.action)
    return t.problems


__all__ = ["timeline_problems"]

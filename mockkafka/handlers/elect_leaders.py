"""ElectLeaders (key 43), versions 0-2.

``election_type`` (v1+): 0 preferred -- the first replica becomes leader if it is running
and in the ISR (ELECTION_NOT_NEEDED when it already leads, PREFERRED_LEADER_NOT_AVAILABLE
otherwise); 1 unclean -- a partition without a leader gets the first running ISR member, or
else the first running replica (ELECTION_NOT_NEEDED when it has a leader,
ELIGIBLE_LEADERS_NOT_AVAILABLE when no replica runs). A new leader bumps the leader epoch,
as ``Cluster.move_leader`` does. ``topic_partitions`` null means every partition, and then
partitions that needed no election are left out of the answer, as in Kafka. Unknown
partitions answer UNKNOWN_TOPIC_OR_PARTITION; an unknown election type INVALID_REQUEST.

Not implemented: ``timeout_ms`` is ignored; an unclean election keeps the log as it is
(use ``Cluster.truncate_log`` to lose records).
"""

from __future__ import annotations

from typing import Any

from mockkafka.cluster.state import ClusterState, Partition
from mockkafka.errors import ErrorCode
from mockkafka.handlers.base import RequestContext, Result, handler
from mockkafka.protocol.codec import Message

PREFERRED = 0
UNCLEAN = 1


@handler("ElectLeaders", versions=(0, 2))
def handle(ctx: RequestContext, request: Message) -> Result:
    c = ctx.cluster
    election = request.get("election_type", PREFERRED) if ctx.version >= 1 else PREFERRED
    if election not in (PREFERRED, UNCLEAN):
        return {"error_code": ErrorCode.INVALID_REQUEST, "replica_election_results": []}
    wanted = request.get("topic_partitions")
    every = wanted is None
    if wanted is None:
        wanted = [
            {"topic": t.name, "partitions": [p.index for p in t.partitions]}
            for t in c.topics.values()
        ]
    results: list[dict[str, Any]] = []
    for tp in wanted:
        name = tp.get("topic") or ""
        topic = c.topics.get(name)
        parts: list[dict[str, Any]] = []
        for idx in tp.get("partitions") or []:
            if topic is None or not 0 <= idx < len(topic.partitions):
                code, message = (
                    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                    f"The partition {name}-{idx} does not exist.",
                )
            else:
                code, message = _elect(c, topic.partitions[idx], election)
            if every and code == ErrorCode.ELECTION_NOT_NEEDED:
                continue
            parts.append(
                {
                    "partition_id": idx,
                    "error_code": code,
                    "error_message": message if code else None,
                }
            )
        if parts or not every:
            results.append({"topic": name, "partition_result": parts})
    return {"error_code": 0, "replica_election_results": results}


def _elect(c: ClusterState, p: Partition, election: int) -> tuple[ErrorCode, str]:
    def running(b: int) -> bool:
        return b in c.brokers and c.brokers[b].running

    if election == PREFERRED:
        preferred = p.replicas[0] if p.replicas else -1
        if p.leader == preferred:
            return ErrorCode.ELECTION_NOT_NEEDED, "Leader election not needed for topic partition."
        if preferred == -1 or not running(preferred) or preferred not in p.isr:
            return (
                ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE,
                f"Failed to elect leader for partition {p.topic}-{p.index} under strategy "
                f"PreferredReplicaPartitionLeaderElectionStrategy",
            )
        c.set_leader(p.topic, p.index, preferred)
        return ErrorCode.NONE, ""
    if p.leader != -1 and running(p.leader):
        return ErrorCode.ELECTION_NOT_NEEDED, "Leader election not needed for topic partition."
    candidates = [b for b in p.isr if running(b)] or [b for b in p.replicas if running(b)]
    if not candidates:
        return (
            ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE,
            f"Failed to elect leader for partition {p.topic}-{p.index} under strategy "
            f"UncleanLeaderElectionStrategy",
        )
    if candidates[0] not in p.isr:
        p.isr = [candidates[0]]  # unclean: the new leader's log is the truth now
    c.set_leader(p.topic, p.index, candidates[0])
    return ErrorCode.NONE, ""

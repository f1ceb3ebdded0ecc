"""Server-side partition assignors of KIP-848 consumer groups: ``uniform`` and ``range``.

An assignor maps each member to the partitions it should own (the group's *target
assignment*), given every member's subscribed topics, the partition counts of those topics
and the current target (so a member keeps what it has where balance allows: fewer
partitions move, fewer revocations). Pure functions over plain data.

* ``uniform`` (Kafka's default): spread every subscribed partition as evenly as possible over
  the members subscribed to its topic, sticky to the previous target.
* ``range``: per topic, the members subscribed to it (sorted by member id) get contiguous
  ranges; the first ``partitions % members`` members get one extra.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

TopicPartitions = dict[str, set[int]]


@dataclass(slots=True)
class MemberSubscription:
    """What the assignor knows about a member."""

    topics: frozenset[str]
    current: Mapping[str, set[int]] = field(default_factory=dict)


def uniform(
    members: Mapping[str, MemberSubscription], partitions: Mapping[str, int]
) -> dict[str, TopicPartitions]:
    """Balanced, sticky assignment (see the module docstring)."""
    out: dict[str, TopicPartitions] = {m: {} for m in members}
    if not members:
        return out
    counts = dict.fromkeys(members, 0)
    eligible: dict[str, list[str]] = {
        t: sorted(m for m, s in members.items() if t in s.topics) for t in partitions
    }
    total_eligible = {m: 0 for m in members}
    for t, ms in eligible.items():
        for m in ms:
            total_eligible[m] += partitions[t]
    all_parts = [(t, p) for t in sorted(partitions) if eligible[t] for p in range(partitions[t])]
    n_members = len(members)
    cap = -(-len(all_parts) // n_members) if all_parts else 0
    owner: dict[tuple[str, int], str] = {}
    # 1. keep what members already own, up to the even share
    for m in sorted(members):
        s = members[m]
        for t in sorted(s.current):
            if t not in s.topics or t not in partitions:
                continue
            for p in sorted(s.current[t]):
                if p < partitions[t] and (t, p) not in owner and counts[m] < cap:
                    owner[(t, p)] = m
                    counts[m] += 1
    # 2. hand out the rest to the least loaded eligible member
    for tp in all_parts:
        if tp in owner:
            continue
        m = min(eligible[tp[0]], key=lambda x: (counts[x], x))
        owner[tp] = m
        counts[m] += 1
    # 3. even out: move a partition from the most to the least loaded member that can take it
    for _ in range(len(all_parts) * n_members + 1):
        moved = False
        for tp, m in sorted(owner.items()):
            cands = [x for x in eligible[tp[0]] if counts[x] < counts[m] - 1]
            if cands:
                to = min(cands, key=lambda x: (counts[x], x))
                owner[tp] = to
                counts[m] -= 1
                counts[to] += 1
                moved = True
                break
        if not moved:
            break
    for (t, p), m in owner.items():
        out[m].setdefault(t, set()).add(p)
    return out


def range_(
    members: Mapping[str, MemberSubscription], partitions: Mapping[str, int]
) -> dict[str, TopicPartitions]:
    """Per-topic contiguous ranges (see the module docstring)."""
    out: dict[str, TopicPartitions] = {m: {} for m in members}
    for t in sorted(partitions):
        ms = sorted(m for m, s in members.items() if t in s.topics)
        if not ms:
            continue
        n = partitions[t]
        per, extra = divmod(n, len(ms))
        start = 0
        for i, m in enumerate(ms):
            count = per + (1 if i < extra else 0)
            if count:
                out[m][t] = set(range(start, start + count))
            start += count
    return out


ASSIGNORS = {"uniform": uniform, "range": range_}
DEFAULT_ASSIGNOR = "uniform"

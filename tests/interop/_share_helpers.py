"""What the share-group interop tests (Java and Go share consumers) have in common: the run
of two share consumers of one group and the checks of what they received (see
``java/share-src/ShareInterop.java`` and ``go/share.go``, which print the same summary)."""

from __future__ import annotations

from typing import Any

import mockkafka
from tests.interop._build import Program


def run_share_consumers(
    program: Program,
    cluster: mockkafka.Cluster,
    topic: str,
    group: str,
    n: int,
    *,
    prefix: tuple[str, ...] = (),
) -> dict[str, Any]:
    """Start ``program`` running two share consumers of ``group`` (arguments: ``*prefix,
    bootstrap, topic, group, n``), produce ``n`` records plus "release-me" and "reject-me" once both
    hold their assignment, and check what they received and the broker's share state."""
    proc = program.start(*prefix, cluster.bootstrap_servers, topic, group, str(n))
    try:
        view = cluster.wait_for_share_group(
            group,
            members=2,
            where=lambda v: (
                all(m.assignment for m in v.members)
                and all(m.member_epoch == v.assignment_epoch for m in v.members)
            ),
            timeout=60,
        )
    except mockkafka.WaitTimeout:
        proc.kill()
        raise
    assignments = [set(m.assignment[topic]) for m in view.members if m.assignment]
    assert sorted(p for a in assignments for p in a) == [0, 1]  # one partition each
    for i in range(n):
        cluster.produce(topic, f"v{i}", partition=i % 2)
    cluster.produce(topic, "release-me", partition=0)
    cluster.produce(topic, "reject-me", partition=1)
    result = program.finish(proc, timeout=120)

    seen = result["seen"]
    everything = [v for values in seen.values() for v in values]
    assert sorted(everything) == sorted([f"v{i}" for i in range(n)] + ["release-me"])
    assert result["release_delivery_counts"] == [1, 2]  # released once, then delivered again
    assert result["max_plain_delivery_count"] == 1  # nothing else was delivered twice
    assert result["reject_deliveries"] == 1  # rejected: archived, never redelivered
    assert result["described_members"] == 2 and result["described_state"] == "Stable"
    share = cluster.share_group(group)
    assert share.state == "Empty"  # both consumers closed and left
    for p in (0, 1):
        sp = share.partition(topic, p)
        assert sp.start_offset == n // 2 + 1 and sp.records == {}  # everything done
    return result

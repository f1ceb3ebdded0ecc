"""Public cluster verbs for the groups subsystem (mixed into mockkafka.Cluster)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from mockkafka.cluster.coordinators import GROUP
from mockkafka.cluster.groups import GroupView, MemberView

if TYPE_CHECKING:
    from mockkafka.cluster.state import ClusterState

T = TypeVar("T")

__all__ = ["GroupView", "GroupsVerbs", "MemberView"]


class GroupsVerbs:
    """Verbs of the groups subsystem; they run on the cluster's loop via ``self._call``.

    Inspect::

        g = cluster.group("billing")          # a GroupView snapshot
        g.state, g.generation_id, g.members   # members: member_id, assignment {topic: [p]}
        g.committed_offsets()                 # {(topic, partition): offset}

    Script faults (the fault engine uses the same verbs)::

        cluster.trigger_rebalance("billing")
        cluster.expire_member("billing", member_id)
        cluster.move_coordinator("billing", to=2)
        cluster.coordinator_loading("billing", ms=2000)
    """

    _state: ClusterState

    def _call(self, fn: Callable[[], T]) -> T:  # pragma: no cover - provided by the cluster
        raise NotImplementedError

    def group(self, group_id: str) -> GroupView:
        """A snapshot of group ``group_id`` (KafkaApiError GROUP_ID_NOT_FOUND if absent)."""
        return self._call(lambda: self._state.groups.view(group_id))

    def groups(self) -> list[str]:
        """Ids of every group (classic, consumer, and offset-only "simple" groups)."""
        return self._call(self._state.groups.group_ids)

    def committed_offsets(self, group_id: str) -> dict[tuple[str, int], int]:
        """{(topic, partition): committed offset} of ``group_id`` ({} if it does not exist)."""
        return self._call(
            lambda: {k: v.offset for k, v in self._state.groups.committed(group_id).items()}
        )

    def commit_offsets(
        self, group_id: str, offsets: Mapping[tuple[str, int], int], *, metadata: str = ""
    ) -> None:
        """Store committed offsets directly (test setup), as a simple commit would."""

        def do() -> None:
            gc = self._state.groups
            for (topic, partition), offset in offsets.items():
                self._state.partition(topic, partition)  # raises for an unknown partition
                gc.store_committed_offset(group_id, topic, partition, offset, -1, metadata)

        self._call(do)

    def coordinator_of(self, group_id: str) -> int:
        """The broker id coordinating ``group_id``."""
        return self._call(lambda: self._state.coordinators.coordinator(GROUP, group_id))

    def trigger_rebalance(self, group_id: str) -> None:
        """Start a rebalance of ``group_id`` now: classic members get REBALANCE_IN_PROGRESS on
        their next heartbeat and rejoin; a KIP-848 group computes a new target assignment."""
        self._call(lambda: self._state.groups.trigger_rebalance(group_id))

    def expire_member(self, group_id: str, member_id: str) -> None:
        """Remove ``member_id`` as if its session timed out (the group rebalances)."""
        self._call(lambda: self._state.groups.expire_member(group_id, member_id))

    def move_coordinator(self, group_id: str, *, to: int) -> None:
        """Make broker ``to`` the coordinator of ``group_id``.

        The old coordinator answers NOT_COORDINATOR (parked JoinGroup/SyncGroup included),
        clients look the coordinator up again; members, generation and committed offsets are
        kept, as after a Kafka coordinator failover.
        """
        self._call(lambda: self._state.groups.move_coordinator(group_id, to))

    def coordinator_loading(self, group_id: str | None = None, *, ms: int) -> None:
        """Answer COORDINATOR_LOAD_IN_PROGRESS for ``group_id`` (None: every group) for ``ms``."""
        self._call(lambda: self._state.coordinators.set_loading(GROUP, group_id, ms))

    def wait_for_group(
        self,
        group_id: str,
        *,
        state: str | None = "Stable",
        members: int | None = None,
        timeout: float = 10.0,
        where: Callable[[GroupView], bool] | None = None,
    ) -> GroupView:
        """Poll until the group exists in ``state`` with ``members`` members (and ``where``
        holds); returns the snapshot. TimeoutError naming the last state seen otherwise."""
        deadline = time.monotonic() + timeout
        last: Any = None
        for _ in range(int(timeout / 0.02) + 2):
            snap = self._call(
                lambda: (
                    self._state.groups.view(group_id)
                    if group_id in self._state.groups.groups
                    else None
                )
            )
            last = snap
            if (
                snap is not None
                and (state is None or snap.state == state)
                and (members is None or len(snap.members) == members)
                and (where is None or where(snap))
            ):
                return snap
            if time.monotonic() >= deadline:
                break
            time.sleep(0.02)
        seen = (
            "the group does not exist"
            if last is None
            else f"state {last.state}, {len(last.members)} members, generation {last.generation_id}"
        )
        raise TimeoutError(
            f"group {group_id!r} not in state={state} members={members} after {timeout} s; "
            f"last seen: {seen}"
        )

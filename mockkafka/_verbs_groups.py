"""Public cluster verbs for the groups subsystem (mixed into mockkafka.Cluster)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from mockkafka.cluster.coordinators import GROUP, TRANSACTION
from mockkafka.cluster.groups import GroupView, MemberView
from mockkafka.errors import ConfigError

if TYPE_CHECKING:
    from mockkafka.cluster.state import ClusterState

T = TypeVar("T")

__all__ = ["GroupView", "GroupsVerbs", "MemberView"]


def _coordinator_key(
    group: str | None, transactional_id: str | None, verb: str, *, allow_none: bool = False
) -> tuple[int, str | None]:
    if group is not None and transactional_id is not None:
        raise ConfigError(f"{verb}: give group= or transactional_id=, not both")
    if transactional_id is not None:
        return TRANSACTION, transactional_id
    if group is None and not allow_none:
        raise ConfigError(f"{verb}: give group= or transactional_id=")
    return GROUP, group


class GroupsVerbs:
    """Verbs of the groups subsystem; they run on the cluster's loop via ``self._call``.

    Inspect::

        g = cluster.group("billing")          # a GroupView snapshot
        g.state, g.generation_id, g.members   # members: member_id, assignment {topic: [p]}
        g.committed_offsets()                 # {(topic, partition): offset}

    Script faults (the fault engine uses the same verbs)::

        cluster.trigger_rebalance("billing")
        cluster.expire_member("billing", member_id)
        cluster.move_coordinator(group="billing", to=2)
        cluster.coordinator_loading(group="billing", ms=2000)
    """

    _state: ClusterState

    def _call(self, fn: Callable[[], T]) -> T:  # pragma: no cover - provided by the cluster
        raise NotImplementedError

    def group(self, group: str) -> GroupView:
        """A snapshot of group ``group`` (KafkaApiError GROUP_ID_NOT_FOUND if absent)."""
        return self._call(lambda: self._state.groups.view(group))

    def groups(self) -> list[str]:
        """Ids of every group (classic, consumer, and offset-only "simple" groups)."""
        return self._call(self._state.groups.group_ids)

    def committed_offsets(self, group: str) -> dict[tuple[str, int], int]:
        """{(topic, partition): committed offset} of ``group`` ({} if it does not exist)."""
        return self._call(
            lambda: {k: v.offset for k, v in self._state.groups.committed(group).items()}
        )

    def commit_offsets(
        self, group: str, offsets: Mapping[tuple[str, int], int], *, metadata: str = ""
    ) -> None:
        """Store committed offsets directly (test setup), as a simple commit would."""

        def do() -> None:
            gc = self._state.groups
            for (topic, partition), offset in offsets.items():
                self._state.partition(topic, partition)  # raises for an unknown partition
                gc.store_committed_offset(group, topic, partition, offset, -1, metadata)

        self._call(do)

    def trigger_rebalance(self, group: str) -> None:
        """Start a rebalance of ``group`` now: classic members get REBALANCE_IN_PROGRESS on
        their next heartbeat and rejoin; a KIP-848 group computes a new target assignment."""
        self._call(lambda: self._state.groups.trigger_rebalance(group))

    def expire_member(self, group: str, member_id: str) -> None:
        """Remove ``member_id`` as if its session timed out (the group rebalances)."""
        self._call(lambda: self._state.groups.expire_member(group, member_id))

    def coordinator(self, *, group: str | None = None, transactional_id: str | None = None) -> int:
        """The broker id coordinating ``group`` or ``transactional_id`` (give exactly one)."""
        key_type, key = _coordinator_key(group, transactional_id, "coordinator")
        assert key is not None
        return self._call(lambda: self._state.coordinators.coordinator(key_type, key))

    def move_coordinator(
        self, *, group: str | None = None, transactional_id: str | None = None, to: int
    ) -> None:
        """Make broker ``to`` the coordinator of ``group`` or ``transactional_id``.

        The old coordinator answers NOT_COORDINATOR (parked JoinGroup/SyncGroup included),
        clients look the coordinator up again; members, generation, committed offsets and
        transaction state are kept, as after a Kafka coordinator failover.
        """
        key_type, key = _coordinator_key(group, transactional_id, "move_coordinator")
        assert key is not None
        if key_type == GROUP:
            self._call(lambda: self._state.groups.move_coordinator(key, to))
        else:
            self._call(lambda: self._state.coordinators.move(key_type, key, to))

    def coordinator_loading(
        self, *, group: str | None = None, transactional_id: str | None = None, ms: int
    ) -> None:
        """Answer COORDINATOR_LOAD_IN_PROGRESS for ``ms`` for ``group`` or
        ``transactional_id`` (neither given: every group)."""
        key_type, key = _coordinator_key(
            group, transactional_id, "coordinator_loading", allow_none=True
        )
        self._call(lambda: self._state.coordinators.set_loading(key_type, key, ms))

    def wait_for_group(
        self,
        group: str,
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
                    self._state.groups.view(group) if group in self._state.groups.groups else None
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
            f"group {group!r} not in state={state} members={members} after {timeout} s; "
            f"last seen: {seen}"
        )

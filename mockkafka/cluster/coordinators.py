"""Which broker coordinates a group or a transactional id.

Kafka hashes the key onto a partition of ``__consumer_offsets`` (groups) or
``__transaction_state`` (transactional ids) and the leader of that partition is the
coordinator. Here the partition maps onto the sorted broker ids; a stopped coordinator fails
over to the next running broker, and :meth:`Coordinators.move` pins a key to a broker (the
fault engine's "move coordinator"). Moving bumps ``epoch`` so subsystems can answer
NOT_COORDINATOR to requests that reach the old broker.

:meth:`Coordinators.check` is what a group or transaction handler asks first: NONE when this
broker may serve the key now, else NOT_COORDINATOR (another broker coordinates it),
COORDINATOR_NOT_AVAILABLE (no broker runs) or COORDINATOR_LOAD_IN_PROGRESS (a simulated
load, set with :meth:`Coordinators.set_loading`, has not finished -- as after a failover
while the new coordinator reads ``__consumer_offsets``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockkafka.errors import ErrorCode, KafkaApiError

if TYPE_CHECKING:
    from mockkafka.cluster.host import StateCore

GROUP = 0
TRANSACTION = 1
SHARE = 2


def java_string_hash(s: str) -> int:
    """``String.hashCode()`` of Java, as a signed 32-bit int."""
    h = 0
    for ch in s.encode("utf-16-be").decode("utf-16-be"):
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def partition_for(key: str, partitions: int) -> int:
    """Kafka's ``Utils.abs(key.hashCode()) % partitions``."""
    return (java_string_hash(key) & 0x7FFFFFFF) % partitions


class Coordinators:
    """Coordinator placement for one cluster."""

    def __init__(self, state: StateCore) -> None:
        self._state = state
        self.pinned: dict[tuple[int, str], int] = {}
        self.epoch = 0
        # (key type, key) -> cluster time until which its coordinator is still loading;
        # (key type, None) applies to every key of the type.
        self.loading_until: dict[tuple[int, str | None], int] = {}

    def coordinator(self, key_type: int, key: str) -> int:
        """The broker id coordinating ``key`` (-1 when no broker is running)."""
        st = self._state
        pinned = self.pinned.get((key_type, key))
        if pinned is not None and st.brokers[pinned].running:
            return pinned
        ids = sorted(st.brokers)
        n = st.config.offsets_topic_partitions
        start = partition_for(key, n) % len(ids)
        for i in range(len(ids)):
            b = ids[(start + i) % len(ids)]
            if st.brokers[b].running:
                return b
        return -1

    def move(self, key_type: int, key: str, to: int) -> None:
        """Pin ``key``'s coordinator to broker ``to``: a leader election of its
        ``__consumer_offsets`` (``__transaction_state``) partition. As Kafka's ElectLeaders,
        the broker already coordinating it is ELECTION_NOT_NEEDED, and a stopped broker
        cannot lead (BROKER_NOT_AVAILABLE), as ``move_leader`` answers."""
        if not self._state.broker(to).running:
            raise KafkaApiError(
                ErrorCode.BROKER_NOT_AVAILABLE,
                f"move_coordinator: broker {to} is stopped; start it before moving "
                "coordinators to it",
            )
        if self.coordinator(key_type, key) == to:
            raise KafkaApiError(
                ErrorCode.ELECTION_NOT_NEEDED,
                f"move_coordinator: broker {to} already coordinates {key!r}; Kafka's "
                "ElectLeaders answers the same for its partition's leader",
            )
        self.pinned[(key_type, key)] = to
        self.epoch += 1
        self._state.notify(("coordinator", key_type, key))

    def check(self, key_type: int, key: str, broker_id: int) -> ErrorCode:
        """NONE when ``broker_id`` may serve ``key`` now; else the error to answer."""
        node = self.coordinator(key_type, key)
        if node < 0:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        if node != broker_id:
            return ErrorCode.NOT_COORDINATOR
        now = self._state.now_ms()
        for k in ((key_type, key), (key_type, None)):
            until = self.loading_until.get(k)
            if until is not None:
                if now < until:
                    return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
                del self.loading_until[k]
        return ErrorCode.NONE

    def set_loading(self, key_type: int, key: str | None, duration_ms: int) -> None:
        """Answer COORDINATOR_LOAD_IN_PROGRESS for ``key`` (None: every key) for a while."""
        self.loading_until[(key_type, key)] = self._state.now_ms() + duration_ms

"""The cluster's state: brokers, topics, partitions with replicas, timers and wake-ups.

Theory of operation
-------------------
:class:`ClusterState` is plain synchronous Python owned by one task (the trio loop in
``server/``); it never blocks and never touches a socket. Handlers read and change it while
serving a request; test code changes it through the public ``Cluster`` verbs, which run on
the same loop. Two hooks connect it to the outside:

* :meth:`ClusterState.notify` -- something a parked request may wait for changed (new data
  in a partition, a group finished rebalancing). The server wakes parked requests waiting on
  that key.
* timers -- :meth:`ClusterState.call_at` schedules a callback at a cluster time (session
  timeouts, transaction timeouts, the initial rebalance delay); the server sleeps until
  :meth:`next_timer_at` and then calls :meth:`run_timers`.

Time comes from an injected clock (milliseconds since the epoch), so tests can drive it.

Replication is simulated: each partition has a replica list and an ISR over the cluster's
brokers and a leader with a leader epoch; only the leader accepts produce and fetch. Every
replica in the ISR is treated as caught up the moment the leader appends.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import uuid
from collections.abc import Callable, Hashable, Iterator
from typing import TYPE_CHECKING, Any

from mockkafka.cluster.acls import AclStore
from mockkafka.cluster.base import Broker, Clock, ManualClock, SystemClock, TimerHandle
from mockkafka.cluster.config import ClusterConfig
from mockkafka.cluster.configs import (
    BROKER_DEFAULTS,
    DynamicConfigs,
    apply_changes,
    derived_broker_configs,
    split_list,
    validate_topic_config,
)
from mockkafka.cluster.events import StateEvent
from mockkafka.cluster.fetch_sessions import FetchSessionCache
from mockkafka.cluster.limits import check_partitions_per_op
from mockkafka.cluster.producers import ProducerIdInfo
from mockkafka.cluster.release_configs import release_broker_defaults
from mockkafka.cluster.security import scram_credentials
from mockkafka.cluster.topic_names import topic_name_problem
from mockkafka.cluster.topics import Partition, Topic
from mockkafka.errors import ErrorCode, KafkaApiError

if TYPE_CHECKING:
    from mockkafka.cluster.groups import GroupCoordinator

#: Kafka's internal topics: name -> (partition-count config, replication-factor config,
#: topic configs Kafka creates it with).
INTERNAL_TOPICS: dict[str, tuple[str, str, dict[str, str]]] = {
    "__consumer_offsets": (
        "offsets.topic.num.partitions",
        "offsets.topic.replication.factor",
        {"cleanup.policy": "compact", "compression.type": "producer", "segment.bytes": "104857600"},
    ),
    "__transaction_state": (
        "transaction.state.log.num.partitions",
        "transaction.state.log.replication.factor",
        {
            "cleanup.policy": "compact",
            "compression.type": "uncompressed",
            "min.insync.replicas": "1",
            "segment.bytes": "104857600",
            "unclean.leader.election.enable": "false",
        },
    ),
}

#: How many deleted topics' ids :attr:`ClusterState.retired_topic_ids` remembers.
RETIRED_TOPIC_IDS = 10_000
#: DeleteRecords' offset -1: delete up to the high watermark.
DELETE_TO_HIGH_WATERMARK = -1

#: Guards the one lazily made part of the state (:attr:`ClusterState.groups`).
_LAZY_LOCK = threading.Lock()


class ClusterState:
    """All broker state of one fake cluster. See the module docstring."""

    def __init__(self, config: ClusterConfig | None = None, *, clock: Clock | None = None) -> None:
        self.config = config or ClusterConfig()
        self.clock: Clock = clock or SystemClock()
        self.cluster_id = self.config.cluster_id or _cluster_id()
        self.brokers: dict[int, Broker] = {}
        first = self.config.first_node_id
        for n in range(self.config.brokers):
            rack = self.config.racks[n] if n < len(self.config.racks) else None
            self.brokers[first + n] = Broker(node_id=first + n, rack=rack)
        self._wakers: list[Callable[[Hashable], None]] = []
        self._timer_seq = itertools.count()
        self._init_data()

    def _init_data(self) -> None:
        """Everything a test changes (see :meth:`reset`); brokers and wakers stay."""
        self.broker_configs: dict[str, str] = release_broker_defaults(self.config, BROKER_DEFAULTS)
        self.broker_configs["auto.create.topics.enable"] = str(
            self.config.auto_create_topics
        ).lower()
        self.broker_configs["group.initial.rebalance.delay.ms"] = str(
            self.config.group_initial_rebalance_delay_ms
        )
        self.broker_configs["group.consumer.heartbeat.interval.ms"] = str(
            self.config.group_consumer_heartbeat_interval_ms
        )
        self.broker_configs.update(self.config.broker_configs)
        self.broker_configs.update(derived_broker_configs(dict(self.config.broker_configs)))
        self.controller_id = min(self.brokers)
        self.topics: dict[str, Topic] = {}
        self.topics_by_id: dict[uuid.UUID, Topic] = {}
        #: Names of deleted topics by id (the newest ``RETIRED_TOPIC_IDS``): a request
        #: recorded in traffic by topic id keeps its topic's name after the delete.
        self.retired_topic_ids: dict[uuid.UUID, str] = {}
        #: :meth:`topic_name_of`, bound once (every recorded exchange refers to it).
        self.resolve_topic_id: Callable[[uuid.UUID], str | None] = self.topic_name_of
        self.producer_ids: dict[int, ProducerIdInfo] = {}
        self._next_producer_id = 1000
        self._timers: list[TimerHandle] = []
        self._next_assignment = 0
        # Per-API version caps (cap_api_versions): api key -> max version.
        self.api_version_caps: dict[int, int] = {}
        #: Incremental fetch sessions (KIP-227) by broker id.
        self.fetch_sessions: dict[int, FetchSessionCache] = {}
        #: Configs set at run time beyond ``broker_configs`` (see ``configs.py``).
        self.dynamic_configs = DynamicConfigs()
        release = self.config.kafka_version
        if release is None or tuple(int(x) for x in release.split(".")) >= (4, 1):
            # Kafka 4.1+ (eligible leader replicas, KIP-966) writes the cluster-wide
            # min.insync.replicas at bootstrap: it reports DYNAMIC_DEFAULT_BROKER_CONFIG.
            self.dynamic_configs.default_broker["min.insync.replicas"] = self.broker_configs.get(
                "min.insync.replicas", "1"
            )
        #: State of subsystems that have no typed attribute yet, by name (cleared by reset).
        self.extensions: dict[str, Any] = {}
        from mockkafka.cluster.coordinators import Coordinators
        from mockkafka.cluster.transactions import TransactionCoordinator

        self.coordinators = Coordinators(self)
        #: SCRAM credentials by (user, mechanism); AlterUserScramCredentials changes them.
        self.scram_credentials = scram_credentials(self.config.users)
        #: ACLs and the authorize decision (used when ``config.authorizer`` is on).
        self.acls = AclStore(
            tuple(self.config.super_users)
            + tuple(
                u.strip()
                for u in self.broker_configs.get("super.users", "").split(";")
                if u.strip()
            ),
            self.config.allow_everyone_if_no_acl_found
            or self.broker_configs.get("allow.everyone.if.no.acl.found", "").lower() == "true",
        )
        self._groups: GroupCoordinator | None = None  # made on first use: see groups
        self.transactions = TransactionCoordinator(self)

    def reset(self) -> None:
        """Forget every topic, group, transaction, producer id, timer, version cap and
        dynamic config, as in a new cluster; brokers keep their ids, ports and running
        state (the server starts stopped ones again). Parked requests are woken."""
        for b in self.brokers.values():
            b.configs.clear()
        self._init_data()
        self.notify(("topics",))
        self.notify(_TIMERS_CHANGED)

    @property
    def groups(self) -> GroupCoordinator:
        """The group coordinator, made (and the group machinery imported: ~50 ms of a cold
        start) on first use.

        State is read on the cluster's loop, but this one lazy part is made under a lock:
        the first import of the group modules releases the GIL, and a second thread asking
        meanwhile must get the same coordinator, never an orphan of its own (issue 33: a
        wait built on the test's thread polled an orphan and timed out)."""
        g = self._groups
        if g is None:
            with _LAZY_LOCK:
                g = self._groups
                if g is None:
                    from mockkafka.cluster.groups import GroupCoordinator

                    g = self._groups = GroupCoordinator(self)
        return g

    @groups.setter
    def groups(self, value: GroupCoordinator) -> None:
        self._groups = value

    @property
    def groups_if_made(self) -> GroupCoordinator | None:
        """The group coordinator if something made it; None while no group API was used
        (what has no group to update asks this, and makes nothing)."""
        return self._groups

    def topic_name_of(self, tid: uuid.UUID) -> str | None:
        """The name of the topic with id ``tid``, also of a deleted one (None: never seen).
        Dict reads only: safe from any thread."""
        t = self.topics_by_id.get(tid)
        return t.name if t is not None else self.retired_topic_ids.get(tid)

    # -- time, timers and wake-ups ------------------------------------------------------------

    def now_ms(self) -> int:
        return self.clock.now_ms()

    def call_at(self, at_ms: int, fn: Callable[[], None]) -> TimerHandle:
        """Run ``fn`` at cluster time ``at_ms`` (or soon after); cancel with ``.cancel()``."""
        t = TimerHandle(at_ms, next(self._timer_seq), fn)
        heapq.heappush(self._timers, t)
        if self._timers[0] is t:
            # The server's timer task sleeps until the earliest timer: only a new earliest
            # moves its wake-up (a heartbeat or a transaction re-arms one per request).
            self.notify(_TIMERS_CHANGED)
        return t

    def call_later(self, delay_ms: int, fn: Callable[[], None]) -> TimerHandle:
        return self.call_at(self.now_ms() + delay_ms, fn)

    def next_timer_at(self) -> int | None:
        """The time of the earliest pending timer, or None."""
        while self._timers and self._timers[0].cancelled:
            heapq.heappop(self._timers)
        return self._timers[0].at_ms if self._timers else None

    def run_timers(self, now_ms: int | None = None) -> int:
        """Run every timer due at ``now_ms``; returns how many ran."""
        now = self.now_ms() if now_ms is None else now_ms
        ran = 0
        while self._timers and self._timers[0].at_ms <= now:
            t = heapq.heappop(self._timers)
            if not t.cancelled:
                t.fn()
                ran += 1
        return ran

    def add_waker(self, fn: Callable[[Hashable], None]) -> None:
        """Register a callback for :meth:`notify` (the server's wake-up of parked requests)."""
        self._wakers.append(fn)

    def notify(self, key: Hashable) -> None:
        """Tell whoever waits on ``key`` that it changed."""
        for w in self._wakers:
            w(key)

    # -- brokers ----------------------------------------------------------------------------

    def broker(self, node_id: int) -> Broker:
        b = self.brokers.get(node_id)
        if b is None:
            raise KafkaApiError(
                ErrorCode.BROKER_NOT_AVAILABLE,
                f"no broker {node_id}; brokers are {sorted(self.brokers)}",
            )
        return b

    def live_brokers(self) -> list[Broker]:
        return [b for b in self.brokers.values() if b.running]

    # -- topics -----------------------------------------------------------------------------

    def topic(self, name: str) -> Topic:
        """The topic called ``name``; KafkaApiError UNKNOWN_TOPIC_OR_PARTITION if absent."""
        t = self.topics.get(name)
        if t is None:
            raise KafkaApiError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"no topic {name!r}")
        return t

    def partition(self, topic: str, index: int) -> Partition:
        return self.topic(topic).partition(index)

    def iter_partitions(self) -> Iterator[Partition]:
        for t in self.topics.values():
            yield from t.partitions

    def _assign_replicas(
        self, count: int, replication_factor: int, start: int | None = None
    ) -> list[list[int]]:
        ids = sorted(self.brokers)
        n = len(ids)
        first = self._next_assignment if start is None else start
        out = []
        for p in range(count):
            lead = (first + p) % n
            out.append([ids[(lead + r) % n] for r in range(replication_factor)])
        if start is None:
            self._next_assignment = (first + count) % n
        return out

    def ensure_internal_topic(self, name: str) -> Topic | None:
        """Create Kafka's internal topic ``name`` (``__consumer_offsets`` or
        ``__transaction_state``) unless it exists, as Kafka does on the first FindCoordinator
        for a group or a transactional id; returns it (None: no broker registered).

        Partition ``p`` is led by the broker :mod:`coordinators` maps that partition to, so
        the topic's leaders and the coordinators agree until a verb moves one of them.
        """
        topic = self.topics.get(name)
        if topic is not None or not self.brokers:
            return topic
        count_key, rf_key, config = INTERNAL_TOPICS[name]
        count = self.config.offsets_topic_partitions
        if count_key != "offsets.topic.num.partitions":
            count = int(self.broker_configs.get(count_key, count))
        ids = sorted(self.brokers)
        rf = max(1, min(int(self.broker_configs.get(rf_key, "1")), len(ids)))
        tid = uuid.uuid4()
        parts = []
        for i in range(count):
            replicas = [ids[(i + r) % len(ids)] for r in range(rf)]
            parts.append(
                Partition(
                    topic=name, index=i, replicas=replicas, isr=list(replicas), leader=replicas[0]
                )
            )
        topic = Topic(name, tid, parts, dict(config), True, self.broker_configs)
        self.topics[name] = topic
        self.topics_by_id[tid] = topic
        self.notify(("topics",))
        self.emit_event("topic_created", topic=name)
        return topic

    def create_topic(
        self,
        name: str,
        partitions: int | None = None,
        replication_factor: int | None = None,
        config: dict[str, str] | None = None,
        *,
        assignments: list[list[int]] | None = None,
        topic_id: uuid.UUID | None = None,
        validate_only: bool = False,
        internal: bool = False,
    ) -> Topic:
        """Create a topic; raises KafkaApiError with the code CreateTopics would answer.

        ``partitions`` / ``replication_factor`` default to the cluster's defaults (-1 also
        means default, as in CreateTopics). ``assignments`` gives explicit replica lists.
        """
        problem = topic_name_problem(name)
        if problem:
            raise KafkaApiError(ErrorCode.INVALID_TOPIC_EXCEPTION, problem)
        if name in self.topics:
            raise KafkaApiError(ErrorCode.TOPIC_ALREADY_EXISTS, f"Topic '{name}' already exists.")
        if assignments:
            check_partitions_per_op(self, len(assignments))
            for a in assignments:
                self.check_replica_assignment(a)
            replicas = [list(a) for a in assignments]
        else:
            if partitions is None or partitions == -1:
                partitions = self.config.default_partitions
            if replication_factor is None or replication_factor == -1:
                replication_factor = self.config.default_replication_factor
            if partitions < 1:
                raise KafkaApiError(
                    ErrorCode.INVALID_PARTITIONS, "Number of partitions must be larger than 0."
                )
            check_partitions_per_op(self, partitions)
            if replication_factor < 1:
                raise KafkaApiError(
                    ErrorCode.INVALID_REPLICATION_FACTOR,
                    "Replication factor must be larger than 0.",
                )
            if replication_factor > len(self.brokers):
                raise KafkaApiError(
                    ErrorCode.INVALID_REPLICATION_FACTOR,
                    f"Unable to replicate the partition {replication_factor} time(s): "
                    f"The target replication factor of {replication_factor} cannot be reached "
                    f"because only {len(self.brokers)} broker(s) are registered.",
                )
            replicas = self._assign_replicas(partitions, replication_factor)
        cfg = dict(config or {})
        for k, v in cfg.items():
            p = validate_topic_config(k, v, self.config.kafka_version)
            if p is not None:
                raise KafkaApiError(ErrorCode.INVALID_CONFIG, p.message)
        if validate_only:
            return Topic(name, topic_id or uuid.uuid4(), [], cfg, internal, self.broker_configs)
        tid = topic_id or uuid.uuid4()
        parts = [
            Partition(topic=name, index=i, replicas=r, isr=list(r), leader=self._pick_leader(r))
            for i, r in enumerate(replicas)
        ]
        t = Topic(name, tid, parts, cfg, internal, self.broker_configs)
        self.topics[name] = t
        self.topics_by_id[tid] = t
        self.notify(("topics",))
        self.emit_event("topic_created", topic=name)
        return t

    def check_replica_assignment(self, replicas: list[int]) -> None:
        """Raise KafkaApiError INVALID_REPLICA_ASSIGNMENT (Kafka's messages) unless
        ``replicas`` is a non-empty list of distinct, registered brokers."""
        if not replicas:
            raise KafkaApiError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                "The manual partition assignment includes an empty replica list.",
            )
        for b in replicas:
            if replicas.count(b) > 1:
                raise KafkaApiError(
                    ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                    f"The manual partition assignment includes the broker {b} more than once.",
                )
            if b not in self.brokers:
                raise KafkaApiError(
                    ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                    f"The manual partition assignment includes broker {b}, but no such broker "
                    "is registered.",
                )

    def _pick_leader(self, isr: list[int]) -> int:
        for b in isr:
            if self.brokers[b].running:
                return b
        return -1

    def delete_topic(self, name: str) -> None:
        t = self.topic(name)
        del self.topics[name]
        self.topics_by_id.pop(t.topic_id, None)
        retired = self.retired_topic_ids
        retired[t.topic_id] = name
        if len(retired) > RETIRED_TOPIC_IDS:
            del retired[next(iter(retired))]
        for p in t.partitions:
            self.notify(("partition", name, p.index))
        self.notify(("topics",))
        self.emit_event("topic_deleted", topic=name)

    def create_partitions(
        self, name: str, total: int, assignments: list[list[int]] | None = None
    ) -> None:
        """Grow topic ``name`` to ``total`` partitions (never shrinks, as in Kafka)."""
        t = self.topic(name)
        have = len(t.partitions)
        if total <= have:
            raise KafkaApiError(
                ErrorCode.INVALID_PARTITIONS,
                f"Topic currently has {have} partitions, which is higher than or equal to "
                f"the requested {total}.",
            )
        check_partitions_per_op(self, total - have)
        rf = len(t.partitions[0].replicas) if t.partitions else 1
        if assignments:
            if len(assignments) != total - have:
                raise KafkaApiError(
                    ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                    f"expected {total - have} assignments, got {len(assignments)}",
                )
            new = [list(a) for a in assignments]
        else:
            new = self._assign_replicas(total - have, rf)
        for i, r in enumerate(new, start=have):
            t.partitions.append(
                Partition(topic=name, index=i, replicas=r, isr=list(r), leader=self._pick_leader(r))
            )
        self.notify(("topics",))
        self.emit_event("partitions_added", topic=name, total=total)

    # -- replication verbs ----------------------------------------------------------------------
    # Test-facing verbs (``Cluster.move_leader``, ``stop_broker``, ``truncate_log``...) keep
    # the cluster coherent: every leader change bumps the leader epoch and starts a new
    # epoch in the log (so OffsetForLeaderEpoch and Fetch's diverging_epoch tell clients
    # what changed), parked requests on the partition are woken, and a cluster event is
    # recorded for fault rules waiting with ``after_event``.

    def emit_event(self, name: str, **attrs: Any) -> None:
        """Announce a cluster event to the wakers (the fault engine records it for rules
        waiting with ``Trigger.after_event``)."""
        self.notify(StateEvent(name, tuple(sorted(attrs.items()))))

    def set_leader(self, topic: str, index: int, leader: int) -> Partition:
        """Make ``leader`` the partition leader (-1: none) and bump the leader epoch.

        The new leader joins the replicas and ISR if needed; a stopped broker cannot lead
        (KafkaApiError BROKER_NOT_AVAILABLE).
        """
        p = self.partition(topic, index)
        if leader != -1:
            self._check_can_lead(leader)
            if leader not in p.replicas:
                p.replicas.append(leader)
            if leader not in p.isr:
                p.isr.append(leader)
        p.leader = leader
        p.leader_epoch += 1
        p.partition_epoch += 1
        p.log.start_new_epoch(p.leader_epoch)
        self.notify(("partition", topic, index))
        self.notify(("topics",))
        self.emit_event("leader_moved", topic=topic, partition=index, leader=leader)
        return p

    def _check_can_lead(self, broker: int) -> None:
        if not self.broker(broker).running:
            raise KafkaApiError(
                ErrorCode.BROKER_NOT_AVAILABLE,
                f"broker {broker} is stopped; start it before moving leaders to it",
            )

    def move_leader(self, topic: str, index: int, to: int) -> Partition:
        """``Cluster.move_leader``: a reassignment that makes ``to`` the preferred replica,
        then a preferred election. As Kafka's ElectLeaders, a broker that already leads is
        ELECTION_NOT_NEEDED (the leader epoch is kept); a stopped broker cannot lead
        (BROKER_NOT_AVAILABLE). ``to`` joins the replicas and the ISR if needed (as a
        reassignment adding it, once caught up), where Kafka's preferred election alone
        would answer PREFERRED_LEADER_NOT_AVAILABLE for a replica out of the ISR."""
        p = self.partition(topic, index)
        self._check_can_lead(to)
        if p.leader == to:
            raise KafkaApiError(
                ErrorCode.ELECTION_NOT_NEEDED,
                f"move_leader: broker {to} already leads {topic}-{index} (leader epoch "
                f"{p.leader_epoch} kept); Kafka's ElectLeaders answers the same",
            )
        return self.set_leader(topic, index, to)

    def set_isr(self, topic: str, index: int, isr: list[int]) -> Partition:
        """Set the in-sync replicas (they join the replicas); the leader moves to the first
        running ISR member if it is not in the new ISR."""
        p = self.partition(topic, index)
        if not isr:
            raise KafkaApiError(
                ErrorCode.INVALID_REQUEST,
                f"set_isr: the ISR of {topic}-{index} cannot be empty (Kafka keeps the last "
                "replica in it even when that broker stops); name at least one broker, or "
                "stop_broker the ones to lose",
            )
        for b in isr:
            if not self.broker(b).running and b not in p.isr:
                raise KafkaApiError(
                    ErrorCode.INELIGIBLE_REPLICA,
                    f"set_isr: broker {b} is stopped and cannot join the ISR of "
                    f"{topic}-{index} (Kafka's controller refuses a fenced replica); "
                    "start_broker it first",
                )
        new = list(dict.fromkeys(isr))
        if new == p.isr:
            return p  # as Kafka's controller: no change, no new partition epoch
        for b in new:
            if b not in p.replicas:
                p.replicas.append(b)
        p.isr = new
        p.partition_epoch += 1
        self.emit_event("isr_changed", topic=topic, partition=index, isr=tuple(p.isr))
        if p.leader not in p.isr:
            self.set_leader(topic, index, self._pick_leader(p.isr) if p.isr else -1)
        else:
            self.notify(("topics",))
        return p

    def truncate_log(self, topic: str, index: int, to_offset: int) -> Partition:
        """Unclean leader election: drop every record at or above ``to_offset`` and start a
        new leader epoch there, so clients learn it via OffsetForLeaderEpoch (KIP-320).

        Producer state for the lost batches is forgotten too (an idempotent producer's next
        batch is then out of sequence, as in Kafka).
        """
        p = self.partition(topic, index)
        start, hw = p.log.log_start_offset, p.log.high_watermark
        if not start <= to_offset <= hw:
            raise KafkaApiError(
                ErrorCode.OFFSET_OUT_OF_RANGE,
                f"truncate_log: to_offset {to_offset} is outside {topic}-{index}'s log: give "
                f"{start} (log start offset) to {hw} (high watermark); an unclean election "
                "can only lose records, never add offsets",
            )
        p.log.truncate(to_offset)
        end = p.log.log_end_offset
        for pid, st in list(p.producers.items()):
            kept = [b for b in st.batches if b.last_offset < end]
            if not kept:
                del p.producers[pid]
            elif len(kept) != len(st.batches):
                st.batches.clear()
                st.batches.extend(kept)
        self.set_leader(topic, index, p.leader)
        self.groups.log_truncated(topic, index, end)
        self.emit_event("log_truncated", topic=topic, partition=index, offset=end)
        return p

    def delete_records_before(self, topic: str, index: int, offset: int) -> int:
        """Retention / DeleteRecords: advance the log start offset; returns the new one.

        As Kafka's ``Partition.deleteRecordsOnLeader``: -1 means the high watermark; an
        offset below the log start changes nothing; a negative one or one above the high
        watermark is OFFSET_OUT_OF_RANGE; a topic whose ``cleanup.policy`` has no
        ``delete`` is POLICY_VIOLATION. Consumers positioned below the new log start get
        OFFSET_OUT_OF_RANGE (then ``auto.offset.reset``).
        """
        t = self.topic(topic)
        p = t.partition(index)
        log = p.log
        if "delete" not in split_list(t.config("cleanup.policy")):
            raise KafkaApiError(
                ErrorCode.POLICY_VIOLATION,
                f"Records of partition {topic}-{index} can not be deleted due to the "
                f"configured policy (cleanup.policy={t.config('cleanup.policy')})",
            )
        hw = log.high_watermark
        wanted = hw if offset == DELETE_TO_HIGH_WATERMARK else offset
        if wanted < 0 or wanted > hw:
            raise KafkaApiError(
                ErrorCode.OFFSET_OUT_OF_RANGE,
                f"Cannot increment the log start offset of {topic}-{index} to {offset}: give "
                f"an offset up to the high watermark {hw} (or -1 for it)",
            )
        if wanted <= log.log_start_offset:
            return log.log_start_offset
        new = log.delete_before(wanted)
        self.notify(("partition", topic, index))
        self.emit_event("records_deleted", topic=topic, partition=index, offset=new)
        return new

    def set_topic_config(self, name: str, configs: dict[str, str | None]) -> Topic:
        """Set (or with None, reset to default) topic configs; KafkaApiError INVALID_CONFIG."""
        t = self.topic(name)
        for k, v in configs.items():
            if v is None:
                continue
            problem = validate_topic_config(k, str(v), self.config.kafka_version)
            if problem is not None:
                raise KafkaApiError(ErrorCode.INVALID_CONFIG, problem.message)
        apply_changes(t.configs, configs)
        self.emit_event("config_changed", topic=name)
        return t

    def set_broker_config(self, configs: dict[str, str | None], broker: int | None) -> None:
        """Set (None: delete) dynamic broker configs, for one broker or (None) every broker,
        as IncrementalAlterConfigs would; KafkaApiError with Kafka's code when refused."""
        from mockkafka.cluster.configs import (
            ResourceType,
            apply_dynamic,
            current_dynamic,
            validate_configs,
        )

        name = "" if broker is None else str(broker)
        if broker is not None:
            self.broker(broker)
        new = current_dynamic(self, ResourceType.BROKER, name)
        apply_changes(new, configs)
        validate_configs(
            self, ResourceType.BROKER, name, {k: v for k, v in configs.items() if v is not None}
        )
        apply_dynamic(self, ResourceType.BROKER, name, new)
        self.emit_event("config_changed", broker=broker)

    def recreate_topic(self, name: str) -> Topic:
        """Delete topic ``name`` and create it again empty, with the same partitions,
        replicas and configs but a new topic id (clients using ids see UNKNOWN_TOPIC_ID)."""
        old = self.topic(name)
        assignments = [list(p.replicas) for p in old.partitions]
        configs = dict(old.configs)
        self.delete_topic(name)
        return self.create_topic(name, config=configs, assignments=assignments)

    def stop_broker(self, node_id: int) -> None:
        """Mark a broker stopped: its partitions elect a new leader from the ISR if any."""
        b = self.broker(node_id)
        if not b.running:
            return  # a stopped broker is left alone
        b.running = False
        for p in self.iter_partitions():
            if node_id in p.isr and len(p.isr) > 1:
                p.isr.remove(node_id)
            if p.leader == node_id:
                self.set_leader(p.topic, p.index, self._pick_leader(p.isr))
        if self.controller_id == node_id:
            live = self.live_brokers()
            self.controller_id = live[0].node_id if live else -1
        self.notify(("broker", node_id))
        self.notify(("topics",))
        self.emit_event("broker_stopped", broker=node_id)

    def start_broker(self, node_id: int) -> None:
        """Mark a broker running again; it rejoins the ISR of its partitions."""
        b = self.broker(node_id)
        if b.running:
            return  # a running broker is left alone
        b.running = True
        for p in self.iter_partitions():
            if node_id in p.replicas and node_id not in p.isr:
                p.isr.append(node_id)
            if p.leader == -1 and node_id in p.isr:
                self.set_leader(p.topic, p.index, node_id)
        if self.controller_id == -1:
            self.controller_id = node_id
        self.notify(("broker", node_id))
        self.notify(("topics",))
        self.emit_event("broker_started", broker=node_id)

    # -- producers ------------------------------------------------------------------------------

    def allocate_producer_id(self) -> int:
        pid = self._next_producer_id
        self._next_producer_id += 1
        return pid

    # -- api versions ---------------------------------------------------------------------------

    def cap_api_versions(self, caps: dict[int, int]) -> None:
        """Advertise at most these versions (api key -> max), as an older Kafka would."""
        self.api_version_caps.update(caps)
        self.emit_event("api_versions_capped")


_TIMERS_CHANGED = ("timers",)
TIMERS_CHANGED: Hashable = _TIMERS_CHANGED


def _cluster_id() -> str:
    import base64

    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")


# The plain parts (base.py, topics.py) are re-exported: ``from mockkafka.cluster.state import
# Topic`` is where handlers and tests have always found them.
__all__ = [
    "INTERNAL_TOPICS",
    "Broker",
    "Clock",
    "ClusterConfig",
    "ClusterState",
    "ManualClock",
    "Partition",
    "SystemClock",
    "TimerHandle",
    "Topic",
]

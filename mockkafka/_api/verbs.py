"""Every cluster verb, grouped by concept (the names are those of docs/vocabulary.md).

Each verb runs on the loop that owns the cluster state (``self._call``), so a verb applied
between two client requests is seen by the second one, with no locking; queries run there
too (``self._read``) and return frozen views. The flavour-specific parts -- starting a
broker (it needs the network), and the waits (sync or awaitable) -- are in ``cluster.py``;
the waits' *probes* (what each wait checks) are here, shared by both flavours.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from mockkafka._api.acl_args import AclVerbs
from mockkafka._api.verb_args import (
    SHARE_GROUP_STATES,
    api_caps,
    broker_probe,
    check_choice,
    check_int,
    committed_probe,
    config_items,
    coordinator_key,
    group_probe,
    members_probe,
    quota_entity,
    record_args,
    records_wait,
    transaction_probe,
)
from mockkafka.cluster.acls import AclBinding, AclFilter
from mockkafka.cluster.configs import check_broker_configs, config_text, set_group_configs
from mockkafka.cluster.coordinators import GROUP
from mockkafka.cluster.produce import append_records
from mockkafka.cluster.quotas import client_quotas, make_entity
from mockkafka.cluster.transactions import STATE_NAMES
from mockkafka.errors import ConfigError, ErrorCode, KafkaApiError
from mockkafka.protocol import records as rec
from mockkafka.server.waits import Seen
from mockkafka.views import (
    AclView,
    GroupView,
    ShareGroupView,
    TopicView,
    TransactionView,
    acl_view,
    describe,
    group_view,
    share_group_view,
    topic_view,
    transaction_view,
)

if TYPE_CHECKING:
    from mockkafka.cluster.state import ClusterState

T = TypeVar("T")


class ClusterVerbs(AclVerbs):
    """The verbs shared by :class:`~mockkafka.Cluster` and :class:`~mockkafka.AsyncCluster`.

    Sections follow docs/vocabulary.md: topics and partitions, replication, groups,
    transactions, coordinators, configs, ACLs. Brokers, faults, traffic and the waits are on
    the two cluster classes.
    """

    _state: ClusterState

    def _call(self, fn: Callable[[], T]) -> T:  # pragma: no cover - provided by the cluster
        """Run a verb on the cluster's loop (then wake the waits)."""
        raise NotImplementedError

    def _read(self, fn: Callable[[], T]) -> T:  # pragma: no cover - provided by the cluster
        """Run a query on the cluster's loop."""
        raise NotImplementedError

    # -- topics and partitions ----------------------------------------------------------------

    def create_topic(
        self,
        topic: str,
        *,
        partitions: int = 1,
        replication_factor: int = 1,
        config: Mapping[str, Any] | None = None,
        assignments: Sequence[Sequence[int]] | None = None,
    ) -> TopicView:
        """Create ``topic`` as CreateTopics would; returns its view. KafkaApiError (with
        the code a broker would answer) on a bad request, e.g. TOPIC_ALREADY_EXISTS."""
        check_int(partitions, "create_topic: partitions")
        check_int(replication_factor, "create_topic: replication_factor")
        cfg = {k: str(v) for k, v in (config or {}).items()}
        layout = [list(a) for a in assignments] if assignments else None

        def do() -> TopicView:
            t = self._state.create_topic(
                topic, partitions, replication_factor, cfg, assignments=layout
            )
            return topic_view(t, self._read_records)

        return self._call(do)

    def delete_topic(self, topic: str) -> None:
        """Delete ``topic`` as DeleteTopics would."""
        self._call(lambda: self._state.delete_topic(topic))

    def recreate_topic(self, topic: str) -> TopicView:
        """Delete ``topic`` and create it again, empty, with the same layout and configs and
        a new topic id (clients using topic ids see UNKNOWN_TOPIC_ID)."""
        return self._call(lambda: topic_view(self._state.recreate_topic(topic), self._read_records))

    def add_partitions(self, topic: str, *, total: int) -> TopicView:
        """Grow ``topic`` to ``total`` partitions, as CreatePartitions would (never shrinks:
        KafkaApiError INVALID_PARTITIONS when ``total`` is not above the current count)."""
        check_int(total, "add_partitions: total", 1)

        def do() -> TopicView:
            self._state.create_partitions(topic, total)
            return topic_view(self._state.topic(topic), self._read_records)

        return self._call(do)

    def produce(
        self,
        topic: str,
        value: bytes | str | None,
        *,
        key: bytes | str | None = None,
        partition: int = 0,
        headers: Sequence[tuple[str, bytes | str | None]] = (),
        timestamp: int | None = None,
    ) -> int:
        """Append one record as a producer would (for test setup); returns its offset."""
        v, k, hdrs = record_args(value, key, headers, timestamp)

        def do() -> int:
            t = self._state.topic(topic)
            p = t.partition(partition)
            ts = self._state.now_ms() if timestamp is None else timestamp
            data = rec.encode_batch([rec.Record(0, ts, k, v, hdrs)])
            res = append_records(self._state, t, p, data)
            if res.error != ErrorCode.NONE:
                raise KafkaApiError(res.error, res.message or "")
            return res.base_offset

        return self._call(do)

    def delete_records(self, topic: str, partition: int, *, before_offset: int) -> int:
        """Advance the log start offset to ``before_offset`` (retention, as DeleteRecords);
        returns the new log start offset. Consumers below it get OFFSET_OUT_OF_RANGE.

        As Kafka: ``before_offset=-1`` means the high watermark (delete every record); one
        below the log start changes nothing; one above the high watermark (or below -1)
        raises KafkaApiError OFFSET_OUT_OF_RANGE, and a topic whose ``cleanup.policy`` has
        no ``delete`` KafkaApiError POLICY_VIOLATION.
        """
        check_int(before_offset, "delete_records: before_offset")
        return self._call(
            lambda: self._state.delete_records_before(topic, partition, before_offset)
        )

    def truncate_log(self, topic: str, partition: int, *, to_offset: int) -> None:
        """Unclean election: drop records at and above ``to_offset`` (whole batches) and
        start a new leader epoch, so KIP-320 clients detect the loss.

        ``to_offset`` runs from the log start offset to the high watermark (which keeps
        every record and only starts the new epoch); outside that KafkaApiError
        OFFSET_OUT_OF_RANGE names the range: an election can lose records, never add offsets.
        """
        check_int(to_offset, "truncate_log: to_offset")
        self._call(lambda: self._state.truncate_log(topic, partition, to_offset))

    def topic(self, topic: str) -> TopicView:
        """A snapshot of ``topic`` (KafkaApiError UNKNOWN_TOPIC_OR_PARTITION if absent)."""
        return self._read(lambda: topic_view(self._state.topic(topic), self._read_records))

    def topics(self) -> list[str]:
        """Names of every topic, sorted."""
        return self._read(lambda: sorted(self._state.topics))

    def _read_records(self, topic: str, partition: int, include_control: bool) -> list[rec.Record]:
        return self._read(
            lambda: self._state.partition(topic, partition).records(include_control=include_control)
        )

    # -- replication ------------------------------------------------------------------------

    def move_leader(self, topic: str, partition: int, *, to: int) -> None:
        """Make broker ``to`` the leader (bumps the leader epoch; clients see it in Metadata).

        ``to`` joins the replicas and ISR if needed. As Kafka's ElectLeaders, a broker that
        already leads raises KafkaApiError ELECTION_NOT_NEEDED (the epoch is kept); a stopped
        or unknown broker BROKER_NOT_AVAILABLE.
        """
        check_int(to, "move_leader: to")
        self._call(lambda: self._state.move_leader(topic, partition, to))

    def set_isr(self, topic: str, partition: int, *, to: Sequence[int]) -> None:
        """Set the ISR of a partition (grow or shrink; the leader moves if it leaves).

        As Kafka's controller: the ISR is never empty (KafkaApiError INVALID_REQUEST), a
        stopped broker cannot join it (INELIGIBLE_REPLICA), and the same ISR again changes
        nothing (no new partition epoch).
        """
        if isinstance(to, str | bytes) or not isinstance(to, Sequence):
            raise ConfigError(f"set_isr: to must be a list of broker ids, got {to!r}")
        isr = [check_int(b, "set_isr: to[...]") for b in to]
        self._call(lambda: self._state.set_isr(topic, partition, isr))

    def cap_api_versions(self, caps: Mapping[str | int, int]) -> None:
        """Advertise at most these versions, e.g. ``{"Fetch": 11}``, as an older Kafka would.

        Clients see the caps in their next ApiVersions (new connections). Undo with
        :meth:`uncap_api_versions`.
        """
        resolved = api_caps(caps)
        self._call(lambda: self._state.cap_api_versions(resolved))

    def uncap_api_versions(self) -> None:
        """Undo :meth:`cap_api_versions`: advertise every version served again."""
        self._call(lambda: self._state.api_version_caps.clear())

    # -- consumer groups -----------------------------------------------------------------------

    def group(self, group: str) -> GroupView:
        """A snapshot of ``group`` (KafkaApiError GROUP_ID_NOT_FOUND if absent)."""
        return self._read(lambda: group_view(self._state, group))

    def groups(self) -> list[str]:
        """Ids of every group (classic, consumer, and offset-only "simple" groups)."""
        return self._read(lambda: self._state.groups.group_ids())

    def committed_offsets(self, group: str) -> dict[tuple[str, int], int]:
        """{(topic, partition): committed offset} of ``group`` ({} if it does not exist)."""
        return self._read(
            lambda: {k: v.offset for k, v in self._state.groups.committed(group).items()}
        )

    def commit_offsets(
        self, group: str, offsets: Mapping[tuple[str, int], int], *, metadata: str = ""
    ) -> None:
        """Store committed offsets directly (test setup), as a simple commit would.

        As Kafka's OffsetCommit from outside the group (no member id, generation -1):
        refused while the group has members (KafkaApiError UNKNOWN_MEMBER_ID for a classic
        group, the consumer group's own code for a KIP-848 one), ``metadata`` longer than
        ``offset.metadata.max.bytes`` is OFFSET_METADATA_TOO_LARGE, an unknown partition
        UNKNOWN_TOPIC_OR_PARTITION; nothing is stored then.
        """

        def do() -> None:
            from mockkafka.cluster.groups import OFFSET_METADATA_MAX_BYTES  # made on first use

            gc = self._state.groups
            for (topic, partition), _ in offsets.items():
                self._state.partition(topic, partition)  # raises for an unknown partition
                err = gc.commit_error(topic, partition, metadata)
                if err != ErrorCode.NONE:
                    raise KafkaApiError(
                        err,
                        f"commit_offsets: metadata of {len(metadata.encode())} bytes is over "
                        f"offset.metadata.max.bytes ({OFFSET_METADATA_MAX_BYTES})",
                    )
            err = gc.validate_offset_commit(group, "", None, -1)
            if err != ErrorCode.NONE:
                raise KafkaApiError(
                    err,
                    f"commit_offsets: group {group!r} has members, and Kafka takes offsets "
                    "from outside a group only while it is empty; commit from a member, or "
                    "before the consumers join",
                )
            for (topic, partition), offset in offsets.items():
                gc.store_committed_offset(group, topic, partition, offset, -1, metadata)

        self._call(do)

    def trigger_rebalance(self, group: str) -> None:
        """Start a rebalance of ``group`` now: classic members get REBALANCE_IN_PROGRESS on
        their next heartbeat and rejoin; a KIP-848 group computes a new target assignment."""
        self._call(lambda: self._state.groups.trigger_rebalance(group))

    def expire_member(self, group: str, member_id: str) -> None:
        """Remove ``member_id`` as if its session timed out (the group rebalances)."""
        self._call(lambda: self._state.groups.expire_member(group, member_id))

    # -- share groups (KIP-932) -----------------------------------------------------------------

    def share_group(self, group: str) -> ShareGroupView:
        """A snapshot of the share group ``group``: members, assignments, and per partition
        the start offset and every in-flight record's state and delivery count
        (KafkaApiError GROUP_ID_NOT_FOUND if there is no such share group)."""
        return self._read(lambda: share_group_view(self._state, group))

    def share_groups(self) -> list[str]:
        """Ids of every share group (they are also among :meth:`groups`)."""
        return self._read(lambda: self._state.groups.share_group_ids())

    def expire_acquisition_locks(
        self, group: str, *, topic: str | None = None, partition: int | None = None
    ) -> int:
        """Release the records members of share group ``group`` hold (in ``topic`` /
        ``partition`` if given) as if their acquisition locks timed out: they become
        Available for the next ShareFetch (Archived once they reach
        ``group.share.delivery.count.limit``). Returns how many were released."""
        if partition is not None and topic is None:
            raise ConfigError("expire_acquisition_locks: partition= needs topic=")
        return self._call(
            lambda: self._state.groups.expire_acquisition_locks(group, topic, partition)
        )

    # -- transactions --------------------------------------------------------------------------

    def transaction(self, transactional_id: str) -> TransactionView:
        """A snapshot of ``transactional_id`` (KafkaApiError TRANSACTIONAL_ID_NOT_FOUND if no
        producer has initialised it)."""
        st = self._state
        return self._read(
            lambda: transaction_view(st.coordinators, st.transactions._require(transactional_id))
        )

    def transactions(self, *, state: str | None = None) -> list[TransactionView]:
        """Every transactional id (optionally only those in ``state``), sorted by id."""
        check_choice(state, STATE_NAMES, "state", "transaction state")
        st = self._state

        def do() -> list[TransactionView]:
            txns = st.transactions.matching(states={state} if state else None)
            return [transaction_view(st.coordinators, t) for t in txns]

        return self._read(do)

    def abort_transaction(self, transactional_id: str) -> bool:
        """Abort the ongoing transaction now (abort markers written), keeping the producer's
        epoch: its next produce or EndTxn(commit) in that transaction answers
        INVALID_TXN_STATE. Returns False when no transaction was ongoing."""
        return self._call(lambda: self._state.transactions.abort(transactional_id))

    def expire_transaction(self, transactional_id: str) -> bool:
        """Time the ongoing transaction out now, as ``transaction.timeout.ms`` would: it is
        aborted and the epoch bumped, so the producer is fenced. False when none was ongoing."""
        return self._call(lambda: self._state.transactions.expire(transactional_id))

    def fence_producer(self, transactional_id: str) -> int:
        """Bump the epoch of ``transactional_id`` (aborting an ongoing transaction), as a new
        producer instance would: the current one gets PRODUCER_FENCED. Returns the new epoch."""
        return self._call(lambda: self._state.transactions.fence(transactional_id))

    def delay_transaction_markers(self, *, ms: int) -> None:
        """Write transaction markers ``ms`` after EndTxn (0: at once). Meanwhile the
        coordinator answers CONCURRENT_TRANSACTIONS to the producer's next transaction."""
        check_int(ms, "delay_transaction_markers: ms", 0)

        def do() -> None:
            self._state.transactions.marker_delay_ms = ms

        self._call(do)

    # -- coordinators -------------------------------------------------------------------------

    def coordinator(self, *, group: str | None = None, transactional_id: str | None = None) -> int:
        """The broker id coordinating ``group`` or ``transactional_id`` (give exactly one)."""
        key_type, key = coordinator_key(group, transactional_id, "coordinator")
        assert key is not None
        return self._read(lambda: self._state.coordinators.coordinator(key_type, key))

    def move_coordinator(
        self, *, group: str | None = None, transactional_id: str | None = None, to: int
    ) -> None:
        """Make broker ``to`` the coordinator of ``group`` or ``transactional_id``.

        The old coordinator answers NOT_COORDINATOR (parked JoinGroup/SyncGroup included),
        clients look the coordinator up again; members, generation, committed offsets and
        transaction state are kept, as after a Kafka coordinator failover. The broker that
        already coordinates it raises KafkaApiError ELECTION_NOT_NEEDED, a stopped or
        unknown one BROKER_NOT_AVAILABLE.
        """
        key_type, key = coordinator_key(group, transactional_id, "move_coordinator")
        check_int(to, "move_coordinator: to")
        assert key is not None
        if key_type == GROUP:
            self._call(lambda: self._state.groups.move_coordinator(key, to))
        else:
            self._call(lambda: self._state.coordinators.move(key_type, key, to))

    def coordinator_loading(
        self, *, group: str | None = None, transactional_id: str | None = None, ms: int
    ) -> None:
        """Answer COORDINATOR_LOAD_IN_PROGRESS for ``ms`` to requests for ``group`` or
        ``transactional_id`` (neither given: every group), as after a failover."""
        key_type, key = coordinator_key(
            group, transactional_id, "coordinator_loading", allow_none=True
        )
        check_int(ms, "coordinator_loading: ms", 0)
        self._call(lambda: self._state.coordinators.set_loading(key_type, key, ms))

    # -- configs --------------------------------------------------------------------------------

    def set_topic_config(self, topic: str, configs: Mapping[str, Any]) -> None:
        """Set topic configs ``{key: value}``; a value of None resets the key to its
        default. KafkaApiError INVALID_CONFIG names a bad key or value."""
        cfg = {k: (None if v is None else str(v)) for k, v in configs.items()}
        self._call(lambda: self._state.set_topic_config(topic, cfg))

    def set_group_config(self, group: str, configs: Mapping[str, Any]) -> None:
        """Set configs of consumer or share group ``group`` (the GROUP resource of
        IncrementalAlterConfigs: ``share.auto.offset.reset``, ``share.record.lock.duration.ms``,
        ``consumer.session.timeout.ms``, ...); a value of None resets the key to its default.
        The group need not exist yet. ConfigError names an unknown key or a bad value."""
        where = "set_group_config"
        items = config_items(configs, where)
        self._call(lambda: set_group_configs(self._state, group, items, where=where))

    def set_broker_config(self, configs: Mapping[str, Any], *, broker: int | None = None) -> None:
        """Change broker configs at run time, as an operator's IncrementalAlterConfigs would.

        ``broker=None`` sets the cluster-wide default (DescribeConfigs source
        DYNAMIC_DEFAULT_BROKER_CONFIG), a broker id sets that broker's own value
        (DYNAMIC_BROKER_CONFIG); a value of None deletes the dynamic value. An unknown name
        raises ConfigError with a did-you-mean; a config Kafka cannot change at run time
        (``num.partitions``, ...) raises KafkaApiError INVALID_REQUEST: give it when the
        cluster is built, ``Cluster(config={...})``.
        """
        check_broker_configs(
            {k: v for k, v in configs.items() if v is not None},
            where="set_broker_config",
            kafka_version=self._state.config.kafka_version,
        )
        cfg = {k: (None if v is None else config_text(v)) for k, v in configs.items()}
        self._call(lambda: self._state.set_broker_config(cfg, broker))

    def set_client_quotas(
        self,
        quotas: Mapping[str, float | None],
        *,
        user: str | None = None,
        client_id: str | None = None,
        ip: str | None = None,
    ) -> None:
        """Set client quotas as AlterClientQuotas would (a value of None removes the key).

        The entity is the ``user`` and/or ``client_id`` (or an ``ip``) given; the name
        ``"<default>"`` is the default entity of that type. Quotas are enforced:
        ``cluster.set_client_quotas({"producer_byte_rate": 1024}, client_id="app")`` makes
        the broker answer that client with ``throttle_time_ms`` and stop reading from it for
        that long, as Kafka does. A bad key or value raises KafkaApiError INVALID_REQUEST.
        """
        pairs = quota_entity(user, client_id, ip)
        ops = [(k, None if v is None else float(v)) for k, v in quotas.items()]
        self._call(lambda: client_quotas(self._state).alter(make_entity(pairs), ops, apply=True))

    # -- ACLs -----------------------------------------------------------------------------------

    def _add_acls(self, bindings: tuple[AclBinding, ...], verb: str) -> None:
        if not self._state.config.authorizer:
            raise ConfigError(
                f"{verb}: this cluster has no authorizer, so no ACL would be checked: make it "
                "with mockkafka.Cluster(authorizer=True, super_users=[...]) (in pytest: "
                "@pytest.mark.kafka_cluster(authorizer=True, ...))"
            )

        def do() -> None:
            for acl in bindings:
                self._state.acls.create(acl)

        self._call(do)

    def _delete_acls(self, filters: tuple[AclFilter, ...]) -> int:
        return self._call(lambda: len(self._state.acls.delete(*filters)))

    def _describe_acls(self, filters: tuple[AclFilter, ...]) -> tuple[AclView, ...]:
        return self._read(lambda: tuple(acl_view(a) for a in self._state.acls.describe(*filters)))

    # -- wait probes (what each wait checks; the waits are on the cluster classes) -------------

    def _group_probe(
        self,
        group: str,
        state: str | None,
        members: int | None,
        where: Callable[[GroupView], bool] | None,
    ) -> tuple[Callable[[], Seen[GroupView]], str]:
        # The probe reads the state when it runs (on the loop), never here on the caller's
        # thread: nothing of the state is captured ahead of time.
        st = self._state
        return group_probe(
            lambda: group_view(st, group) if group in st.groups.groups else None,
            group,
            state,
            members,
            where,
        )

    def _share_group_probe(
        self,
        group: str,
        state: str | None,
        members: int | None,
        where: Callable[[ShareGroupView], bool] | None,
    ) -> tuple[Callable[[], Seen[ShareGroupView]], str]:
        check_choice(state, SHARE_GROUP_STATES, "state", "share group state")
        st = self._state
        return members_probe(
            lambda: share_group_view(st, group) if group in st.groups.share_group_ids() else None,
            "the share group does not exist",
            state,
            members,
            where,
        ), f"wait_for_share_group({group!r}, state={state!r}, members={members!r})"

    def _transaction_probe(
        self,
        transactional_id: str,
        state: str | None,
        where: Callable[[TransactionView], bool] | None,
    ) -> tuple[Callable[[], Seen[TransactionView]], str]:
        st = self._state

        def read() -> TransactionView | None:
            txn = st.transactions.transactions.get(transactional_id)
            return None if txn is None else transaction_view(st.coordinators, txn)

        return transaction_probe(read, transactional_id, state, where)

    def _records_probe(
        self, topic: str, partition: int | None, count: int
    ) -> tuple[Callable[[], Seen[list[rec.Record]]], str]:
        what = records_wait(topic, partition, count)
        where = topic if partition is None else f"{topic}-{partition}"
        st = self._state

        def probe() -> Seen[list[rec.Record]]:
            t = st.topics.get(topic)
            if t is None:
                return Seen(False, [], f"no topic {topic!r}")
            parts = t.partitions if partition is None else [t.partition(partition)]
            # Cheap check first: offsets bound the record count from above.
            held = sum(p.log.high_watermark - p.log.log_start_offset for p in parts)
            if held < count:
                return Seen(False, [], f"{where} holds at most {held} record(s)")
            got = [r for p in parts for r in p.records()]
            return Seen(len(got) >= count, got, f"{where} holds {len(got)} record(s)")

        return probe, what

    def _committed_probe(
        self, group: str, topic: str, partition: int, offset: int
    ) -> tuple[Callable[[], Seen[int]], str]:
        st = self._state

        def read() -> int | None:
            c = st.groups.committed(group).get((topic, partition))
            return None if c is None else c.offset

        return committed_probe(read, group, topic, partition, offset)

    def _broker_probe(self, broker: int, up: bool) -> tuple[Callable[[], Seen[None]], str]:
        st = self._state
        self._read(lambda: st.broker(broker))  # KafkaApiError for an unknown broker
        return broker_probe(lambda: st.brokers[broker].running, broker, up)


#: Kept for the modules that import them from here.
_check_choice = check_choice

__all__ = [
    "ClusterVerbs",
    "coordinator_key",
    "describe",
]

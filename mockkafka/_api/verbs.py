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

from mockkafka._api.acl_args import acl_bindings, acl_filters
from mockkafka.cluster.acls import AclBinding, AclOperation, AclPermissionType
from mockkafka.cluster.configs import check_broker_configs, config_text, set_group_configs
from mockkafka.cluster.coordinators import GROUP, TRANSACTION
from mockkafka.cluster.produce import append_records
from mockkafka.cluster.quotas import client_quotas, make_entity
from mockkafka.cluster.transactions import STATE_NAMES
from mockkafka.errors import ConfigError, ErrorCode, KafkaApiError
from mockkafka.faults.model import check_api_names
from mockkafka.protocol import records as rec
from mockkafka.protocol.apis import api as lookup_api
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

SHARE_GROUP_STATES = frozenset({"Empty", "Stable", "Dead"})

GROUP_STATES = frozenset(
    {
        "Empty",
        "PreparingRebalance",
        "CompletingRebalance",
        "Stable",
        "Dead",
        "Assigning",
        "Reconciling",
    }
)


V = TypeVar("V", GroupView, ShareGroupView)


def _members_probe(
    view: Callable[[], V | None],
    missing: str,
    state: str | None,
    members: int | None,
    where: Callable[[V], bool] | None,
) -> Callable[[], Seen[V]]:
    """A wait's probe on a group view: its state, member count and ``where``."""

    def probe() -> Seen[V]:
        v = view()
        if v is None:
            return Seen(False, None, missing)  # type: ignore[arg-type]
        ok = (
            (state is None or v.state == state)
            and (members is None or len(v.members) == members)
            and (where is None or where(v))
        )
        return Seen(ok, v, v.summary())

    return probe


def _bytes(x: bytes | str | None, arg: str) -> bytes | None:
    if x is None or isinstance(x, bytes):
        return x
    if isinstance(x, str):
        return x.encode()
    raise ConfigError(f"{arg} must be bytes, str or None, not {type(x).__name__}")


def coordinator_key(
    group: str | None, transactional_id: str | None, verb: str, *, allow_none: bool = False
) -> tuple[int, str | None]:
    """(GROUP or TRANSACTION, key) from the ``group=`` / ``transactional_id=`` pair."""
    if group is not None and transactional_id is not None:
        raise ConfigError(f"{verb}: give group= or transactional_id=, not both")
    for arg, value in (("group", group), ("transactional_id", transactional_id)):
        if value is not None and not isinstance(value, str):
            raise ConfigError(f"{verb}: {arg} must be a str, got {value!r}")
    if transactional_id is not None:
        return TRANSACTION, transactional_id
    if group is None and not allow_none:
        raise ConfigError(f"{verb}: give group= or transactional_id=")
    return GROUP, group


class ClusterVerbs:
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
        for arg, value in (("partitions", partitions), ("replication_factor", replication_factor)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise ConfigError(f"create_topic: {arg} must be an int, got {value!r}")
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
        KafkaApiError INVALID_PARTITIONS)."""

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
        v, k = _bytes(value, "value"), _bytes(key, "key")
        if timestamp is not None and (
            isinstance(timestamp, bool) or not isinstance(timestamp, int)
        ):
            raise ConfigError(f"produce: timestamp must be an int (ms) or None, got {timestamp!r}")
        hdrs = tuple((hk, _bytes(hv, f"headers[{hk!r}]")) for hk, hv in headers)

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
        returns the new log start offset. Consumers below it get OFFSET_OUT_OF_RANGE."""
        return self._call(
            lambda: self._state.delete_records_before(topic, partition, before_offset)
        )

    def truncate_log(self, topic: str, partition: int, *, to_offset: int) -> None:
        """Unclean election: drop records at and above ``to_offset`` (whole batches) and
        start a new leader epoch, so KIP-320 clients detect the loss."""
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
        """Make broker ``to`` the leader (bumps the leader epoch; clients see it in Metadata)."""
        self._call(lambda: self._state.set_leader(topic, partition, to))

    def set_isr(self, topic: str, partition: int, *, to: Sequence[int]) -> None:
        """Set the ISR of a partition (grow or shrink; the leader moves if it leaves)."""
        isr = list(to)
        self._call(lambda: self._state.set_isr(topic, partition, isr))

    def cap_api_versions(self, caps: Mapping[str | int, int]) -> None:
        """Advertise at most these versions, e.g. ``{"Fetch": 11}``, as an older Kafka would.

        Clients see the caps in their next ApiVersions (new connections). Undo with
        :meth:`uncap_api_versions`.
        """
        resolved: dict[int, int] = {}
        for k, v in caps.items():
            try:
                a = lookup_api(k)
            except KeyError:
                check_api_names(str(k), "caps")  # raises ConfigError with a did-you-mean
                raise
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ConfigError(f"caps[{k!r}] must be a version >= 0, got {v!r}")
            resolved[a.key] = v
        self._call(lambda: self._state.cap_api_versions(resolved))

    def uncap_api_versions(self) -> None:
        """Undo :meth:`cap_api_versions`: advertise every version served again."""
        self._call(self._state.api_version_caps.clear)

    # -- consumer groups -----------------------------------------------------------------------

    def group(self, group: str) -> GroupView:
        """A snapshot of ``group`` (KafkaApiError GROUP_ID_NOT_FOUND if absent)."""
        return self._read(lambda: group_view(self._state, group))

    def groups(self) -> list[str]:
        """Ids of every group (classic, consumer, and offset-only "simple" groups)."""
        return self._read(self._state.groups.group_ids)

    def committed_offsets(self, group: str) -> dict[tuple[str, int], int]:
        """{(topic, partition): committed offset} of ``group`` ({} if it does not exist)."""
        return self._read(
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

    # -- share groups (KIP-932) -----------------------------------------------------------------

    def share_group(self, group: str) -> ShareGroupView:
        """A snapshot of the share group ``group``: members, assignments, and per partition
        the start offset and every in-flight record's state and delivery count
        (KafkaApiError GROUP_ID_NOT_FOUND if there is no such share group)."""
        return self._read(lambda: share_group_view(self._state, group))

    def share_groups(self) -> list[str]:
        """Ids of every share group (they are also among :meth:`groups`)."""
        return self._read(self._state.groups.share_group_ids)

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
        _check_choice(state, STATE_NAMES, "state", "transaction state")
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
        if isinstance(ms, bool) or not isinstance(ms, int) or ms < 0:
            raise ConfigError(f"delay_transaction_markers: ms must be an int >= 0, got {ms!r}")

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
        transaction state are kept, as after a Kafka coordinator failover.
        """
        key_type, key = coordinator_key(group, transactional_id, "move_coordinator")
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
        if isinstance(ms, bool) or not isinstance(ms, int) or ms < 0:
            raise ConfigError(f"coordinator_loading: ms must be an int >= 0, got {ms!r}")
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
        if not isinstance(configs, Mapping):
            raise ConfigError(f"{where}: configs must be a dict {{config: value}}")
        items = dict(configs)
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
        given = {"user": user, "client-id": client_id, "ip": ip}
        pairs = {t: (None if n == "<default>" else n) for t, n in given.items() if n is not None}
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

    def allow(
        self,
        principal: str,
        operations: str | AclOperation | Sequence[str | AclOperation],
        *,
        topic: str | None = None,
        group: str | None = None,
        transactional_id: str | None = None,
        cluster: bool = False,
        prefixed: bool = False,
        host: str = "*",
    ) -> None:
        """Let ``principal`` (``"User:alice"``, ``"User:*"``: everyone) do ``operations``
        (``"write"``, ``["read", "describe"]``, ``"all"``; any case) on one resource:
        ``topic=``, ``group=``, ``transactional_id=`` (a name, ``"*"`` for every one,
        ``prefixed=True`` for every name starting so) or ``cluster=True``, from ``host``.

        ALLOW ACLs, as CreateAcls from a super user's admin client would make: the next
        request is authorized with them (the cluster needs ``authorizer=True``). READ,
        WRITE, DELETE and ALTER imply DESCRIBE. A consumer needs READ on its topics and on
        its group; an idempotent producer of old clients IDEMPOTENT_WRITE on the cluster.
        See them with :meth:`acls`, take them back with :meth:`remove_acls`.
        """
        bindings = acl_bindings(
            "allow",
            AclPermissionType.ALLOW,
            principal,
            operations,
            topic=topic,
            group=group,
            transactional_id=transactional_id,
            cluster=cluster,
            prefixed=prefixed,
            host=host,
        )
        self._add_acls(bindings, "allow")

    def deny(
        self,
        principal: str,
        operations: str | AclOperation | Sequence[str | AclOperation],
        *,
        topic: str | None = None,
        group: str | None = None,
        transactional_id: str | None = None,
        cluster: bool = False,
        prefixed: bool = False,
        host: str = "*",
    ) -> None:
        """Forbid ``principal`` ``operations`` on one resource: DENY ACLs, with the
        arguments of :meth:`allow`. A matching DENY beats every ALLOW (``deny("User:*",
        "write", topic="audit")`` shuts every writer out but super users); undo it with
        ``remove_acls(..., permission="DENY")``."""
        bindings = acl_bindings(
            "deny",
            AclPermissionType.DENY,
            principal,
            operations,
            topic=topic,
            group=group,
            transactional_id=transactional_id,
            cluster=cluster,
            prefixed=prefixed,
            host=host,
        )
        self._add_acls(bindings, "deny")

    def remove_acls(
        self,
        principal: str | None = None,
        operations: str | AclOperation | Sequence[str | AclOperation] | None = None,
        *,
        topic: str | None = None,
        group: str | None = None,
        transactional_id: str | None = None,
        cluster: bool = False,
        prefixed: bool | None = None,
        host: str | None = None,
        permission: str | AclPermissionType | None = None,
    ) -> int:
        """Delete every ACL matching the filter, as DeleteAcls would; returns how many went.

        Each argument left at None matches any value: ``remove_acls()`` removes every ACL,
        ``remove_acls("User:alice", topic="orders")`` alice's ACLs naming topic ``orders``
        (LITERAL or PREFIXED; ``prefixed=False`` / ``True`` for one kind; ACLs for ``"*"``
        are those of ``topic="*"``), ``permission="DENY"`` only DENY ACLs. Check what is
        left with :meth:`acls`.
        """
        filters = acl_filters(
            "remove_acls",
            principal,
            operations,
            topic=topic,
            group=group,
            transactional_id=transactional_id,
            cluster=cluster,
            prefixed=prefixed,
            host=host,
            permission=permission,
        )

        return self._call(lambda: len(self._state.acls.delete(*filters)))

    def acls(
        self,
        principal: str | None = None,
        operations: str | AclOperation | Sequence[str | AclOperation] | None = None,
        *,
        topic: str | None = None,
        group: str | None = None,
        transactional_id: str | None = None,
        cluster: bool = False,
        prefixed: bool | None = None,
        host: str | None = None,
        permission: str | AclPermissionType | None = None,
    ) -> tuple[AclView, ...]:
        """The ACLs matching the filter of :meth:`remove_acls` (no argument: every ACL), in
        creation order, as frozen :class:`~mockkafka.AclView` -- those made by
        :meth:`allow` / :meth:`deny` and by clients' CreateAcls alike (one store)."""
        filters = acl_filters(
            "acls",
            principal,
            operations,
            topic=topic,
            group=group,
            transactional_id=transactional_id,
            cluster=cluster,
            prefixed=prefixed,
            host=host,
            permission=permission,
        )
        return self._read(lambda: tuple(acl_view(a) for a in self._state.acls.describe(*filters)))

    # -- wait probes (what each wait checks; the waits are on the cluster classes) -------------

    def _group_probe(
        self,
        group: str,
        state: str | None,
        members: int | None,
        where: Callable[[GroupView], bool] | None,
    ) -> tuple[Callable[[], Seen[GroupView]], str]:
        _check_choice(state, GROUP_STATES, "state", "group state")
        groups = self._state.groups
        return _members_probe(
            lambda: group_view(self._state, group) if group in groups.groups else None,
            "the group does not exist",
            state,
            members,
            where,
        ), f"wait_for_group({group!r}, state={state!r}, members={members!r})"

    def _share_group_probe(
        self,
        group: str,
        state: str | None,
        members: int | None,
        where: Callable[[ShareGroupView], bool] | None,
    ) -> tuple[Callable[[], Seen[ShareGroupView]], str]:
        _check_choice(state, SHARE_GROUP_STATES, "state", "share group state")
        groups = self._state.groups
        return _members_probe(
            lambda: (
                share_group_view(self._state, group) if group in groups.share_group_ids() else None
            ),
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
        _check_choice(state, STATE_NAMES, "state", "transaction state")
        what = f"wait_for_transaction({transactional_id!r}, state={state!r})"
        st = self._state

        def probe() -> Seen[TransactionView]:
            txn = st.transactions.transactions.get(transactional_id)
            if txn is None:
                return Seen(False, None, "no producer initialised it yet")  # type: ignore[arg-type]
            v = transaction_view(st.coordinators, txn)
            ok = (state is None or v.state == state) and (where is None or where(v))
            return Seen(ok, v, v.summary())

        return probe, what

    def _records_probe(
        self, topic: str, partition: int | None, count: int
    ) -> tuple[Callable[[], Seen[list[rec.Record]]], str]:
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ConfigError(f"wait_for_records: count must be an int >= 0, got {count!r}")
        where = topic if partition is None else f"{topic}-{partition}"
        what = f"wait_for_records({topic!r}, partition={partition!r}, count={count})"
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
        what = f"wait_for_committed({group!r}, {topic!r}, {partition}, offset={offset})"
        groups = self._state.groups

        def probe() -> Seen[int]:
            c = groups.committed(group).get((topic, partition))
            if c is None:
                return Seen(False, -1, f"group {group!r} has no offset for {topic}-{partition}")
            return Seen(c.offset >= offset, c.offset, f"committed offset {c.offset}")

        return probe, what

    def _broker_probe(self, broker: int, up: bool) -> tuple[Callable[[], Seen[None]], str]:
        st = self._state
        self._read(lambda: st.broker(broker))  # KafkaApiError for an unknown broker
        what = f"wait_for_broker({broker}, up={up})"

        def probe() -> Seen[None]:
            running = st.brokers[broker].running
            return Seen(running == up, None, f"broker {broker} {'up' if running else 'down'}")

        return probe, what


def _check_choice(value: str | None, choices: frozenset[str], arg: str, what: str) -> None:
    if value is not None and value not in choices:
        import difflib

        close = difflib.get_close_matches(str(value), sorted(choices), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ConfigError(f"unknown {what} {arg}={value!r}{hint}; use one of {sorted(choices)}")


__all__ = [
    "ClusterVerbs",
    "coordinator_key",
    "describe",
]

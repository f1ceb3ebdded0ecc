"""Cluster verbs on a :class:`~mockkafka.Proxy`: the names and signatures of ``Cluster``'s.

Each verb is one of three kinds, given by one table, :data:`PROXY_VERBS`:

* ``ADMIN``: performed on the upstream cluster with an Admin API request (CreateTopics,
  IncrementalAlterConfigs, ElectLeaders, ...), sent by a blocking client on its own socket
  (``server/upstream.py``), in the caller's thread. Views (``topic``, ``group``, ...) and
  waits read the upstream the same way; waits poll it every 50 ms.
* ``PROXY``: emulated at the proxy: ``stop_broker(n)`` refuses new connections to broker
  n's listener and closes the open ones until ``start_broker(n)``; ``isolate_client`` cuts
  one client id off (a network partition); ``cap_api_versions`` rewrites ApiVersions
  answers; ``coordinator_loading`` and ``trigger_rebalance`` add the fault rule whose
  effect a client would see.
* a refusal: the verb needs state only the in-process fake has (``truncate_log``,
  ``set_isr``, ...); calling it raises :class:`NotOnProxy` naming what to use instead.

The scenario loader reads the same table to name the steps a proxy cannot run.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from mockkafka._api.acl_args import AclVerbs
from mockkafka._api.verb_args import (
    api_caps,
    check_choice,
    check_int,
    committed_probe,
    config_items,
    coordinator_key,
    group_probe,
    quota_entity,
    record_args,
    records_wait,
    transaction_probe,
)
from mockkafka.cluster.acls import (
    AclBinding,
    AclFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
)
from mockkafka.cluster.coordinators import TRANSACTION
from mockkafka.cluster.groups_common import OffsetAndMetadata
from mockkafka.cluster.transactions import STATE_NAMES
from mockkafka.errors import ConfigError, ErrorCode, KafkaApiError, MockKafkaError
from mockkafka.protocol import records as rec
from mockkafka.server.upstream_admin import UpstreamClient, check
from mockkafka.server.waits import Seen, Waits
from mockkafka.views import (
    AclView,
    GroupView,
    MemberView,
    PartitionView,
    ShareGroupView,
    TopicView,
    TransactionView,
    acl_view,
)

T = TypeVar("T")

ADMIN = "admin"
PROXY = "proxy"

_FAKE = "needs the in-process fake (mockkafka.Cluster)"

#: Every verb of ``Cluster``: ADMIN (done upstream), PROXY (emulated here), or why not.
PROXY_VERBS: dict[str, str] = {
    # topics and partitions
    "create_topic": ADMIN,
    "delete_topic": ADMIN,
    "recreate_topic": ADMIN,
    "add_partitions": ADMIN,
    "produce": ADMIN,
    "delete_records": ADMIN,
    "truncate_log": f"truncate_log {_FAKE}: Kafka has no request that drops acknowledged "
    "records; against real Kafka stop the leader's process and elect an out-of-sync replica",
    "topic": ADMIN,
    "topics": ADMIN,
    # replication
    "move_leader": ADMIN,
    "set_isr": f"set_isr {_FAKE}: Kafka's ISR follows replication; against real Kafka stop "
    "a follower's process (or proxy.stop_broker for clients only)",
    "cap_api_versions": PROXY,
    "uncap_api_versions": PROXY,
    # brokers
    "stop_broker": PROXY,
    "start_broker": PROXY,
    "restart_broker": PROXY,
    "reset": f"reset {_FAKE}: delete the topics you made with proxy.delete_topic",
    # groups
    "group": ADMIN,
    "groups": ADMIN,
    "committed_offsets": ADMIN,
    "commit_offsets": ADMIN,
    "trigger_rebalance": PROXY,
    "expire_member": f"expire_member {_FAKE}: against real Kafka use "
    "proxy.isolate_client(client_id) until the session times out",
    "share_group": f"share_group {_FAKE}",
    "share_groups": f"share_groups {_FAKE}",
    "expire_acquisition_locks": f"expire_acquisition_locks {_FAKE}",
    # transactions
    "transaction": ADMIN,
    "transactions": ADMIN,
    "abort_transaction": f"abort_transaction {_FAKE}",
    "expire_transaction": f"expire_transaction {_FAKE}: against real Kafka set the "
    "producer's transaction.timeout.ms",
    "fence_producer": f"fence_producer {_FAKE}: against real Kafka start a second "
    "producer with the same transactional.id",
    "delay_transaction_markers": f"delay_transaction_markers {_FAKE}",
    # coordinators
    "coordinator": ADMIN,
    "move_coordinator": f"move_coordinator {_FAKE}: Kafka moves a coordinator only with "
    "its __consumer_offsets partition's leader; use a fault rule answering NOT_COORDINATOR",
    "coordinator_loading": PROXY,
    # configs
    "set_topic_config": ADMIN,
    "set_group_config": ADMIN,
    "set_broker_config": ADMIN,
    "set_client_quotas": ADMIN,
    # ACLs
    "allow": ADMIN,
    "deny": ADMIN,
    "remove_acls": ADMIN,
    "acls": ADMIN,
    # waits
    "wait_for_group": ADMIN,
    "wait_for_records": ADMIN,
    "wait_for_committed": ADMIN,
    "wait_for_broker": PROXY,
    "wait_for_transaction": ADMIN,
    "wait_for_share_group": f"wait_for_share_group {_FAKE}",
}


def refusal(verb: str) -> str | None:
    """Why a proxy cannot run ``verb`` (None: it can)."""
    how = PROXY_VERBS.get(verb)
    if how is None:
        return f"{verb} is not a cluster verb a proxy knows"
    return None if how in (ADMIN, PROXY) else how


class NotOnProxy(MockKafkaError, NotImplementedError):
    """A cluster verb a :class:`~mockkafka.Proxy` cannot perform; the message says what to
    use instead."""


def _refused(name: str) -> Callable[..., Any]:
    def verb(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotOnProxy(PROXY_VERBS[name])

    verb.__name__ = name
    verb.__doc__ = f"Not on a proxy: {PROXY_VERBS[name]}."
    return verb


POLL_S = 0.05

#: Group-coordinator and transaction-coordinator APIs (what ``coordinator_loading`` affects).
_GROUP_APIS = (
    "JoinGroup",
    "SyncGroup",
    "Heartbeat",
    "LeaveGroup",
    "OffsetCommit",
    "OffsetFetch",
    "ConsumerGroupHeartbeat",
)
_TXN_APIS = ("InitProducerId", "AddPartitionsToTxn", "AddOffsetsToTxn", "EndTxn")
_RETRY = {
    ErrorCode.NOT_COORDINATOR,
    ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
    ErrorCode.COORDINATOR_NOT_AVAILABLE,
}


class ProxyVerbs(AclVerbs):
    """The cluster verbs of :class:`~mockkafka.Proxy` and :class:`~mockkafka.AsyncProxy`."""

    _admin: UpstreamClient
    #: the waits of the verbs: they poll the upstream every POLL_S (``Waits.polling``)
    _waits: Waits

    def _on_loop(self, fn: Callable[[], T]) -> T:  # pragma: no cover - provided by the proxy
        raise NotImplementedError

    @property
    def _proxy_server(self) -> Any:  # pragma: no cover - provided by the proxy
        raise NotImplementedError

    @property
    def _rules(self) -> Any:  # pragma: no cover - provided by the proxy
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
        """Create ``topic`` upstream with CreateTopics; returns its view once every partition
        has a leader. KafkaApiError with Kafka's code (TOPIC_ALREADY_EXISTS, ...)."""
        check_int(partitions, "create_topic: partitions", 1)
        check_int(replication_factor, "create_topic: replication_factor", 1)
        t: dict[str, Any] = {
            "name": topic,
            "num_partitions": -1 if assignments else partitions,
            "replication_factor": -1 if assignments else replication_factor,
            "assignments": [
                {"partition_index": i, "broker_ids": list(a)}
                for i, a in enumerate(assignments or ())
            ],
            "configs": [{"name": k, "value": str(v)} for k, v in (config or {}).items()],
        }
        resp = self._admin.request(
            "CreateTopics", {"topics": [t], "timeout_ms": 30000, "validate_only": False}
        )
        r = resp["topics"][0]
        check(r["error_code"], r.get("error_message"), f"create_topic {topic!r}")
        return self._settled(topic, lambda v: all(p.leader >= 0 for p in v.partitions))

    def delete_topic(self, topic: str) -> None:
        """Delete ``topic`` upstream with DeleteTopics (returns once Metadata no longer has it)."""
        resp = self._admin.request(
            "DeleteTopics", {"topics": [{"name": topic}], "timeout_ms": 30000}
        )
        r = resp["responses"][0]
        check(r["error_code"], r.get("error_message"), f"delete_topic {topic!r}")
        self._poll(
            lambda: Seen(topic not in self.topics(), None, f"{topic!r} is still listed"),
            30.0,
            f"delete_topic({topic!r})",
        )

    def recreate_topic(self, topic: str) -> TopicView:
        """Delete ``topic`` and create it again, empty, with its partition count,
        replication factor and topic configs (Kafka gives it a new topic id)."""
        old = self.topic(topic)
        rf = len(old.partitions[0].replicas) if old.partitions else 1
        self.delete_topic(topic)
        return self.create_topic(
            topic, partitions=len(old.partitions), replication_factor=rf, config=old.configs
        )

    def add_partitions(self, topic: str, *, total: int) -> TopicView:
        """Grow ``topic`` to ``total`` partitions with CreatePartitions."""
        check_int(total, "add_partitions: total", 1)
        resp = self._admin.request(
            "CreatePartitions",
            {
                "topics": [{"name": topic, "count": total, "assignments": None}],
                "timeout_ms": 30000,
                "validate_only": False,
            },
        )
        r = resp["results"][0]
        check(r["error_code"], r.get("error_message"), f"add_partitions {topic!r}")
        return self._settled(topic, lambda v: len(v.partitions) >= total)

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
        """Append one record upstream (Produce, acks=all, to the leader); returns its offset.
        It does not pass the proxy: no fault rule applies and ``traffic`` does not show it."""
        v, k, hdrs = record_args(value, key, headers, timestamp)
        ts = int(time.time() * 1000) if timestamp is None else timestamp
        data = rec.encode_batch([rec.Record(0, ts, k, v, hdrs)])
        leader = self._leader(topic, partition)
        body = {
            "transactional_id": None,
            "acks": -1,
            "timeout_ms": 30000,
            "topic_data": [
                {"name": topic, "partition_data": [{"index": partition, "records": data}]}
            ],
        }
        resp = self._admin.request("Produce", body, node=leader)
        p = resp["responses"][0]["partition_responses"][0]
        check(p["error_code"], p.get("error_message"), f"produce to {topic}-{partition}")
        return int(p["base_offset"])

    def delete_records(self, topic: str, partition: int, *, before_offset: int) -> int:
        """Advance the log start offset with DeleteRecords; returns the new log start.
        Kafka answers OFFSET_OUT_OF_RANGE above the high watermark (-1 means it) and
        POLICY_VIOLATION on a compacted topic, raised as KafkaApiError."""
        check_int(before_offset, "delete_records: before_offset")
        body = {
            "topics": [
                {
                    "name": topic,
                    "partitions": [{"partition_index": partition, "offset": before_offset}],
                }
            ],
            "timeout_ms": 30000,
        }
        resp = self._admin.request("DeleteRecords", body, node=self._leader(topic, partition))
        p = resp["topics"][0]["partitions"][0]
        check(p["error_code"], None, f"delete_records {topic}-{partition}")
        return int(p["low_watermark"])

    def topics(self) -> list[str]:
        """Names of every topic upstream (internal ones left out), sorted."""
        md = self._admin.metadata(None)
        return sorted(t["name"] for t in md["topics"] if not t.get("is_internal"))

    def topic(self, topic: str) -> TopicView:
        """A snapshot of ``topic`` upstream: Metadata, ListOffsets (log start, high
        watermark, last stable offset) and the topic's own configs (DescribeConfigs).
        ``records()`` fetches the log from the leader."""
        md = self._admin.metadata([topic])
        t = md["topics"][0]
        check(t["error_code"], None, f"topic {topic!r}")
        parts = sorted(t["partitions"], key=lambda p: p["partition_index"])
        starts = self._list_offsets(topic, parts, -2, 0)
        ends = self._list_offsets(topic, parts, -1, 0)
        stable = self._list_offsets(topic, parts, -1, 1)
        return TopicView(
            name=topic,
            topic_id=t.get("topic_id") or uuid.UUID(int=0),
            configs=self._topic_configs(topic),
            partitions=tuple(
                PartitionView(
                    topic=topic,
                    partition=p["partition_index"],
                    leader=p["leader_id"],
                    leader_epoch=p["leader_epoch"],
                    replicas=tuple(p["replica_nodes"]),
                    isr=tuple(p["isr_nodes"]),
                    log_start_offset=starts.get(p["partition_index"], 0),
                    high_watermark=ends.get(p["partition_index"], 0),
                    last_stable_offset=stable.get(p["partition_index"], 0),
                    _reader=self._read_records,
                )
                for p in parts
            ),
        )

    def _list_offsets(
        self, topic: str, parts: list[dict[str, Any]], timestamp: int, isolation: int
    ) -> dict[int, int]:
        by_leader: dict[int, list[int]] = {}
        for p in parts:
            by_leader.setdefault(p["leader_id"], []).append(p["partition_index"])
        out: dict[int, int] = {}
        for leader, idx in by_leader.items():
            if leader < 0:
                continue
            body = {
                "replica_id": -1,
                "isolation_level": isolation,
                "topics": [
                    {
                        "name": topic,
                        "partitions": [
                            {
                                "partition_index": i,
                                "current_leader_epoch": -1,
                                "timestamp": timestamp,
                            }
                            for i in idx
                        ],
                    }
                ],
            }
            resp = self._admin.request("ListOffsets", body, node=leader)
            for rt in resp["topics"]:
                for rp in rt["partitions"]:
                    if rp["error_code"] == 0:
                        out[rp["partition_index"]] = rp["offset"]
        return out

    def _topic_configs(self, topic: str) -> dict[str, str]:
        resp = self._admin.request(
            "DescribeConfigs",
            {
                "resources": [
                    {"resource_type": 2, "resource_name": topic, "configuration_keys": None}
                ],
                "include_synonyms": False,
                "include_documentation": False,
            },
        )
        r = resp["results"][0]
        if r["error_code"]:
            return {}
        # config_source 1: DYNAMIC_TOPIC_CONFIG, the topic's own value
        return {c["name"]: c["value"] for c in r["configs"] if c["config_source"] == 1}

    def _leader(self, topic: str, partition: int) -> int:
        md = self._admin.metadata([topic])
        t = md["topics"][0]
        check(t["error_code"], None, f"topic {topic!r}")
        for p in t["partitions"]:
            if p["partition_index"] == partition:
                check(p["error_code"], None, f"{topic}-{partition}")
                return int(p["leader_id"])
        raise KafkaApiError(
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"topic {topic!r} has no partition {partition}"
        )

    def _read_records(self, topic: str, partition: int, include_control: bool) -> list[rec.Record]:
        """Every record of ``topic``-``partition`` from its log start, fetched from the leader
        (read uncommitted; at most 10,000 Fetch requests)."""
        view = self.topic(topic).partition(partition)
        offset, end = view.log_start_offset, view.high_watermark
        out: list[rec.Record] = []
        for _ in range(10_000):
            if offset >= end:
                break
            body = {
                "replica_id": -1,
                "max_wait_ms": 0,
                "min_bytes": 0,
                "max_bytes": 8 << 20,
                "isolation_level": 0,
                "session_id": 0,
                "session_epoch": -1,
                "topics": [
                    {
                        "topic": topic,
                        "partitions": [
                            {
                                "partition": partition,
                                "current_leader_epoch": -1,
                                "fetch_offset": offset,
                                "last_fetched_epoch": -1,
                                "log_start_offset": -1,
                                "partition_max_bytes": 4 << 20,
                            }
                        ],
                    }
                ],
                "forgotten_topics_data": [],
                "rack_id": "",
            }
            resp = self._admin.request("Fetch", body, node=view.leader)
            p = resp["responses"][0]["partitions"][0]
            check(p["error_code"], None, f"fetch {topic}-{partition}")
            data = p.get("records") or b""
            batches = rec.split_batches(data, allow_partial=True)
            if not batches:
                break
            for header, raw in batches:
                offset = max(offset, header.base_offset + header.last_offset_delta + 1)
                out.extend(
                    r
                    for r in rec.decode_records(bytes(raw), include_control=include_control)
                    if r.offset >= view.log_start_offset
                )
        return out

    def _settled(self, topic: str, ok: Callable[[TopicView], bool]) -> TopicView:
        def probe() -> Seen[TopicView | None]:
            try:
                v = self.topic(topic)
            except KafkaApiError as exc:
                return Seen(False, None, str(exc))
            return Seen(ok(v), v, repr(v))

        got = self._poll(probe, 30.0, f"topic {topic!r} upstream")
        assert got is not None
        return got

    def _poll(self, probe: Callable[[], Seen[T]], timeout: float, what: str) -> T:
        return self._waits.wait(probe, timeout=timeout, what=what, async_name="-")

    # -- replication ------------------------------------------------------------------------

    def move_leader(self, topic: str, partition: int, *, to: int) -> None:
        """Make upstream broker ``to`` the leader: reorder the replicas so ``to`` is the
        preferred one (AlterPartitionReassignments, same replica set) and run a preferred
        election (ElectLeaders). ``to`` must already be a replica of the partition (the
        upstream needs as many brokers as the replication factor asks). A broker that
        already leads raises KafkaApiError ELECTION_NOT_NEEDED, as Kafka's ElectLeaders
        (and ``Cluster.move_leader``) answer."""
        check_int(to, "move_leader: to")
        view = self.topic(topic).partition(partition)
        if to not in view.replicas:
            raise KafkaApiError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"move_leader: broker {to} holds no replica of {topic}-{partition} upstream "
                f"(replicas {list(view.replicas)}); create the topic with a larger "
                "replication_factor on a cluster with more brokers",
            )
        if view.leader == to:
            raise KafkaApiError(
                ErrorCode.ELECTION_NOT_NEEDED,
                f"move_leader: broker {to} already leads {topic}-{partition} upstream (leader "
                f"epoch {view.leader_epoch} kept)",
            )
        order = [to, *(r for r in view.replicas if r != to)]
        resp = self._admin.request(
            "AlterPartitionReassignments",
            {
                "timeout_ms": 30000,
                "topics": [
                    {
                        "name": topic,
                        "partitions": [{"partition_index": partition, "replicas": order}],
                    }
                ],
            },
        )
        check(resp["error_code"], resp.get("error_message"), "move_leader")
        for t in resp["responses"]:
            for p in t["partitions"]:
                check(p["error_code"], p.get("error_message"), f"move_leader {topic}-{partition}")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            resp = self._admin.request(
                "ElectLeaders",
                {
                    "election_type": 0,
                    "topic_partitions": [{"topic": topic, "partitions": [partition]}],
                    "timeout_ms": 30000,
                },
            )
            check(resp["error_code"], None, "move_leader")
            if self.topic(topic).partition(partition).leader == to:
                return
            time.sleep(POLL_S * 4)  # the reassignment is not complete yet: elect again
        raise KafkaApiError(
            ErrorCode.REQUEST_TIMED_OUT, f"move_leader: broker {to} did not become the leader"
        )

    def cap_api_versions(self, caps: Mapping[str | int, int]) -> None:
        """Advertise at most these versions, e.g. ``{"Fetch": 11}``: the proxy clamps the
        upstream's ApiVersions answers (new connections see it). Requests a client still
        sends at a higher version go upstream unchanged."""
        resolved = api_caps(caps)
        server = self._proxy_server
        self._on_loop(lambda: server.api_caps.update(resolved))

    def uncap_api_versions(self) -> None:
        """Undo :meth:`cap_api_versions`."""
        server = self._proxy_server
        self._on_loop(server.api_caps.clear)

    # -- brokers (emulated at the proxy) -----------------------------------------------------

    def _broker_id(self, broker: int) -> int:
        known = self._proxy_server.brokers
        if broker not in known:
            raise KafkaApiError(
                ErrorCode.BROKER_NOT_AVAILABLE,
                f"the upstream has no broker {broker!r}; it has {sorted(known)}",
            )
        return broker

    def stop_broker(self, broker: int) -> None:
        """Clients lose broker ``broker``: its listener refuses new connections and its
        open connections close, until :meth:`start_broker`. The upstream broker keeps
        running (replication, leadership and the proxy's own admin requests go on)."""
        server, n = self._proxy_server, self._broker_id(broker)
        self._on_loop(lambda: server.stop_broker(n))

    def start_broker(self, broker: int) -> None:
        """Let clients reach broker ``broker`` again."""
        server, n = self._proxy_server, self._broker_id(broker)
        self._on_loop(lambda: server.start_broker(n))

    def restart_broker(self, broker: int) -> None:
        """Close every client connection to ``broker`` (they reconnect at once)."""
        self.stop_broker(broker)
        self.start_broker(broker)

    def isolate_client(self, client_id: str) -> None:
        """A network partition of one client: every connection whose requests carry
        ``client_id`` is closed, and each new one at its first request, until
        :meth:`heal_client`. Other clients are unaffected."""
        if not isinstance(client_id, str) or not client_id:
            raise ConfigError(
                f"isolate_client: client_id must be a non-empty str, got {client_id!r}"
            )
        server = self._proxy_server
        self._on_loop(lambda: server.isolate(client_id))

    def heal_client(self, client_id: str | None = None) -> None:
        """End :meth:`isolate_client` for ``client_id`` (None: for every client)."""
        server = self._proxy_server
        self._on_loop(lambda: server.heal(client_id))

    # -- groups ------------------------------------------------------------------------------

    def _to_coordinator(
        self, key: str, api: str, body: dict[str, Any], codes: Callable[[dict[str, Any]], list[int]]
    ) -> dict[str, Any]:
        """Send ``api`` to ``key``'s group coordinator, again (for up to 15 s) while Kafka
        answers that the coordinator moved or is still loading (a fresh cluster does)."""
        deadline = time.monotonic() + 15
        while True:
            resp = self._admin.request(api, body, node=self._admin.coordinator(key))
            if not (set(codes(resp)) & _RETRY) or time.monotonic() >= deadline:
                return resp
            time.sleep(0.1)

    def groups(self) -> list[str]:
        """Ids of every group on every upstream broker (ListGroups), sorted."""
        self._admin.metadata([])
        ids: set[str] = set()
        for node in list(self._admin.brokers):
            resp = self._admin.request("ListGroups", {"states_filter": []}, node=node)
            ids.update(g["group_id"] for g in resp["groups"])
        return sorted(ids)

    def group(self, group: str) -> GroupView:
        """A snapshot of ``group`` from its coordinator: a KIP-848 consumer group through
        ConsumerGroupDescribe (``generation_id`` is the group epoch), a classic group through
        DescribeGroups (``generation_id`` -1: Kafka does not report it), committed offsets
        through OffsetFetch; ``rebalances`` is -1. KafkaApiError GROUP_ID_NOT_FOUND if Kafka
        has no such group."""
        from mockkafka.cluster.consumer_protocol import decode_assignment

        consumer = self._consumer_group(group)
        if consumer is not None:
            return consumer

        resp = self._to_coordinator(
            group,
            "DescribeGroups",
            {"groups": [group], "include_authorized_operations": False},
            lambda r: [g["error_code"] for g in r["groups"]],
        )
        g = resp["groups"][0]
        check(g["error_code"], None, f"group {group!r}")
        if g["group_state"] == "Dead":
            raise KafkaApiError(ErrorCode.GROUP_ID_NOT_FOUND, f"no group {group!r} upstream")
        members = []
        for m in g["members"]:
            assignment: dict[str, list[int]] | None = None
            if g["protocol_type"] == "consumer" and m.get("member_assignment"):
                try:
                    a = decode_assignment(m["member_assignment"])
                    assignment = {t: list(ps) for t, ps in a.partitions.items()}
                except Exception:
                    assignment = None
            members.append(
                MemberView(
                    member_id=m["member_id"],
                    group_instance_id=m.get("group_instance_id"),
                    client_id=m["client_id"],
                    client_host=m["client_host"],
                    assignment=assignment,
                )
            )
        return GroupView(
            group_id=group,
            type="classic",
            state=g["group_state"],
            generation_id=-1,
            protocol_type=g["protocol_type"],
            protocol=g.get("protocol_data") or None,
            leader_id=None,
            members=tuple(members),
            offsets={
                k: OffsetAndMetadata(offset=v) for k, v in self.committed_offsets(group).items()
            },
            rebalances=-1,
        )

    def _consumer_group(self, group: str) -> GroupView | None:
        """``group`` as a KIP-848 consumer group, or None when Kafka says it is not one (or
        does not serve ConsumerGroupDescribe)."""
        try:
            resp = self._to_coordinator(
                group,
                "ConsumerGroupDescribe",
                {"group_ids": [group], "include_authorized_operations": False},
                lambda r: [g["error_code"] for g in r["groups"]],
            )
        except KafkaApiError:
            return None
        g = resp["groups"][0]
        if g["error_code"] or g["group_state"] == "Dead":
            return None
        members = tuple(
            MemberView(
                member_id=m["member_id"],
                group_instance_id=m.get("instance_id"),
                client_id=m["client_id"],
                client_host=m["client_host"],
                assignment={
                    tp["topic_name"]: sorted(tp["partitions"])
                    for tp in (m.get("assignment") or {}).get("topic_partitions") or []
                },
                member_epoch=m["member_epoch"],
            )
            for m in g["members"]
        )
        return GroupView(
            group_id=group,
            type="consumer",
            state=g["group_state"],
            generation_id=g["group_epoch"],
            protocol_type="consumer",
            protocol=g.get("assignor_name") or None,
            leader_id=None,
            members=members,
            offsets={
                k: OffsetAndMetadata(offset=v) for k, v in self.committed_offsets(group).items()
            },
            rebalances=-1,
            assignment_epoch=g["assignment_epoch"],
        )

    def committed_offsets(self, group: str) -> dict[tuple[str, int], int]:
        """{(topic, partition): committed offset} of ``group`` upstream (OffsetFetch)."""
        resp = self._to_coordinator(
            group,
            "OffsetFetch",
            {"groups": [{"group_id": group, "topics": None}], "require_stable": False},
            lambda r: [g["error_code"] for g in r["groups"]],
        )
        g = resp["groups"][0]
        check(g["error_code"], None, f"committed_offsets {group!r}")
        return {
            (t["name"], p["partition_index"]): p["committed_offset"]
            for t in g["topics"]
            for p in t["partitions"]
            if p["committed_offset"] >= 0
        }

    def commit_offsets(
        self, group: str, offsets: Mapping[tuple[str, int], int], *, metadata: str = ""
    ) -> None:
        """Commit offsets for ``group`` upstream as a simple (memberless) OffsetCommit; Kafka
        refuses it while the group has members (UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION)."""
        by_topic: dict[str, list[dict[str, Any]]] = {}
        for (topic, partition), offset in offsets.items():
            by_topic.setdefault(topic, []).append(
                {
                    "partition_index": partition,
                    "committed_offset": offset,
                    "committed_leader_epoch": -1,
                    "committed_metadata": metadata,
                }
            )
        body = {
            "group_id": group,
            "generation_id_or_member_epoch": -1,
            "member_id": "",
            "group_instance_id": None,
            "topics": [{"name": t, "partitions": ps} for t, ps in by_topic.items()],
        }
        resp = self._to_coordinator(
            group,
            "OffsetCommit",
            body,
            lambda r: [p["error_code"] for t in r["topics"] for p in t["partitions"]],
        )
        for t in resp["topics"]:
            for p in t["partitions"]:
                check(p["error_code"], None, f"commit_offsets {t['name']}-{p['partition_index']}")

    def trigger_rebalance(self, group: str) -> None:
        """Make a member of classic group ``group`` rejoin: its next Heartbeat is answered
        REBALANCE_IN_PROGRESS by the proxy (a fault rule), so it sends JoinGroup and Kafka
        rebalances the group when that member leads it. KIP-848 groups are not affected."""
        self._rules.on("Heartbeat", group=group).once().named(
            f"trigger_rebalance({group!r})"
        ).error("REBALANCE_IN_PROGRESS")

    # -- transactions -------------------------------------------------------------------------

    def transaction(self, transactional_id: str) -> TransactionView:
        """A snapshot of ``transactional_id`` from its coordinator (DescribeTransactions):
        state, producer id and epoch, timeout, start time, partitions of the transaction in
        progress. Kafka keeps no history: ``history`` is empty (``committed_count`` 0),
        ``groups`` and ``pending_offsets`` too. KafkaApiError TRANSACTIONAL_ID_NOT_FOUND."""
        node = self._admin.coordinator(transactional_id, 1)
        resp = self._admin.request(
            "DescribeTransactions", {"transactional_ids": [transactional_id]}, node=node
        )
        t = resp["transaction_states"][0]
        check(t["error_code"], None, f"transaction {transactional_id!r}")
        return TransactionView(
            transactional_id=transactional_id,
            state=t["transaction_state"],
            producer_id=t["producer_id"],
            producer_epoch=t["producer_epoch"],
            timeout_ms=t["transaction_timeout_ms"],
            start_time_ms=t["transaction_start_time_ms"],
            partitions=tuple(
                (tp["topic"], p) for tp in t["topics"] for p in sorted(tp["partitions"])
            ),
            groups=(),
            pending_offsets={},
            history=(),
            coordinator=node,
        )

    def transactions(self, *, state: str | None = None) -> list[TransactionView]:
        """Every transactional id upstream (ListTransactions on each broker; optionally only
        those in ``state``), sorted by id, each as :meth:`transaction` describes it."""
        check_choice(state, STATE_NAMES, "state", "transaction state")
        self._admin.metadata([])
        ids: set[str] = set()
        for node in list(self._admin.brokers):
            resp = self._admin.request(
                "ListTransactions",
                {"state_filters": [state] if state else [], "producer_id_filters": []},
                node=node,
            )
            ids.update(t["transactional_id"] for t in resp["transaction_states"])
        views = [self.transaction(i) for i in sorted(ids)]
        return [v for v in views if state is None or v.state == state]

    def _transaction_probe(
        self,
        transactional_id: str,
        state: str | None,
        where: Callable[[TransactionView], bool] | None,
    ) -> tuple[Callable[[], Seen[TransactionView]], str]:
        return transaction_probe(
            lambda: self.transaction(transactional_id), transactional_id, state, where
        )

    def coordinator(self, *, group: str | None = None, transactional_id: str | None = None) -> int:
        """The upstream broker coordinating ``group`` or ``transactional_id`` (FindCoordinator)."""
        key_type, key = coordinator_key(group, transactional_id, "coordinator")
        assert key is not None
        return self._admin.coordinator(key, key_type)

    def coordinator_loading(
        self, *, group: str | None = None, transactional_id: str | None = None, ms: int
    ) -> None:
        """For the next ``ms``, the proxy answers COORDINATOR_LOAD_IN_PROGRESS to group
        requests for ``group`` (or transaction requests for ``transactional_id``; neither:
        every group), as Kafka does while a coordinator loads (a fault rule)."""
        key_type, key = coordinator_key(
            group, transactional_id, "coordinator_loading", allow_none=True
        )
        check_int(ms, "coordinator_loading: ms", 0)
        if key_type == TRANSACTION:
            rule = self._rules.on(_TXN_APIS, transactional_id=key)
        else:
            rule = self._rules.on(_GROUP_APIS, group=key)
        rule.named(f"coordinator_loading({key!r}, ms={ms})").for_ms(ms).error(
            "COORDINATOR_LOAD_IN_PROGRESS"
        )

    # -- configs ----------------------------------------------------------------------------

    def _alter_configs(
        self, resource_type: int, name: str, configs: Mapping[str, Any], verb: str
    ) -> None:
        ops = [
            {
                "name": k,
                "config_operation": 1 if v is None else 0,
                "value": None if v is None else _config_text(v),
            }
            for k, v in config_items(configs, verb.split()[0]).items()
        ]
        resp = self._admin.request(
            "IncrementalAlterConfigs",
            {
                "resources": [
                    {"resource_type": resource_type, "resource_name": name, "configs": ops}
                ],
                "validate_only": False,
            },
        )
        r = resp["responses"][0]
        check(r["error_code"], r.get("error_message"), verb)

    def set_topic_config(self, topic: str, configs: Mapping[str, Any]) -> None:
        """Set topic configs upstream (IncrementalAlterConfigs); None deletes the value."""
        self._alter_configs(2, topic, configs, f"set_topic_config {topic!r}")

    def set_group_config(self, group: str, configs: Mapping[str, Any]) -> None:
        """Set group configs upstream (IncrementalAlterConfigs, GROUP resource)."""
        self._alter_configs(32, group, configs, f"set_group_config {group!r}")

    def set_broker_config(self, configs: Mapping[str, Any], *, broker: int | None = None) -> None:
        """Set broker configs upstream (IncrementalAlterConfigs): ``broker=None`` the
        cluster-wide default, a broker id that broker's own value; None deletes."""
        name = "" if broker is None else str(check_int(broker, "set_broker_config: broker", 0))
        self._alter_configs(4, name, configs, "set_broker_config")

    def set_client_quotas(
        self,
        quotas: Mapping[str, float | None],
        *,
        user: str | None = None,
        client_id: str | None = None,
        ip: str | None = None,
    ) -> None:
        """Set client quotas upstream (AlterClientQuotas); a value of None removes the key.
        The entity is the ``user`` and/or ``client_id`` (or an ``ip``); ``"<default>"`` is
        the default entity of that type. Kafka enforces them as it does any quota."""
        entity = [
            {"entity_type": t, "entity_name": n}
            for t, n in quota_entity(user, client_id, ip).items()
        ]
        if not entity:
            raise ConfigError("set_client_quotas: give user=, client_id= or ip=")
        ops = [
            {"key": k, "value": 0.0 if v is None else float(v), "remove": v is None}
            for k, v in quotas.items()
        ]
        resp = self._admin.request(
            "AlterClientQuotas",
            {"entries": [{"entity": entity, "ops": ops}], "validate_only": False},
        )
        for e in resp["entries"]:
            check(e["error_code"], e.get("error_message"), "set_client_quotas")

    # -- ACLs (the argument checks are the fake's: _api/acl_args.py) ---------------------------

    def _add_acls(self, bindings: tuple[AclBinding, ...], verb: str) -> None:
        creations = [
            {
                "resource_type": int(b.resource_type),
                "resource_name": b.resource_name,
                "resource_pattern_type": int(b.pattern_type),
                "principal": b.principal,
                "host": b.host,
                "operation": int(b.operation),
                "permission_type": int(b.permission_type),
            }
            for b in bindings
        ]
        resp = self._admin.request("CreateAcls", {"creations": creations})
        for r in resp["results"]:
            check(r["error_code"], r.get("error_message"), "CreateAcls")

    @staticmethod
    def _filter_body(f: AclFilter) -> dict[str, Any]:
        return {
            "resource_type_filter": int(f.resource_type),
            "resource_name_filter": f.resource_name,
            "pattern_type_filter": int(f.pattern_type),
            "principal_filter": f.principal,
            "host_filter": f.host,
            "operation": int(f.operation),
            "permission_type": int(f.permission_type),
        }

    def _delete_acls(self, filters: tuple[AclFilter, ...]) -> int:
        resp = self._admin.request(
            "DeleteAcls", {"filters": [self._filter_body(f) for f in filters]}
        )
        gone = 0
        for r in resp["filter_results"]:
            check(r["error_code"], r.get("error_message"), "DeleteAcls")
            gone += len(r["matching_acls"])
        return gone

    def _describe_acls(self, filters: tuple[AclFilter, ...]) -> tuple[AclView, ...]:
        out: list[AclView] = []
        for f in filters:
            resp = self._admin.request("DescribeAcls", self._filter_body(f))
            check(resp["error_code"], resp.get("error_message"), "DescribeAcls")
            for r in resp["resources"]:
                for a in r["acls"]:
                    v = acl_view(
                        AclBinding(
                            ResourceType(r["resource_type"]),
                            r["resource_name"],
                            PatternType(r["pattern_type"]),
                            a["principal"],
                            a["host"],
                            AclOperation(a["operation"]),
                            AclPermissionType(a["permission_type"]),
                        )
                    )
                    if v not in out:
                        out.append(v)
        return tuple(out)

    # -- waits ------------------------------------------------------------------------------

    def _group_probe(
        self,
        group: str,
        state: str | None,
        members: int | None,
        where: Callable[[GroupView], bool] | None,
    ) -> tuple[Callable[[], Seen[GroupView]], str]:
        return group_probe(lambda: self.group(group), group, state, members, where)

    def _share_group_probe(
        self, group: str, state: str | None, members: int | None, where: Any
    ) -> tuple[Callable[[], Seen[ShareGroupView]], str]:
        raise NotOnProxy(PROXY_VERBS["wait_for_share_group"])

    def _records_probe(
        self, topic: str, partition: int | None, count: int
    ) -> tuple[Callable[[], Seen[list[rec.Record]]], str]:
        what = records_wait(topic, partition, count)
        where = topic if partition is None else f"{topic}-{partition}"

        def probe() -> Seen[list[rec.Record]]:
            try:
                v = self.topic(topic)
            except KafkaApiError as exc:
                return Seen(False, [], str(exc))
            parts = v.partitions if partition is None else (v.partition(partition),)
            held = sum(p.high_watermark - p.log_start_offset for p in parts)
            if held < count:
                return Seen(False, [], f"{where} holds at most {held} record(s)")
            got = [r for p in parts for r in p.records()]
            return Seen(len(got) >= count, got, f"{where} holds {len(got)} record(s)")

        return probe, what

    def _committed_probe(
        self, group: str, topic: str, partition: int, offset: int
    ) -> tuple[Callable[[], Seen[int]], str]:
        return committed_probe(
            lambda: self.committed_offsets(group).get((topic, partition)),
            group,
            topic,
            partition,
            offset,
        )


def _config_text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list | tuple):
        return ",".join(str(x) for x in v)
    return str(v)


for _name, _how in PROXY_VERBS.items():
    if _how not in (ADMIN, PROXY):
        setattr(ProxyVerbs, _name, _refused(_name))

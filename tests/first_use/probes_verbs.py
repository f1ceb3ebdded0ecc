"""Cluster verbs as a user meets them (README "Faults", docs/faults.md "Cluster verbs",
docs/vocabulary.md): each verb's first call in a fresh process, with a client at its
defaults working around it, and the effect the client sees."""

from __future__ import annotations

import contextlib
import threading
from typing import TYPE_CHECKING

from tests.first_use._clients import (
    GroupConsumer,
    KeptProducer,
    each_once,
    produce,
    stored,
    txn_producer,
    values,
)
from tests.first_use.registry import probe

if TYPE_CHECKING:
    pass


def _waitvalues(c: GroupConsumer, want: list[bytes], timeout: float = 20.0) -> None:
    """Until the consumer delivered each of ``want`` (at least once)."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if c.errors:
            raise c.errors[0]
        if set(want) <= {v for _p, _o, v in list(c.records)}:
            return
        time.sleep(0.05)
    missing = sorted(set(want) - {v for _p, _o, v in c.records})
    raise AssertionError(f"the {c.client} consumer never delivered {missing[:5]} in {timeout} s")


# -- replication and brokers -----------------------------------------------------------------


@probe(seconds=40)
def verb_move_leader(client: str) -> None:
    """``move_leader(topic, p, to=...)``: the leader epoch goes up by one and the same
    producer and consumer follow the new leader without losing or repeating a record."""
    import mockkafka

    with mockkafka.Cluster(brokers=3) as cluster:
        cluster.create_topic("orders", partitions=1, replication_factor=3)
        before = cluster.topic("orders").partition(0)
        to = next(b for b in (1, 2, 3) if b != before.leader)
        with (
            KeptProducer(client, cluster.bootstrap_servers) as p,
            GroupConsumer(client, cluster.bootstrap_servers, "orders", "g0") as c,
        ):
            p.send("orders", values(10, "a"))
            c.wait_records(10)
            mark = cluster.traffic.mark()
            cluster.move_leader("orders", 0, to=to)
            after = cluster.topic("orders").partition(0)
            assert (after.leader, after.leader_epoch) == (to, before.leader_epoch + 1), after
            p.send("orders", values(10, "b"))
            c.wait_records(20)
        assert cluster.traffic.requests("Produce", broker=to, since_seq=mark)
        assert stored(cluster, "orders") == values(10, "a") + values(10, "b")
        each_once(c.records, values(10, "a") + values(10, "b"))


@probe(seconds=60)
def verb_stop_and_start_broker(client: str) -> None:
    """``stop_broker(n)`` / ``start_broker(n)``: the leader's broker stops, its partitions
    elect a new leader from the ISR, the producer and the consumer fail over; started
    again, it is back in the ISR and in Metadata."""
    import mockkafka

    with mockkafka.Cluster(brokers=3) as cluster:
        cluster.create_topic("orders", partitions=1, replication_factor=3)
        old = cluster.topic("orders").partition(0).leader
        with (
            KeptProducer(client, cluster.bootstrap_servers) as p,
            GroupConsumer(client, cluster.bootstrap_servers, "orders", "g0") as c,
        ):
            p.send("orders", values(10, "a"))
            c.wait_records(10)
            cluster.stop_broker(old)
            view = cluster.topic("orders").partition(0)
            assert view.leader != old and old not in view.isr, view
            assert not next(b for b in cluster.brokers if b.node_id == old).running
            p.send("orders", values(10, "b"))
            c.wait_records(20, timeout=30)
            cluster.start_broker(old)
            cluster.wait_for_broker(old, timeout=10)
            assert old in cluster.topic("orders").partition(0).isr
            p.send("orders", values(10, "c"))
            c.wait_records(30, timeout=30)
        want = values(10, "a") + values(10, "b") + values(10, "c")
        assert stored(cluster, "orders") == want
        each_once(c.records, want)


@probe(seconds=60)
def verb_restart_broker(client: str) -> None:
    """``restart_broker(n)``: the broker's connections drop, its leaderships move, it comes
    back on its old port; the clients reconnect and carry on."""
    import mockkafka

    with mockkafka.Cluster(brokers=3) as cluster:
        cluster.create_topic("orders", partitions=3, replication_factor=3)
        ports = {b.node_id: b.port for b in cluster.brokers}
        with (
            KeptProducer(client, cluster.bootstrap_servers) as p,
            GroupConsumer(client, cluster.bootstrap_servers, "orders", "g0") as c,
        ):
            p.send("orders", values(10, "a"))
            c.wait_records(10)
            cluster.restart_broker(1)
            assert {b.node_id: b.port for b in cluster.brokers} == ports
            assert all(b.running for b in cluster.brokers)
            p.send("orders", values(10, "b"))
            c.wait_records(20, timeout=30)
        assert sorted(v for v in stored(cluster, "orders") if v) == sorted(
            values(10, "a") + values(10, "b")
        )
        each_once(c.records, values(10, "a") + values(10, "b"))


#: Producers whose default acks is all (-1), so min.insync.replicas is checked: librdkafka
#: and kafka-python 3 (idempotent); aiokafka's default is acks=1.
ACKS_ALL_BY_DEFAULT = ("confluent", "kafka-python")


@probe(seconds=40)
def verb_set_isr(client: str) -> None:
    """``set_isr(topic, p, to=[leader])`` below ``min.insync.replicas=2``: an acks=all
    producer gets NOT_ENOUGH_REPLICAS and retries until the ISR grows back; every record
    lands once."""
    import mockkafka

    with mockkafka.Cluster(brokers=3) as cluster:
        cluster.create_topic(
            "orders", partitions=1, replication_factor=3, config={"min.insync.replicas": "2"}
        )
        leader = cluster.topic("orders").partition(0).leader
        cluster.set_isr("orders", 0, to=[leader])
        assert cluster.topic("orders").partition(0).isr == (leader,)
        grow = threading.Timer(1.5, lambda: cluster.set_isr("orders", 0, to=[1, 2, 3]))
        grow.start()
        try:
            want = values(20)
            produce(client, cluster.bootstrap_servers, "orders", want)
        finally:
            grow.join(10)
        assert stored(cluster, "orders") == want
        refused = cluster.traffic.requests("Produce", with_error="NOT_ENOUGH_REPLICAS")
        if client in ACKS_ALL_BY_DEFAULT:
            assert refused, "an acks=all Produce was accepted with the ISR below min.insync"
        else:
            assert not refused, "an acks=1 Produce was refused for the ISR"


@probe(seconds=40)
def verb_truncate_log(client: str) -> None:
    """``truncate_log(topic, p, to_offset=10)`` (unclean election) under a consumer that
    read 20 records: the log ends at 10 with a new leader epoch, and the consumer -- by
    KIP-320 validation or by ``auto.offset.reset`` -- goes on to deliver the records
    written after it."""
    import mockkafka

    with mockkafka.Cluster(topics={"orders": 1}) as cluster:
        # two batches, so that offset 10 is a batch boundary (truncation drops whole batches)
        produce(client, cluster.bootstrap_servers, "orders", values(10, "a"))
        produce(client, cluster.bootstrap_servers, "orders", values(10, "a2"))
        with GroupConsumer(client, cluster.bootstrap_servers, "orders", "g0") as c:
            c.wait_records(20)
            epoch = cluster.topic("orders").partition(0).leader_epoch
            cluster.truncate_log("orders", 0, to_offset=10)
            view = cluster.topic("orders").partition(0)
            assert view.high_watermark == 10 and view.leader_epoch > epoch, view
            new = values(5, "b")
            produce(client, cluster.bootstrap_servers, "orders", new)
            _waitvalues(c, new)
        assert stored(cluster, "orders") == values(10, "a") + new
        after = [(o, v) for _p, o, v in c.records if v in new]
        assert sorted(after) == [(10 + i, v) for i, v in enumerate(new)], after


# -- topics ------------------------------------------------------------------------------------


@probe(seconds=40)
def verb_delete_records(client: str) -> None:
    """``delete_records(topic, p, before_offset=15)`` (retention) below a group's committed
    offset: the consumer's Fetch gets OFFSET_OUT_OF_RANGE and it applies
    ``auto.offset.reset`` (earliest): it reads from the new log start."""
    import mockkafka

    with mockkafka.Cluster(topics={"orders": 1}) as cluster:
        want = values(30)
        produce(client, cluster.bootstrap_servers, "orders", want)
        assert cluster.delete_records("orders", 0, before_offset=15) == 15
        assert cluster.topic("orders").partition(0).log_start_offset == 15
        cluster.commit_offsets("g0", {("orders", 0): 5})
        with GroupConsumer(client, cluster.bootstrap_servers, "orders", "g0") as c:
            c.wait_records(15)
        assert [(o, v) for _p, o, v in c.records] == list(enumerate(want))[15:], c.records
        assert cluster.traffic.requests("Fetch", with_error="OFFSET_OUT_OF_RANGE")


@probe(seconds=40)
def verb_add_partitions(client: str) -> None:
    """``add_partitions(topic, total=4)``: a consumer group that joins now is assigned all
    four, and records produced to a new partition are read."""
    import mockkafka

    with mockkafka.Cluster(topics={"orders": 2}) as cluster:
        view = cluster.add_partitions("orders", total=4)
        assert len(view.partitions) == 4, view
        with KeptProducer(client, cluster.bootstrap_servers) as p:
            p.send("orders", [b"p3"], partition=3)
        assert [r.value for r in cluster.topic("orders").partition(3).records()] == [b"p3"]
        with GroupConsumer(client, cluster.bootstrap_servers, "orders", "g0") as c:
            c.wait_records(1)
            group = cluster.wait_for_group(
                "g0",
                members=1,
                where=lambda g: (
                    sorted(p for m in g.members for p in (m.assignment or {}).get("orders", []))
                    == [0, 1, 2, 3]
                ),
                timeout=20,
            )
        assert c.records == [(3, 0, b"p3")], (c.records, group)


@probe(seconds=40)
def verb_recreate_topic(client: str) -> None:
    """``recreate_topic(topic)``: empty, same layout, a new topic id; a producer at its
    defaults writes to the new topic and only the new records are there."""
    import mockkafka

    with mockkafka.Cluster(topics={"orders": 2}) as cluster:
        produce(client, cluster.bootstrap_servers, "orders", values(5, "old"))
        before = cluster.topic("orders")
        after = cluster.recreate_topic("orders")
        assert after.topic_id != before.topic_id and len(after.partitions) == 2, after
        assert stored(cluster, "orders") == []
        new = values(5, "new")
        produce(client, cluster.bootstrap_servers, "orders", new)
        assert sorted(v for v in stored(cluster, "orders") if v) == new
        with GroupConsumer(client, cluster.bootstrap_servers, "orders", "g0") as c:
            c.wait_records(5)
        each_once(c.records, new)


@probe(clients=("confluent",), seconds=30)
def verb_delete_topic(client: str) -> None:
    """``delete_topic(topic)``: gone from ``topics()``; a producer writing to it again at its
    defaults auto-creates it (``auto_create_topics`` defaults to true, as in Kafka), with a
    new topic id, holding only the new records."""
    import mockkafka

    with mockkafka.Cluster(topics={"orders": 1}) as cluster:
        produce(client, cluster.bootstrap_servers, "orders", values(5, "old"))
        old_id = cluster.topic("orders").topic_id
        cluster.delete_topic("orders")
        assert "orders" not in cluster.topics()
        produce(client, cluster.bootstrap_servers, "orders", values(5, "new"))
        assert cluster.topic("orders").topic_id != old_id
        assert stored(cluster, "orders") == values(5, "new")


@probe(seconds=40)
def verb_set_topic_config(client: str) -> None:
    """``set_topic_config(topic, {"max.message.bytes": 200})``: a larger record is refused
    with MESSAGE_TOO_LARGE; reset with None, it is accepted."""
    import mockkafka

    with mockkafka.Cluster(topics={"orders": 1}) as cluster:
        cluster.set_topic_config("orders", {"max.message.bytes": 200})
        assert cluster.topic("orders").configs["max.message.bytes"] == "200"
        big = [b"x" * 1000]
        try:
            produce(client, cluster.bootstrap_servers, "orders", big)
        except Exception as e:  # each client's own error type
            text = f"{type(e).__name__} {e}".upper().replace(" ", "_")
            assert "TOO_LARGE" in text or "TOOLARGE" in text, repr(e)
        else:
            raise AssertionError("a 1000-byte record was accepted with max.message.bytes=200")
        assert cluster.traffic.requests("Produce", with_error="MESSAGE_TOO_LARGE")
        cluster.set_topic_config("orders", {"max.message.bytes": None})
        produce(client, cluster.bootstrap_servers, "orders", big)
        assert stored(cluster, "orders") == big


@probe(seconds=40)
def verb_produce(client: str) -> None:
    """``cluster.produce(topic, value, key=..., partition=...)`` (setup): a consumer at its
    defaults reads what it wrote, at the offsets it returned."""
    import mockkafka

    with mockkafka.Cluster(topics={"orders": 2}) as cluster:
        offsets = [cluster.produce("orders", b"v%d" % i, key=b"k", partition=1) for i in range(3)]
        assert offsets == [0, 1, 2]
        with GroupConsumer(client, cluster.bootstrap_servers, "orders", "g0") as c:
            c.wait_records(3)
        assert c.records == [(1, i, b"v%d" % i) for i in range(3)], c.records


@probe(seconds=40)
def verb_cap_api_versions(client: str) -> None:
    """README: ``cap_api_versions({"Fetch": 11})`` (an older Kafka): the client negotiates
    down, sends no Fetch above v11, and produces and consumes as before; after
    ``uncap_api_versions()`` a new client is offered the newer versions again."""
    import mockkafka

    with mockkafka.Cluster(topics={"orders": 1}) as cluster:
        cluster.cap_api_versions({"Fetch": 11})
        want = values(10)
        produce(client, cluster.bootstrap_servers, "orders", want)
        with GroupConsumer(client, cluster.bootstrap_servers, "orders", "g0") as c:
            c.wait_records(10)
        each_once(c.records, want)
        fetches = cluster.traffic.requests("Fetch")
        assert fetches and max(ex.version for ex in fetches) <= 11, {ex.version for ex in fetches}
        cluster.uncap_api_versions()
        mark = cluster.traffic.mark()
        with GroupConsumer(client, cluster.bootstrap_servers, "orders", "g1") as c2:
            c2.wait_records(10)
        advertised = [
            k["max_version"]
            for ex in cluster.traffic.requests("ApiVersions", since_seq=mark, answered=True)
            for k in (ex.response or {}).get("api_keys", [])
            if k["api_key"] == 1
        ]
        assert advertised and min(advertised) > 11, advertised  # Fetch uncapped again


# -- groups ------------------------------------------------------------------------------------


@probe(seconds=40)
def verb_commit_offsets(client: str) -> None:
    """``commit_offsets(group, {(topic, p): 4})`` (setup): a consumer of that group at its
    defaults starts at offset 4."""
    import mockkafka

    with mockkafka.Cluster(topics={"orders": 1}) as cluster:
        want = values(10)
        produce(client, cluster.bootstrap_servers, "orders", want)
        cluster.commit_offsets("g0", {("orders", 0): 4})
        assert cluster.committed_offsets("g0") == {("orders", 0): 4}
        with GroupConsumer(client, cluster.bootstrap_servers, "orders", "g0") as c:
            c.wait_records(6)
        assert [(o, v) for _p, o, v in c.records] == list(enumerate(want))[4:], c.records


@probe(seconds=40)
def verb_trigger_rebalance(client: str) -> None:
    """``trigger_rebalance(group)``: the member is told REBALANCE_IN_PROGRESS, rejoins, the
    generation goes up, and consumption goes on."""
    import mockkafka

    with mockkafka.Cluster(topics={"orders": 2}) as cluster:
        with GroupConsumer(client, cluster.bootstrap_servers, "orders", "g0") as c:
            g1 = cluster.wait_for_group("g0", members=1, timeout=20)
            cluster.trigger_rebalance("g0")
            g2 = cluster.wait_for_group(
                "g0", members=1, where=lambda g: g.generation_id > g1.generation_id, timeout=20
            )
            assert g2.rebalances > g1.rebalances, (g1, g2)
            want = values(10)
            produce(client, cluster.bootstrap_servers, "orders", want)
            c.wait_records(10)
        each_once(c.records, want)


@probe(seconds=40)
def verb_expire_member(client: str) -> None:
    """``expire_member(group, member_id)``: as if its session timed out -- the member is
    removed, rejoins with a new member id, and consumption goes on."""
    import mockkafka

    with mockkafka.Cluster(topics={"orders": 2}) as cluster:
        with GroupConsumer(client, cluster.bootstrap_servers, "orders", "g0") as c:
            g1 = cluster.wait_for_group("g0", members=1, timeout=20)
            (gone,) = (m.member_id for m in g1.members)
            cluster.expire_member("g0", gone)
            g2 = cluster.wait_for_group(
                "g0",
                members=1,
                where=lambda g: gone not in {m.member_id for m in g.members},
                timeout=30,
            )
            assert g2.generation_id > g1.generation_id, (g1, g2)
            want = values(10)
            produce(client, cluster.bootstrap_servers, "orders", want)
            c.wait_records(10)
        each_once(c.records, want)


@probe(seconds=40)
def verb_move_coordinator_group(client: str) -> None:
    """README: ``move_coordinator(group=..., to=...)``: the old coordinator answers
    NOT_COORDINATOR, the consumer finds the new one, its commits land there and none
    is lost."""
    import mockkafka

    with mockkafka.Cluster(brokers=3) as cluster:
        cluster.create_topic("orders", partitions=1, replication_factor=3)
        produce(client, cluster.bootstrap_servers, "orders", values(10, "a"))
        with GroupConsumer(client, cluster.bootstrap_servers, "orders", "g0", commit=True) as c:
            cluster.wait_for_committed("g0", "orders", 0, offset=10, timeout=20)
            old = cluster.coordinator(group="g0")
            to = next(b for b in (1, 2, 3) if b != old)
            mark = cluster.traffic.mark()
            cluster.move_coordinator(group="g0", to=to)
            assert cluster.coordinator(group="g0") == to
            produce(client, cluster.bootstrap_servers, "orders", values(10, "b"))
            assert cluster.wait_for_committed("g0", "orders", 0, offset=20, timeout=30) == 20
        assert cluster.traffic.requests("FindCoordinator", since_seq=mark)
        assert cluster.traffic.requests("OffsetCommit", broker=to, since_seq=mark)
        each_once(c.records, values(10, "a") + values(10, "b"))


@probe(seconds=40)
def verb_coordinator_loading(client: str) -> None:
    """``coordinator_loading(group=..., ms=1500)``: COORDINATOR_LOAD_IN_PROGRESS for 1.5 s;
    the consumer retries, joins, reads and commits."""
    import mockkafka

    with mockkafka.Cluster(topics={"orders": 1}) as cluster:
        cluster.coordinator_loading(group="g0", ms=1500)
        want = values(10)
        produce(client, cluster.bootstrap_servers, "orders", want)
        with GroupConsumer(client, cluster.bootstrap_servers, "orders", "g0", commit=True) as c:
            c.wait_records(10)
            cluster.wait_for_committed("g0", "orders", 0, offset=10, timeout=20)
        each_once(c.records, want)
        assert cluster.traffic.requests(with_error="COORDINATOR_LOAD_IN_PROGRESS")


@probe(seconds=60)
def verb_set_client_quotas(client: str) -> None:
    """``set_client_quotas({"producer_byte_rate": 1024}, client_id="<default>")``: Produce
    answers carry throttle_time_ms and the producer still delivers everything."""
    import mockkafka

    with mockkafka.Cluster(topics={"orders": 1}) as cluster:
        cluster.set_client_quotas({"producer_byte_rate": 1024}, client_id="<default>")
        # Kafka measures the rate over the whole quota window (11 samples of 1 s, at least
        # 10 s), so a client must send more than 10 KiB before it is throttled
        want = [b"%04d" % i + b"x" * 300 for i in range(40)]
        produce(client, cluster.bootstrap_servers, "orders", want)
        assert stored(cluster, "orders") == want
        throttled = [
            ex
            for ex in cluster.traffic.requests("Produce", answered=True)
            if (ex.response or {}).get("throttle_time_ms", 0) > 0
        ]
        assert throttled, "no Produce answer carried throttle_time_ms"


# -- transactions ------------------------------------------------------------------------------


@probe(seconds=40)
def verb_fence_producer(client: str) -> None:
    """README: ``fence_producer(transactional_id)``: the epoch goes up as a new instance's
    would; the producer's commit of its open transaction fails (fenced), the transaction
    is aborted, and a read_committed reader sees none of it."""
    import mockkafka

    with mockkafka.Cluster(topics={"orders": 1}) as cluster:
        tx = txn_producer(client, cluster.bootstrap_servers, "tx-1")
        try:
            tx.begin()
            tx.send("orders", values(5))
            epoch = cluster.transaction("tx-1").producer_epoch
            assert cluster.fence_producer("tx-1") > epoch
            try:
                tx.commit()
            except Exception as e:  # each client's own error type
                text = f"{type(e).__name__} {e}".upper()
                assert "FENCED" in text or "EPOCH" in text, repr(e)
            else:
                raise AssertionError("a fenced producer committed its transaction")
        finally:
            with contextlib.suppress(Exception):  # a fenced producer may not close cleanly
                tx.close()
        view = cluster.transaction("tx-1")
        assert view.committed_count == 0 and view.aborted_count >= 1, view
        assert cluster.topic("orders").partition(0).last_stable_offset >= 5


@probe(clients=("confluent",), seconds=40)
def verb_move_coordinator_transactional(client: str) -> None:
    """``move_coordinator(transactional_id=..., to=...)`` while a transaction is open: the
    producer finds the new coordinator and the transaction commits."""
    import mockkafka

    with mockkafka.Cluster(brokers=3) as cluster:
        cluster.create_topic("orders", partitions=1, replication_factor=3)
        tx = txn_producer(client, cluster.bootstrap_servers, "tx-1")
        tx.begin()
        tx.send("orders", values(5))
        old = cluster.coordinator(transactional_id="tx-1")
        to = next(b for b in (1, 2, 3) if b != old)
        cluster.move_coordinator(transactional_id="tx-1", to=to)
        tx.commit()
        tx.close()
        view = cluster.wait_for_transaction(
            "tx-1", where=lambda t: t.committed_count == 1, timeout=20
        )
        assert view.coordinator == to, view
        assert cluster.traffic.requests("EndTxn", broker=to)


@probe(clients=("confluent",), seconds=40)
def verb_abort_transaction(client: str) -> None:
    """``abort_transaction(transactional_id)``: the open transaction is aborted now; the
    producer's commit of it fails, and a read_committed consumer (librdkafka's default
    isolation) sees none of its records."""
    from confluent_kafka import KafkaException

    import mockkafka

    with mockkafka.Cluster(topics={"orders": 1}) as cluster:
        tx = txn_producer(client, cluster.bootstrap_servers, "tx-1")
        tx.begin()
        tx.send("orders", values(5, "aborted"))
        assert cluster.abort_transaction("tx-1") is True
        try:
            tx.commit()
        except KafkaException:
            pass
        else:
            raise AssertionError("the producer committed a transaction the cluster aborted")
        assert cluster.transaction("tx-1").aborted_count == 1
        produce(client, cluster.bootstrap_servers, "orders", [b"after"])
        with GroupConsumer(client, cluster.bootstrap_servers, "orders", "g0") as c:
            c.wait_records(1)
            import time

            time.sleep(0.5)
        assert [v for _p, _o, v in c.records] == [b"after"], c.records


@probe(clients=("confluent",), seconds=40)
def verb_expire_transaction(client: str) -> None:
    """``expire_transaction(transactional_id)``: timed out as by ``transaction.timeout.ms``:
    aborted and the epoch bumped, so the producer is fenced."""
    from confluent_kafka import KafkaException

    import mockkafka

    with mockkafka.Cluster(topics={"orders": 1}) as cluster:
        tx = txn_producer(client, cluster.bootstrap_servers, "tx-1")
        tx.begin()
        tx.send("orders", values(5))
        epoch = cluster.transaction("tx-1").producer_epoch
        assert cluster.expire_transaction("tx-1") is True
        view = cluster.transaction("tx-1")
        assert view.producer_epoch > epoch and view.aborted_count == 1, view
        try:
            tx.commit()
        except KafkaException:
            pass
        else:
            raise AssertionError("an expired transaction committed")


@probe(clients=("confluent",), seconds=40)
def verb_delay_transaction_markers(client: str) -> None:
    """``delay_transaction_markers(ms=1000)``: the commit markers land 1 s after EndTxn;
    until then the records stay above the last stable offset, then a read_committed
    consumer reads them."""
    import mockkafka

    with mockkafka.Cluster(topics={"orders": 1}) as cluster:
        cluster.delay_transaction_markers(ms=1000)
        tx = txn_producer(client, cluster.bootstrap_servers, "tx-1")
        tx.begin()
        tx.send("orders", values(5))
        tx.commit()
        assert cluster.topic("orders").partition(0).last_stable_offset == 0
        with GroupConsumer(client, cluster.bootstrap_servers, "orders", "g0") as c:
            c.wait_records(5)
        assert cluster.topic("orders").partition(0).last_stable_offset == 6
        each_once(c.records, values(5))

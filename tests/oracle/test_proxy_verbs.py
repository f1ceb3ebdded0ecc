"""Cluster verbs on ``mockkafka.Proxy`` in front of a real Apache Kafka 4.4 broker.

Admin verbs are checked by what Kafka itself then reports (an AdminClient or a consumer
talking to Kafka directly); emulated ones by what a real client sees through the proxy.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

import pytest
import trio
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource

import mockkafka
from mockkafka._api.proxy_verbs import PROXY_VERBS, NotOnProxy
from mockkafka.errors import KafkaApiError
from mockkafka.kafka_broker import KafkaBroker
from tests.interop.conftest import unique

pytestmark = [pytest.mark.kafka_oracle, pytest.mark.interop, pytest.mark.timeout(120)]


@pytest.fixture
def proxy(kafka: KafkaBroker) -> Iterator[mockkafka.Proxy]:
    with mockkafka.Proxy(upstream=kafka.bootstrap_servers) as p:
        yield p


def test_every_cluster_verb_is_classified_and_refusals_say_what_to_use(
    proxy: mockkafka.Proxy,
) -> None:
    public = {n for n in dir(mockkafka.Cluster) if not n.startswith("_")}
    not_verbs = {
        "bootstrap_servers", "brokers", "call", "check_rules", "client_config", "faults",
        "start", "state", "stop", "traffic", "unfired_rules", "why_unfired", "broker_errors",
        "protocol_violations", "raise_broker_errors",
    }  # fmt: skip
    verbs = {n for n in public - not_verbs if not n.endswith("_async")}
    assert verbs <= set(PROXY_VERBS), verbs - set(PROXY_VERBS)
    with pytest.raises(NotOnProxy, match=r"truncate_log needs the in-process fake \(mockkafka"):
        proxy.truncate_log("t", 0, to_offset=0)
    with pytest.raises(NotOnProxy, match="isolate_client"):
        proxy.expire_member("g", "m")


def test_topic_verbs_are_performed_by_kafka(proxy: mockkafka.Proxy, kafka: KafkaBroker) -> None:
    topic = unique("pv")
    view = proxy.create_topic(topic, partitions=2, config={"retention.ms": 123456})
    assert [p.partition for p in view.partitions] == [0, 1]
    assert view.configs == {"retention.ms": "123456"}
    admin = AdminClient({"bootstrap.servers": kafka.bootstrap_servers})
    assert len(admin.list_topics(topic, timeout=10).topics[topic].partitions) == 2
    with pytest.raises(KafkaApiError, match="TOPIC_ALREADY_EXISTS"):
        proxy.create_topic(topic)

    assert proxy.add_partitions(topic, total=3).partitions[-1].partition == 2
    proxy.set_topic_config(topic, {"retention.ms": 7200000, "cleanup.policy": "compact"})
    res = ConfigResource("topic", topic)
    got = admin.describe_configs([res])[res].result(10)
    assert got["cleanup.policy"].value == "compact"
    assert got["retention.ms"].value == "7200000"
    proxy.set_topic_config(topic, {"cleanup.policy": None})  # None: back to the default
    assert proxy.topic(topic).configs == {"retention.ms": "7200000"}

    offsets = [proxy.produce(topic, f"v{i}", key="k", partition=1) for i in range(5)]
    assert offsets == [0, 1, 2, 3, 4]
    assert [r.value for r in proxy.topic(topic).partition(1).records()] == [
        f"v{i}".encode() for i in range(5)
    ]
    assert proxy.delete_records(topic, 1, before_offset=3) == 3
    p1 = proxy.topic(topic).partition(1)
    assert (p1.log_start_offset, p1.high_watermark) == (3, 5)
    # Kafka refuses above the high watermark, as Cluster.delete_records and truncate_log do
    with pytest.raises(KafkaApiError, match="OFFSET_OUT_OF_RANGE"):
        proxy.delete_records(topic, 1, before_offset=100)
    with pytest.raises(KafkaApiError, match="ELECTION_NOT_NEEDED"):
        proxy.move_leader(topic, 1, to=p1.leader)
    assert [r.offset for r in proxy.wait_for_records(topic, partition=1, count=2)] == [3, 4]

    assert topic in proxy.topics()
    proxy.delete_topic(topic)
    assert topic not in proxy.topics()
    with pytest.raises(KafkaApiError, match="UNKNOWN_TOPIC_OR_PARTITION"):
        proxy.topic(topic)


def test_group_views_and_commits_come_from_kafka(
    proxy: mockkafka.Proxy, kafka: KafkaBroker
) -> None:
    topic, group = unique("pvg"), unique("pvgg")
    proxy.create_topic(topic, partitions=2)
    proxy.commit_offsets(group, {(topic, 0): 1, (topic, 1): 0})
    assert proxy.committed_offsets(group) == {(topic, 0): 1, (topic, 1): 0}
    for i in range(3):
        proxy.produce(topic, f"r{i}")
    consumer = Consumer(
        {
            "bootstrap.servers": proxy.bootstrap_servers,
            "group.id": group,
            "client.id": "pv-consumer",
            "enable.auto.commit": False,
            "session.timeout.ms": 6000,
        }
    )
    consumer.subscribe([topic])
    try:
        got = []
        deadline = time.monotonic() + 30
        while len(got) < 2 and time.monotonic() < deadline:
            msg = consumer.poll(0.2)
            if msg is not None and msg.error() is None:
                got.append(msg.value())
                consumer.commit(msg, asynchronous=False)
        assert got == [b"r1", b"r2"]  # from the committed offset 1
        view = proxy.wait_for_group(group, state="Stable", members=1, timeout=20)
        assert view.members[0].client_id == "pv-consumer"
        assert view.members[0].assignment == {topic: [0, 1]}
        assert group in proxy.groups()
        assert proxy.wait_for_committed(group, topic, 0, offset=3) == 3
        assert proxy.coordinator(group=group) in proxy.brokers
    finally:
        consumer.close()


def test_stop_broker_cuts_clients_off_until_start_broker(proxy: mockkafka.Proxy) -> None:
    topic = unique("pvs")
    proxy.create_topic(topic)
    (node,) = proxy.brokers
    proxy.stop_broker(node)
    proxy.wait_for_broker(node, up=False)
    errors: list[str] = []
    producer = Producer(
        {
            "bootstrap.servers": proxy.bootstrap_servers,
            "message.timeout.ms": 1500,
            "error_cb": lambda e: errors.append(str(e)),
        }
    )
    delivered: list[object] = []
    producer.produce(topic, b"while-down", on_delivery=lambda err, m: delivered.append(err))
    producer.flush(5)
    assert delivered and delivered[0] is not None  # timed out: the broker was unreachable
    assert proxy.traffic.requests("Produce") == []
    proxy.start_broker(node)
    proxy.wait_for_broker(node, up=True)
    delivered.clear()
    producer.produce(topic, b"after", on_delivery=lambda err, m: delivered.append(err))
    producer.flush(20)
    assert delivered == [None]
    assert [r.value for r in proxy.topic(topic).partition(0).records()] == [b"after"]


def test_isolate_client_partitions_one_client_only(proxy: mockkafka.Proxy) -> None:
    topic = unique("pvi")
    proxy.create_topic(topic)
    proxy.produce(topic, "x")

    def high_watermark(client_id: str) -> int:
        c = Consumer(
            {
                "bootstrap.servers": proxy.bootstrap_servers,
                "group.id": unique("pvig"),
                "client.id": client_id,
                "socket.timeout.ms": 2000,
            }
        )
        try:
            return int(c.get_watermark_offsets(TopicPartition(topic, 0), timeout=3)[1])
        finally:
            c.close()

    proxy.isolate_client("cut-off")
    with pytest.raises(KafkaException):
        high_watermark("cut-off")
    assert high_watermark("fine") == 1
    proxy.heal_client("cut-off")
    assert high_watermark("cut-off") == 1


def test_cap_api_versions_is_what_clients_are_told(proxy: mockkafka.Proxy) -> None:
    topic = unique("pvc")
    proxy.create_topic(topic)
    proxy.cap_api_versions({"Produce": 7, "Fetch": 10})
    producer = Producer({"bootstrap.servers": proxy.bootstrap_servers})
    producer.produce(topic, b"old")
    assert producer.flush(20) == 0
    (produce,) = proxy.traffic.requests("Produce")
    assert produce.version <= 7
    versions = proxy.traffic.requests("ApiVersions")[-1].response
    assert versions is not None
    advertised = {k["api_key"]: k["max_version"] for k in versions["api_keys"]}
    assert advertised[0] == 7 and advertised[1] == 10
    proxy.uncap_api_versions()


def test_async_proxy_has_the_verbs_and_awaitable_waits(kafka: KafkaBroker) -> None:
    topic = unique("pva")

    async def main() -> None:
        async with mockkafka.open_proxy(kafka.bootstrap_servers) as proxy:
            await trio.to_thread.run_sync(lambda: proxy.create_topic(topic))
            await trio.to_thread.run_sync(lambda: proxy.produce(topic, "a"))
            recs = await proxy.wait_for_records(topic, count=1, timeout=10)
            assert [r.value for r in recs] == [b"a"]
            (node,) = proxy.brokers
            proxy.stop_broker(node)
            await proxy.wait_for_broker(node, up=False, timeout=5)
            proxy.start_broker(node)

    trio.run(main)


def test_transaction_views_come_from_kafka(proxy: mockkafka.Proxy) -> None:
    topic, tid = unique("pvt"), unique("pvtx")
    proxy.create_topic(topic)
    producer = Producer({"bootstrap.servers": proxy.bootstrap_servers, "transactional.id": tid})
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce(topic, b"in a transaction")
    producer.flush(30)
    ongoing = proxy.wait_for_transaction(tid, state="Ongoing", timeout=20)
    assert ongoing.partitions == ((topic, 0),)
    assert ongoing.coordinator == proxy.coordinator(transactional_id=tid)
    producer.commit_transaction(30)
    done = proxy.wait_for_transaction(tid, state="CompleteCommit", timeout=20)
    assert done.producer_id == ongoing.producer_id and done.partitions == ()
    assert tid in [t.transactional_id for t in proxy.transactions(state="CompleteCommit")]
    with pytest.raises(KafkaApiError, match="TRANSACTIONAL_ID_NOT_FOUND"):
        proxy.transaction(unique("nobody"))


def test_a_kip848_consumer_group_view_comes_from_consumer_group_describe(
    proxy: mockkafka.Proxy,
) -> None:
    topic, group = unique("pvk"), unique("pvkg")
    proxy.create_topic(topic, partitions=2)
    consumer = Consumer(
        {
            "bootstrap.servers": proxy.bootstrap_servers,
            "group.id": group,
            "group.protocol": "consumer",
            "client.id": "pv-848",
        }
    )
    consumer.subscribe([topic])
    try:
        view = None
        for _ in range(150):  # at most ~30 s
            consumer.poll(0.2)
            with contextlib.suppress(KafkaApiError):
                view = proxy.group(group)
            if view is not None and view.members and view.members[0].assignment == {topic: [0, 1]}:
                break
        assert view is not None and view.members, view
        assert view.members[0].assignment == {topic: [0, 1]}
        assert view.type == "consumer" and view.state == "Stable"
        assert view.members[0].client_id == "pv-848" and view.members[0].member_epoch > 0
        assert view.generation_id >= 1
    finally:
        consumer.close()

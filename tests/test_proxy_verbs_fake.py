"""``mockkafka.Proxy``'s cluster verbs with the in-process fake as the upstream (no Java
needed): the Admin-API verbs travel as real requests to it and the emulated ones act on the
proxy's listeners. ``tests/oracle/test_proxy_verbs.py`` runs them against Apache Kafka."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from confluent_kafka import Producer

import mockkafka
from mockkafka._api.proxy_verbs import NotOnProxy
from mockkafka.errors import KafkaApiError, WaitTimeout

pytestmark = pytest.mark.interop


@pytest.fixture
def fake() -> Iterator[mockkafka.Cluster]:
    with mockkafka.Cluster(brokers=3) as c:
        yield c


@pytest.fixture
def proxy(fake: mockkafka.Cluster) -> Iterator[mockkafka.Proxy]:
    with mockkafka.Proxy(upstream=fake.bootstrap_servers) as p:
        yield p


def test_admin_verbs_change_the_upstream(fake: mockkafka.Cluster, proxy: mockkafka.Proxy) -> None:
    view = proxy.create_topic(
        "orders", partitions=2, replication_factor=3, config={"segment.ms": 60000}
    )
    assert fake.topic("orders").configs == view.configs == {"segment.ms": "60000"}
    proxy.add_partitions("orders", total=4)
    assert len(fake.topic("orders").partitions) == 4
    proxy.set_topic_config("orders", {"retention.ms": 1000, "segment.ms": None})
    assert fake.topic("orders").configs == {"retention.ms": "1000"}
    assert [proxy.produce("orders", f"v{i}", partition=1) for i in range(3)] == [0, 1, 2]
    assert [r.value for r in fake.topic("orders").partition(1).records()] == [b"v0", b"v1", b"v2"]
    assert [r.value for r in proxy.topic("orders").partition(1).records()] == [b"v0", b"v1", b"v2"]
    assert proxy.delete_records("orders", 1, before_offset=2) == 2
    assert fake.topic("orders").partition(1).log_start_offset == 2

    leader = fake.topic("orders").partition(0).leader
    to = next(b for b in (1, 2, 3) if b != leader)
    proxy.move_leader("orders", 0, to=to)
    assert (
        fake.topic("orders").partition(0).leader == to == proxy.topic("orders").partition(0).leader
    )

    proxy.commit_offsets("billing", {("orders", 0): 5})
    assert (
        fake.committed_offsets("billing")
        == {("orders", 0): 5}
        == proxy.committed_offsets("billing")
    )
    proxy.delete_topic("orders")
    assert "orders" not in fake.topics()
    with pytest.raises(KafkaApiError, match="UNKNOWN_TOPIC_OR_PARTITION"):
        proxy.topic("orders")


def test_stop_broker_is_emulated_and_waits_see_it(proxy: mockkafka.Proxy) -> None:
    proxy.create_topic("t")
    proxy.stop_broker(1)
    proxy.wait_for_broker(1, up=False, timeout=1)
    with pytest.raises(WaitTimeout, match="broker 1 down at the proxy"):
        proxy.wait_for_broker(1, up=True, timeout=0.2)
    with pytest.raises(KafkaApiError, match="no broker 7"):
        proxy.stop_broker(7)
    proxy.start_broker(1)
    proxy.wait_for_broker(1, timeout=1)
    producer = Producer({"bootstrap.servers": proxy.bootstrap_servers})
    producer.produce("t", b"x")
    assert producer.flush(10) == 0
    assert [r.value for r in proxy.wait_for_records("t", count=1, timeout=5)] == [b"x"]


def test_verbs_only_the_fake_has_name_what_to_use(proxy: mockkafka.Proxy) -> None:
    with pytest.raises(NotOnProxy, match=r"set_isr needs the in-process fake"):
        proxy.set_isr("t", 0, to=[1])
    with pytest.raises(NotOnProxy, match="NOT_COORDINATOR"):
        proxy.move_coordinator(group="g", to=2)
    assert repr(proxy).startswith("<Proxy upstream 127.0.0.1:")


def test_acls_and_quotas_are_sent_upstream() -> None:
    with (
        mockkafka.Cluster(authorizer=True, super_users=["User:ANONYMOUS"]) as fake,
        mockkafka.Proxy(upstream=fake.bootstrap_servers) as proxy,
    ):
        proxy.allow("User:alice", ["read", "write"], topic="orders")
        proxy.deny("User:*", "write", topic="audit", prefixed=True)
        assert set(proxy.acls()) == set(fake.acls())
        assert len(proxy.acls("User:alice")) == 2
        assert proxy.remove_acls("User:alice", topic="orders") == 2
        assert [a.principal for a in fake.acls()] == ["User:*"]
        with pytest.raises(mockkafka.ConfigError, match="allow"):
            proxy.allow("alice", "read", topic="orders")  # the fake's own argument checks

        proxy.set_client_quotas({"producer_byte_rate": 1024}, client_id="app")
        from mockkafka.cluster.quotas import client_quotas

        quotas = fake.call(lambda st: client_quotas(st).describe([("client-id", 0, "app")], True))
        assert [values for _entity, values in quotas] == [{"producer_byte_rate": 1024.0}]
        proxy.set_client_quotas({"producer_byte_rate": None}, client_id="app")
        assert not fake.call(lambda st: client_quotas(st).describe([("client-id", 0, "app")], True))


def test_proxy_and_cluster_refuse_the_same_arguments_and_waits_say_what_they_saw(
    fake: mockkafka.Cluster, proxy: mockkafka.Proxy
) -> None:
    for target in (fake, proxy):
        with pytest.raises(mockkafka.ConfigError, match="value must be bytes, str or None"):
            target.produce("orders", 5)  # type: ignore[arg-type]
        with pytest.raises(mockkafka.ConfigError, match="did you mean 'Stable'"):
            target.wait_for_group("g", state="Stabel", timeout=0)
        with pytest.raises(mockkafka.ConfigError, match=r"caps\['Fetch'\] must be a version"):
            target.cap_api_versions({"Fetch": -1})
    with pytest.raises(WaitTimeout, match="group 'g' has no offset for orders-0"):
        proxy.wait_for_committed("g", "orders", 0, offset=1, timeout=0.2)


def test_proxy_and_cluster_refuse_what_kafka_refuses_with_kafkas_error(
    fake: mockkafka.Cluster, proxy: mockkafka.Proxy
) -> None:
    fake.create_topic("orders", replication_factor=3)
    fake.produce("orders", b"x")
    leader = fake.topic("orders").partition(0).leader
    epoch = fake.topic("orders").partition(0).leader_epoch
    for target in (fake, proxy):
        with pytest.raises(KafkaApiError, match="ELECTION_NOT_NEEDED"):
            target.move_leader("orders", 0, to=leader)
        with pytest.raises(KafkaApiError, match="OFFSET_OUT_OF_RANGE"):
            target.delete_records("orders", 0, before_offset=100)
        with pytest.raises(mockkafka.ConfigError, match=r"caps\['Fetch'\] must be a version"):
            target.cap_api_versions({"Fetch": 99})
        with pytest.raises(mockkafka.ConfigError, match="add_partitions: total must be an int"):
            target.add_partitions("orders", total=0)
    p = fake.topic("orders").partition(0)
    assert (p.leader, p.leader_epoch, p.log_start_offset) == (leader, epoch, 0)


def test_an_async_proxy_waits_for_a_transaction_upstream(fake: mockkafka.Cluster) -> None:
    import trio

    producer = Producer({"bootstrap.servers": fake.bootstrap_servers, "transactional.id": "tx"})
    producer.init_transactions(10)

    async def main() -> None:
        async with mockkafka.open_proxy(fake.bootstrap_servers) as proxy:
            view = await proxy.wait_for_transaction("tx", state="Empty", timeout=5)
            assert view.transactional_id == "tx"
            with pytest.raises(WaitTimeout, match=r"wait_for_transaction\('nope'.*NOT_FOUND"):
                await proxy.wait_for_transaction("nope", timeout=0.2)

    trio.run(main)

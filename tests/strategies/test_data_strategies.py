"""Data strategies: record batches round-trip in every format and codec, client configs are
accepted by the real clients, error codes follow Kafka's per-version facts, and bad arguments
are refused at once."""

from __future__ import annotations

from typing import Any

import pytest
from confluent_kafka import Consumer, Producer
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from mockkafka.errors import ErrorCode
from mockkafka.faults.error_facts import ERRORS_BY_API, possible_errors
from mockkafka.protocol.apis import API_BY_NAME
from mockkafka.protocol.records import Record, decode_records
from mockkafka.strategies import (
    RecordBatch,
    client_configs,
    error_codes,
    fault_plans,
    headers,
    record_batches,
    records,
    requests,
)


@given(batch=record_batches())
def test_record_batches_decode_to_the_records_drawn(batch: RecordBatch) -> None:
    assert decode_records(batch.data) == list(batch.records)
    if batch.magic < 2:
        assert all(not r.headers for r in batch.records)
        assert batch.compression != "zstd"
    if batch.magic == 0:
        assert all(r.timestamp == -1 for r in batch.records)


@pytest.mark.parametrize(
    ("magic", "compression"),
    [
        (m, c)
        for m in (0, 1, 2)
        for c in ("none", "gzip", "snappy", "lz4", "zstd")
        if m == 2 or c != "zstd"
    ],
)
def test_record_batches_draw_every_magic_and_codec(magic: int, compression: str) -> None:
    @settings(max_examples=10, database=None)
    @given(batch=record_batches(magics=[magic], compressions=[compression]))
    def check(batch: RecordBatch) -> None:
        assert (batch.magic, batch.compression) == (magic, compression)
        assert decode_records(batch.data) == list(batch.records)

    check()


@given(record=records(), hdrs=headers(max_size=2))
def test_records_and_headers_have_kafka_shapes(record: Record, hdrs: Any) -> None:
    assert record.offset == 0 and record.timestamp >= 0
    assert len(hdrs) <= 2
    assert all(isinstance(k, str) and (v is None or isinstance(v, bytes)) for k, v in hdrs)


@settings(max_examples=25)
@given(producer=client_configs(role="producer"), consumer=client_configs(role="consumer"))
def test_confluent_configs_are_accepted_by_librdkafka(
    producer: dict[str, Any], consumer: dict[str, Any]
) -> None:
    base = {"bootstrap.servers": "127.0.0.1:1"}
    Producer({**base, **producer})
    Consumer({**base, **consumer, "group.id": "g"}).close()


@settings(max_examples=25)
@given(conf=client_configs(client="aiokafka", role="producer"))
def test_aiokafka_configs_are_accepted(conf: dict[str, Any]) -> None:
    import asyncio

    from aiokafka import AIOKafkaProducer

    async def make() -> None:
        producer = AIOKafkaProducer(bootstrap_servers="127.0.0.1:1", **conf)
        await producer.stop()

    asyncio.run(make())


@settings(max_examples=25)
@given(conf=client_configs(client="kafka-python", role="consumer", group="g"))
def test_kafka_python_consumer_configs_use_its_keyword_names(conf: dict[str, Any]) -> None:
    from kafka.consumer.group import KafkaConsumer

    assert set(conf) <= set(KafkaConsumer.DEFAULT_CONFIG)


@given(data=st.data())
def test_error_codes_are_only_those_possible_at_the_version(data: st.DataObject) -> None:
    api = data.draw(st.sampled_from(sorted(ERRORS_BY_API)))
    a = API_BY_NAME[api]
    version = data.draw(st.integers(a.min_version, a.max_version))
    code = data.draw(error_codes(api=api, version=version))
    assert code.name in possible_errors(api, version)
    assert ERRORS_BY_API[api].get(code.name, 0) <= version


def test_error_facts_name_real_codes_and_versions() -> None:
    for api, table in ERRORS_BY_API.items():
        a = API_BY_NAME[api]
        for name, since in table.items():
            assert name in ErrorCode.__members__, (api, name)
            assert a.min_version <= since <= a.max_version or since == 0, (api, name, since)


def test_error_codes_follow_kafka_version_history() -> None:
    # Produce v4 added KAFKA_STORAGE_ERROR; Fetch v9 (KIP-320) FENCED_LEADER_EPOCH.
    assert "KAFKA_STORAGE_ERROR" not in possible_errors("Produce", 3)
    assert "KAFKA_STORAGE_ERROR" in possible_errors("Produce", 4)
    assert "FENCED_LEADER_EPOCH" not in possible_errors("Fetch", 8)
    assert "MEMBER_ID_REQUIRED" not in possible_errors("JoinGroup", 3)
    assert "MEMBER_ID_REQUIRED" in possible_errors("JoinGroup", 4)


@given(code=error_codes(api="Fetch", retriable=True))
def test_error_codes_can_keep_only_retriable_ones(code: ErrorCode) -> None:
    assert code.retriable


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: record_batches(magics=[3]), "not a message format"),
        (lambda: record_batches(compressions=["gzipp"]), "did you mean 'gzip'"),
        (lambda: record_batches(magics=[0, 1], compressions=["zstd"]), "zstd is v2-only"),
        (lambda: records(max_value_size=-1), "max_value_size"),
        (lambda: headers(max_size="3"), "max_size"),
        (lambda: client_configs(client="librdkafka"), "did you mean 'confluent-kafka'|valid"),
        (lambda: client_configs(role="admin"), "role"),
        (lambda: error_codes(api="Fetchh"), "did you mean 'Fetch'"),
        (lambda: error_codes(api="Fetch", version=99), "Fetch has versions"),
        (lambda: error_codes(version=3), "version needs api"),
        (lambda: fault_plans(verbs=["move_leeder"]), "did you mean 'move_leader'"),
        (lambda: fault_plans(errors=["NOT_LEADER"]), "NOT_LEADER_OR_FOLLOWER"),
        (lambda: fault_plans(apis=["Produse"]), "did you mean 'Produce'"),
        (lambda: fault_plans(max_steps=0), "max_steps"),
        (lambda: fault_plans(verbs=["move_leader"], brokers=1), "no step can be drawn"),
        (lambda: fault_plans(topics=[]), "topics"),
        (lambda: requests(apis=["Fetchh"]), "did you mean 'Fetch'"),
    ],
)
def test_bad_arguments_raise_invalid_argument_at_once(make: Any, message: str) -> None:
    with pytest.raises(InvalidArgument, match=message):
        make()


def test_strategy_reprs_are_valid_python() -> None:
    import mockkafka.strategies as s

    for strategy in (
        s.records(max_value_size=8),
        s.record_batches(magics=[2], compressions=["lz4"]),
        s.error_codes(api="Produce", version=9),
        s.client_configs(client="aiokafka", role="consumer"),
        s.fault_plans(topics={"orders": 2}, brokers=3, groups=["g"]),
        s.requests(apis=["Fetch"]),
    ):
        again = eval(repr(strategy), vars(s))
        assert repr(again) == repr(strategy)

"""The names a traffic filter matches on (topics, partitions, groups) are worked out from a
recorded request when a filter first needs them, not by the broker on every request
(issue 28: the no-rules path of dispatch builds nothing for faults or filters). What a
filter finds is the same as when they were worked out up front."""

from __future__ import annotations

import confluent_kafka

import mockkafka
from tests.robustness._wire import Raw


def _fetch_by_id(raw: Raw, topic_id: object) -> None:
    raw.request(
        "Fetch",
        13,
        {
            "replica_id": -1,
            "max_wait_ms": 0,
            "min_bytes": 0,
            "max_bytes": 1 << 20,
            "isolation_level": 0,
            "session_id": 0,
            "session_epoch": -1,
            "topics": [
                {
                    "topic_id": topic_id,
                    "partitions": [
                        {
                            "partition": 1,
                            "current_leader_epoch": -1,
                            "fetch_offset": 0,
                            "last_fetched_epoch": -1,
                            "log_start_offset": -1,
                            "partition_max_bytes": 1 << 20,
                        }
                    ],
                }
            ],
            "forgotten_topics_data": [],
            "rack_id": "",
        },
    )


def test_a_fetch_by_topic_id_is_found_by_name_also_after_the_topic_is_deleted() -> None:
    with mockkafka.Cluster(topics={"orders": 2}) as c:
        host, port = c.bootstrap_servers.split(",")[0].split(":")
        topic_id = c.topic("orders").topic_id
        with Raw(host, int(port)) as raw:
            _fetch_by_id(raw, topic_id)
        assert len(c.traffic.requests("Fetch")) == 1  # no name filter: nothing worked out
        c.delete_topic("orders")
        found = c.traffic.requests("Fetch", topic="orders", partition=1)
        assert len(found) == 1 and found[0].info is not None
        assert found[0].info.partitions == frozenset({("orders", 1)})
        assert c.traffic.requests("Fetch", topic="orders", partition=0) == []
        assert c.traffic.requests("Fetch", topic="other") == []


def test_filters_on_names_and_on_the_rest_agree_with_rules() -> None:
    with mockkafka.Cluster(topics={"a": 1, "b": 1}) as c:
        rule = c.faults.on("Produce", topic="b").every_time().observe()
        p = confluent_kafka.Producer({"bootstrap.servers": c.bootstrap_servers, "linger.ms": 0})
        for topic in ("a", "b", "a"):
            p.produce(topic, b"v")
            assert p.flush(10) == 0
        assert len(c.traffic.requests("Produce", topic="a")) == 2
        b = c.traffic.requests("Produce", topic="b")
        assert len(b) == 1 and b == c.traffic.requests(fault=rule)
        assert len(c.traffic.requests("Produce", client_id="*", topic="*")) == 3
        assert c.traffic.requests("Produce", topic="a", broker=99) == []


def test_a_request_over_the_body_limit_keeps_its_names() -> None:
    """The log keeps no body over ``max_body_bytes`` (256 KiB): the names are worked out
    while the body is there, so a filter by topic still finds the request."""
    with mockkafka.Cluster(topics={"big": 1}) as c:
        p = confluent_kafka.Producer(
            {"bootstrap.servers": c.bootstrap_servers, "compression.type": "none"}
        )
        p.produce("big", b"x" * 300_000)
        assert p.flush(10) == 0
        found = c.traffic.requests("Produce", topic="big", partition=0)
        assert len(found) == 1
        request = found[0].request
        assert request is not None and "omitted" in request

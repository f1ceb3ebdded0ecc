"""The new fault actions scripted over the control endpoint of ``mockkafka serve`` (the
way a Java, Go or Node test suite adds them), seen by a real client."""

from __future__ import annotations

import time

from confluent_kafka import Consumer, Producer, TopicPartition

from tests.cli.test_control import http, serving


def test_new_actions_over_http_reach_a_real_client() -> None:
    with serving("--topic", "pay:1:1") as (_proc, bootstrap, ctl):
        status, got = http(
            "POST", f"{ctl}/steps", {"fault": {"name": "lost", "on": "Produce", "lost_ack": True}}
        )
        assert (status, got["rules"]) == (200, ["lost"])
        status, got = http(
            "POST",
            f"{ctl}/steps",
            {"fault": {"name": "skew", "on": "Fetch", "skew_timestamps": {"ms": -60_000}}},
        )
        assert status == 200
        # a bad argument is refused with the Python message, naming the field
        status, err = http("POST", f"{ctl}/steps", {"fault": {"on": "Fetch", "schema_id": {}}})
        assert status == 400 and "give id=" in str(err)
        status, err = http("POST", f"{ctl}/steps", {"fault": {"on": "Fetch", "lost_ack": True}})
        assert status == 400 and "acts only on Produce" in str(err)

        p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": False, "linger.ms": 20})
        for i in range(3):
            p.produce("pay", b"p%d" % i, partition=0, timestamp=1_700_000_000_000 + i)
        assert p.flush(15) == 0
        c = Consumer({"bootstrap.servers": bootstrap, "group.id": "g", "check.crcs": True})
        got_msgs = []
        try:
            c.assign([TopicPartition("pay", 0, 0)])
            deadline = time.monotonic() + 15
            while len(got_msgs) < 6 and time.monotonic() < deadline:
                m = c.poll(0.1)
                if m is not None and not m.error():
                    got_msgs.append(m)
        finally:
            c.close()
        # the lost ack made the producer send the batch again: the log holds it twice
        assert [m.value() for m in got_msgs] == [b"p0", b"p1", b"p2"] * 2
        assert got_msgs[0].timestamp()[1] == 1_700_000_000_000 - 60_000
        status, rules = http("GET", f"{ctl}/faults")
        fired = {r["name"]: r["fired"] for r in rules}
        assert fired["lost"] == 1 and fired["skew"] == 1


def test_get_faults_says_why_a_rule_did_not_act() -> None:
    """A Java, Go or Node suite reads the reasons a rule declined over HTTP too."""
    with serving("--topic", "pay:1:1") as (_proc, bootstrap, ctl):
        status, _ = http(
            "POST",
            f"{ctl}/steps",
            {"fault": {"name": "sid", "on": "Fetch", "schema_id": {"id": 9}}},
        )
        assert status == 200
        p = Producer({"bootstrap.servers": bootstrap})
        p.produce("pay", b"plain", partition=0)
        assert p.flush(15) == 0
        c = Consumer({"bootstrap.servers": bootstrap, "group.id": "g"})
        try:
            c.assign([TopicPartition("pay", 0, 0)])
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:
                m = c.poll(0.1)
                if m is not None and not m.error():
                    break
        finally:
            c.close()
        status, rules = http("GET", f"{ctl}/faults")
        (rule,) = rules
        assert (rule["fired"], rule["matched"]) == (0, sum(rule["declined"].values()))
        reason = "schema_id: no value is in the schema-registry wire format"
        assert any(k.startswith(reason) for k in rule["declined"])
        assert rule["why_unfired"].startswith("matched ")
        assert reason in rule["why_unfired"]

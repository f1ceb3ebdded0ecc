"""Fault actions and triggers as a user meets them: a fresh cluster, the rule as the README
("Faults") and docs/faults.md write it, a client at its defaults, and what the user relies
on -- the rule fired, the client saw the effect as Kafka would make it, and nothing
acknowledged was lost."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tests.first_use._clients import GroupConsumer, each_once, produce, stored, values
from tests.first_use.registry import probe

if TYPE_CHECKING:
    import mockkafka

#: The client families whose producer is idempotent at its defaults (kafka-python 3);
#: librdkafka and aiokafka are not, so a batch whose answer was lost is stored twice.
IDEMPOTENT_BY_DEFAULT = ("kafka-python",)


def _fired(cluster: mockkafka.Cluster, rule: Any, timeout: float = 10.0) -> None:
    """The rule fired at least once; else say why not, as the user would ask."""
    try:
        rule.wait_fired(timeout=timeout)
    except TimeoutError as e:
        raise AssertionError(
            f"{rule!r} fired {rule.fired}x (matched {rule.matched}x) within {timeout} s;"
            f" why_unfired: {cluster.why_unfired(rule)!r}"
        ) from e


# -- error -------------------------------------------------------------------------------


@probe(seconds=40)
def fault_error_per_partition(client: str) -> None:
    """README: ``on("Produce", topic=..., partition=0).times(2).error(...)``: the producer
    refreshes metadata, retries and every record lands once (the claimed partition was not
    applied)."""
    import mockkafka

    with mockkafka.Cluster(topics={"orders": 1}) as cluster:
        rule = (
            cluster.faults.on("Produce", topic="orders", partition=0)
            .times(2)
            .error("NOT_LEADER_OR_FOLLOWER")
        )
        want = values(50)
        produce(client, cluster.bootstrap_servers, "orders", want)
        assert rule.fired == 2, rule
        assert stored(cluster, "orders") == want
        failed = cluster.traffic.requests("Produce", fault=rule)
        assert len(failed) == 2, failed
        assert cluster.traffic.requests("Metadata", since_seq=failed[0].seq), (
            "the producer did not refresh its metadata after NOT_LEADER_OR_FOLLOWER"
        )


@probe(seconds=40)
def fault_error_request_level(client: str) -> None:
    """``error`` on a rule naming no topic answers the whole request with the error and
    does not process it: a consumer whose first FindCoordinator fails looks again, joins
    and reads everything."""
    import mockkafka

    with mockkafka.Cluster(topics={"orders": 2}) as cluster:
        want = values(20)
        produce(client, cluster.bootstrap_servers, "orders", want)
        rule = cluster.faults.on("FindCoordinator").once().error("COORDINATOR_NOT_AVAILABLE")
        with GroupConsumer(client, cluster.bootstrap_servers, "orders", "g0") as c:
            c.wait_records(20)
            _fired(cluster, rule)
            cluster.wait_for_group("g0", members=1, timeout=20)
        each_once(c.records, want)
        (ex,) = cluster.traffic.requests("FindCoordinator", fault=rule)
        assert mockkafka.errors.ErrorCode.COORDINATOR_NOT_AVAILABLE in ex.error_codes, ex


@probe(seconds=40)
def fault_error_with_probability_seed(client: str) -> None:
    """``with_probability(p, seed=7)``: fires on each match it draws from
    ``random.Random(7)`` -- the same seed gives the same sequence -- and the consumer still
    reads every record."""
    import random

    import mockkafka

    with mockkafka.Cluster(topics={"orders": 1}) as cluster:
        want = values(30)
        produce(client, cluster.bootstrap_servers, "orders", want)
        rule = (
            cluster.faults.on("Fetch", topic="orders")
            .with_probability(0.2, seed=7)
            .error("NOT_LEADER_OR_FOLLOWER")
        )
        with GroupConsumer(client, cluster.bootstrap_servers, "orders", "g0") as c:
            c.wait_records(30)
            _fired(cluster, rule, timeout=15)
        each_once(c.records, want)
        rng = random.Random(7)
        drawn = sum(rng.random() < 0.2 for _ in range(rule.matched))
        assert rule.fired == drawn, (
            f"{rule.matched} matches with seed 7 draw {drawn} firings, the rule fired {rule.fired}x"
        )


@probe(seconds=40)
def fault_error_nth(client: str) -> None:
    """``nth(3)``: only the third matching Fetch gets the error; the consumer goes on."""
    import mockkafka

    with mockkafka.Cluster(topics={"orders": 1}) as cluster:
        rule = cluster.faults.on("Fetch", topic="orders").nth(3).error("NOT_LEADER_OR_FOLLOWER")
        first = values(10, "a")
        produce(client, cluster.bootstrap_servers, "orders", first)
        with GroupConsumer(client, cluster.bootstrap_servers, "orders", "g0") as c:
            c.wait_records(10)
            _fired(cluster, rule)
            later = values(10, "b")
            produce(client, cluster.bootstrap_servers, "orders", later)
            c.wait_records(20)
        assert rule.fired == 1 and rule.matched >= 3, rule
        each_once(c.records, first + later)


# -- delay, throttle -----------------------------------------------------------------------


@probe(seconds=40)
def fault_delay(client: str) -> None:
    """``delay(ms=500)``: the answer comes 500 ms late; the producer waits for it (its
    timeouts are longer) and nothing is sent twice."""
    import mockkafka

    with mockkafka.Cluster(topics={"orders": 1}) as cluster:
        rule = cluster.faults.on("Produce", topic="orders").once().delay(ms=500)
        want = values(20)
        produce(client, cluster.bootstrap_servers, "orders", want)
        assert rule.fired == 1, rule
        (ex,) = cluster.traffic.requests("Produce", fault=rule)
        assert ex.duration_ms is not None and ex.duration_ms >= 500, ex.duration_ms
        assert stored(cluster, "orders") == want


@probe(seconds=40)
def fault_throttle_every_time(client: str) -> None:
    """README: ``on("Fetch", broker=1).every_time().throttle(ms=500)``: every Fetch answer
    carries ``throttle_time_ms=500`` and the connection is muted meanwhile (KIP-219); the
    consumer slows down but reads everything."""
    import mockkafka

    with mockkafka.Cluster(topics={"orders": 1}) as cluster:
        want = values(30)
        produce(client, cluster.bootstrap_servers, "orders", want)
        rule = cluster.faults.on("Fetch", broker=1).every_time().throttle(ms=500)
        with GroupConsumer(client, cluster.bootstrap_servers, "orders", "g0") as c:
            c.wait_records(30)
            rule.wait_fired(2, timeout=15)
        each_once(c.records, want)
        throttled = cluster.traffic.requests("Fetch", fault=rule, answered=True)
        assert throttled, "no throttled Fetch answer in traffic"
        assert all((ex.response or {}).get("throttle_time_ms") == 500 for ex in throttled), (
            throttled
        )
        # the next Fetch on a throttled connection came after the throttle time
        first = throttled[0]
        after = [
            ex
            for ex in cluster.traffic.requests("Fetch", connection=first.connection_id)
            if ex.seq > first.seq
        ]
        assert after, "the consumer sent no Fetch after a throttled answer"
        assert first.response_time_ms is not None, first
        gap = after[0].time_ms - first.response_time_ms
        assert gap >= 450, f"the next Fetch came {gap} ms after a 500 ms throttle"


# -- connections ---------------------------------------------------------------------------


@probe(seconds=40)
def fault_drop_connection_before(client: str) -> None:
    """``drop_connection()``: the connection closes before processing, the request is
    lost; the producer reconnects and every record lands once."""
    import mockkafka

    with mockkafka.Cluster(topics={"orders": 1}) as cluster:
        rule = cluster.faults.on("Produce", topic="orders").once().drop_connection()
        want = values(30)
        produce(client, cluster.bootstrap_servers, "orders", want)
        assert rule.fired == 1, rule
        (dropped,) = cluster.traffic.requests("Produce", fault=rule)
        assert dropped.closed_connection, dropped
        later = cluster.traffic.requests("Produce", since_seq=dropped.seq + 1)
        assert any(ex.connection_id != dropped.connection_id for ex in later), (
            "the producer did not produce on a new connection"
        )
        assert stored(cluster, "orders") == want


def _stored_after_lost_answer(cluster: mockkafka.Cluster, client: str, want: list[bytes]) -> None:
    """The batch whose answer was lost is held twice without idempotence (as with Kafka),
    once with it; nothing is lost either way."""
    held_now = stored(cluster, "orders")
    held = {v or b"" for v in held_now}
    assert held == set(want), f"lost: {sorted(set(want) - held)[:5]}"
    if client in IDEMPOTENT_BY_DEFAULT:
        assert held_now == want, f"an idempotent producer's retry stored {len(held_now)} records"
    else:
        assert len(held_now) > len(want), (
            f"{client} at its defaults is not idempotent: its retry of the applied batch"
            f" should be stored again, the log holds {len(held_now)} of {len(want)}"
        )


@probe(seconds=40)
def fault_drop_connection_after_processing(client: str) -> None:
    """README: ``on("Produce").once().drop_connection(after_processing=True)``: applied,
    ack lost; the producer retries on a new connection."""
    import mockkafka

    with mockkafka.Cluster(topics={"orders": 1}) as cluster:
        rule = cluster.faults.on("Produce").once().drop_connection(after_processing=True)
        want = values(30)
        produce(client, cluster.bootstrap_servers, "orders", want)
        assert rule.fired == 1, rule
        (ex,) = cluster.traffic.requests("Produce", fault=rule)
        assert ex.closed_connection, ex
        _stored_after_lost_answer(cluster, client, want)


@probe(seconds=40)
def fault_lost_ack(client: str) -> None:
    """README: ``on("Produce", topic="orders").once().lost_ack()``: appended, answer lost,
    the producer retries (twice in the log without idempotence, once with it)."""
    import mockkafka

    with mockkafka.Cluster(topics={"orders": 1}) as cluster:
        rule = cluster.faults.on("Produce", topic="orders").once().lost_ack()
        want = values(30)
        produce(client, cluster.bootstrap_servers, "orders", want)
        assert rule.fired == 1, rule
        (ex,) = cluster.traffic.requests("Produce", fault=rule)
        assert ex.closed_connection, ex
        _stored_after_lost_answer(cluster, client, want)


#: What a timeout probe changes: the producer's request timeout (30-60 s at the clients'
#: defaults), so that the probe stays within its bound.
REQUEST_TIMEOUT: dict[str, dict[str, Any]] = {
    "confluent": {"request.timeout.ms": 3000, "socket.timeout.ms": 3000},
    "kafka-python": {"request_timeout_ms": 3000},
    "aiokafka": {"request_timeout_ms": 3000},
}


def _produce_unanswered(client: str, cluster: mockkafka.Cluster, want: list[bytes]) -> None:
    """Produce ``want`` while a rule leaves a Produce unanswered. librdkafka and
    kafka-python time the request out, reconnect and retry: every record lands once (the
    unanswered request was not applied). aiokafka expires a batch after the same
    ``request_timeout_ms`` (it has no separate delivery timeout), so at its defaults the
    send fails with RequestTimedOutError and nothing of it is stored, as against Kafka."""
    if client == "aiokafka":
        from aiokafka.errors import RequestTimedOutError

        try:
            produce(client, cluster.bootstrap_servers, "orders", want, **REQUEST_TIMEOUT[client])
        except RequestTimedOutError:
            assert stored(cluster, "orders") == [], "an unanswered Produce was applied"
            return
        raise AssertionError("aiokafka's send outlived its request timeout")
    produce(client, cluster.bootstrap_servers, "orders", want, **REQUEST_TIMEOUT[client])
    assert stored(cluster, "orders") == want


@probe(seconds=60)
def fault_never_respond(client: str) -> None:
    """``never_respond()``: the producer times out its request and reconnects; the
    unanswered request was not applied."""
    import mockkafka

    with mockkafka.Cluster(topics={"orders": 1}) as cluster:
        rule = cluster.faults.on("Produce", topic="orders").once().never_respond()
        _produce_unanswered(client, cluster, values(20))
        assert rule.fired == 1, rule
        (ex,) = cluster.traffic.requests("Produce", fault=rule)
        assert ex.no_response, ex


@probe(seconds=60)
def fault_blackhole_for_ms(client: str) -> None:
    """README: ``blackhole().for_ms(...)``: every matching request is swallowed while the
    rule lasts (not processed, no answer, the connection left open); the producer times
    out and retries on a new connection, which is answered once the rule has ended."""
    import mockkafka

    with mockkafka.Cluster(topics={"orders": 1}) as cluster:
        rule = cluster.faults.on("Produce", topic="orders").blackhole().for_ms(2000)
        _produce_unanswered(client, cluster, values(20))
        assert rule.fired >= 1, rule
        swallowed = cluster.traffic.requests("Produce", fault=rule)
        assert swallowed and all(ex.no_response for ex in swallowed), swallowed
        assert not any(ex.closed_connection for ex in swallowed), swallowed


# -- record edits on Fetch -----------------------------------------------------------------


@probe(seconds=40)
def fault_partial_trailing_batch(client: str) -> None:
    """README: ``on("Fetch", ...).once().partial_trailing_batch()``. With 50 records written
    at the producer's defaults (one batch, for librdkafka and kafka-python) there is nothing
    Kafka would cut: the rule matches, declines, and says why (issue 33: it said nothing).
    Written in two batches, the answer ends with a cut batch, the consumer drops it, fetches
    again and reads every record once."""
    import mockkafka

    with mockkafka.Cluster(topics={"orders": 1}) as cluster:
        want = values(50)
        produce(client, cluster.bootstrap_servers, "orders", want)
        rule = cluster.faults.on("Fetch", topic="orders").once().partial_trailing_batch()
        with GroupConsumer(client, cluster.bootstrap_servers, "orders", "g0") as c:
            c.wait_records(50)  # the answers that carried them were matched by the rule
            if rule.fired == 0:  # one batch (aiokafka writes one record a batch: it fires)
                why = cluster.why_unfired(rule)
                assert rule.matched >= 1 and "single batch" in why, (rule, why)
        each_once(c.records, want)
    with mockkafka.Cluster(topics={"orders": 1}) as cluster:
        produce(client, cluster.bootstrap_servers, "orders", want[:25])
        produce(client, cluster.bootstrap_servers, "orders", want[25:])
        rule = cluster.faults.on("Fetch", topic="orders").once().partial_trailing_batch()
        with GroupConsumer(client, cluster.bootstrap_servers, "orders", "g0") as c:
            c.wait_records(50)
            _fired(cluster, rule, timeout=5)
        each_once(c.records, want)


@probe(seconds=40)
def fault_corrupt_batch(client: str) -> None:
    """``corrupt_batch()``: a byte under the first batch's CRC flipped. kafka-python and
    aiokafka check CRCs at their defaults and raise a CRC error naming the partition (as
    the Java client does); librdkafka does not at its defaults (``check.crcs=false``) and
    goes on delivering. The log is untouched."""
    import time

    import mockkafka

    with mockkafka.Cluster(topics={"orders": 1}) as cluster:
        want = values(20)
        produce(client, cluster.bootstrap_servers, "orders", want)
        rule = cluster.faults.on("Fetch", topic="orders").once().corrupt_batch()
        c = GroupConsumer(client, cluster.bootstrap_servers, "orders", "g0", max_s=30)
        with c:
            _fired(cluster, rule, timeout=20)
            deadline = time.monotonic() + 10
            while not c.errors and len(c.records) < 20 and time.monotonic() < deadline:
                time.sleep(0.05)
            seen = list(c.errors)
            c.errors.clear()
        if client == "confluent":
            assert len(c.records) >= 20, f"librdkafka delivered {len(c.records)} of 20"
        else:
            assert seen and "crc" in str(seen[0]).lower(), (
                f"{client} at its defaults (check_crcs=True) raised {seen!r} on a bad CRC"
            )
        assert stored(cluster, "orders") == want


@probe(seconds=40)
def fault_duplicate(client: str) -> None:
    """docs/faults.md: ``on("Fetch", topic="orders").times(3).duplicate()``: answers repeat
    the batch the consumer read last; clients drop records below their fetch position, so
    each record is delivered once."""
    import mockkafka

    with mockkafka.Cluster(topics={"orders": 1}) as cluster:
        rule = cluster.faults.on("Fetch", topic="orders").times(3).duplicate()
        first = values(10, "a")
        produce(client, cluster.bootstrap_servers, "orders", first)
        with GroupConsumer(client, cluster.bootstrap_servers, "orders", "g0") as c:
            c.wait_records(10)
            later = values(10, "b")
            produce(client, cluster.bootstrap_servers, "orders", later)
            c.wait_records(20)
            _fired(cluster, rule)
        each_once(c.records, first + later)


@probe(seconds=40)
def fault_corrupt_payload(client: str) -> None:
    """README: ``corrupt_payload(part="value")``: CRC-valid garbage -- the client delivers
    every record without an error, the application's ``json.loads`` fails; the log is
    untouched."""
    import json

    import mockkafka

    with mockkafka.Cluster(topics={"orders": 1}) as cluster:
        want = [json.dumps({"order": i}).encode() for i in range(20)]
        produce(client, cluster.bootstrap_servers, "orders", want)
        rule = cluster.faults.on("Fetch", topic="orders").once().corrupt_payload(part="value")
        with GroupConsumer(client, cluster.bootstrap_servers, "orders", "g0") as c:
            c.wait_records(20)
            _fired(cluster, rule)
        got = [v for _p, _o, v in c.records]
        assert len(got) == 20, got
        garbled = [v for v in got if v not in want]
        assert garbled, "no value was garbled"
        assert sorted(len(v or b"") for v in got) == sorted(len(v) for v in want)
        for v in garbled:
            try:
                json.loads(v or b"")
            except ValueError:
                continue
            raise AssertionError(f"a garbled value still parses as JSON: {v!r}")
        assert stored(cluster, "orders") == want


@probe(seconds=40)
def fault_schema_id(client: str) -> None:
    """README: ``schema_id(id=999)``: each value in the schema-registry wire format gets
    schema id 999, the payload kept."""
    import mockkafka

    with mockkafka.Cluster(topics={"orders": 1}) as cluster:
        want = [b"\x00" + (7).to_bytes(4, "big") + b"payload-%d" % i for i in range(10)]
        produce(client, cluster.bootstrap_servers, "orders", want)
        rule = cluster.faults.on("Fetch", topic="orders").once().schema_id(id=999)
        with GroupConsumer(client, cluster.bootstrap_servers, "orders", "g0") as c:
            c.wait_records(10)
            _fired(cluster, rule)
        got = [v or b"" for _p, _o, v in c.records]
        assert [v[:5] for v in got] == [b"\x00" + (999).to_bytes(4, "big")] * 10, got
        assert [v[5:] for v in got] == [v[5:] for v in want]
        assert stored(cluster, "orders") == want


@probe(seconds=40)
def fault_skew_timestamps(client: str) -> None:
    """docs/faults.md: ``every_time().skew_timestamps(ms=3_600_000)``: the consumer sees
    CreateTime an hour in the future; the log keeps the real time."""
    import time

    import mockkafka

    with mockkafka.Cluster(topics={"orders": 1}) as cluster:
        want = values(10)
        before = int(time.time() * 1000)
        produce(client, cluster.bootstrap_servers, "orders", want)
        rule = (
            cluster.faults.on("Fetch", topic="orders", partition=0)
            .every_time()
            .skew_timestamps(ms=3_600_000)
        )
        with GroupConsumer(client, cluster.bootstrap_servers, "orders", "g0") as c:
            c.wait_records(10)
            _fired(cluster, rule)
        stored = [r.timestamp for r in cluster.topic("orders").partition(0).records()]
        seen = c.timestamps[:10]
        assert all(s >= before - 60_000 and s < before + 600_000 for s in stored), stored
        assert seen == [s + 3_600_000 for s in stored], (seen, stored)


# -- observe, handler, after_event -----------------------------------------------------------


@probe(clients=("confluent",), seconds=30)
def fault_observe(client: str) -> None:
    """``every_time().observe()``: does nothing but count and mark the exchanges."""
    import mockkafka

    with mockkafka.Cluster(topics={"orders": 1}) as cluster:
        rule = cluster.faults.on("Produce").every_time().observe()
        want = values(10)
        produce(client, cluster.bootstrap_servers, "orders", want)
        produces = cluster.traffic.requests("Produce")
        assert rule.fired == len(produces) >= 1, (rule, produces)
        assert cluster.traffic.requests("Produce", fault=rule) == produces
        assert stored(cluster, "orders") == want


@probe(seconds=40)
def fault_custom_handler(client: str) -> None:
    """docs/faults.md: ``handler(fn)`` with ``ctx.cluster`` -- move the leader at exactly
    this Produce and let it through: the old leader answers NOT_LEADER_OR_FOLLOWER, the
    producer retries to the new leader, every record lands once."""
    import mockkafka
    from mockkafka.errors import ErrorCode

    with mockkafka.Cluster(brokers=3) as cluster:
        cluster.create_topic("orders", partitions=1, replication_factor=3)
        old = cluster.topic("orders").partition(0).leader
        new = next(b for b in (1, 2, 3) if b != old)
        calls: list[int] = []

        def move_leader(request: dict[str, Any], ctx: Any) -> None:
            calls.append(1)
            ctx.cluster.set_leader("orders", 0, new)

        rule = cluster.faults.on("Produce", topic="orders", broker=old).once().handler(move_leader)
        want = values(20)
        produce(client, cluster.bootstrap_servers, "orders", want)
        assert rule.fired == 1 and calls == [1], (rule, calls)
        assert cluster.topic("orders").partition(0).leader == new
        (rejected,) = cluster.traffic.requests("Produce", fault=rule)
        assert ErrorCode.NOT_LEADER_OR_FOLLOWER in rejected.error_codes, rejected
        assert cluster.traffic.requests("Produce", broker=new, since_seq=rejected.seq)
        assert stored(cluster, "orders") == want


@probe(clients=("confluent",), seconds=30)
def fault_custom_handler_answers(client: str) -> None:
    """``handler(fn)`` returning a response dict (built with ``error_response``): that is
    the answer and the request is not processed; the producer retries, every record lands
    once."""
    import mockkafka
    from mockkafka.errors import ErrorCode
    from mockkafka.handlers.base import error_response

    with mockkafka.Cluster(topics={"orders": 1}) as cluster:
        answered: list[int] = []

        def refuse(request: dict[str, Any], ctx: Any) -> dict[str, Any]:
            answered.append(ctx.version)
            return error_response(ctx, request, ErrorCode.NOT_LEADER_OR_FOLLOWER)

        rule = cluster.faults.on("Produce", topic="orders").once().handler(refuse)
        want = values(20)
        produce(client, cluster.bootstrap_servers, "orders", want)
        assert rule.fired == 1 and len(answered) == 1, (rule, answered)
        (ex,) = cluster.traffic.requests("Produce", fault=rule)
        assert ErrorCode.NOT_LEADER_OR_FOLLOWER in ex.error_codes, ex
        assert stored(cluster, "orders") == want


@probe(clients=("confluent",), seconds=30)
def fault_after_event(client: str) -> None:
    """``after_event("leader_moved", topic=...)``: the rule waits for the event, then
    fires; the producer recovers."""
    import mockkafka

    with mockkafka.Cluster(brokers=2) as cluster:
        cluster.create_topic("orders", partitions=1, replication_factor=2)
        rule = (
            cluster.faults.on("Produce", topic="orders")
            .after_event("leader_moved", topic="orders")
            .once()
            .error("NOT_LEADER_OR_FOLLOWER")
        )
        produce(client, cluster.bootstrap_servers, "orders", values(5, "a"))
        assert rule.fired == 0, "the rule fired before its event"
        leader = cluster.topic("orders").partition(0).leader
        cluster.move_leader("orders", 0, to=3 - leader)
        produce(client, cluster.bootstrap_servers, "orders", values(5, "b"))
        assert rule.fired == 1, rule
        assert stored(cluster, "orders") == values(5, "a") + values(5, "b")

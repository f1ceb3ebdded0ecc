"""A cluster verb refuses what Kafka's nearest real operation refuses, with Kafka's error.

Each test pins one verb argument that used to do something Kafka never would (invent
offsets, clamp silently, bump an epoch for nothing); where a request reaches the same state
(DeleteRecords, ElectLeaders), the verb and the request answer alike. Sans-IO: the verbs run
over a bare ClusterState, as the Cluster runs them on its loop.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import pytest

from mockkafka._api.verbs import ClusterVerbs
from mockkafka.cluster.coordinators import GROUP
from mockkafka.cluster.groups import OFFSET_METADATA_MAX_BYTES
from mockkafka.cluster.state import ClusterConfig, ClusterState, ManualClock
from mockkafka.errors import ConfigError, ErrorCode, KafkaApiError
from mockkafka.faults import engine_of
from mockkafka.handlers.base import call_handler, load_handlers
from mockkafka.scenario.model import Step, Verb
from mockkafka.strategies._plans import missing_resource

T = TypeVar("T")


class Verbs(ClusterVerbs):
    """The public verbs over a bare state (``_call`` runs in place, as on the loop)."""

    def __init__(self, state: ClusterState) -> None:
        self._state = state

    def _call(self, fn: Callable[[], T]) -> T:
        return fn()

    _read = _call


@pytest.fixture
def v() -> Verbs:
    load_handlers()
    return Verbs(ClusterState(ClusterConfig(brokers=3), clock=ManualClock()))


def _epoch(v: Verbs, topic: str = "t") -> int:
    return v.topic(topic).partition(0).leader_epoch


def _refused(code: str, fn: Callable[[], object]) -> KafkaApiError:
    with pytest.raises(KafkaApiError) as info:
        fn()
    assert info.value.error.name == code, info.value
    return info.value


def _wire(v: Verbs, api: str, body: dict[str, Any], broker: int) -> dict[str, Any]:
    r = call_handler(v._state, api, body, broker_id=broker)
    assert isinstance(r, dict)
    return r


# -- truncate_log ---------------------------------------------------------------------------


def test_truncating_beyond_the_high_watermark_is_refused_and_invents_no_offsets(v: Verbs) -> None:
    v.create_topic("t", replication_factor=3)
    v.produce("t", b"only")
    epoch = _epoch(v)
    err = _refused("OFFSET_OUT_OF_RANGE", lambda: v.truncate_log("t", 0, to_offset=100))
    assert "give 0 (log start offset) to 1 (high watermark)" in str(err)
    assert v.topic("t").partition(0).high_watermark == 1 and _epoch(v) == epoch
    assert v.produce("t", b"next") == 1  # the next record lands where it should


@pytest.mark.parametrize("to_offset", [-1, 2])
def test_truncating_below_the_log_start_is_refused_not_clamped(v: Verbs, to_offset: int) -> None:
    v.create_topic("t")
    for i in range(5):
        v.produce("t", b"%d" % i)
    v.delete_records("t", 0, before_offset=3)
    err = _refused("OFFSET_OUT_OF_RANGE", lambda: v.truncate_log("t", 0, to_offset=to_offset))
    assert "give 3 (log start offset) to 5 (high watermark)" in str(err)
    p = v.topic("t").partition(0)
    assert (p.log_start_offset, p.high_watermark) == (3, 5)


def test_truncating_at_the_high_watermark_loses_nothing_and_starts_an_epoch(v: Verbs) -> None:
    v.create_topic("t")
    v.produce("t", b"a")
    epoch = _epoch(v)
    v.truncate_log("t", 0, to_offset=1)
    assert [r.value for r in v.topic("t").partition(0).records()] == [b"a"]
    assert _epoch(v) == epoch + 1


def test_a_truncate_log_offset_that_is_not_an_int_is_a_config_error(v: Verbs) -> None:
    v.create_topic("t")
    with pytest.raises(ConfigError, match=r"truncate_log: to_offset must be an int, got '3'"):
        v.truncate_log("t", 0, to_offset="3")  # type: ignore[arg-type]


# -- delete_records: the verb and DeleteRecords over the wire answer alike ---------------------


def _delete_on_wire(v: Verbs, offset: int) -> dict[str, Any]:
    body = {
        "topics": [{"name": "t", "partitions": [{"partition_index": 0, "offset": offset}]}],
        "timeout_ms": 1000,
    }
    leader = v.topic("t").partition(0).leader
    r = _wire(v, "DeleteRecords", body, leader)
    out: dict[str, Any] = r["topics"][0]["partitions"][0]
    return out


@pytest.mark.parametrize("offset", [100, 6, -2])
def test_deleting_records_beyond_the_high_watermark_is_offset_out_of_range(
    v: Verbs, offset: int
) -> None:
    v.create_topic("t")
    for i in range(5):
        v.produce("t", b"%d" % i)
    err = _refused("OFFSET_OUT_OF_RANGE", lambda: v.delete_records("t", 0, before_offset=offset))
    assert "up to the high watermark 5 (or -1 for it)" in str(err)
    assert v.topic("t").partition(0).log_start_offset == 0
    assert _delete_on_wire(v, offset)["error_code"] == ErrorCode.OFFSET_OUT_OF_RANGE


def test_delete_records_minus_one_deletes_up_to_the_high_watermark_as_kafka(v: Verbs) -> None:
    v.create_topic("t")
    for i in range(5):
        v.produce("t", b"%d" % i)
    assert v.delete_records("t", 0, before_offset=-1) == 5
    assert v.topic("t").partition(0).records() == []
    v.produce("t", b"5")
    assert _delete_on_wire(v, -1)["low_watermark"] == 6


def test_delete_records_below_the_log_start_changes_nothing(v: Verbs) -> None:
    v.create_topic("t")
    for i in range(5):
        v.produce("t", b"%d" % i)
    assert v.delete_records("t", 0, before_offset=3) == 3
    assert v.delete_records("t", 0, before_offset=1) == 3
    assert _delete_on_wire(v, 2)["low_watermark"] == 3


def test_deleting_records_of_a_compacted_topic_is_a_policy_violation(v: Verbs) -> None:
    v.create_topic("t", config={"cleanup.policy": "compact"})
    v.produce("t", b"x", key=b"k")
    _refused("POLICY_VIOLATION", lambda: v.delete_records("t", 0, before_offset=1))
    assert v.topic("t").partition(0).log_start_offset == 0
    assert _delete_on_wire(v, 1)["error_code"] == ErrorCode.POLICY_VIOLATION


# -- move_leader / move_coordinator ---------------------------------------------------------


def test_moving_the_leader_to_the_broker_that_leads_is_election_not_needed(v: Verbs) -> None:
    v.create_topic("t", replication_factor=3)
    p = v.topic("t").partition(0)
    err = _refused("ELECTION_NOT_NEEDED", lambda: v.move_leader("t", 0, to=p.leader))
    assert f"broker {p.leader} already leads t-0" in str(err)
    assert _epoch(v) == p.leader_epoch  # Kafka keeps the epoch
    # The preferred election over the wire, for the same broker, answers the same.
    body = {"election_type": 0, "topic_partitions": [{"topic": "t", "partitions": [0]}]}
    r = _wire(v, "ElectLeaders", {**body, "timeout_ms": 1000}, 1)
    assert r["replica_election_results"][0]["partition_result"][0]["error_code"] == (
        ErrorCode.ELECTION_NOT_NEEDED
    )


def test_move_leader_to_a_broker_that_is_not_a_number_is_a_config_error(v: Verbs) -> None:
    v.create_topic("t")
    with pytest.raises(ConfigError, match=r"move_leader: to must be an int, got 'next'"):
        v.move_leader("t", 0, to="next")  # type: ignore[arg-type]


def test_moving_a_coordinator_to_its_own_broker_or_a_stopped_one_is_refused(v: Verbs) -> None:
    coord = v.coordinator(group="g")
    epoch = v._state.coordinators.epoch
    _refused("ELECTION_NOT_NEEDED", lambda: v.move_coordinator(group="g", to=coord))
    other = next(b for b in (1, 2, 3) if b != coord)
    v._state.stop_broker(other)
    err = _refused("BROKER_NOT_AVAILABLE", lambda: v.move_coordinator(group="g", to=other))
    assert f"broker {other} is stopped" in str(err)
    assert v._state.coordinators.epoch == epoch
    assert v._state.coordinators.coordinator(GROUP, "g") == coord


# -- set_isr --------------------------------------------------------------------------------


def test_an_empty_isr_is_refused(v: Verbs) -> None:
    v.create_topic("t", replication_factor=3)
    err = _refused("INVALID_REQUEST", lambda: v.set_isr("t", 0, to=[]))
    assert "cannot be empty" in str(err)
    assert len(v.topic("t").partition(0).isr) == 3


def test_a_stopped_broker_cannot_join_the_isr(v: Verbs) -> None:
    v.create_topic("t", replication_factor=3)
    v.set_isr("t", 0, to=[1])
    v._state.stop_broker(2)
    _refused("INELIGIBLE_REPLICA", lambda: v.set_isr("t", 0, to=[1, 2]))
    assert v.topic("t").partition(0).isr == (1,)


def test_setting_the_same_isr_again_starts_no_partition_epoch(v: Verbs) -> None:
    v.create_topic("t", replication_factor=3)
    v.set_isr("t", 0, to=[1, 2])
    p = v._state.partition("t", 0)
    before = (p.partition_epoch, p.leader_epoch)
    v.set_isr("t", 0, to=[1, 2])
    assert (p.partition_epoch, p.leader_epoch) == before


# -- brokers --------------------------------------------------------------------------------


def test_stopping_a_stopped_broker_or_starting_a_running_one_is_left_alone() -> None:
    state = ClusterState(ClusterConfig(brokers=2), clock=ManualClock())
    engine = engine_of(state)
    state.stop_broker(2)
    state.stop_broker(2)
    state.start_broker(2)
    state.start_broker(2)
    assert [e.name for e in engine.events] == ["broker_stopped", "broker_started"]


def test_expiring_a_member_the_group_lacks_is_refused_without_an_event(v: Verbs) -> None:
    v.create_topic("t")
    v.commit_offsets("g", {("t", 0): 1})  # a group without members
    engine = engine_of(v._state)
    _refused("UNKNOWN_MEMBER_ID", lambda: v.expire_member("g", "nobody"))
    _refused("GROUP_ID_NOT_FOUND", lambda: v.expire_member("nope", "nobody"))
    assert [e.name for e in engine.events] == []  # a rule after_event member_expired waits on


# -- add_partitions, cap_api_versions, commit_offsets ---------------------------------------


@pytest.mark.parametrize("total", [0, "4", None])
def test_add_partitions_with_a_total_that_is_not_a_count_is_a_config_error(
    v: Verbs, total: object
) -> None:
    v.create_topic("t")
    with pytest.raises(ConfigError, match=r"add_partitions: total must be an int >= 1, got"):
        v.add_partitions("t", total=total)  # type: ignore[arg-type]


def test_a_cap_above_the_newest_version_names_the_apis_range(v: Verbs) -> None:
    with pytest.raises(ConfigError, match=r"caps\['Fetch'\] must be a version of Fetch from 0 to"):
        v.cap_api_versions({"Fetch": 99})
    assert v._state.api_version_caps == {}


def test_commit_offsets_with_metadata_over_the_limit_is_offset_metadata_too_large(
    v: Verbs,
) -> None:
    v.create_topic("t")
    too_long = "m" * (OFFSET_METADATA_MAX_BYTES + 1)
    _refused(
        "OFFSET_METADATA_TOO_LARGE",
        lambda: v.commit_offsets("g", {("t", 0): 1}, metadata=too_long),
    )
    assert v.committed_offsets("g") == {}


def test_commit_offsets_into_a_group_with_members_is_refused_as_kafka(v: Verbs) -> None:
    v.create_topic("t")
    join = {
        "group_id": "g",
        "member_id": "",
        "session_timeout_ms": 10_000,
        "rebalance_timeout_ms": 10_000,
        "protocol_type": "consumer",
        "protocols": [{"name": "range", "metadata": b""}],
    }
    coordinator = v.coordinator(group="g")
    first = _wire(v, "JoinGroup", join, coordinator)  # MEMBER_ID_REQUIRED, with the id
    again = {**join, "member_id": first["member_id"]}
    call_handler(v._state, "JoinGroup", again, broker_id=coordinator)
    assert v.group("g").members
    err = _refused("UNKNOWN_MEMBER_ID", lambda: v.commit_offsets("g", {("t", 0): 1}))
    assert "group 'g' has members" in str(err)
    assert v.committed_offsets("g") == {}


# -- fault plans: a drawn step Kafka would refuse now is skipped, saying why ---------------


def test_the_state_machine_skips_an_offset_beyond_the_records_written(v: Verbs) -> None:
    v.create_topic("orders")
    v.produce("orders", b"x")
    step = Step(Verb("truncate_log", topic="orders", partition=0, to_offset=3))
    assert missing_resource(v, step) == "to_offset=3 is beyond the high watermark 1"
    ok = Step(Verb("delete_records", topic="orders", partition=0, before_offset=1))
    assert missing_resource(v, ok) is None

"""Server-side assignors and the consumer-protocol bytes codec."""

from __future__ import annotations

import pytest

from mockkafka.cluster.assignors import MemberSubscription, range_, uniform
from mockkafka.cluster.consumer_protocol import (
    Assignment,
    ConsumerProtocolError,
    Subscription,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)


def _count(a: dict[str, dict[str, set[int]]]) -> dict[str, int]:
    return {m: sum(len(ps) for ps in tp.values()) for m, tp in a.items()}


def test_uniform_is_balanced_and_complete() -> None:
    ms = {m: MemberSubscription(frozenset({"t", "u"})) for m in "abc"}
    out = uniform(ms, {"t": 5, "u": 3})
    assert sorted(_count(out).values()) == [2, 3, 3]
    every = [(t, p) for tp in out.values() for t, ps in tp.items() for p in ps]
    assert sorted(every) == sorted([("t", i) for i in range(5)] + [("u", i) for i in range(3)])


def test_uniform_is_sticky_when_a_member_joins() -> None:
    first = uniform({m: MemberSubscription(frozenset({"t"})) for m in "ab"}, {"t": 6})
    ms = {m: MemberSubscription(frozenset({"t"}), first.get(m, {})) for m in "abc"}
    second = uniform(ms, {"t": 6})
    assert _count(second) == {"a": 2, "b": 2, "c": 2}
    for m in "ab":
        assert second[m]["t"] <= first[m]["t"], "old members only lose partitions"


def test_uniform_respects_subscriptions() -> None:
    ms = {"a": MemberSubscription(frozenset({"t"})), "b": MemberSubscription(frozenset({"u"}))}
    out = uniform(ms, {"t": 2, "u": 2})
    assert out == {"a": {"t": {0, 1}}, "b": {"u": {0, 1}}}


def test_range_gives_contiguous_ranges_per_topic() -> None:
    ms = {m: MemberSubscription(frozenset({"t"})) for m in "abc"}
    assert range_(ms, {"t": 7}) == {"a": {"t": {0, 1, 2}}, "b": {"t": {3, 4}}, "c": {"t": {5, 6}}}


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_subscription_roundtrip(version: int) -> None:
    s = Subscription(
        version,
        ("a", "b"),
        b"ud",
        {"a": (1, 2)} if version >= 1 else {},
        5 if version >= 2 else -1,
        "r1" if version >= 3 else None,
    )
    assert decode_subscription(encode_subscription(s)) == s


def test_assignment_roundtrip_and_empty() -> None:
    a = Assignment(1, {"t": (0, 3)}, None)
    assert decode_assignment(encode_assignment(a)) == a
    assert decode_assignment(b"").partitions == {}


def test_garbage_raises_consumer_protocol_error() -> None:
    with pytest.raises(ConsumerProtocolError):
        decode_subscription(b"\x00\x01\x00\x00\x00\x05ab")

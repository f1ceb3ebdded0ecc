"""Sans-IO harness for group tests: a ClusterState on a ManualClock and a way to call
handlers (following Park) as the server would, one broker at a time."""

from __future__ import annotations

import itertools
from collections.abc import Hashable
from typing import Any

import pytest

from mockkafka.cluster.consumer_protocol import (
    Assignment,
    Subscription,
    encode_assignment,
    encode_subscription,
)
from mockkafka.cluster.coordinators import GROUP
from mockkafka.cluster.state import ClusterConfig, ClusterState, ManualClock
from mockkafka.handlers.base import Park, call_handler, load_handlers

_corr = itertools.count(1)


class Parked:
    """A request waiting for the cluster (the server would hold its response)."""

    def __init__(self, h: Harness, park: Park, api: str, version: int) -> None:
        self.h = h
        self.park = park
        self.api = api
        self.version = version
        self.woken = False
        self.response: dict[str, Any] | None = None

    def poll(self) -> dict[str, Any] | None:
        """Resume once if a key was notified or the deadline passed; the response or None."""
        if self.response is not None:
            return self.response
        timed_out = self.h.clock.now_ms() >= self.park.deadline_ms
        if not (timed_out or self.woken):
            return None
        self.woken = False
        r = self.park.resume(timed_out)
        if isinstance(r, Park):
            self.park = r
            return None
        assert isinstance(r, dict)
        self.response = roundtrip(self.api, self.version, r)
        return self.response

    @property
    def done(self) -> bool:
        return self.poll() is not None


def roundtrip(api: str, version: int, response: dict[str, Any]) -> dict[str, Any]:
    """Encode and decode ``response``: it must be valid at this version."""
    from mockkafka.protocol.codec import codec

    enc = codec(f"{api}Response", version)
    out, _ = enc.decode(enc.encode(response), 0)
    return out


class Harness:
    def __init__(self, **config: Any) -> None:
        self.clock = ManualClock()
        self.state = ClusterState(ClusterConfig(**config), clock=self.clock)
        self.parked: list[Parked] = []
        self.state.add_waker(self._wake)
        load_handlers()

    def _wake(self, key: Hashable) -> None:
        for p in self.parked:
            if key in p.park.keys:
                p.woken = True

    def coordinator(self, group_id: str) -> int:
        return self.state.coordinators.coordinator(GROUP, group_id)

    def call(
        self,
        api: str,
        version: int,
        body: dict[str, Any],
        *,
        broker: int | None = None,
        client_id: str = "test-client",
    ) -> dict[str, Any] | Parked:
        from mockkafka.protocol.codec import codec

        full = codec(f"{api}Request", version).default()
        full.update(body)
        gid = body.get("group_id")
        if broker is None:
            broker = self.coordinator(gid) if isinstance(gid, str) else 1
        r = call_handler(
            self.state,
            api,
            full,
            version=version,
            broker_id=broker,
            client_id=client_id,
            correlation_id=next(_corr),
            codec_roundtrip=False,
        )
        if isinstance(r, Park):
            p = Parked(self, r, api, version)
            self.parked.append(p)
            return p
        assert isinstance(r, dict)
        return roundtrip(api, version, r)

    def sync_call(self, api: str, version: int, body: dict[str, Any], **kw: Any) -> dict[str, Any]:
        r = self.call(api, version, body, **kw)
        assert isinstance(r, dict), f"{api} parked unexpectedly"
        return r

    def advance(self, ms: int) -> None:
        """Move the clock and run due timers (remembering what they notified)."""
        self.clock.advance(ms)
        self.state.run_timers()

    def create_topic(self, name: str, partitions: int) -> None:
        self.state.create_topic(name, partitions, 1)


def subscription(*topics: str, owned: dict[str, tuple[int, ...]] | None = None) -> bytes:
    return encode_subscription(Subscription(1, tuple(topics), None, owned or {}))


def assignment(parts: dict[str, tuple[int, ...]]) -> bytes:
    return encode_assignment(Assignment(1, parts))


@pytest.fixture
def h() -> Harness:
    return Harness(brokers=3)

"""Client quotas (KIP-257 / KIP-546): stored per entity, and enforced on Produce and Fetch.

Theory of operation
-------------------
A quota entity is a set of (entity type, name) pairs over ``user``, ``client-id`` and
``ip``; a name of None is the type's *default* entity. AlterClientQuotas sets or removes
values per entity, DescribeClientQuotas filters them, and a test sets them with
``cluster.set_client_quotas``. As in Kafka, the quota that applies to a request is the most
specific one defined, in this order: user+client-id, user+default client-id, user, default
user+client-id, default user+default client-id, default user, client-id, default client-id.

Enforcement follows Kafka's ``ClientQuotaManager``: bytes are counted per (user, client-id)
in ``quota.window.num`` samples of ``quota.window.size.seconds`` (11 x 1 s). The observed
rate is the bytes in the window divided by the window's length (never less than
``quota.window.num - 1`` samples), and a request that pushes the rate over the bound is
answered with ``throttle_time_ms = (rate - bound) / bound * window`` (at most the whole
window). The server then reads nothing more from that connection for that long (KIP-219),
so a throttled client slows down exactly as against Kafka. ``producer_byte_rate`` counts
the record bytes of Produce requests, ``consumer_byte_rate`` the record bytes of Fetch
responses. ``request_percentage``, ``controller_mutation_rate`` and
``connection_creation_rate`` are stored and described, not enforced.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mockkafka.errors import ErrorCode, KafkaApiError

if TYPE_CHECKING:
    from mockkafka.cluster.state import ClusterState

ENTITY_TYPES = ("user", "client-id", "ip")
CLIENT_KEYS = frozenset(
    {"producer_byte_rate", "consumer_byte_rate", "request_percentage", "controller_mutation_rate"}
)
IP_KEYS = frozenset({"connection_creation_rate"})

Entity = tuple[tuple[str, str | None], ...]
"""(entity type, name or None for the default) pairs, sorted by type."""


def make_entity(pairs: dict[str, str | None]) -> Entity:
    """An entity from ``{type: name}``; KafkaApiError INVALID_REQUEST when Kafka refuses it."""
    if not pairs:
        raise KafkaApiError(ErrorCode.INVALID_REQUEST, "Invalid empty client quota entity")
    for etype in pairs:
        if etype not in ENTITY_TYPES:
            raise KafkaApiError(
                ErrorCode.INVALID_REQUEST, f"Unhandled client quota entity type: {etype}"
            )
    if "ip" in pairs and len(pairs) > 1:
        raise KafkaApiError(
            ErrorCode.INVALID_REQUEST, "Invalid quota entity combination, IP cannot be combined"
        )
    return tuple(sorted(pairs.items()))


@dataclass(slots=True)
class _Usage:
    """Bytes counted per sample window (start ms, bytes)."""

    samples: deque[list[int]] = field(default_factory=deque)


@dataclass(slots=True)
class ClientQuotas:
    """Every quota set on the cluster and the byte counts that enforce them."""

    values: dict[Entity, dict[str, float]] = field(default_factory=dict)
    usage: dict[tuple[str, str, str], _Usage] = field(default_factory=dict)

    def alter(self, entity: Entity, ops: list[tuple[str, float | None]], *, apply: bool) -> None:
        """Set (value) or remove (None) quota keys of ``entity``; validates first."""
        allowed = IP_KEYS if entity[0][0] == "ip" else CLIENT_KEYS
        for key, value in ops:
            if key not in allowed:
                raise KafkaApiError(ErrorCode.INVALID_REQUEST, f"Invalid configuration key {key}")
            if value is not None and value <= 0:
                raise KafkaApiError(
                    ErrorCode.INVALID_REQUEST, f"Quota {key} must be greater than 0, got {value}"
                )
        if len({k for k, _ in ops}) != len(ops):
            raise KafkaApiError(ErrorCode.INVALID_REQUEST, "Duplicate quota key in request")
        if not apply:
            return
        cur = self.values.setdefault(entity, {})
        for key, value in ops:
            if value is None:
                cur.pop(key, None)
            else:
                cur[key] = float(value)
        if not cur:
            del self.values[entity]

    def quota(self, user: str, client_id: str, key: str) -> float | None:
        """The bound of ``key`` for a (user, client-id), by Kafka's precedence."""
        order: list[Entity] = [
            (("client-id", client_id), ("user", user)),
            (("client-id", None), ("user", user)),
            (("user", user),),
            (("client-id", client_id), ("user", None)),
            (("client-id", None), ("user", None)),
            (("user", None),),
            (("client-id", client_id),),
            (("client-id", None),),
        ]
        for entity in order:
            v = self.values.get(entity, {}).get(key)
            if v is not None:
                return v
        return None

    def record(
        self,
        state: ClusterState,
        key: str,
        user: str,
        client_id: str,
        nbytes: int,
        now_ms: int,
    ) -> int:
        """Count ``nbytes`` against ``key`` and return the throttle time Kafka would answer."""
        bound = self.quota(user, client_id, key)
        if bound is None:
            return 0
        sample_ms = int(state.broker_configs.get("quota.window.size.seconds", "1")) * 1000
        num = int(state.broker_configs.get("quota.window.num", "11"))
        u = self.usage.setdefault((key, user, client_id), _Usage())
        start = now_ms - now_ms % sample_ms
        if not u.samples or u.samples[-1][0] != start:
            u.samples.append([start, 0])
        u.samples[-1][1] += nbytes
        while u.samples and u.samples[0][0] <= now_ms - num * sample_ms:
            u.samples.popleft()
        elapsed = now_ms - u.samples[0][0]
        window = max(elapsed, (num - 1) * sample_ms)
        rate = sum(b for _s, b in u.samples) * 1000 / window
        if rate <= bound:
            return 0
        return min(int((rate - bound) / bound * window), num * sample_ms)

    def describe(
        self, components: list[tuple[str, int, str | None]], strict: bool
    ) -> list[tuple[Entity, dict[str, float]]]:
        """Entities matching DescribeClientQuotas ``components`` (type, match type, name)."""
        out = []
        for entity, values in sorted(self.values.items(), key=lambda kv: repr(kv[0])):
            names = dict(entity)
            ok = True
            for etype, match_type, match in components:
                if etype not in names:
                    ok = False
                elif match_type == 0:
                    ok = ok and names[etype] == match
                elif match_type == 1:
                    ok = ok and names[etype] is None
            if strict and set(names) != {c[0] for c in components}:
                ok = False
            if ok:
                out.append((entity, dict(values)))
        return out


def client_quotas(state: ClusterState) -> ClientQuotas:
    """The cluster's quota store (created on first use)."""
    q: ClientQuotas | None = state.extensions.get("client_quotas")
    if q is None:
        q = state.extensions["client_quotas"] = ClientQuotas()
    return q

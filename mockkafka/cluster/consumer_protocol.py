"""The "consumer" embedded protocol of classic groups: subscription and assignment bytes.

Classic JoinGroup/SyncGroup carry opaque bytes; consumers (protocol type ``consumer``) fill
them with ``ConsumerProtocolSubscription`` (topics, user data, owned partitions, generation,
rack; versions 0-3) and ``ConsumerProtocolAssignment`` (assigned partitions, user data). The
broker does not need them to run a group, but decodes them to show a test which member owns
which partitions and to answer OffsetDelete's GROUP_SUBSCRIBED_TO_TOPIC. Both start with an
int16 version; fields of newer versions are optional at the end, so a decoder reads what it
finds. Non-flexible encoding (int16-length strings, int32-length arrays and bytes).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field


class ConsumerProtocolError(ValueError):
    """The bytes are not a consumer-protocol subscription or assignment."""


@dataclass(frozen=True, slots=True)
class Subscription:
    """A decoded ``ConsumerProtocolSubscription``."""

    version: int
    topics: tuple[str, ...]
    user_data: bytes | None = None
    owned_partitions: dict[str, tuple[int, ...]] = field(default_factory=dict)
    generation_id: int = -1
    rack_id: str | None = None


@dataclass(frozen=True, slots=True)
class Assignment:
    """A decoded ``ConsumerProtocolAssignment``."""

    version: int
    partitions: dict[str, tuple[int, ...]]
    user_data: bytes | None = None


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.b = data
        self.p = 0

    def more(self) -> bool:
        return self.p < len(self.b)

    def _take(self, fmt: str) -> int:
        size = struct.calcsize(fmt)
        if self.p + size > len(self.b):
            raise ConsumerProtocolError("truncated consumer protocol data")
        (v,) = struct.unpack_from(fmt, self.b, self.p)
        self.p += size
        return int(v)

    def int16(self) -> int:
        return self._take(">h")

    def int32(self) -> int:
        return self._take(">i")

    def string(self) -> str | None:
        n = self.int16()
        if n < 0:
            return None
        if self.p + n > len(self.b):
            raise ConsumerProtocolError("truncated string")
        s = self.b[self.p : self.p + n].decode("utf-8", "replace")
        self.p += n
        return s

    def bytes_(self) -> bytes | None:
        n = self.int32()
        if n < 0:
            return None
        if self.p + n > len(self.b):
            raise ConsumerProtocolError("truncated bytes")
        v = bytes(self.b[self.p : self.p + n])
        self.p += n
        return v

    def count(self) -> int:
        n = self.int32()
        if n > len(self.b):
            raise ConsumerProtocolError("array longer than the data")
        return max(n, 0)

    def topic_partitions(self) -> dict[str, tuple[int, ...]]:
        out: dict[str, tuple[int, ...]] = {}
        for _ in range(self.count()):
            topic = self.string() or ""
            parts = tuple(self.int32() for _ in range(self.count()))
            out[topic] = out.get(topic, ()) + parts
        return out


def decode_subscription(data: bytes) -> Subscription:
    """Decode subscription bytes; raises :class:`ConsumerProtocolError` when malformed."""
    r = _Reader(data)
    version = r.int16()
    if version < 0:
        raise ConsumerProtocolError(f"negative subscription version {version}")
    topics = tuple(r.string() or "" for _ in range(r.count()))
    user_data = r.bytes_() if r.more() else None
    owned: dict[str, tuple[int, ...]] = {}
    generation_id = -1
    rack_id = None
    if version >= 1 and r.more():
        owned = r.topic_partitions()
    if version >= 2 and r.more():
        generation_id = r.int32()
    if version >= 3 and r.more():
        rack_id = r.string()
    return Subscription(version, topics, user_data, owned, generation_id, rack_id)


def decode_assignment(data: bytes) -> Assignment:
    """Decode assignment bytes (empty bytes: no partitions)."""
    if not data:
        return Assignment(0, {})
    r = _Reader(data)
    version = r.int16()
    if version < 0:
        raise ConsumerProtocolError(f"negative assignment version {version}")
    parts = r.topic_partitions()
    user_data = r.bytes_() if r.more() else None
    return Assignment(version, parts, user_data)


def _w_string(out: bytearray, s: str | None) -> None:
    if s is None:
        out += struct.pack(">h", -1)
    else:
        b = s.encode()
        out += struct.pack(">h", len(b)) + b


def _w_bytes(out: bytearray, b: bytes | None) -> None:
    if b is None:
        out += struct.pack(">i", -1)
    else:
        out += struct.pack(">i", len(b)) + b


def _w_topic_partitions(out: bytearray, tps: dict[str, tuple[int, ...]]) -> None:
    out += struct.pack(">i", len(tps))
    for topic, parts in tps.items():
        _w_string(out, topic)
        out += struct.pack(f">i{len(parts)}i", len(parts), *parts)


def encode_subscription(s: Subscription) -> bytes:
    out = bytearray(struct.pack(">h", s.version))
    out += struct.pack(">i", len(s.topics))
    for t in s.topics:
        _w_string(out, t)
    _w_bytes(out, s.user_data)
    if s.version >= 1:
        _w_topic_partitions(out, s.owned_partitions)
    if s.version >= 2:
        out += struct.pack(">i", s.generation_id)
    if s.version >= 3:
        _w_string(out, s.rack_id)
    return bytes(out)


def encode_assignment(a: Assignment) -> bytes:
    out = bytearray(struct.pack(">h", a.version))
    _w_topic_partitions(out, a.partitions)
    _w_bytes(out, a.user_data)
    return bytes(out)

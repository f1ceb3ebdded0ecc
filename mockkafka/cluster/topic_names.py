"""Kafka's rule for topic names, on its own so that ``mockkafka serve`` can check its
``--topic`` names before it imports the broker state."""

from __future__ import annotations

_LEGAL_TOPIC_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")


def topic_name_problem(name: str) -> str | None:
    """Why ``name`` is not a legal Kafka topic name, or None."""
    if not name:
        return "topic name is empty"
    if name in (".", ".."):
        return f"topic name cannot be {name!r}"
    if len(name) > 249:
        return f"topic name is {len(name)} characters long, the limit is 249"
    bad = set(name) - _LEGAL_TOPIC_CHARS
    if bad:
        return f"topic name {name!r} contains illegal characters {''.join(sorted(bad))!r}"
    return None

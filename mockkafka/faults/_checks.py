"""Argument checking shared by the rule model and the fault actions (one wording for all).

Every checker raises :class:`~mockkafka.errors.ConfigError` naming the argument and what it
accepts; ``nondefault_repr`` is the valid-Python repr of the model's frozen dataclasses.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from mockkafka.errors import ConfigError, ErrorCode, error_code


def nondefault_repr(obj: Any) -> str:
    """``Name(field=value, ...)`` with only the fields that differ from their default."""
    parts = []
    for f in fields(obj):
        if not f.repr:
            continue
        v = getattr(obj, f.name)
        if v != f.default:
            parts.append(f"{f.name}={v!r}")
    return f"{type(obj).__name__}({', '.join(parts)})"


def check_error(value: ErrorCode | int | str, arg: str = "error") -> str:
    """An error code by name or number -> its name (raises ConfigError listing names)."""
    try:
        return error_code(value).name
    except ValueError as exc:
        raise ConfigError(
            f"{arg}={value!r}: {exc}; valid names are those of mockkafka.errors.ErrorCode, "
            f"e.g. NOT_LEADER_OR_FOLLOWER, REBALANCE_IN_PROGRESS, REQUEST_TIMED_OUT"
        ) from None


def check_count(value: Any, arg: str, *, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(f"{arg} must be an integer >= {minimum}, got {value!r}")
    return value


def check_ms(value: Any, arg: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ConfigError(f"{arg} must be a number of milliseconds >= 0, got {value!r}")
    return int(value)


def check_bool(value: Any, arg: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{arg} must be true or false, got {value!r}")
    return value

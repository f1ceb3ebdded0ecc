"""Argument checking shared by the rule model and the fault actions (one wording for all).

Every checker raises :class:`~mockkafka.errors.ConfigError` naming the argument and what it
accepts; ``nondefault_repr`` is the valid-Python repr of the model's frozen dataclasses.
"""

from __future__ import annotations

import difflib
import functools
import inspect
from collections.abc import Callable
from dataclasses import fields
from typing import Any, ParamSpec, TypeVar

from mockkafka.errors import ConfigError, ErrorCode, error_code

P = ParamSpec("P")
R = TypeVar("R")


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


def builder_arguments(method: Callable[P, R]) -> Callable[P, R]:
    """A rule builder method (``faults/_builders.py``) whose wrong call says how to call it:
    ``rule.delay(2000)`` raises a TypeError saying ``write .delay(ms=2000)``, a misspelt
    keyword one with a did-you-mean, instead of Python's bare message."""
    sig = inspect.signature(method)

    @functools.wraps(method)
    def checked(*args: P.args, **kwargs: P.kwargs) -> R:
        __tracebackhide__ = True
        try:
            sig.bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(_call_hint(method.__name__, sig, args[1:], kwargs, exc)) from None
        return method(*args, **kwargs)

    return checked


def _call_hint(
    name: str,
    sig: inspect.Signature,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    exc: TypeError,
) -> str:
    params = list(sig.parameters.values())[1:]  # without self
    by_position = [
        p.name
        for p in params
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]
    by_keyword = [p.name for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY]
    takes = ", ".join([*by_position, *(f"{k}=" for k in by_keyword)]) or "no argument"
    head = f"rule.{name}() takes {takes}"
    unknown = [k for k in kwargs if k not in sig.parameters or k == "self"]
    if unknown:
        close = difflib.get_close_matches(unknown[0], [p.name for p in params], n=1)
        hint = f" (did you mean {close[0]}=?)" if close else ""
        return f"{head}; it has no argument {unknown[0]!r}{hint}"
    if len(args) > len(by_position):
        free = [k for k in by_keyword if k not in kwargs]
        extra = args[len(by_position) :]
        if len(extra) <= len(free):
            shown = [repr(a) for a in args[: len(by_position)]]
            shown += [f"{k}={v!r}" for k, v in zip(free, extra, strict=False)]
            shown += [f"{k}={v!r}" for k, v in kwargs.items()]
            return f"{head}: give {', '.join(f'{k}=' for k in free[: len(extra)])} by keyword, " + (
                f"as in .{name}({', '.join(shown)})"
            )
        return f"{head}; it was given {len(args)} positional argument(s)"
    missing = [
        p.name
        for p in params
        if p.default is inspect.Parameter.empty
        and p.name not in kwargs
        and (p.name not in by_position or by_position.index(p.name) >= len(args))
    ]
    if missing:
        needs = [m if m in by_position else f"{m}=" for m in missing]
        return f"{head}; it needs {', '.join(needs)}"
    return f"{head}; {exc}"

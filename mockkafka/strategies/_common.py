"""Helpers shared by the strategy modules: eager argument checks and readable reprs."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from hypothesis.errors import InvalidArgument

F = TypeVar("F", bound=Callable[..., Any])


def named(name: str) -> Callable[[F], F]:
    """Give a ``@st.composite`` function the public name its repr shows, so
    ``repr(records(max_value_size=8))`` is ``records(max_value_size=8)``: valid Python."""

    def rename(fn: F) -> F:
        fn.__name__ = name
        fn.__qualname__ = name
        return fn

    return rename


def check_int(value: Any, arg: str, *, minimum: int = 0, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise InvalidArgument(f"{arg} must be an integer >= {minimum}, got {value!r}")
    if maximum is not None and value > maximum:
        raise InvalidArgument(f"{arg} must be an integer <= {maximum}, got {value!r}")
    return value


def check_bool(value: Any, arg: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidArgument(f"{arg} must be True or False, got {value!r}")
    return value


def did_you_mean(value: Any, choices: Iterable[str]) -> str:
    import difflib

    opts = list(choices)
    close = difflib.get_close_matches(str(value), opts, n=3)
    return f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""


def check_choices(
    value: Any, arg: str, choices: Iterable[str], *, allow_empty: bool = False
) -> tuple[str, ...]:
    """A name or a collection of names, each one of ``choices`` -> a tuple (order kept)."""
    opts = tuple(choices)
    vals = (value,) if isinstance(value, str) else value
    try:
        vals = tuple(vals)
    except TypeError:
        raise InvalidArgument(f"{arg} must be a name or a list of names, got {value!r}") from None
    if not vals and not allow_empty:
        raise InvalidArgument(f"{arg} must not be empty; valid: {', '.join(opts)}")
    for v in vals:
        if v not in opts:
            raise InvalidArgument(
                f"{arg}: {v!r} is not valid{did_you_mean(v, opts)}; valid: {', '.join(opts)}"
            )
    return vals


def check_names(value: Any, arg: str) -> tuple[str, ...]:
    """A non-empty list of non-empty strings (topic names, group ids, ...)."""
    vals = (value,) if isinstance(value, str) else value
    try:
        vals = tuple(vals)
    except TypeError:
        raise InvalidArgument(f"{arg} must be a list of names, got {value!r}") from None
    if not vals or not all(isinstance(v, str) and v for v in vals):
        raise InvalidArgument(f"{arg} must be a non-empty list of non-empty strings, got {value!r}")
    return vals


def check_apis(value: Any, default: tuple[str, ...]) -> tuple[str, ...]:
    """``apis=``: None (``default``), an API name or a list of them -> checked names."""
    from mockkafka.protocol.apis import API_BY_NAME

    if value is None:
        return default
    names = (value,) if isinstance(value, str) else tuple(value)
    if not names:
        raise InvalidArgument("apis must name at least one API")
    for a in names:
        if a not in API_BY_NAME:
            raise InvalidArgument(f"apis: {a!r} is not a Kafka API{did_you_mean(a, API_BY_NAME)}")
    return names

"""Scenario parameters: the names a story is written for, bound to the app under test.

Theory of operation
-------------------
A scenario file declares its parameters at the top, each with a default::

    parameters:
      topic: {default: orders, description: the topic the app produces to and consumes from}
      group: {default: billing, description: the app's consumer group}

and refers to them anywhere below: a whole value ``$topic`` is replaced by the bound value
with its type (``count: $records`` stays an integer), ``${topic}`` inside a longer string
is replaced by its text (``"${topic}-dlq"``), and a mapping key may be a reference too
(``topics: {$topic: {partitions: 6}}``). Only a file that declares ``parameters:`` is
substituted, so a literal ``$`` in a file without parameters stays as it is.

:func:`bind` checks the values a caller gives (an unknown name gets a did-you-mean, a value
of the wrong type names the parameter and its default) and :func:`substitute` rewrites the
parsed document, its line marks and records which parameters each path used, so a failed
expectation can say which parameter it depends on. Pure: no I/O, no yaml.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from mockkafka.scenario.plan import (
    Path,
    ScenarioError,
    ScenarioParameter,
    did_you_mean,
    format_path,
)

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_WHOLE = re.compile(r"^\$([A-Za-z_][A-Za-z0-9_]*)$")
_EMBEDDED = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")

#: Keyword arguments of the loading entry points that are not scenario parameters.
RESERVED = ("skip_expect",)

Marks = dict[Path, tuple[int, int]]


def _type_name(v: Any) -> str:
    if isinstance(v, bool):
        return "true or false"
    if isinstance(v, int):
        return "an integer"
    if isinstance(v, float):
        return "a number"
    return "a string"


def declared(doc: Any, path: Path = ("parameters",)) -> tuple[ScenarioParameter, ...]:
    """The ``parameters:`` mapping -> its declarations (value = default), checked."""
    if doc is None:
        return ()
    if not isinstance(doc, Mapping):
        raise ScenarioError(
            path, f"expected name -> {{default: VALUE, description: TEXT}}, got {doc!r}"
        )
    out = []
    for name, spec in doc.items():
        p = (*path, str(name))
        if not isinstance(name, str) or not _NAME.match(name) or name in RESERVED:
            raise ScenarioError(
                p,
                f"a parameter name is a word of letters, digits and _ (not "
                f"{', '.join(RESERVED)}), got {name!r}",
            )
        if not isinstance(spec, Mapping) or "default" not in spec:
            raise ScenarioError(p, f"expected {{default: VALUE, description: TEXT}}, got {spec!r}")
        extra = [k for k in spec if k not in ("default", "description")]
        if extra:
            raise ScenarioError(
                (*p, str(extra[0])),
                f"unknown key {extra[0]!r}{did_you_mean(extra[0], ('default', 'description'))}"
                "; allowed: default, description",
            )
        default = spec["default"]
        if not isinstance(default, str | int | float) or default is None:
            raise ScenarioError(
                (*p, "default"), f"a default is a string, number or boolean, got {default!r}"
            )
        desc = spec.get("description", "")
        if not isinstance(desc, str):
            raise ScenarioError((*p, "description"), f"expected a string, got {desc!r}")
        out.append(ScenarioParameter(name, default, desc, default))
    return tuple(out)


def _coerce(param: ScenarioParameter, value: Any) -> Any:
    want = param.default
    if isinstance(want, bool):
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
    elif isinstance(want, int):
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, str) and re.fullmatch(r"\s*-?\d+\s*", value):
            return int(value)
    elif isinstance(want, float):
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                pass
    elif isinstance(value, str):
        return value
    elif isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)  # a CLI or YAML value that looked like a number
    raise ScenarioError(
        ("parameters", param.name),
        f"parameter {param.name!r} takes {_type_name(want)} (default {want!r}), got {value!r}",
    )


def bind(
    params: tuple[ScenarioParameter, ...], given: Mapping[str, Any], *, scenario: str
) -> tuple[ScenarioParameter, ...]:
    """The declarations with the caller's values; raises ScenarioError for a name the
    scenario does not declare (with a did-you-mean) or a value of the wrong type."""
    names = [p.name for p in params]
    for k in given:
        if k not in names:
            listed = (
                "its parameters: " + ", ".join(f"{p.name} (default {p.default!r})" for p in params)
                if params
                else "it declares none (add a parameters: block to the file)"
            )
            raise ScenarioError(
                ("parameters",),
                f"scenario {scenario!r} has no parameter {k!r}{did_you_mean(k, names)}; " + listed,
            )
    return tuple(
        ScenarioParameter(p.name, p.default, p.description, _coerce(p, given[p.name]))
        if p.name in given
        else p
        for p in params
    )


class _Substitution:
    def __init__(self, values: Mapping[str, Any]) -> None:
        self.values = values
        #: path (after substitution) -> parameter names used exactly there
        self.refs: dict[Path, set[str]] = {}

    def _value_of(self, name: str, path: Path, text: str) -> Any:
        if name not in self.values:
            names = sorted(self.values)
            raise ScenarioError(
                path,
                f"{text!r} refers to no parameter{did_you_mean(name, names)}; "
                f"parameters: {', '.join(names)}",
            )
        self.refs.setdefault(path, set()).add(name)
        return self.values[name]

    def scalar(self, v: str, path: Path) -> Any:
        m = _WHOLE.match(v)
        if m:
            return self._value_of(m.group(1), path, v)
        if "${" not in v:
            return v
        return _EMBEDDED.sub(lambda mm: str(self._value_of(mm.group(1), path, v)), v)

    def key(self, k: Any, parent: Path) -> Any:
        if not isinstance(k, str) or "$" not in k:
            return k
        out = self.scalar(k, (*parent, k))
        return str(out)

    def walk(self, doc: Any, path: Path) -> Any:
        if isinstance(doc, str):
            return self.scalar(doc, path)
        if isinstance(doc, list):
            return [self.walk(v, (*path, i)) for i, v in enumerate(doc)]
        if isinstance(doc, dict):
            out: dict[Any, Any] = {}
            for k, v in doc.items():
                nk = self.key(k, path)
                if nk in out:
                    raise ScenarioError(
                        (*path, str(nk)), f"two keys become {nk!r} once parameters are bound"
                    )
                if nk != k and (*path, k) in self.refs:
                    self.refs[(*path, nk)] = self.refs.pop((*path, k))
                out[nk] = self.walk(v, (*path, nk))
            return out
        return doc


def substitute(
    doc: dict[str, Any], params: tuple[ScenarioParameter, ...], marks: Marks
) -> tuple[dict[str, Any], Marks, dict[Path, set[str]]]:
    """Replace ``$name`` / ``${name}`` below the top-level ``parameters:`` by the bound
    values. Returns the new document, the marks re-keyed to the new paths, and the
    parameter names used at each path. Paths in errors are those of the file."""
    sub = _Substitution({p.name: p.value for p in params})
    out: dict[str, Any] = {}
    for k, v in doc.items():
        out[k] = v if k == "parameters" else sub.walk(v, (k,))

    plain = _Substitution(sub.values)  # records nothing in sub.refs

    def rekey(e: str | int) -> str | int:
        if isinstance(e, str) and "$" in e:
            try:
                return str(plain.scalar(e, ()))
            except ScenarioError:
                return e
        return e

    new_marks = {tuple(rekey(e) for e in p): pos for p, pos in marks.items()}
    return out, new_marks, sub.refs


def uses(refs: Mapping[Path, set[str]], prefix: Path) -> tuple[str, ...]:
    """The parameters used at or below ``prefix``."""
    n = len(prefix)
    found: set[str] = set()
    for p, names in refs.items():
        if p[:n] == prefix:
            found |= names
    return tuple(sorted(found))


def describe(params: tuple[ScenarioParameter, ...]) -> str:
    """One line per parameter: ``topic = 'payments' (default 'orders'): the topic ...``."""
    lines = []
    for p in params:
        bound = "" if p.value == p.default else f" (default {p.default!r})"
        lines.append(
            f"{p.name} = {p.value!r}{bound}" + (f": {p.description}" if p.description else "")
        )
    return "\n".join(lines)


__all__ = ["RESERVED", "bind", "declared", "describe", "format_path", "substitute", "uses"]

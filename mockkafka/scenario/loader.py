"""Read a scenario file: YAML -> parameters bound -> checked against the JSON Schema.

:func:`check_text` gives the checked document; :func:`mockkafka.scenario.model.load_text`
(and ``Scenario.load``) build the :class:`~mockkafka.scenario.model.Scenario` from it, and
turn a mistake found then into file, line and column with :meth:`Checked.locate`.

The whole file is checked before anything runs. Every error names the file, the line and
column (from PyYAML's node marks), the field, and what is allowed, with a did-you-mean.
YAML is read with YAML 1.2 booleans (only ``true``/``false``), so ``on: Fetch`` stays the
key ``"on"``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path as FsPath
from typing import Any

import yaml

from mockkafka.scenario import params
from mockkafka.scenario.plan import (
    Path,
    ScenarioError,
    ScenarioParameter,
    combine,
    did_you_mean,
    expect_paths,
    format_path,
)


class _Loader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 booleans: ``on``/``off``/``yes``/``no`` stay strings."""


_Loader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:bool"]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.copy().items()
}
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool",
    __import__("re").compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
    list("tTfF"),
)

Marks = dict[Path, tuple[int, int]]


def _walk(node: yaml.Node, path: Path, marks: Marks) -> None:
    marks.setdefault(path, (node.start_mark.line + 1, node.start_mark.column + 1))
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            key = k.value if isinstance(k, yaml.ScalarNode) else str(k.value)
            marks[(*path, key)] = (k.start_mark.line + 1, k.start_mark.column + 1)
            _walk_value(v, (*path, key), marks)
    elif isinstance(node, yaml.SequenceNode):
        for i, v in enumerate(node.value):
            _walk(v, (*path, i), marks)


def _walk_value(node: yaml.Node, path: Path, marks: Marks) -> None:
    # the value's own position, for type errors on it; keys keep the key's position
    marks[(*path, "<value>")] = (node.start_mark.line + 1, node.start_mark.column + 1)
    _walk(node, path, marks)


def _locate(marks: Marks, path: Path, *, at_value: bool) -> tuple[int | None, int | None]:
    if at_value and (*path, "<value>") in marks:
        return marks[(*path, "<value>")]
    p = tuple(path)
    while p:
        if p in marks:
            return marks[p]
        p = p[:-1]
    return marks.get((), (None, None))


def _tab_hint(text: str, mark: Any) -> str:
    """A hint when the line of a YAML error holds a tab: YAML indents with spaces only, and
    PyYAML's own words ("found character '\\t' that cannot start any token") do not say so."""
    if mark is None:
        return ""
    lines = text.splitlines()
    line = lines[mark.line] if mark.line < len(lines) else ""
    if "\t" not in line:
        return ""
    return (
        f"; line {mark.line + 1} has a tab at column {line.index(chr(9)) + 1}: YAML wants "
        "spaces there (it never indents with tabs)"
    )


def parse_yaml(text: str, file: str) -> tuple[Any, Marks]:
    """YAML text -> (document, marks); a syntax error becomes a ScenarioError."""
    try:
        node = yaml.compose(text, Loader=_Loader)
        doc = yaml.load(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        raise ScenarioError(
            (),
            f"not valid YAML: {exc.problem}"
            + (f" ({exc.context})" if exc.context else "")
            + _tab_hint(text, mark),
            file=file,
            line=mark.line + 1 if mark else None,
            column=mark.column + 1 if mark else None,
        ) from None
    marks: Marks = {}
    if node is not None:
        _walk(node, (), marks)
    return doc, marks


# -- JSON Schema ------------------------------------------------------------------------------


@cache
def schema() -> dict[str, Any]:
    """The published JSON Schema of scenario files (``mockkafka/scenario/schema.json``)."""
    text = resources.files("mockkafka.scenario").joinpath("schema.json").read_text()
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def _schema_errors(doc: Any, marks: Marks, file: str) -> Iterator[ScenarioError]:
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema())
    for err in sorted(validator.iter_errors(doc), key=lambda e: list(map(str, e.absolute_path))):
        yield _schema_error(err, marks, file)


def _describe(sub: dict[str, Any]) -> str:
    if "description" in sub:
        return str(sub["description"])
    if "const" in sub:
        return repr(sub["const"])
    if "enum" in sub:
        return "one of " + ", ".join(map(str, sub["enum"]))
    return str(sub.get("type", "a value"))


def _schema_error(err: Any, marks: Marks, file: str) -> ScenarioError:
    path: Path = tuple(err.absolute_path)
    v = err.validator
    at_value = True
    if v == "additionalProperties":
        allowed = list(err.schema.get("properties", {}))
        extra = [k for k in err.instance if k not in allowed]
        key = extra[0]
        path = (*path, str(key))
        at_value = False
        msg = f"unknown key {key!r}{did_you_mean(key, allowed)}; allowed: {', '.join(allowed)}"
    elif v == "required":
        msg = f"missing {err.message.split(' ')[0]} (required)"
    elif v == "enum":
        choices = [str(c) for c in err.validator_value]
        msg = (
            f"{err.instance!r} is not allowed{did_you_mean(err.instance, choices)}; "
            f"allowed: {', '.join(choices)}"
        )
    elif v in ("anyOf", "oneOf") and isinstance(err.instance, dict) and err.context:
        # a mapping that fits no alternative: report the mistake inside the alternative
        # sharing the most keys with it
        alts = err.validator_value

        def overlap(i: int) -> tuple[int, bool]:
            props = alts[i].get("properties", {})
            return sum(1 for k in err.instance if k in props), alts[i].get("type") == "object"

        best = max(range(len(alts)), key=overlap)
        inside = [e for e in err.context if e.relative_schema_path[0] == best]
        if inside:
            inside.sort(key=lambda e: -len(e.absolute_path))
            return _schema_error(inside[0], marks, file)
    elif v in ("anyOf", "oneOf"):
        expected = (
            err.schema["description"]
            if "description" in err.schema
            else " or ".join(_describe(s) for s in err.validator_value)
        )
        msg = f"{err.instance!r} is not valid; expected {expected}"
    elif v == "type":
        msg = f"expected {_describe(err.schema)}, got {err.instance!r}"
    else:
        msg = err.message
    line, col = _locate(marks, path, at_value=at_value)
    return ScenarioError(path, msg, file=file, line=line, column=col)


# -- entry points ----------------------------------------------------------------------------


def _bind(
    doc: Any, marks: Marks, file: str, skip_expect: Iterable[str], given: dict[str, Any]
) -> tuple[Any, Marks, tuple[ScenarioParameter, ...] | None, tuple[tuple[str, ...], ...]]:
    """Bind the parameters and drop the skipped checks; the document as if written so."""
    if not isinstance(doc, dict):
        return doc, marks, None, ()
    name = str(doc.get("name", file))
    skip = [skip_expect] if isinstance(skip_expect, str) else list(skip_expect)
    try:
        declared = params.declared(doc.get("parameters"))
        bound = params.bind(declared, given, scenario=name)
        refs: dict[Path, set[str]] = {}
        if "parameters" in doc:
            doc, marks, refs = params.substitute(doc, bound, marks)
        expect = doc.get("expect")
        if skip:
            have = list(expect) if isinstance(expect, dict) else []
            for k in skip:
                if k not in have:
                    raise ScenarioError(
                        ("expect",),
                        f"skip_expect: scenario {name!r} has no check {k!r}"
                        f"{did_you_mean(k, have)}; its checks: {', '.join(have) or 'none'}",
                    )
            doc = {**doc, "expect": {k: v for k, v in expect.items() if k not in skip}}
    except ScenarioError as exc:
        line, col = _locate(marks, exc.path, at_value=True)
        raise exc.located(file, line, col) from None
    uses = tuple(params.uses(refs, p) for p in expect_paths(doc.get("expect")))
    return doc, marks, (bound if "parameters" in doc else None), uses


@dataclass(frozen=True, slots=True)
class Checked:
    """A scenario document whose parameters are bound and which passed the JSON Schema."""

    doc: Any
    marks: Marks
    file: str
    #: The declared parameters with their bound values (None when the file declares none).
    parameters: tuple[ScenarioParameter, ...] | None
    #: For each check of ``expect:``, the parameters its YAML used.
    check_parameters: tuple[tuple[str, ...], ...]

    def step_line(self, index: int) -> int | None:
        """The line of step ``index`` in the file (for messages naming a step, e.g. one a
        proxy cannot run)."""
        line: int | None = self.marks.get(("steps", index), (None, None))[0]
        return line

    def locate(self, exc: ScenarioError) -> ScenarioError:
        """``exc`` (found while building the scenario) with this file, line and column."""
        line, col = _locate(self.marks, exc.path, at_value=True)
        return exc.located(self.file, line, col)


def check_text(
    text: str,
    *,
    file: str = "<scenario>",
    skip_expect: Iterable[str] = (),
    parameters: dict[str, Any] | None = None,
) -> Checked:
    """Parse scenario YAML, bind its parameters, leave out the checks of ``skip_expect`` and
    check the result against the JSON Schema; raises :class:`ScenarioError` naming
    file:line:col (every schema mistake, the first one first)."""
    checked, errors = read_text(text, file=file, skip_expect=skip_expect, parameters=parameters)
    if errors:
        raise combine(errors)
    return checked


def read_text(
    text: str,
    *,
    file: str = "<scenario>",
    skip_expect: Iterable[str] = (),
    parameters: dict[str, Any] | None = None,
) -> tuple[Checked, list[ScenarioError]]:
    """:func:`check_text` returning the schema's mistakes (located) instead of raising them,
    so the caller can go on and report the mistakes found later in the same file. A YAML
    syntax error or a parameter that cannot be bound still raises."""
    doc, marks = parse_yaml(text, file)
    doc, marks, bound, uses = _bind(doc, marks, file, skip_expect, dict(parameters or {}))
    errors = list(_schema_errors(doc, marks, file))
    return Checked(doc, marks, file, bound, uses), errors


def library_dirs() -> list[FsPath]:
    """Where library scenarios live: ``mockkafka/scenarios/`` of an installed package (the
    wheel maps the repository's ``scenarios/`` there), or ``scenarios/`` of a source
    checkout."""
    package = FsPath(__file__).resolve().parent.parent
    return [d for d in (package / "scenarios", package.parent / "scenarios") if d.is_dir()]


def library() -> dict[str, FsPath]:
    """Library scenario name -> file: ``loader.library()["leader-failover"].read_text()``
    is the YAML of one, to copy and adapt (``mockkafka scenarios --show NAME`` prints it)."""
    found: dict[str, FsPath] = {}
    for d in library_dirs():
        for f in sorted(d.glob("*.yaml")):
            found.setdefault(f.stem, f)
    return found


def find(path_or_name: str | os.PathLike[str]) -> FsPath:
    """The file of a scenario path or library name; ScenarioError with a did-you-mean."""
    p = FsPath(path_or_name)
    if p.suffix in (".yaml", ".yml") or p.exists() or os.sep in str(path_or_name):
        if not p.is_file():
            raise ScenarioError((), "no such scenario file", file=str(path_or_name))
        return p
    lib = library()
    name = str(path_or_name)
    if name not in lib:
        raise ScenarioError(
            (),
            f"no library scenario named {name!r}{did_you_mean(name, lib)}; "
            f"library: {', '.join(sorted(lib)) or 'empty'} (or give a path to a .yaml file)",
            file=name,
        )
    return lib[name]


__all__ = [
    "Checked",
    "check_text",
    "find",
    "format_path",
    "library",
    "parse_yaml",
    "read_text",
    "schema",
]

"""The import graph: no import cycle, and no import running back up the layers.

Run it alone with ``python -m pytest tests/test_architecture.py -q`` (it takes a fraction of a
second: it parses the source with :mod:`ast` and imports nothing of mockkafka).

Every ``import`` of every module of ``mockkafka/`` and ``pytest_plugin/`` counts: at module
level, inside functions, under ``if TYPE_CHECKING:``, relative ones, and
``importlib.import_module("...")`` with a literal name. A type-only import is still an
arrow in the design (the reader of the lower module has to know the higher one), so it is
held to the same rules. ``from package import name`` points at ``package/name.py`` when that
file exists and at ``package/__init__.py`` otherwise.

The layers, top to bottom, are ``LAYERS`` below; they are the "Layers" section of the design
(DESIGN.md) as data. A module may import its own layer and any layer below it. Where the code
and the picture in DESIGN.md differ, the design's intent decided:

* ``errors.py`` is the bottom (the ErrorCode table and the exception types everyone raises);
  ``protocol/errors.py`` re-exports the protocol's exceptions from it, not the other way.
* ``scenario/``, ``strategies/``, ``stateful.py`` and ``spark.py`` drive a cluster through the
  public objects (``Cluster.move_leader``, ``cluster.faults``, ...), as a test author does, so
  they sit *above* ``_api/``; DESIGN.md lists ``_api/`` first because it is the first thing a
  user meets, not because it calls them. Nothing of ``_api/`` needs a scenario: the
  convenience ``Scenario.run(cluster)`` is the scenario's, not the cluster's.
* ``control.py`` (the HTTP control endpoint) sits beside ``cli.py``: it serves the public
  objects and scenarios, so it cannot live in ``server/`` below them.
* ``views.py`` (frozen snapshots handed to tests) sits above ``server/``: the cluster state
  does not build views; the view module reads the state.
* ``kafka_broker.py`` (a real Apache Kafka process for the oracle and the proxy) is in the
  server's layer: processes and sockets, below the public objects that use it.

When a test here fails, its message names the files, the imported names and what to do.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("mockkafka", "pytest_plugin")

# Top to bottom. Each entry: (layer name, module names; a name covers its submodules).
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("pytest plugin", ("pytest_plugin",)),
    ("public API (curated re-exports)", ("mockkafka.__init__",)),
    ("command line and control endpoint", ("mockkafka.cli", "mockkafka.control")),
    ("test harnesses", ("mockkafka.stateful", "mockkafka.spark")),
    ("hypothesis strategies", ("mockkafka.strategies",)),
    ("scenarios", ("mockkafka.scenario",)),
    ("public objects", ("mockkafka._api",)),
    ("views", ("mockkafka.views",)),
    ("server", ("mockkafka.server", "mockkafka.kafka_broker")),
    ("faults", ("mockkafka.faults",)),
    ("handlers", ("mockkafka.handlers",)),
    ("cluster state", ("mockkafka.cluster",)),
    ("protocol", ("mockkafka.protocol",)),
    (
        "errors",
        ("mockkafka.errors", "mockkafka._error_codes", "mockkafka._maven", "mockkafka._version"),
    ),
)

# Imports allowed to break the rules while a change that removes them is under way: each entry
# is (importing module, imported module), left out of both checks, with a comment saying why
# and which change removes it. Empty: keep it so.
KNOWN_EXCEPTIONS: frozenset[tuple[str, str]] = frozenset()


@dataclass
class Graph:
    """Modules by dotted name (a package is ``pkg.__init__``) and who imports what."""

    files: dict[str, Path] = field(default_factory=dict)
    # importer -> imported -> names imported (or the module's name for ``import x``)
    edges: dict[str, dict[str, set[str]]] = field(default_factory=dict)

    def arrows(self) -> Iterator[tuple[str, str, set[str]]]:
        for source, targets in sorted(self.edges.items()):
            for target, names in sorted(targets.items()):
                yield source, target, names


def _module_name(root: Path, path: Path) -> str:
    return ".".join(path.relative_to(root).with_suffix("").parts)


def build_graph(root: Path, packages: Iterable[str]) -> Graph:
    """Parse every module under ``root/<package>`` and collect every import between them."""
    graph = Graph()
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            graph.files[_module_name(root, path)] = path

    def resolve(dotted: str) -> str | None:
        """The module file ``dotted`` names, or None when it is outside the packages."""
        if dotted in graph.files:
            return dotted
        if f"{dotted}.__init__" in graph.files:
            return f"{dotted}.__init__"
        return None

    def enclosing(dotted: str) -> str | None:
        """The module a ``from dotted import name`` runs: the longest prefix that exists."""
        parts = dotted.split(".")
        while parts:
            found = resolve(".".join(parts))
            if found is not None:
                return found
            parts.pop()
        return None

    names = tuple(p.encode() for p in packages)
    for module, path in graph.files.items():
        package = module.split(".")[:-1]  # the package a relative import starts from
        source = path.read_bytes()
        # An import of these packages names one of them, or is relative, or dynamic: a file
        # that has none of those words (the generated schema tables) has no arrow to look for,
        # and skipping its parse keeps the whole check well under a second.
        if not any(word in source for word in (*names, b"from .", b"import_module", b"__import__")):
            graph.edges[module] = {}
            continue
        tree = ast.parse(source, filename=str(path))
        found: dict[str, set[str]] = {}

        def add(
            target: str | None, name: str, found: dict[str, set[str]] = found, me: str = module
        ) -> None:
            if target is not None and target != me:
                found.setdefault(target, set()).add(name)

        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    add(enclosing(alias.name), alias.name)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package[: len(package) - (node.level - 1)]
                    source = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    source = node.module or ""
                for alias in node.names:
                    submodule = resolve(f"{source}.{alias.name}")
                    add(submodule or enclosing(source), alias.name)
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute | ast.Name)
                and (getattr(node.func, "attr", None) or getattr(node.func, "id", None))
                in ("import_module", "__import__")
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                add(enclosing(node.args[0].value), node.args[0].value)
        graph.edges[module] = found
    return graph


def layer_of(module: str) -> int | None:
    """Index into LAYERS (0 is the top) of the most specific entry covering ``module``."""
    best: tuple[int, int] | None = None  # (prefix length, layer)
    for index, (_name, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            covers = module == prefix or module.startswith(prefix + ".")
            if covers and (best is None or len(prefix) > best[0]):
                best = (len(prefix), index)
    return None if best is None else best[1]


def find_cycles(graph: Graph, skip: frozenset[tuple[str, str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = 0

    def successors(node: str) -> list[str]:
        return sorted(t for t in graph.edges.get(node, {}) if (node, t) not in skip)

    for start in sorted(graph.files):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(successors(start)))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(successors(child))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(sorted(component))
    return components


def _describe_cycle(graph: Graph, component: list[str]) -> str:
    members = set(component)
    lines = [f"  {len(component)} modules: {', '.join(component)}"]
    for source in component:
        for target, names in sorted(graph.edges.get(source, {}).items()):
            if target in members and (source, target) not in KNOWN_EXCEPTIONS:
                lines.append(f"    {source} imports {', '.join(sorted(names))} from {target}")
    return "\n".join(lines)


GRAPH = build_graph(ROOT, PACKAGES)

HOW_TO_FIX = """
How to fix it (see docs/architecture.md, "Layers"):
- Move what the lower module needs (a dataclass, a constant, a small typing.Protocol that
  describes the object it is handed) into a module at or below its own layer, and import it
  from there in both places. The higher module may re-export it; a lower one must not.
- Or let the higher module pass the thing in (an argument, a callback, a registry filled at
  start-up) instead of the lower module reaching up for it.
- Moving the import into a function or under TYPE_CHECKING does not count as a fix: this
  test sees those imports too.
- If the layer order itself is wrong, change LAYERS in tests/test_architecture.py and the
  "Layers" section of the design together, and say why in the module docstring.
"""


def test_every_module_belongs_to_a_layer() -> None:
    missing = sorted(m for m in GRAPH.files if layer_of(m) is None)
    assert not missing, (
        f"These modules are in no layer of LAYERS (tests/test_architecture.py): {missing}.\n"
        "Add the new module or package to the layer it belongs to (the layer of the modules "
        "it imports from, or the one above them), so the layer check can see it."
    )


def test_the_import_graph_has_no_cycle() -> None:
    cycles = find_cycles(GRAPH, KNOWN_EXCEPTIONS)
    assert not cycles, (
        "Import cycles (every import counts: module level, in functions, under "
        "TYPE_CHECKING):\n" + "\n".join(_describe_cycle(GRAPH, c) for c in cycles) + HOW_TO_FIX
    )


def test_no_module_imports_a_higher_layer() -> None:
    upward = []
    for source, target, names in GRAPH.arrows():
        if (source, target) in KNOWN_EXCEPTIONS:
            continue
        low, high = layer_of(source), layer_of(target)
        if low is not None and high is not None and high < low:
            upward.append(
                f"  {source} (layer {LAYERS[low][0]!r}) imports {', '.join(sorted(names))} "
                f"from {target} (layer {LAYERS[high][0]!r}, higher)"
            )
    assert not upward, "Imports running back up the layers:\n" + "\n".join(upward) + HOW_TO_FIX


def test_known_exceptions_are_still_needed() -> None:
    """An exception that no longer matches an import is deleted, so the list only shrinks."""
    stale = sorted(e for e in KNOWN_EXCEPTIONS if e[1] not in GRAPH.edges.get(e[0], {}))
    assert not stale, (
        f"KNOWN_EXCEPTIONS in tests/test_architecture.py lists imports that are gone: {stale}. "
        "Delete those entries."
    )


def test_the_check_sees_imports_in_functions_type_checking_and_relative(tmp_path: Path) -> None:
    """The graph builder itself: a cycle made only of hidden imports is still a cycle."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.sub.b import B\n"
    )
    (pkg / "sub" / "b.py").write_text("def f():\n    from .. import c\n")
    (pkg / "c.py").write_text("import importlib\nimportlib.import_module('pkg.a')\n")
    graph = build_graph(tmp_path, ["pkg"])
    assert graph.edges["pkg.a"] == {"pkg.sub.b": {"B"}}
    assert graph.edges["pkg.sub.b"] == {"pkg.c": {"c"}}
    assert graph.edges["pkg.c"] == {"pkg.a": {"pkg.a"}}
    assert find_cycles(graph, frozenset()) == [["pkg.a", "pkg.c", "pkg.sub.b"]]
    assert find_cycles(graph, frozenset({("pkg.c", "pkg.a")})) == []

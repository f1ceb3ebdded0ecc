"""State is read and made on the cluster's loop, never on the caller's thread (DESIGN.md).

Issue 33: ``wait_for_group`` built its probe on the test's thread by reading
``state.groups`` there; in a fresh process that read made the group coordinator while the
loop, serving the client's first JoinGroup, made a second one, and the wait polled the orphan
until it timed out. This check parses the public objects (``mockkafka/_api``) and refuses any
``self._state.<attr>`` evaluated directly in a method body: such reads belong inside the
function handed to ``_call``/``_read`` or inside a probe (both run on the loop).

Two attributes are fixed when the state is made and may be read anywhere: ``brokers`` (the
dict of brokers and their ports; never replaced) and ``config`` (the frozen config). A method
whose docstring starts with "On the loop" runs there already.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

API = Path(__file__).resolve().parent.parent / "mockkafka" / "_api"
FIXED_AT_CONSTRUCTION = frozenset({"brokers", "config"})
# Methods allowed to break the rule while a change that removes it is under way, each with
# why. Empty: keep it so.
KNOWN: frozenset[str] = frozenset()


def _direct_nodes(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.AST]:
    """The nodes a method evaluates itself: nested functions and lambdas are skipped."""
    stack: list[ast.AST] = [*fn.body, *fn.args.defaults]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Lambda | ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def off_loop_reads() -> list[str]:
    found = []
    for path in sorted(API.glob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
            for fn in cls.body:
                if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                if (ast.get_docstring(fn) or "").startswith("On the loop"):
                    continue
                if f"{cls.name}.{fn.name}" in KNOWN:
                    continue
                for node in _direct_nodes(fn):
                    if (
                        isinstance(node, ast.Attribute)
                        and isinstance(node.value, ast.Attribute)
                        and node.value.attr == "_state"
                        and isinstance(node.value.value, ast.Name)
                        and node.value.value.id == "self"
                        and node.attr not in FIXED_AT_CONSTRUCTION
                    ):
                        found.append(
                            f"{path.name}:{node.lineno} {cls.name}.{fn.name} reads "
                            f"self._state.{node.attr} on the caller's thread"
                        )
    return found


def test_public_objects_read_state_only_on_the_loop() -> None:
    found = off_loop_reads()
    assert not found, (
        "move these reads into the function given to self._call/self._read, or into the "
        "probe (both run on the cluster's loop):\n  " + "\n  ".join(found)
    )


def test_the_check_sees_a_read_on_the_callers_thread(tmp_path: Path) -> None:
    # the check itself: the shape of the issue-33 bug is caught
    source = (
        "class V:\n"
        "    def probe(self):\n"
        "        groups = self._state.groups\n"
        "        return lambda: self._state.topics\n"
    )
    tree = ast.parse(source)
    fn = tree.body[0].body[0]  # type: ignore[attr-defined]
    reads = [
        n.attr
        for n in _direct_nodes(fn)
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Attribute)
    ]
    assert reads == ["groups"]

"""The fault-action registry: one module per action, and every surface derived from it."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import mockkafka
from mockkafka.errors import ConfigError
from mockkafka.faults import Rule
from mockkafka.faults import actions as actions_pkg
from mockkafka.faults.actions import ACTIONS, PHASES, SCENARIO_ACTIONS
from mockkafka.faults.coverage import universe
from mockkafka.scenario.model import FAULT_ACTION_KEYS, fault_from_dict, fault_to_dict
from mockkafka.scenario.schema import build_schema
from mockkafka.strategies._plans import FAULT_KINDS, RISKY_VERBS

EXPECTED = (
    "error",
    "delay",
    "throttle",
    "drop_connection",
    "never_respond",
    "partial_trailing_batch",
    "corrupt_batch",
    "duplicate",
    "corrupt_payload",
    "schema_id",
    "skew_timestamps",
    "lost_ack",
    "blackhole",
    "observe",
    "handler",
)


def _load_generator() -> Any:
    """``tools/gen_fault_actions.py`` (a tool, not part of the package)."""
    path = Path(__file__).resolve().parents[2] / "tools" / "gen_fault_actions.py"
    spec = importlib.util.spec_from_file_location("_gen_fault_actions_for_test", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


generate = _load_generator()


def test_every_action_module_is_found_in_order():
    assert tuple(ACTIONS) == EXPECTED
    for name, cls in ACTIONS.items():
        assert name == cls.NAME
        assert cls.PHASE in PHASES
        assert cls.__module__.startswith("mockkafka.faults.actions.")


def test_generated_files_are_current():
    stale = generate.stale()
    assert not stale, (
        f"stale generated files {[str(p) for p in stale]}; regenerate: "
        "python tools/gen_fault_actions.py"
    )


def test_rule_has_one_builder_method_per_action_with_the_action_signature():
    for name, cls in ACTIONS.items():
        method = getattr(Rule, name)
        params = [p for p in inspect.signature(method).parameters if p != "self"]
        assert params == [a.name for a in cls.args()], name
        assert cls.summary().split()[0] in (method.__doc__ or ""), name


def test_builder_methods_make_the_same_actions_as_before():
    rule = Rule().error("NOT_LEADER_OR_FOLLOWER").delay(ms=5).throttle(ms=7)
    rule = rule.drop_connection(after_processing=True).never_respond().observe()
    assert repr(rule.actions) == (
        "(Error(code='NOT_LEADER_OR_FOLLOWER'), Delay(ms=5), Throttle(ms=7), "
        "DropConnection(after_processing=True), NeverRespond(), Observe())"
    )


def test_scenario_keys_schema_and_plans_come_from_the_registry():
    assert tuple(n for n in EXPECTED if n not in ("observe", "handler")) == FAULT_ACTION_KEYS
    assert tuple(SCENARIO_ACTIONS) == FAULT_ACTION_KEYS
    fault_props = _find_fault_schema(build_schema())["properties"]
    for key in FAULT_ACTION_KEYS:
        assert key in fault_props
    assert FAULT_KINDS == FAULT_ACTION_KEYS
    assert "never_respond" in RISKY_VERBS and "corrupt_batch" in RISKY_VERBS


def _find_fault_schema(node):
    if isinstance(node, dict):
        if "fault" in node and isinstance(node["fault"], dict) and "properties" in node["fault"]:
            return node["fault"]
        children = node.values()
    elif isinstance(node, list):
        children = node
    else:
        return None
    for child in children:
        found = _find_fault_schema(child)
        if found is not None:
            return found
    return None


@pytest.mark.parametrize(
    "doc",
    [
        {"on": "Produce", "error": "NOT_LEADER_OR_FOLLOWER"},
        {
            "on": "Produce",
            "topic": "t",
            "error": {"code": "NOT_LEADER_OR_FOLLOWER", "level": "request"},
        },
        {"on": "Fetch", "delay": {"ms": 20, "before_processing": True}},
        {"on": "Fetch", "throttle": {"ms": 20}},
        {"on": "Fetch", "drop_connection": True},
        {"on": "Fetch", "drop_connection": {"after_processing": True}},
        {"on": "Fetch", "never_respond": True},
        {"on": "Fetch", "partial_trailing_batch": True},
        {"on": "Fetch", "corrupt_batch": True},
    ],
)
def test_yaml_fault_round_trips_through_the_registry(doc):
    fault = fault_from_dict(doc)
    out = fault_to_dict(fault)
    assert {k: v for k, v in out.items() if k not in ("once",)} == doc


def test_yaml_action_with_an_unknown_argument_names_it():
    with pytest.raises(ConfigError, match=r"before_procesing.*did you mean before_processing"):
        fault_from_dict({"on": "Fetch", "delay": {"ms": 1, "before_procesing": True}})


def test_bad_action_arguments_are_refused_at_once():
    with pytest.raises(ConfigError, match="ms must be a number of milliseconds"):
        Rule().delay(ms=-1)
    with pytest.raises(ConfigError, match="after_processing must be true or false"):
        Rule().drop_connection(after_processing="yes")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="edits record data"):
        Rule(mockkafka.faults.Match(api="Produce")).corrupt_batch()


def test_coverage_universe_lists_each_action_where_it_can_act():
    keys, _verbs = universe(["Produce", "Fetch"])
    kinds = {(api, kind) for api, kind, _e in keys}
    assert ("Fetch", "corrupt_batch") in kinds and ("Produce", "corrupt_batch") not in kinds
    assert ("Produce", "error") in kinds and ("Produce", "never_respond") in kinds
    assert not any(kind in ("observe", "handler") for _a, kind in kinds)


def _import_copy(tmp_path, monkeypatch, extra: dict[str, str]):
    """Import a copy of the actions package (plus ``extra`` modules) from a temporary path,
    so the real package is untouched."""
    pkg = tmp_path / "mockkafka_actions_copy"
    pkg.mkdir()
    src = Path(actions_pkg.__file__).parent
    for f in src.glob("*.py"):
        text = f.read_text().replace("mockkafka.faults.actions.", "mockkafka_actions_copy.")
        (pkg / f.name).write_text(text)
    for name, text in extra.items():
        (pkg / name).write_text(textwrap.dedent(text))
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        copy = importlib.import_module("mockkafka_actions_copy")
        dict(copy.ACTIONS)  # found on first use: while the copy is importable
        return copy
    finally:
        for name in [m for m in sys.modules if m.startswith("mockkafka_actions_copy")]:
            del sys.modules[name]


ACTION_FILE = """
from __future__ import annotations
from dataclasses import dataclass, field
from typing import ClassVar
from mockkafka_actions_copy._base import AFTER, Action, arg

@dataclass(frozen=True, slots=True, repr=False)
class Shout(Action):
    \"\"\"Do nothing, loudly.\"\"\"
    NAME: ClassVar[str] = "{name}"
    PHASE: ClassVar[str] = AFTER
    volume: int = field(default=1, metadata=arg("how loud", schema={{"type": "integer"}}))
"""


def test_adding_a_module_adds_an_action(tmp_path, monkeypatch):
    copy = _import_copy(tmp_path, monkeypatch, {"shout.py": ACTION_FILE.format(name="shout")})
    assert list(copy.ACTIONS) == [*EXPECTED, "shout"]  # ORDER 1000 by default: last
    assert [a.name for a in copy.ACTIONS["shout"].args()] == ["volume"]
    assert copy.ACTIONS["shout"].summary() == "Do nothing, loudly."


def test_two_actions_with_one_name_are_refused(tmp_path, monkeypatch):
    with pytest.raises(RuntimeError, match="two fault actions are named 'delay'"):
        _import_copy(tmp_path, monkeypatch, {"twin.py": ACTION_FILE.format(name="delay")})


def test_shipped_json_documents_match_the_registry():
    schema = json.loads((generate.ROOT / "mockkafka/scenario/schema.json").read_text())
    assert schema == build_schema()

"""docs/scenarios.md documents every key of the schema, lists the whole library, and its
YAML examples load."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from mockkafka.scenario import model as m
from mockkafka.scenario.loader import library
from mockkafka.scenario.model import load_text
from mockkafka.scenario.schema import build_schema

DOC = (Path(__file__).resolve().parent.parent.parent / "docs" / "scenarios.md").read_text()


def table_after(marker: str) -> list[str]:
    """The backticked first column of the table following ``<!-- marker -->``."""
    rest = DOC.split(f"<!-- {marker} -->", 1)[1].lstrip("\n")
    keys = []
    for line in rest.splitlines()[2:]:
        if not line.startswith("|"):
            break
        first = line.split("|")[1].strip()
        keys.append(first.strip("`"))
    return keys


def _schema_keys() -> dict[str, list[str]]:
    s: dict[str, Any] = build_schema()
    props = s["properties"]
    step = props["steps"]["items"]["properties"]
    when = step["when"]["anyOf"]
    return {
        "top": list(props),
        "cluster": list(props["cluster"]["properties"]),
        "topic": list(props["topics"]["additionalProperties"]["anyOf"][1]["properties"]),
        "seed": list(props["seed"]["additionalProperties"]["properties"]),
        "step": [k for k in step if k not in m.VERBS] + ["*verb*"],
        "after": list(step["after"]["properties"]),
        "when": list(dict.fromkeys([*when[0]["properties"], *when[1]["properties"]])),
        "verbs": list(m.VERBS),
        "fault": list(step["fault"]["properties"]),
        "expect": list(props["expect"]["properties"]),
    }


@pytest.mark.parametrize("section", sorted(_schema_keys()))
def test_the_reference_lists_every_key_of_the_schema(section: str) -> None:
    assert sorted(table_after(f"schema: {section}")) == sorted(_schema_keys()[section])


def test_the_library_list_is_the_library_with_its_descriptions() -> None:
    rows = DOC.split("<!-- library -->", 1)[1].lstrip("\n").splitlines()[2:]
    listed = {}
    for row in rows:
        if not row.startswith("|"):
            break
        _, name, story, _ = row.split("|")
        listed[name.strip().strip("`")] = story.strip()
    from mockkafka import Scenario

    assert listed == {n: Scenario.load(n).description for n in library()}


def test_the_yaml_examples_load() -> None:
    blocks = re.findall(r"```yaml\n(.*?)```", DOC, re.S)
    assert blocks
    for block in blocks:
        load_text(block, file="docs/scenarios.md")


def test_every_verb_example_loads_as_a_step() -> None:
    rows = DOC.split("<!-- schema: verbs -->", 1)[1].lstrip("\n").splitlines()[2:]
    for row in rows:
        if not row.startswith("|"):
            break
        example = row.split("|")[3].strip().strip("`")
        # the topics it steps on exist (a step on an undeclared topic is refused)
        topics = "" if example.startswith("create_topic") else "{orders: {}, audit: {}, tasks: {}}"
        text = (
            f"name: x\ncluster: {{brokers: 3}}\ntopics: {topics or '{}'}\nsteps:\n  - {example}\n"
        )
        load_text(text)

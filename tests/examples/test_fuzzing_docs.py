"""docs/fuzzing.md: its example code is the example's code, and its state machine runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis.stateful import run_state_machine_as_test

ROOT = Path(__file__).resolve().parent.parent.parent
DOCS = ROOT / "docs" / "fuzzing.md"
EXAMPLE = ROOT / "examples" / "fuzz_worker" / "test_worker.py"


def python_blocks() -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", DOCS.read_text(), re.M | re.S)


def test_the_walkthrough_shows_the_example_as_it_is() -> None:
    (block,) = [b for b in python_blocks() if b.startswith("PLANS = fault_plans(")]
    assert block in EXAMPLE.read_text(), "update docs/fuzzing.md from examples/fuzz_worker"


@pytest.mark.interop
def test_the_state_machine_of_the_docs_runs() -> None:
    (block,) = [b for b in python_blocks() if "class IdempotentProducer" in b]
    namespace: dict[str, object] = {"__name__": "fuzzing_docs"}
    exec(compile(block, str(DOCS), "exec"), namespace)
    machine = namespace["IdempotentProducer"]
    run_state_machine_as_test(
        machine,  # type: ignore[arg-type]
        settings=settings(max_examples=5, stateful_step_count=4, deadline=None, database=None),
    )


def test_the_walkthrough_needs_nothing_the_fuzz_extra_does_not_bring() -> None:
    # issue 33: it used @pytest.mark.timeout, which needs pytest-timeout; mockkafka[fuzz]
    # brings hypothesis only, so a user's copy warned of an unknown mark (an error under
    # --strict-markers)
    marks = set(re.findall(r"pytest\.mark\.(\w+)", "\n".join(python_blocks())))
    builtin = {"parametrize", "skip", "skipif", "xfail", "usefixtures", "filterwarnings"}
    assert marks <= builtin | {"kafka_cluster", "kafka_scenario"}, marks
    imported = set(re.findall(r"^(?:from|import) (\w+)", "\n".join(python_blocks()), re.M))
    assert imported <= {
        "__future__",
        "hypothesis",
        "mockkafka",
        "pytest",
        "worker",
        "typing",
        "collections",
        "dataclasses",
        "confluent_kafka",
    }, imported

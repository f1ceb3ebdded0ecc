"""examples/fuzz_worker: the fuzzer finds the commit-before-processing bug and shrinks it to
a one- or two-step plan. (The fixed worker's property test runs where it stands,
examples/fuzz_worker/test_worker.py, which the default run collects.)"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import find, settings

import mockkafka.faults.model
import mockkafka.scenario.model
from mockkafka.faults.model import Error
from mockkafka.scenario.model import Fault
from mockkafka.strategies import FaultPlan

EXAMPLE = Path(__file__).resolve().parent.parent.parent / "examples" / "fuzz_worker"

# A found failure is shrunk, which on a loaded machine takes minutes.
pytestmark = [pytest.mark.interop, pytest.mark.timeout(600)]


@pytest.fixture(scope="module")
def example() -> Iterator[ModuleType]:
    sys.path.insert(0, str(EXAMPLE))
    try:
        import test_worker

        yield test_worker
    finally:
        sys.path.remove(str(EXAMPLE))


def test_fuzzer_shrinks_the_commit_before_processing_bug_to_one_fault(
    example: ModuleType,
) -> None:
    def breaks_buggy_worker(plan: FaultPlan) -> bool:
        try:
            example.check_every_order_invoiced(plan, commit_before_processing=True)
        except AssertionError:
            return True
        return False

    plan = find(
        example.PLANS,
        breaks_buggy_worker,
        settings=settings(max_examples=60, database=None, derandomize=True, deadline=None),
    )
    assert 1 <= len(plan.steps) <= 2, plan
    # The shrunk plan is a failed invoice write: the worker crashes after committing.
    (step,) = plan.steps
    assert isinstance(step.action, Fault), plan
    assert step.action.match.api == ("Produce",), plan
    assert isinstance(step.action.actions[0], Error), plan
    # It replays from its printed form and from a saved scenario file.
    namespace = {**vars(mockkafka.scenario.model), **vars(mockkafka.faults.model)}
    replayed = eval(repr(plan), {**namespace, "FaultPlan": FaultPlan})
    assert replayed == plan == FaultPlan.from_yaml(plan.to_yaml())
    with pytest.raises(AssertionError, match="never invoiced"):
        example.check_every_order_invoiced(replayed, commit_before_processing=True)


def test_fixed_worker_survives_the_refused_fetch_plan_the_fuzzer_found(
    example: ModuleType,
) -> None:
    """A plan the property test once found against the 'fixed' worker, pasted as printed:
    three Fetches refused with TOPIC_AUTHORIZATION_FAILED made librdkafka stop fetching
    the partition while the worker ignored consumer errors, so nothing was invoiced. The
    worker now treats a non-retriable consumer error as a crash, and its restart resumes."""
    namespace = {**vars(mockkafka.scenario.model), **vars(mockkafka.faults.model)}
    plan = eval(
        "FaultPlan(steps=("
        "Step(action=Fault(match=Match(api=('OffsetCommit',)), trigger=Trigger(),"
        " actions=(Error(code='OFFSET_METADATA_TOO_LARGE'),))),"
        " Step(action=Fault(match=Match(api=('Fetch',)), trigger=Trigger(times=3),"
        " actions=(Error(code='TOPIC_AUTHORIZATION_FAILED'),)))),"
        " topics=(('orders', 1), ('invoices', 1)))",
        {**namespace, "FaultPlan": FaultPlan},
    )
    example.check_every_order_invoiced(plan)

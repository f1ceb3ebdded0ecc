"""``@pytest.mark.kafka_scenario("leader-failover")``: a YAML scenario alongside a test.

The marker names a library scenario or a ``.yaml`` path (a relative one is resolved against
the test file's folder, never the current directory), then binds the scenario's parameters by keyword
(``topic="payments", group="ledger"``; an unknown one is a usage error with a did-you-mean)
and may leave checks out (``skip_expect=["committed"]``). The ``kafka_cluster`` fixture then gets the scenario's brokers and
cluster options (a ``kafka_cluster`` marker still wins), its topics and seed data, and the
scenario's steps play in the background while the test runs. When the test body returns,
the steps not yet run are cancelled and ``expect:`` is checked: every failed expectation
(and every step that never ran) fails the test, listed in one AssertionError.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

# mockkafka is imported only when a test uses the marker: loading the plugin stays cheap.
if TYPE_CHECKING:
    from mockkafka import Cluster, Scenario
    from mockkafka.scenario.runner import ScenarioThread

MARKER = "kafka_scenario"
RUN_KEY: pytest.StashKey[ScenarioThread] = pytest.StashKey()
MARKER_HELP = (
    "kafka_scenario(name_or_path, **parameters, skip_expect=()): play a YAML scenario "
    "(library name or .yaml path; parameters bound to your names, e.g. topic='payments') "
    "alongside the test on the kafka_cluster fixture; its expect: is checked when the test "
    "body returns"
)


def _usage_error(message: str) -> None:
    __tracebackhide__ = True
    pytest.fail(f"mockkafka usage error: {message}", pytrace=False)


def scenario_of(item: pytest.Item) -> Scenario | None:
    """The scenario the test's marker names (None without a marker); raises UsageError
    with the loader's file:line:column message for a bad file or name."""
    __tracebackhide__ = True
    mark = item.get_closest_marker(MARKER)
    if mark is None:
        return None
    if len(mark.args) != 1 or not isinstance(mark.args[0], str | Path):
        _usage_error(
            "@pytest.mark.kafka_scenario takes one argument: a library scenario name "
            "(`mockkafka scenarios` lists them) or a path to a .yaml file, then the "
            "scenario's parameters as keywords (topic='payments', group='ledger') and "
            "skip_expect=[...]"
        )
    from mockkafka import Scenario, ScenarioError

    target: Any = mark.args[0]
    text = str(target)
    if text.endswith((".yaml", ".yml")) or "/" in text or os.sep in text:
        # a path: relative to the test file, so the test passes from any folder
        folder = Path(str(item.fspath)).parent
        path = Path(target).expanduser()
        if not path.is_absolute():
            path = folder / path
        if not path.is_file():
            _usage_error(
                f"@pytest.mark.kafka_scenario: no such scenario file: {path}"
                + (
                    ""
                    if Path(target).is_absolute()
                    else f" ({text!r} is resolved against the test file's folder, {folder})"
                )
            )
        target = path
    try:
        return Scenario.load(target, **mark.kwargs)
    except ScenarioError as exc:
        message = f"@pytest.mark.kafka_scenario: {exc}"
    _usage_error(message)
    return None


#: The marks mockkafka registers (a near miss is reported: pytest only warns about it).
MARKS = ("kafka_cluster", MARKER)


def check_mark_names(item: pytest.Item) -> None:
    """A misspelt mockkafka mark (``kafka_clsuter``) is a usage error naming the mark it
    meant: pytest would only warn, and the test would run on a default cluster."""
    __tracebackhide__ = True
    import difflib

    for mark in item.iter_markers():
        if mark.name in MARKS:
            continue
        close = difflib.get_close_matches(mark.name, MARKS, n=1, cutoff=0.8)
        if close:
            _usage_error(
                f"@pytest.mark.{mark.name} is not a mockkafka mark (did you mean "
                f"{close[0]}?); mockkafka's marks are {', '.join(MARKS)}"
            )


def check_fixture(item: pytest.Item) -> None:
    __tracebackhide__ = True
    if item.get_closest_marker(MARKER) is not None and "kafka_cluster" not in getattr(
        item, "fixturenames", ()
    ):
        _usage_error(
            "@pytest.mark.kafka_scenario plays on the kafka_cluster fixture: add the "
            "kafka_cluster argument to the test"
        )


def cluster_options(scenario: Scenario | None) -> dict[str, Any] | None:
    """The scenario's brokers and cluster options, as a layer of the fixture's options."""
    if scenario is None:
        return None
    return {"brokers": scenario.cluster.brokers, **dict(scenario.cluster.options)}


def start(item: pytest.Item, scenario: Scenario | None, cluster: Cluster) -> None:
    """Set up the scenario on the fixture's cluster and start its steps (with
    ``--kafka-backend=kafka``: on the test's proxy in front of the real broker, or skip the
    test naming the steps a proxy cannot run)."""
    if scenario is None:
        return
    target: Any = getattr(cluster, "proxy", None) or cluster
    if target is not cluster:
        skip_unless_it_runs_on(scenario, cluster)
    item.stash[RUN_KEY] = scenario.start(target)


def skip_unless_it_runs_on(scenario: Scenario, real: Any) -> None:
    """With ``--kafka-backend=kafka``: skip the test (stopping the real cluster's proxy),
    listing *everything* of ``scenario`` a proxy in front of the real broker cannot run
    (too few brokers, steps that need the fake, ...), not just the first problem."""
    __tracebackhide__ = True
    from mockkafka.scenario.model import ScenarioError

    try:
        scenario.check_runs_on(real.proxy)
    except ScenarioError as exc:
        real.stop()
        pytest.skip(f"--kafka-backend=kafka: {exc.message}")


def finish(item: pytest.Item) -> None:
    """Stop the steps still waiting and check expect: (AssertionError lists failures)."""
    __tracebackhide__ = True
    run = item.stash.get(RUN_KEY, None)
    if run is None:
        return
    del item.stash[RUN_KEY]
    run.stop()
    run.check()


def abandon(item: pytest.Item) -> None:
    """At fixture teardown: stop steps still running when the test body raised."""
    run = item.stash.get(RUN_KEY, None)
    if run is not None:
        del item.stash[RUN_KEY]
        run.stop()

"""YAML scenarios: failure stories as files (see ``docs/scenarios.md``).

:mod:`~mockkafka.scenario.model` is the frozen data (no trio, no faker at import time),
:mod:`~mockkafka.scenario.loader` reads and checks files against the shipped JSON Schema,
:mod:`~mockkafka.scenario.runner` plays a scenario against a cluster.
"""

from mockkafka.scenario.model import Scenario, ScenarioError, from_dict

__all__ = ["Scenario", "ScenarioError", "from_dict"]

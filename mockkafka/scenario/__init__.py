"""YAML scenarios: failure stories as files (see ``docs/scenarios.md``).

:mod:`~mockkafka.scenario.model` is the :class:`Scenario` (no trio, no faker at import time)
and re-exports its parts, the frozen data of :mod:`~mockkafka.scenario.plan`;
:mod:`~mockkafka.scenario.loader` reads and checks files against the shipped JSON Schema,
:mod:`~mockkafka.scenario.runner` plays a scenario against a cluster. Both sit below
``model``: the runner reads a scenario through ``plan.ScenarioPlan``.
"""

from mockkafka.scenario.model import Scenario, ScenarioError, from_dict

__all__ = ["Scenario", "ScenarioError", "from_dict"]

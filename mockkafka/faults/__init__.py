"""Fault injection: rules (match + trigger + actions) consulted for every request.

Sans-IO: the rule model (:mod:`~mockkafka.faults.model`), the registry of actions, one
module each (:mod:`~mockkafka.faults.actions`: how to add one is in its docstring), the
engine deciding which rules fire and the fluent builder behind ``cluster.faults``
(:mod:`~mockkafka.faults.engine`; its action methods are generated into ``_builders.py``),
and message walkers (:mod:`~mockkafka.faults.inspect`). The server's fault stage applies
the actions (``mockkafka/server/faults.py``). See ``docs/faults.md`` for the user's guide.
"""

from typing import TYPE_CHECKING, Any

from mockkafka.faults import model as _model
from mockkafka.faults.engine import ClusterEvent, FaultEngine, Faults, Rule, engine_of
from mockkafka.faults.model import EVENTS, Action, Match, RequestInfo, Trigger

if TYPE_CHECKING:
    from mockkafka.faults.model import (
        Blackhole,
        CorruptBatch,
        CorruptPayload,
        CustomHandler,
        Delay,
        DropConnection,
        Duplicate,
        Error,
        LostAck,
        NeverRespond,
        Observe,
        PartialTrailingBatch,
        SchemaId,
        SkewTimestamps,
        Throttle,
    )


def __getattr__(name: str) -> Any:
    """The action classes, imported on first use (see ``model.py``)."""
    if name not in _model._ACTION_MODULES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(_model, name)


__all__ = [
    "EVENTS",
    "Action",
    "Blackhole",
    "ClusterEvent",
    "CorruptBatch",
    "CorruptPayload",
    "CustomHandler",
    "Delay",
    "DropConnection",
    "Duplicate",
    "Error",
    "FaultEngine",
    "Faults",
    "LostAck",
    "Match",
    "NeverRespond",
    "Observe",
    "PartialTrailingBatch",
    "RequestInfo",
    "Rule",
    "SchemaId",
    "SkewTimestamps",
    "Throttle",
    "Trigger",
    "engine_of",
]

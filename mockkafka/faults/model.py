"""The fault model as data: what a rule matches, when it fires, and what it does.

Theory of operation
-------------------
A rule is a :class:`Match` (which requests), a :class:`Trigger` (on which of those it
fires) and a tuple of actions (what happens to a request it fires on). All three are frozen
dataclasses whose ``repr`` is valid Python (``from mockkafka.faults import *`` brings every
name into scope), so a rule printed by a failing test can be pasted back into it.

The matching part lives in :mod:`mockkafka.faults.match`, the actions one module each in
:mod:`mockkafka.faults.actions`; both are re-exported here, above them.
Nothing here does I/O: the server's fault stage applies actions, the
:class:`~mockkafka.faults.engine.FaultEngine` decides which rules fire. Every constructor
validates its arguments at once and raises :class:`~mockkafka.errors.ConfigError` naming
the argument and the valid choices.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from mockkafka.faults._checks import check_count as check_count
from mockkafka.faults._checks import check_error as check_error
from mockkafka.faults._checks import check_ms as check_ms
from mockkafka.faults.actions._base import RECORD_RESPONSE_APIS as RECORD_RESPONSE_APIS
from mockkafka.faults.actions._base import Action
from mockkafka.faults.match import EVENTS as EVENTS
from mockkafka.faults.match import REQUEST_CONTEXTS as REQUEST_CONTEXTS
from mockkafka.faults.match import Match as Match
from mockkafka.faults.match import RequestInfo as RequestInfo
from mockkafka.faults.match import Trigger as Trigger
from mockkafka.faults.match import check_api_names as check_api_names

if TYPE_CHECKING:
    from mockkafka.faults.actions.blackhole import Blackhole
    from mockkafka.faults.actions.corrupt_batch import CorruptBatch
    from mockkafka.faults.actions.corrupt_payload import CorruptPayload
    from mockkafka.faults.actions.custom_handler import CustomHandler
    from mockkafka.faults.actions.delay import Delay
    from mockkafka.faults.actions.drop_connection import DropConnection
    from mockkafka.faults.actions.duplicate import Duplicate
    from mockkafka.faults.actions.error import Error
    from mockkafka.faults.actions.error import ErrorLevel as ErrorLevel
    from mockkafka.faults.actions.lost_ack import LostAck
    from mockkafka.faults.actions.never_respond import NeverRespond
    from mockkafka.faults.actions.observe import Observe
    from mockkafka.faults.actions.partial_trailing_batch import PartialTrailingBatch
    from mockkafka.faults.actions.schema_id import SchemaId
    from mockkafka.faults.actions.skew_timestamps import SkewTimestamps
    from mockkafka.faults.actions.throttle import Throttle

#: The action classes re-exported here (module of each in ``faults/actions/``), imported on
#: first use (PEP 562): every server loads the rule model, only a process that makes a rule
#: needs the actions (a ``mockkafka serve`` start does not, issue 33).
_ACTION_MODULES = {
    "Blackhole": "blackhole",
    "CorruptBatch": "corrupt_batch",
    "CorruptPayload": "corrupt_payload",
    "CustomHandler": "custom_handler",
    "Delay": "delay",
    "DropConnection": "drop_connection",
    "Duplicate": "duplicate",
    "Error": "error",
    "ErrorLevel": "error",
    "LostAck": "lost_ack",
    "NeverRespond": "never_respond",
    "Observe": "observe",
    "PartialTrailingBatch": "partial_trailing_batch",
    "SchemaId": "schema_id",
    "SkewTimestamps": "skew_timestamps",
    "Throttle": "throttle",
}


def __getattr__(name: str) -> Any:
    module = _ACTION_MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"mockkafka.faults.actions.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "EVENTS",
    "REQUEST_CONTEXTS",
    "Action",
    "Blackhole",
    "CorruptBatch",
    "CorruptPayload",
    "CustomHandler",
    "Delay",
    "DropConnection",
    "Duplicate",
    "Error",
    "LostAck",
    "Match",
    "NeverRespond",
    "Observe",
    "PartialTrailingBatch",
    "RequestInfo",
    "SchemaId",
    "SkewTimestamps",
    "Throttle",
    "Trigger",
]

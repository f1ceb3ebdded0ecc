"""Hypothesis strategies for fuzzing Kafka clients against mockkafka (needs ``hypothesis``:
``pip install '.[fuzz]'`` in the clone, or ``pip install hypothesis``).

Data: :func:`records`, :func:`headers`, :func:`record_batches` (every message format and
codec), :func:`client_configs` (confluent-kafka, kafka-python, aiokafka),
:func:`error_codes` (what a broker may really answer, per API and version),
:func:`requests` (well-formed request bodies of any API and version, from the schemas).

Faults: :func:`fault_plans` draws :class:`FaultPlan` -- faults and cluster verbs in the
scenario vocabulary; a plan prints as Python (its repr) and as a scenario file
(:meth:`FaultPlan.to_yaml`). For stateful tests see :mod:`mockkafka.stateful`; the guide is
``docs/fuzzing.md``.

Every strategy takes keyword arguments only and checks them at once (hypothesis'
``InvalidArgument``), and its repr is valid Python.
"""

try:
    import hypothesis  # noqa: F401
except ModuleNotFoundError as exc:  # pragma: no cover - exercised in the plugin-environment tier
    raise ModuleNotFoundError(
        "mockkafka.strategies needs the hypothesis package: pip install 'mockkafka[fuzz]'",
        name=exc.name,
    ) from None

from mockkafka.strategies._configs import client_configs, error_codes
from mockkafka.strategies._data import RecordBatch, headers, record_batches, records
from mockkafka.strategies._plans import (
    DEFAULT_VERBS,
    FAULT_KINDS,
    VERBS,
    FaultPlan,
    fault_plans,
)
from mockkafka.strategies._requests import DrawnRequest, requests

__all__ = [
    "DEFAULT_VERBS",
    "FAULT_KINDS",
    "VERBS",
    "DrawnRequest",
    "FaultPlan",
    "RecordBatch",
    "client_configs",
    "error_codes",
    "fault_plans",
    "headers",
    "record_batches",
    "records",
    "requests",
]

"""Build the JSON Schema of scenario files from the model's tables.

``python tools/gen_fault_actions.py`` (or ``python -m mockkafka.scenario.schema >
mockkafka/scenario/schema.json``) regenerates the shipped file; the ``fault:`` action keys
come from the action registry (``mockkafka/faults/actions/``); ``tests/scenario/test_schema.py`` checks that it is current.
"""

from __future__ import annotations

import json
from typing import Any

from mockkafka.faults.actions import SCENARIO_ACTIONS, Action
from mockkafka.faults.model import EVENTS, REQUEST_CONTEXTS
from mockkafka.scenario import plan as m

DURATION: dict[str, Any] = {
    "description": "a duration like 2s, 500ms, 1m or a number of seconds",
    "anyOf": [
        {"type": "number", "minimum": 0},
        {"type": "string", "pattern": r"^\s*\d+(\.\d+)?\s*(ms|s|m)\s*$"},
    ],
}
NAT: dict[str, Any] = {"type": "integer", "minimum": 0}
POS: dict[str, Any] = {"type": "integer", "minimum": 1}
STRING: dict[str, Any] = {"type": "string"}
SCALAR: dict[str, Any] = {"type": ["string", "number", "boolean", "null"]}
TOPICS: dict[str, Any] = {
    "description": "a topic or a list of topics",
    "anyOf": [STRING, {"type": "array", "items": STRING, "minItems": 1}],
}

_KINDS: dict[str, dict[str, Any]] = {
    m.STR: {"type": ["string", "number"]},
    m.INT: NAT,
    m.MS: NAT,
    m.PARTITION: {
        "description": "a partition index or 'all'",
        "anyOf": [NAT, {"const": "all"}],
    },
    m.BROKER: POS,
    m.TO_BROKER: {
        "description": "a broker node id or 'next'",
        "anyOf": [POS, {"const": "next"}],
    },
    m.BROKERS: {"type": "array", "items": POS},
    m.BOOL: {"type": "boolean"},
    m.OPERATIONS: {
        "description": "an ACL operation name (read, write, ..., all) or a list of them",
        "anyOf": [STRING, {"type": "array", "items": STRING, "minItems": 1}],
    },
    m.STR_MAP: {"type": "object", "additionalProperties": SCALAR},
    m.CAPS: {"type": "object", "additionalProperties": NAT, "minProperties": 1},
    m.OFFSETS: {
        "type": "array",
        "minItems": 1,
        "items": {
            "type": "object",
            "properties": {"topic": STRING, "partition": NAT, "offset": NAT},
            "required": ["topic", "partition", "offset"],
            "additionalProperties": False,
        },
    },
    m.HEADERS: {"type": "array", "items": {"type": "array", "minItems": 2, "maxItems": 2}},
    m.ASSIGNMENTS: {
        "type": "array",
        "minItems": 1,
        "items": {"type": "array", "minItems": 1, "items": POS},
    },
}


def _obj(props: dict[str, Any], required: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": False}
    if required:
        out["required"] = required
    out.update(extra)
    return out


def _verb_schema(params: tuple[m.Param, ...]) -> dict[str, Any]:
    obj = _obj(
        {p.name: _KINDS.get(p.kind, {}) for p in params},
        [p.name for p in params if p.required],
    )
    if not params:
        return {"description": "no arguments: {} or true", "anyOf": [obj, {"const": True}]}
    return obj


def _action_schema(cls: type[Action]) -> dict[str, Any]:
    """The value of a ``fault:`` action key, from the action's arguments (``arg`` metadata)."""
    args = cls.args()
    true: dict[str, Any] = {"const": True}
    if not args:
        return {"description": cls.summary(), **true}
    obj = _obj({a.name: a.schema or {} for a in args}, [a.name for a in args if a.required])
    short = next((a for a in args if a.positional), None)
    if short is not None:
        others = ", ".join(a.name for a in args if a is not short)
        return {
            "description": f"{short.doc}, or {{{short.name}, {others}}}" if others else short.doc,
            "anyOf": [short.schema or {}, obj],
        }
    if not any(a.required for a in args):
        return {
            "description": f"true or {{{', '.join(a.name for a in args)}}}",
            "anyOf": [true, obj],
        }
    return obj


def _fault_schema() -> dict[str, Any]:
    ints = {
        "description": "an int or a list of ints",
        "anyOf": [NAT, {"type": "array", "items": NAT}],
    }
    api = {
        "description": "an API name or a list of API names",
        "anyOf": [STRING, {"type": "array", "items": STRING, "minItems": 1}],
    }
    true: dict[str, Any] = {"const": True}
    event = {"type": "string", "enum": list(EVENTS)}
    context = {"type": "string", "enum": list(REQUEST_CONTEXTS)}
    props: dict[str, Any] = {
        "name": STRING,
        "on": api,
        "broker": ints,
        "topic": STRING,
        "partition": ints,
        "group": STRING,
        "transactional_id": STRING,
        "client_id": STRING,
        "connection": POS,
        "versions": {
            "description": "a version or [lowest, highest]",
            "anyOf": [NAT, {"type": "array", "items": NAT, "minItems": 2, "maxItems": 2}],
        },
        "context": {
            "description": "a request context or a list of them: what the request must carry",
            "anyOf": [context, {"type": "array", "items": context, "minItems": 1}],
        },
        "once": true,
        "times": POS,
        "nth": POS,
        "every_time": true,
        "probability": {"type": "number", "minimum": 0, "maximum": 1},
        "seed": NAT,
        "between": {"type": "array", "items": DURATION, "minItems": 1, "maxItems": 2},
        "for_ms": NAT,
        "after": STRING,
        "after_event": {
            "description": "a cluster event name or {event: NAME, attribute: value}",
            "anyOf": [
                event,
                {
                    "type": "object",
                    "properties": {"event": event},
                    "required": ["event"],
                },
            ],
        },
        **{name: _action_schema(cls) for name, cls in SCENARIO_ACTIONS.items()},
    }
    return _obj(props, ["on"])


def _start_schemas() -> dict[str, Any]:
    filters: dict[str, Any] = {k: {} for k in m.REQUEST_FILTERS}
    after = _obj(
        {
            "time": DURATION,
            "requests": _obj({"api": STRING, "count": POS, **filters}, ["api"]),
            "event": {
                "type": "object",
                "properties": {"event": {"type": "string", "enum": list(EVENTS)}},
                "required": ["event"],
            },
            "records": _obj({"topic": STRING, "count": POS, "partition": NAT}, ["topic", "count"]),
            "produced": _obj({"topic": STRING, "count": POS, "partition": NAT}, ["topic", "count"]),
            "consumed": _obj({"topic": STRING, "count": POS, "partition": NAT}, ["topic", "count"]),
            "commits": _obj({"group": STRING, "count": POS}, ["group"]),
            "committed": _obj(
                {"group": STRING, "topic": STRING, "partition": NAT, "offset": NAT},
                ["group", "topic", "partition", "offset"],
            ),
        },
        minProperties=1,
        maxProperties=1,
    )
    when = {
        "description": "{group, state, members} or {transactional_id, state}",
        "anyOf": [
            _obj(
                {
                    "group": STRING,
                    "state": {"enum": list(m.GROUP_STATES)},
                    "members": NAT,
                },
                ["group"],
            ),
            _obj(
                {
                    "transactional_id": STRING,
                    "state": {"enum": list(m.TRANSACTION_STATES)},
                },
                ["transactional_id", "state"],
            ),
        ],
    }
    return {"at": DURATION, "after": after, "when": when}


def _expect_schema() -> dict[str, Any]:
    def one_or_many(obj: dict[str, Any]) -> dict[str, Any]:
        return {
            "description": "a check or a list of checks",
            "anyOf": [obj, {"type": "array", "items": obj}],
        }

    opt_nat = NAT
    return _obj(
        {
            "no_data_loss": TOPICS,
            "data_loss": TOPICS,
            "no_duplicates": TOPICS,
            "committed": one_or_many(
                _obj(
                    {
                        "group": STRING,
                        "topic": STRING,
                        "partition": NAT,
                        "offset": {"anyOf": [NAT, {"const": "end"}]},
                    },
                    ["group", "topic"],
                )
            ),
            "group_state": one_or_many(
                _obj(
                    {"group": STRING, "state": {"enum": list(m.GROUP_STATES)}, "members": NAT},
                    ["group"],
                )
            ),
            "transaction_state": one_or_many(
                _obj(
                    {
                        "transactional_id": STRING,
                        "state": {"enum": list(m.TRANSACTION_STATES)},
                        "committed": opt_nat,
                        "aborted": opt_nat,
                    },
                    ["transactional_id"],
                )
            ),
            "records": one_or_many(
                _obj(
                    {"topic": STRING, "count": NAT, "at_least": NAT, "at_most": NAT},
                    ["topic"],
                )
            ),
            "traffic": one_or_many(
                _obj(
                    {
                        "api": STRING,
                        "at_least": NAT,
                        "at_most": NAT,
                        **{k: {} for k in m.REQUEST_FILTERS},
                    },
                    ["api"],
                )
            ),
            "rules_fired": {
                "description": "'all' or a list of fault names",
                "anyOf": [{"const": "all"}, TOPICS],
            },
        }
    )


def build_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a scenario file."""
    step_props: dict[str, Any] = {"name": STRING, **_start_schemas(), "timeout": DURATION}
    for verb, params in m.VERBS.items():
        step_props[verb] = _verb_schema(params)
    step_props["fault"] = _fault_schema()
    from mockkafka.cluster.config import ClusterConfig

    cluster_props: dict[str, Any] = {"brokers": POS}
    cluster_props.update({k: {} for k in sorted(ClusterConfig.__dataclass_fields__)})
    template = {
        "description": "a string template or {faker: PROVIDER, ...arguments}",
        "anyOf": [
            {"type": ["string", "number", "null"]},
            {"type": "object", "properties": {"faker": STRING}, "required": ["faker"]},
        ],
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://mockkafka.invalid/scenario.schema.json",
        "title": "mockkafka scenario",
        "description": "A failure story for a fake Kafka cluster; see docs/scenarios.md.",
        **_obj(
            {
                "name": STRING,
                "description": STRING,
                "parameters": {
                    "type": "object",
                    "additionalProperties": _obj(
                        {
                            "default": {"type": ["string", "number", "boolean"]},
                            "description": STRING,
                        },
                        ["default"],
                    ),
                },
                "cluster": _obj(cluster_props),
                "topics": {
                    "type": "object",
                    "additionalProperties": {
                        "anyOf": [
                            {"type": "null"},
                            _obj(
                                {
                                    "partitions": POS,
                                    "replication_factor": POS,
                                    "config": _KINDS[m.STR_MAP],
                                }
                            ),
                        ]
                    },
                },
                "seed": {
                    "type": "object",
                    "additionalProperties": _obj(
                        {"count": NAT, "key": template, "value": template, "partition": NAT},
                        ["count"],
                    ),
                },
                "random_seed": NAT,
                "steps": {"type": "array", "items": _obj(step_props)},
                "expect": _expect_schema(),
            },
            ["name"],
        ),
    }


def main() -> None:
    print(json.dumps(build_schema(), indent=1))


if __name__ == "__main__":
    main()

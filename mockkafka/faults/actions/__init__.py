"""The registry of fault actions: one module per action, found by looking in this package.

How to add an action
--------------------
Add one module here (``mockkafka/faults/actions/my_action.py``) holding one frozen dataclass
that subclasses :class:`~mockkafka.faults.actions._base.Action`::

    @dataclass(frozen=True, slots=True, repr=False)
    class SkewTimestamps(Action):
        \"\"\"Fetch: move every record's timestamp by ``ms`` (first paragraph: the docs).\"\"\"

        NAME: ClassVar[str] = "skew_timestamps"   # builder method and YAML key
        PHASE: ClassVar[str] = DATA                # BEFORE, INSTEAD, AFTER, DATA, CONNECTION
        ORDER: ClassVar[int] = 100                 # place in tables and docs
        APIS: ClassVar[tuple[str, ...] | None] = RECORD_RESPONSE_APIS
        AS_KAFKA: ClassVar[bool] = False           # "beyond Kafka" in the coverage report

        ms: int = field(metadata=arg("how far to move them", schema={"type": "integer"}))

        def __post_init__(self) -> None:           # validate: raise ConfigError naming the arg
            ...

        def edit_records(self, call, topic, index, records):  # DATA actions
            ...                                    # return the new records, or None

Phases (``_base.py``): ``BEFORE`` the handler (``await call.sleep``, ``call.close``,
``await call.never_respond``); ``INSTEAD`` of it (set ``call.response`` unless
``call.answered``; ``call.claim(match, code)`` answers only the partitions a rule names);
``AFTER`` it (edit ``call.response``); ``DATA`` (``edit_records`` per partition with
records; the rule is decided only when there was something to edit); ``CONNECTION`` (once
the response is known: ``call.mute``, ``call.close_after_response``, a delay). An action
whose phase depends on its arguments overrides ``phase_on(api)``. Everything but ``DATA``
acts in ``async def apply(self, call, match)``; :class:`~mockkafka.faults.actions._base.
FaultCall` is the whole interface an action gets (the request, the response,
``error_response``, ``claim``, ``partitions``, ``flush``, ``sleep``, ``close``, ``mute``,
``next_batch``, ``record_error``).

Then run ``python tools/gen_fault_actions.py`` (rewrites the ``Rule`` builder
methods in ``faults/_builders.py``, the scenario JSON Schema, the control endpoint's OpenAPI
document and the action reference in ``docs/faults.md``; tests fail while they are stale).
The YAML ``fault:`` keys, the control endpoint, ``fault_plans()`` and the coverage report
read this registry; it finds the action modules on its first use. Write the docs section
and a test against a real client.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterator, Mapping

from mockkafka.faults.actions._base import (
    AFTER,
    BEFORE,
    CONNECTION,
    DATA,
    INSTEAD,
    PHASES,
    RECORD_RESPONSE_APIS,
    Action,
    Arg,
    FaultCall,
    arg,
)


def _discover() -> dict[str, type[Action]]:
    found: dict[str, type[Action]] = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for obj in vars(module).values():
            if (
                isinstance(obj, type)
                and issubclass(obj, Action)
                and obj.__module__ == module.__name__
                and obj.NAME
            ):
                if obj.NAME in found:
                    raise RuntimeError(
                        f"two fault actions are named {obj.NAME!r}: "
                        f"{found[obj.NAME].__module__} and {module.__name__}"
                    )
                if obj.PHASE not in PHASES:
                    raise RuntimeError(
                        f"{module.__name__}.{obj.__name__}.PHASE={obj.PHASE!r}; one of {PHASES}"
                    )
                found[obj.NAME] = obj
    return dict(sorted(found.items(), key=lambda kv: (kv[1].ORDER, kv[0])))


class _Registry(Mapping[str, type[Action]]):
    """Fault actions by ``NAME`` (those ``keep`` accepts), in ``ORDER``, found in this
    package on first use: a process that adds no rule (a ``mockkafka serve`` start, issue
    33) imports none of their modules. Raises RuntimeError then for two actions of one
    name or an unknown ``PHASE``."""

    def __init__(self, keep: Callable[[type[Action]], bool] | None = None) -> None:
        self._keep = keep
        self._found: dict[str, type[Action]] | None = None

    def _actions(self) -> dict[str, type[Action]]:
        found = self._found
        if found is None:
            found = _discover()
            if self._keep is not None:
                found = {n: c for n, c in found.items() if self._keep(c)}
            self._found = found
        return found

    def __getitem__(self, name: str) -> type[Action]:
        return self._actions()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._actions())

    def __len__(self) -> int:
        return len(self._actions())


#: Every fault action by ``NAME``, in ``ORDER``.
ACTIONS: Mapping[str, type[Action]] = _Registry()
#: The actions a YAML ``fault:`` step (and the control endpoint) can name.
SCENARIO_ACTIONS: Mapping[str, type[Action]] = _Registry(lambda c: c.SCENARIO)


def action_named(name: str) -> type[Action]:
    """The action class registered as ``name`` (KeyError if none)."""
    return ACTIONS[name]


__all__ = [
    "ACTIONS",
    "AFTER",
    "BEFORE",
    "CONNECTION",
    "DATA",
    "INSTEAD",
    "PHASES",
    "RECORD_RESPONSE_APIS",
    "SCENARIO_ACTIONS",
    "Action",
    "Arg",
    "FaultCall",
    "action_named",
    "arg",
]

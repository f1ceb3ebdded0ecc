"""The probes of the first-use tier and the clients each runs with.

A probe is ``fn(client: str) -> None``: it raises (an AssertionError saying what a user
would see, or the library's own exception) when a promise is broken. It imports what it
uses inside its body, so the fresh interpreter that runs it pays every first import itself.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

#: The Python client families, each at its default settings.
CLIENTS = ("confluent", "kafka-python", "aiokafka")
#: The modules that hold probes (imported to fill the registry).
MODULES = (
    "tests.first_use.probes_waits",
    "tests.first_use.probes_verbs",
    "tests.first_use.probes_faults",
    "tests.first_use.probes_scenarios",
)

Probe = Callable[[str], None]


@dataclass(frozen=True)
class Item:
    name: str
    client: str
    fn: Probe
    seconds: float  # the bound of one run (the child is killed past it)

    @property
    def id(self) -> str:
        return f"{self.name}[{self.client}]"


PROBES: dict[str, tuple[Probe, tuple[str, ...], float]] = {}


def probe(*, clients: tuple[str, ...] = CLIENTS, seconds: float = 60.0) -> Callable[[Probe], Probe]:
    """Register ``fn`` as a probe run with each of ``clients`` (``("-",)``: no client)."""

    def register(fn: Probe) -> Probe:
        name = fn.__name__
        if name in PROBES:
            raise ValueError(f"two probes named {name}")
        PROBES[name] = (fn, clients, seconds)
        return fn

    return register


def items() -> list[Item]:
    """Every (probe, client) pair, in a stable order."""
    for module in MODULES:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as e:
            if e.name != module:
                raise
    return [
        Item(name, client, fn, seconds)
        for name, (fn, clients, seconds) in sorted(PROBES.items())
        for client in clients
    ]


def find(item_id: str) -> Item:
    for it in items():
        if it.id == item_id:
            return it
    raise KeyError(item_id)

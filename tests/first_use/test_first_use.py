"""Each first-use probe once, in a fresh interpreter (the default test run).

``python -m tests.first_use.run --repeat 5`` runs them five times each (a bounded step of
``.ci/run``); this file keeps one run of each in every ``pytest``, so a promise broken only
in a fresh process fails the ordinary test run too.
"""

from __future__ import annotations

import pytest

from tests.first_use.registry import Item, items
from tests.first_use.run import run_one

ITEMS = items()


@pytest.mark.interop
@pytest.mark.parametrize("item", ITEMS, ids=[it.id for it in ITEMS])
def test_promise_holds_in_a_fresh_interpreter(item: Item) -> None:
    outcome = run_one(item.id, item.seconds)
    assert outcome.ok, f"{item.id}: {outcome.detail}\n{outcome.output[-6000:]}"

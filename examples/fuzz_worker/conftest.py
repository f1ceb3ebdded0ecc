"""This repository's bound on the property test (not part of the example a user copies).

The example itself needs only ``mockkafka[fuzz]`` (hypothesis) and pytest; it carries no
``pytest.mark.timeout``, which needs pytest-timeout (issue 33: the docs showed it and the
``fuzz`` extra does not bring it). Here, where pytest-timeout is installed (the ``test``
extra) and the suite's default bound is 120 s, ten clusters and consumer groups may take
minutes on a loaded machine, so the test gets 600 s.
"""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.pluginmanager.hasplugin("timeout"):
        return
    for item in items:
        if item.name.startswith("test_every_order_is_invoiced"):
            item.add_marker(pytest.mark.timeout(600))

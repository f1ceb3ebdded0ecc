"""The trio-native fixture (loaded only when pytest-trio is installed)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from pytest_trio import trio_fixture  # type: ignore[import-untyped]

from mockkafka import AsyncCluster, open_cluster
from pytest_plugin import plugin
from pytest_plugin._report import TrackedCluster


@trio_fixture  # type: ignore[untyped-decorator]
async def kafka_cluster_trio(
    request: pytest.FixtureRequest, kafka_cluster_options: dict[str, Any]
) -> AsyncIterator[AsyncCluster]:
    """A fresh ``mockkafka.AsyncCluster`` served by the test's own trio loop (no thread).

    For ``@pytest.mark.trio`` tests (or ``trio_mode = true``); takes the same options as
    ``kafka_cluster`` (marker, ini options, ``kafka_cluster_options``).
    """
    opts = plugin.resolve_options(request, kafka_cluster_options)
    tracked: TrackedCluster | None = None
    try:
        async with open_cluster(**opts.cluster_kwargs()) as cluster:
            tracked = plugin._tests(request.node).add("kafka_cluster_trio", cluster)
            plugin.create_topics(cluster, opts)
            yield cluster
    finally:
        # open_cluster re-raises broker errors on exit: they are reported already.
        if tracked is not None:
            tracked.reported_errors = len(tracked.cluster.broker_errors)

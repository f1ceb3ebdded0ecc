"""The trio-native fixture, registered by the plugin only when pytest-trio is active."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import pytest
from pytest_trio import trio_fixture  # type: ignore[import-untyped]

from ._clusters import check_rules, create_topics, resolve_options, tests_of

if TYPE_CHECKING:
    from mockkafka import AsyncCluster

    from ._report import TrackedCluster


@trio_fixture  # type: ignore[untyped-decorator]
async def kafka_cluster_trio(
    request: pytest.FixtureRequest, kafka_cluster_options: dict[str, Any]
) -> AsyncIterator[AsyncCluster]:
    """A fresh ``mockkafka.AsyncCluster`` served by the test's own trio loop (no thread).

    For ``@pytest.mark.trio`` tests (or ``trio_mode = true``); takes the same options as
    ``kafka_cluster`` (marker, ini options, ``kafka_cluster_options``).
    """
    from mockkafka import open_cluster

    opts = resolve_options(request, kafka_cluster_options)
    tracked: TrackedCluster | None = None
    try:
        async with open_cluster(**opts.cluster_kwargs()) as cluster:
            tracked = tests_of(request.node).add(
                "kafka_cluster_trio", cluster, strict_faults=opts.strict_faults
            )
            create_topics(cluster, opts)
            yield cluster
            check_rules(request)
    finally:
        # open_cluster re-raises broker errors on exit: they are reported already.
        if tracked is not None:
            tracked.reported_errors = len(tracked.cluster.broker_errors)

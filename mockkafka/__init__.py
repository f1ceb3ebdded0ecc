"""mockkafka: an in-process fake Apache Kafka cluster that speaks the real wire protocol.

Start here::

    import mockkafka

    with mockkafka.Cluster(brokers=3) as cluster:
        cluster.create_topic("orders", partitions=6, replication_factor=3)
        ...  # any Kafka client: bootstrap.servers = cluster.bootstrap_servers

For trio code: ``async with mockkafka.open_cluster(brokers=3) as cluster``. Failure stories
as YAML files: ``mockkafka.Scenario.load("leader-failover").run(cluster)`` (docs/scenarios.md).

The names below are imported on first use (PEP 562), so ``import mockkafka`` -- and the
pytest plugin, which every pytest session of a user loads -- costs almost nothing until a
cluster is made.
"""

from __future__ import annotations

import importlib as _importlib
import typing as _typing

from mockkafka._version import __version__ as __version__

if _typing.TYPE_CHECKING:
    from mockkafka._api.cluster import AsyncCluster, Cluster, open_cluster
    from mockkafka._api.proxy import AsyncProxy, Proxy, open_proxy
    from mockkafka.cluster.config import ClusterConfig
    from mockkafka.cluster.transactions import CompletedTransaction
    from mockkafka.errors import (
        BrokerError,
        ConfigError,
        ErrorCode,
        KafkaApiError,
        ListenError,
        MockKafkaError,
        ProtocolError,
        ProtocolViolationWarning,
        UnfiredRulesError,
        UnfiredRuleWarning,
        WaitTimeout,
        error_code,
    )
    from mockkafka.faults import Faults, Rule
    from mockkafka.protocol.records import Record
    from mockkafka.scenario.model import Scenario, ScenarioError
    from mockkafka.server.traffic import Exchange, TrafficLog
    from mockkafka.views import (
        AclView,
        BrokerView,
        GroupView,
        MemberView,
        PartitionView,
        ShareGroupView,
        SharePartitionView,
        TopicView,
        TransactionView,
    )

# Public name -> the module that defines it.
_EXPORTS: dict[str, str] = {
    "AclView": "mockkafka.views",
    "AsyncCluster": "mockkafka._api.cluster",
    "BrokerError": "mockkafka.errors",
    "BrokerView": "mockkafka.views",
    "Cluster": "mockkafka._api.cluster",
    "ClusterConfig": "mockkafka.cluster.config",
    "CompletedTransaction": "mockkafka.cluster.transactions",
    "ConfigError": "mockkafka.errors",
    "ErrorCode": "mockkafka.errors",
    "Exchange": "mockkafka.server.traffic",
    "Faults": "mockkafka.faults",
    "GroupView": "mockkafka.views",
    "KafkaApiError": "mockkafka.errors",
    "ListenError": "mockkafka.errors",
    "MemberView": "mockkafka.views",
    "MockKafkaError": "mockkafka.errors",
    "PartitionView": "mockkafka.views",
    "ProtocolError": "mockkafka.errors",
    "ProtocolViolationWarning": "mockkafka.errors",
    "Proxy": "mockkafka._api.proxy",
    "AsyncProxy": "mockkafka._api.proxy",
    "open_proxy": "mockkafka._api.proxy",
    "Record": "mockkafka.protocol.records",
    "Rule": "mockkafka.faults",
    "Scenario": "mockkafka.scenario.model",
    "ScenarioError": "mockkafka.scenario.model",
    "ShareGroupView": "mockkafka.views",
    "SharePartitionView": "mockkafka.views",
    "TopicView": "mockkafka.views",
    "TrafficLog": "mockkafka.server.traffic",
    "TransactionView": "mockkafka.views",
    "UnfiredRuleWarning": "mockkafka.errors",
    "UnfiredRulesError": "mockkafka.errors",
    "WaitTimeout": "mockkafka.errors",
    "error_code": "mockkafka.errors",
    "open_cluster": "mockkafka._api.cluster",
}

__all__ = [
    "AclView",
    "AsyncCluster",
    "AsyncProxy",
    "BrokerError",
    "BrokerView",
    "Cluster",
    "ClusterConfig",
    "CompletedTransaction",
    "ConfigError",
    "ErrorCode",
    "Exchange",
    "Faults",
    "GroupView",
    "KafkaApiError",
    "ListenError",
    "MemberView",
    "MockKafkaError",
    "PartitionView",
    "ProtocolError",
    "ProtocolViolationWarning",
    "Proxy",
    "Record",
    "Rule",
    "Scenario",
    "ScenarioError",
    "ShareGroupView",
    "SharePartitionView",
    "TopicView",
    "TrafficLog",
    "TransactionView",
    "UnfiredRuleWarning",
    "UnfiredRulesError",
    "WaitTimeout",
    "error_code",
    "open_cluster",
    "open_proxy",
]


def __getattr__(name: str) -> _typing.Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'mockkafka' has no attribute {name!r}")
    # Not cached in this module's globals: the defining module is the one source of truth,
    # even where a tool (pytester) drops and re-imports modules between runs.
    return getattr(_importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})

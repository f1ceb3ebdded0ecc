"""mockkafka: an in-process fake Apache Kafka cluster that speaks the real wire protocol.

Start here::

    import mockkafka

    with mockkafka.Cluster(brokers=3) as cluster:
        cluster.create_topic("orders", partitions=6, replication_factor=3)
        ...  # any Kafka client: bootstrap.servers = cluster.bootstrap_servers

For trio code: ``async with mockkafka.open_cluster(brokers=3) as cluster``.
"""

from mockkafka._api.cluster import AsyncCluster, Cluster, open_cluster
from mockkafka.cluster.state import ClusterConfig
from mockkafka.cluster.transactions import CompletedTransaction
from mockkafka.errors import (
    BrokerError,
    ConfigError,
    ErrorCode,
    KafkaApiError,
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
from mockkafka.server.traffic import Exchange, TrafficLog
from mockkafka.views import (
    BrokerView,
    GroupView,
    MemberView,
    PartitionView,
    TopicView,
    TransactionView,
)

__all__ = [
    "AsyncCluster",
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
    "MemberView",
    "MockKafkaError",
    "PartitionView",
    "ProtocolError",
    "ProtocolViolationWarning",
    "Record",
    "Rule",
    "TopicView",
    "TrafficLog",
    "TransactionView",
    "UnfiredRuleWarning",
    "UnfiredRulesError",
    "WaitTimeout",
    "error_code",
    "open_cluster",
]

__version__ = "0.1.0"

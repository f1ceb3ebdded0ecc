"""The one allow-list of known differences between mockkafka and Apache Kafka.

Each entry names the API, a pattern of the differing field path (``re.fullmatch``) and why
the difference is kept. ``docs/skipped_features.md`` lists every entry's ``key`` in its
"Differences from Apache Kafka" section (a test checks both directions). A difference no
entry explains is *unexplained*: fix the fake, or add an entry with its reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tests.oracle.harness import Difference


@dataclass(frozen=True)
class Allowed:
    key: str
    api: str
    path: str
    reason: str
    session: str = ".*"
    #: ``exchange``: found by the differential sessions; ``config``: found by comparing the
    #: config model with the recorded DescribeConfigs answers (tests/configs).
    kind: str = "exchange"

    def matches(self, d: Difference) -> bool:
        return (
            (self.api == "*" or self.api == d.api)
            and re.fullmatch(self.path, d.path) is not None
            and re.fullmatch(self.session, d.session) is not None
        )


ALLOWED: tuple[Allowed, ...] = (
    # -- configs: mockkafka's Kafka 4 model against what Kafka 4.4 reports
    #    (tests/configs/test_recorded_configs.py; path = "broker:NAME.FIELD" / "topic:...")
    Allowed(
        "config-share-groups-on",
        "DescribeConfigs",
        r"broker:group\.share\.enable\..*",
        "Kafka 4.1+ has no group.share.enable (share groups are on via share.version); "
        "mockkafka keeps the 4.0 switch, on, because it serves the 4.0 share APIs",
        kind="config",
    ),
    Allowed(
        "config-share-record-locks-4-0",
        "DescribeConfigs",
        r"broker:group\.share\.partition\.max\.record\.locks\.default",
        "Kafka 4.1 raised the default from 200 to 2000; mockkafka's share groups are the "
        "4.0 (v0) ones and keep 4.0's limit",
        kind="config",
    ),
    Allowed(
        "config-listeners-fixed",
        "DescribeConfigs",
        r"broker:listeners\.read_only",
        "Kafka can change a broker's listeners at run time; mockkafka binds its listeners "
        "once, so it reports them read-only",
        kind="config",
    ),
    Allowed(
        "config-null-defaults",
        "DescribeConfigs",
        r"broker:(log\.retention\.ms|node\.id|process\.roles)\.default|"
        r"topic:retention\.ms\.supplier",
        "Kafka leaves these defaults null (log.retention.hours supplies the retention; "
        "node.id and process.roles must be set); mockkafka reports the effective value",
        kind="config",
    ),
    Allowed(
        "api-versions-controller-apis",
        "ApiVersions",
        r"api_keys\[len\]|finalized_features.*|supported_features.*",
        "Kafka 4.4 advertises 15 APIs more (KRaft controller and share-coordinator APIs, and "
        "keys 88-94, newer than mockkafka's schema data) and newer versions of a few "
        "(ApiVersions v5, TxnOffsetCommit v6, DeleteGroups v3, ConsumerGroupDescribe v1, the "
        "share APIs v1+); mockkafka still serves the versions Kafka 4 removed (KIP-896) for "
        "old clients and release presets, and advertises Kafka 4.0's features with "
        "transaction.version and share.version finalized at 0 (the v1 transaction flow; the "
        "4.0 share groups)",
    ),
    Allowed(
        "log-dir-environment",
        "DescribeLogDirs",
        r"results\[\d+\]\.(log_dir|total_bytes|usable_bytes)",
        "the log directory's path and the disk's size are the machine's; mockkafka reports "
        "a fixed path and 1 TiB",
    ),
    Allowed(
        "produce-v0-v2-served",
        "Produce",
        r"<answer>",
        "Kafka 4 still advertises Produce v0-v2 (for old librdkafka) but closes the "
        "connection on them; mockkafka serves them, so release presets and old clients work",
    ),
    Allowed(
        "add-partitions-to-txn-empty-batch",
        "AddPartitionsToTxn",
        r"<answer>",
        "v4+ (the broker-to-broker verification batch) with no transactions: Kafka never "
        "answers it; mockkafka answers an empty result",
    ),
    Allowed(
        "metadata-auto-create-at-once",
        "Metadata",
        r"topics\[\d+\]\.(error_code|partitions.*)",
        "auto-creation by Metadata: Kafka 4.4 answers UNKNOWN_TOPIC_OR_PARTITION and creates "
        "the topic in the background (clients ask again); mockkafka creates it at once and "
        "answers with its partitions",
        session="every-version:data",
    ),
)


def allowed_by(d: Difference) -> str | None:
    for entry in ALLOWED:
        if entry.matches(d):
            return entry.key
    return None


def docs_rows() -> str:
    """The rows of the docs table (``python -m tests.oracle.allowed`` prints them)."""
    return "\n".join(f"| `{e.key}` | {e.api} | {e.reason} |" for e in ALLOWED)


if __name__ == "__main__":
    print(docs_rows())

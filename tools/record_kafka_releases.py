"""Record what real Apache Kafka 4.x brokers advertise and report, into generated modules.

For each release asked for, this starts the broker from Maven Central
(``mockkafka.kafka_broker``, Kafka's own defaults: only what a single KRaft node needs is
set) and records:

* ApiVersions v4: every API key's (min, max) and the supported and finalized features, into
  ``mockkafka/protocol/_releases_recorded.py`` (read by ``protocol/releases.py``: a recorded
  release replaces the kafka-python table's row, and 4.4 is only here);
* DescribeConfigs with synonyms of the broker and of a fresh topic: each config's type,
  Kafka's default (the DEFAULT_CONFIG synonym), whether it is read-only and, for a topic
  config, the broker config that supplies its default, into
  ``mockkafka/cluster/_recorded_configs.py`` (``tests/configs/test_recorded_configs.py``
  checks mockkafka's Kafka 4 config model against it).

Only facts are kept (no documentation). Usage::

    python tools/record_kafka_releases.py [4.4.0 4.3.0 ...] [--check]

Needs Java 17+ and Maven. ``--check`` exits 1 when the committed modules differ from what
the brokers report (for the releases asked for; the others are kept as they are).
"""

from __future__ import annotations

import argparse
import pprint
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mockkafka.kafka_broker import KafkaBroker  # noqa: E402

API_OUT = ROOT / "mockkafka" / "protocol" / "_releases_recorded.py"
CONFIG_OUT = ROOT / "mockkafka" / "cluster" / "_recorded_configs.py"
DEFAULT_RELEASES = ("4.4.0",)
#: What a single KRaft node needs beyond Kafka's defaults (reported as STATIC_BROKER_CONFIG;
#: the recorded default is the DEFAULT_CONFIG synonym, so these do not leak into it).
MINIMAL_CONFIG = {
    "offsets.topic.replication.factor": "1",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "share.coordinator.state.topic.replication.factor": "1",
    "share.coordinator.state.topic.min.isr": "1",
}
DEFAULT_SOURCE = 5


def _release(version: str) -> str:
    """``4.4.0`` -> ``4.4`` (the presets' names)."""
    return ".".join(version.split(".")[:2])


def _default(entry: dict[str, Any]) -> str | None:
    for s in entry.get("synonyms") or []:
        if s["source"] == DEFAULT_SOURCE:
            value: str | None = s["value"]
            return value
    return entry["value"] if entry["config_source"] == DEFAULT_SOURCE else None


def _describe(broker: KafkaBroker, rtype: int, name: str) -> list[dict[str, Any]]:
    got = broker.request(
        "DescribeConfigs",
        4,
        {
            "resources": [
                {"resource_type": rtype, "resource_name": name, "configuration_keys": None}
            ],
            "include_synonyms": True,
            "include_documentation": False,
        },
    )
    configs: list[dict[str, Any]] = got["results"][0]["configs"]
    return configs


def record(version: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(api versions and features, configs) of one release."""
    config = {k: v for k, v in MINIMAL_CONFIG.items()}
    with KafkaBroker(version, config=config) as broker:
        # KafkaBroker lays its mockkafka-like settings under ``config``; record Kafka's own
        # defaults from the DEFAULT_CONFIG synonyms, which those settings do not change.
        av = broker.request(
            "ApiVersions", 4, {"client_software_name": "record", "client_software_version": "1"}
        )
        apis = {a["api_key"]: (a["min_version"], a["max_version"]) for a in av["api_keys"]}
        supported = {
            f["name"]: (f["min_version"], f["max_version"]) for f in av["supported_features"]
        }
        finalized = {f["name"]: f["max_version_level"] for f in av["finalized_features"]}
        broker_cfg = {
            c["name"]: (c["config_type"], _default(c), c["read_only"])
            for c in _describe(broker, 4, str(broker.node_id))
        }
        topic = "recorded-topic"
        broker.request(
            "CreateTopics",
            7,
            {
                "topics": [{"name": topic, "num_partitions": 1, "replication_factor": 1}],
                "timeout_ms": 30000,
            },
        )
        topic_cfg = {}
        for c in _describe(broker, 2, topic):
            # The first broker-level synonym (sources 2-5) is the config supplying the default.
            supplier = next(
                (s["name"] for s in c.get("synonyms") or [] if 2 <= s["source"] <= 5), None
            )
            topic_cfg[c["name"]] = (c["config_type"], _default(c), supplier)
    return (
        {"apis": apis, "supported_features": supported, "finalized_features": finalized},
        {"broker": broker_cfg, "topic": topic_cfg},
    )


def _load(path: Path, name: str) -> dict[str, Any]:
    if not path.is_file():
        return {}
    ns: dict[str, Any] = {}
    exec(path.read_text(), ns)  # our own generated module
    table: dict[str, Any] = ns[name]
    return table


def render(variable: str, doc: str, table: dict[str, Any]) -> str:
    """A generated module holding ``table`` as ``variable``, under docstring ``doc``."""
    body = pprint.pformat(dict(sorted(table.items())), width=100, sort_dicts=True)
    return (
        f'"""{doc}"""\n\n'
        "from typing import Any\n\n"
        "# fmt: off\n"
        f"{variable}: dict[str, dict[str, Any]] = {body}\n"
        "# fmt: on\n"
    )


API_DOC = """API versions and features real Apache Kafka brokers advertise (ApiVersions v4).

Generated by ``tools/record_kafka_releases.py`` from the brokers themselves (Maven
Central); do not edit. Release -> {"apis": {key: (min, max)}, "supported_features":
{name: (min, max)}, "finalized_features": {name: level}}."""

CONFIG_DOC = """Broker and topic configs real Apache Kafka 4.x brokers report (DescribeConfigs).

Generated by ``tools/record_kafka_releases.py``; do not edit. Release ->
{"broker": {name: (config_type, Kafka default, read_only)}, "topic": {name:
(config_type, Kafka default, broker config supplying the default)}}. The default is
the DEFAULT_CONFIG synonym (None: Kafka has none, e.g. node.id)."""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("releases", nargs="*", default=list(DEFAULT_RELEASES))
    ap.add_argument("--check", action="store_true")
    ap.add_argument(
        "--render-only", action="store_true", help="rewrite the modules from their own data"
    )
    args = ap.parse_args()
    apis = _load(API_OUT, "RECORDED")
    configs = _load(CONFIG_OUT, "RECORDED_CONFIGS")
    for version in [] if args.render_only else args.releases:
        a, c = record(version)
        apis[_release(version)] = a
        configs[_release(version)] = c
        print(
            f"kafka {version}: {len(a['apis'])} APIs, {len(c['broker'])} broker and "
            f"{len(c['topic'])} topic configs"
        )
    texts = {
        API_OUT: render("RECORDED", API_DOC, apis),
        CONFIG_OUT: render("RECORDED_CONFIGS", CONFIG_DOC, configs),
    }
    if args.check:
        stale = [p.name for p, t in texts.items() if not p.is_file() or p.read_text() != t]
        if stale:
            print(f"stale: {', '.join(stale)}: run tools/record_kafka_releases.py")
            return 1
        return 0
    for path, text in texts.items():
        path.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

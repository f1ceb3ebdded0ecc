"""The ``mockkafka`` command: run a fake cluster as a process for test suites in any language.

::

    mockkafka serve --brokers 3 --topic orders:6:3 --topic audit
    # prints: bootstrap.servers=127.0.0.1:41234,127.0.0.1:41235,127.0.0.1:41236

``serve`` prints the ``bootstrap.servers=...`` line on stdout once every broker listens (so a
test harness can read one line and go), then serves until SIGINT or SIGTERM and exits 0.
``apis`` lists the API keys and versions the broker advertises.
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TextIO

import trio

from mockkafka._api.cluster import open_cluster
from mockkafka.errors import ConfigError, KafkaApiError


@dataclass(frozen=True, slots=True)
class TopicSpec:
    name: str
    partitions: int = 1
    replication_factor: int = 1


def parse_topic(text: str) -> TopicSpec:
    """``NAME[:PARTITIONS[:REPLICATION_FACTOR]]`` -> TopicSpec (argparse type)."""
    parts = text.split(":")
    if not parts[0] or len(parts) > 3:
        raise argparse.ArgumentTypeError(
            f"invalid topic {text!r}: expected NAME[:PARTITIONS[:REPLICATION_FACTOR]]"
        )
    try:
        nums = [int(p) for p in parts[1:]]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"invalid topic {text!r}: PARTITIONS and REPLICATION_FACTOR must be integers"
        ) from None
    if any(n < 1 for n in nums):
        raise argparse.ArgumentTypeError(f"invalid topic {text!r}: counts must be >= 1")
    return TopicSpec(parts[0], *nums)


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid port {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port {port} out of range 0-65535")
    return port


def parse_config(text: str) -> tuple[str, str]:
    """``KEY=VALUE`` -> (key, value) (argparse type of ``--config``)."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"invalid config {text!r}: expected KEY=VALUE")
    return key.strip(), value


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="mockkafka",
        description="A fake Apache Kafka cluster speaking the real wire protocol, for tests.",
    )
    sub = ap.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve", help="run a cluster until SIGINT/SIGTERM")
    s.add_argument("--brokers", type=int, default=1, help="number of brokers (default 1)")
    s.add_argument(
        "--port",
        type=_port,
        default=0,
        help="port of broker 1; broker n listens on PORT+n-1 (default: free ports)",
    )
    s.add_argument(
        "--topic",
        type=parse_topic,
        action="append",
        default=[],
        metavar="NAME[:PARTITIONS[:RF]]",
        help="create a topic at start (repeatable)",
    )
    s.add_argument(
        "--auto-create-topics",
        action="store_true",
        help="create unknown topics on Metadata requests (auto.create.topics.enable=true)",
    )
    s.add_argument(
        "--group-initial-rebalance-delay-ms",
        type=int,
        default=0,
        help="group.initial.rebalance.delay.ms (default 0; real Kafka uses 3000)",
    )
    s.add_argument(
        "--config",
        type=parse_config,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="set a Kafka broker config by name, e.g. num.partitions=3 (repeatable)",
    )
    s.add_argument(
        "--first-node-id",
        type=int,
        default=1,
        help="node id of the first broker (default 1; 0 for suites written for broker 0)",
    )
    s.add_argument(
        "--kafka-version",
        metavar="RELEASE",
        help="advertise exactly the API versions of this Kafka release (0.8.0 ... 4.x; "
        "default: every version mockkafka serves)",
    )
    s.add_argument(
        "--traffic-jsonl", metavar="FILE", help="write every request/response to FILE at exit"
    )
    a = sub.add_parser("apis", help="list the API keys and versions the broker serves")
    a.add_argument("--kafka-version", metavar="RELEASE", help="as that Kafka release would")
    return ap


def serve_configs(args: argparse.Namespace) -> dict[str, str]:
    """The broker configs ``serve`` starts with: the shorthand flags, then ``--config``."""
    config: dict[str, str] = {
        "group.initial.rebalance.delay.ms": str(args.group_initial_rebalance_delay_ms)
    }
    if args.auto_create_topics:
        config["auto.create.topics.enable"] = "true"
    config.update(args.config)
    return config


async def serve(args: argparse.Namespace, *, out: TextIO | None = None) -> int:
    stream = out if out is not None else sys.stdout
    async with open_cluster(
        args.brokers,
        port=args.port,
        first_node_id=args.first_node_id,
        kafka_version=args.kafka_version,
        record_traffic=bool(args.traffic_jsonl),
        config=serve_configs(args),
    ) as cluster:
        for t in args.topic:
            cluster.create_topic(
                t.name, partitions=t.partitions, replication_factor=t.replication_factor
            )
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            print(f"bootstrap.servers={cluster.bootstrap_servers}", file=stream, flush=True)
            async for _sig in signals:
                break
        if args.traffic_jsonl:
            with open(args.traffic_jsonl, "w") as fp:
                cluster.traffic.to_jsonl(fp)
    return 0


def list_apis(kafka_version: str | None = None) -> int:
    from mockkafka.cluster.state import ClusterConfig, ClusterState
    from mockkafka.handlers.base import served_versions
    from mockkafka.protocol.apis import API_BY_KEY

    state = ClusterState(ClusterConfig(kafka_version=kafka_version))
    for key, (lo, hi) in served_versions(state).items():
        print(f"{key:>3} {API_BY_KEY[key].name:<32} v{lo}-v{hi}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "apis":
        try:
            return list_apis(args.kafka_version)
        except ConfigError as exc:
            print(f"mockkafka apis: {exc}", file=sys.stderr)
            return 2
    if args.brokers < 1:
        print("mockkafka serve: --brokers must be at least 1", file=sys.stderr)
        return 2
    for t in args.topic:
        if t.replication_factor > args.brokers:
            print(
                f"mockkafka serve: topic {t.name!r} asks for replication factor "
                f"{t.replication_factor} but there are only {args.brokers} brokers",
                file=sys.stderr,
            )
            return 2
    try:
        return trio.run(serve, args)
    except (ConfigError, KafkaApiError) as exc:
        print(f"mockkafka serve: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"mockkafka serve: cannot listen: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())

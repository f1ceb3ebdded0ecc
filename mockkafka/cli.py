"""The ``mockkafka`` command: run a fake cluster as a process for test suites in any language.

::

    mockkafka serve --brokers 3 --topic orders:6:3 --topic audit
    # prints: bootstrap.servers=127.0.0.1:41234,127.0.0.1:41235,127.0.0.1:41236

``serve`` prints the ``bootstrap.servers=...`` line on stdout once it is ready: every broker
answers, and the first requests a test makes (ApiVersions, Metadata, CreateTopics,
InitProducerId, Produce) have nothing left to import or compile, so a test harness can read
one line and go (issue 33). On the next line ``control=http://127.0.0.1:PORT``,
the HTTP control endpoint (``mockkafka/control.py``; OpenAPI at ``/openapi.json``).
It serves until SIGINT, SIGTERM or ``POST /stop`` and exits 0. ``--scenario NAME|FILE``
plays a scenario (``docs/scenarios.md``). ``--traffic-jsonl FILE`` writes every exchange to FILE as it completes (flushed line by line,
so a crash loses nothing); ``--log`` prints one line per exchange on stderr as it happens.
``apis`` lists the API keys and versions the broker advertises; ``scenarios`` lists the
scenario library; ``scenario check FILE`` validates a file (exit 0, or 1 with the
file:line:column message).

Every mistake in the flags is one line on stderr naming the problem, and exit status 2
(status 1 when the cluster cannot listen, e.g. a port in use); never a traceback.

Cluster options (``--no-auto-create-topics``, ``--group-initial-rebalance-delay-ms``, ...)
are generated from :class:`~mockkafka.ClusterConfig`, one flag per field, so a new option of
the cluster is a new flag here with nothing else to change. ``--config KEY=VALUE`` sets any
Kafka broker config by name (checked, with a did-you-mean); ``--first-node-id 0`` numbers the
brokers from 0 and ``--kafka-version 2.8`` advertises exactly that release's API versions
(``mockkafka apis --kafka-version 2.8`` lists them) and reports its configs.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import gc
import os
import signal
import sys
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any, TextIO

from mockkafka.cluster.config import ClusterConfig

if TYPE_CHECKING:
    from mockkafka._api.cluster import AsyncCluster
    from mockkafka.scenario.model import Scenario
    from mockkafka.server.prebind import Prebound
    from mockkafka.server.traffic import Exchange

PROG = "mockkafka"
# ClusterConfig fields with a flag of their own (or none: set through other flags).
_OWN_FLAGS = {"brokers", "racks", "broker_configs", "users", "super_users"}
# What a generated flag means, where its name alone does not say it.
_FLAG_NOTES = {
    "auto_create_topics": "auto.create.topics.enable",
    "group_initial_rebalance_delay_ms": "Kafka's default: 3000",
    "group_consumer_heartbeat_interval_ms": "KIP-848 groups; Kafka's default: 5000",
    "telemetry": "advertise the KIP-714 client telemetry APIs",
    "security_protocol": "PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL",
    "ssl_client_auth": "ssl.client.auth: none, requested or required",
    "authorizer": "check every request against ACLs (authorizer.class.name)",
    "first_node_id": "node id of the first broker (0 for suites written for broker 0)",
    "kafka_version": "advertise the API versions and report the configs of this Kafka release "
    "(0.8.0 ... 4.x)",
    "traffic_limit": "most memory the traffic log holds (GET /traffic), e.g. 16MiB; the "
    "oldest exchanges go first",
}
_UNSET_DEFAULTS = {"kafka_version": "every version mockkafka serves", "traffic_limit": "64MiB"}


class UsageProblem(Exception):
    """A bad flag: the message is the one line the user sees."""


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


def _parameter(text: str) -> tuple[str, str]:
    """``NAME=VALUE`` of ``--set`` (argparse type); the scenario checks name and type."""
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(
            f"invalid --set {text!r}: expected NAME=VALUE, e.g. topic=payments"
        )
    return name.strip(), value


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid port {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port {port} out of range 0-65535")
    return port


def _user(text: str) -> tuple[str, str]:
    """``NAME:PASSWORD`` -> (name, password) (argparse type of ``--user``)."""
    name, sep, password = text.partition(":")
    if not name or not sep:
        raise argparse.ArgumentTypeError(f"invalid user {text!r}: expected NAME:PASSWORD")
    return name, password


def parse_config(text: str) -> tuple[str, str]:
    """``KEY=VALUE`` -> (key, value) (argparse type of ``--config``)."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"invalid config {text!r}: expected KEY=VALUE")
    return key.strip(), value


def _count(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid count {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {n}")
    return n


def _add_config_flags(parser: argparse.ArgumentParser) -> None:
    """One flag per ClusterConfig field (``--auto-create-topics/--no-auto-create-topics``,
    ``--group-initial-rebalance-delay-ms N``...). A flag not given stays None (the field's
    default applies), so ``--config`` may set the same option by its Kafka name."""
    group = parser.add_argument_group("cluster options (mockkafka.ClusterConfig)")
    hints = typing.get_type_hints(ClusterConfig)
    for f in dataclasses.fields(ClusterConfig):
        if f.name in _OWN_FLAGS:
            continue
        flag = "--" + f.name.replace("_", "-")
        hint = hints[f.name]
        note = f"{_FLAG_NOTES[f.name]}; " if f.name in _FLAG_NOTES else ""
        help_ = f"{note}default: {_UNSET_DEFAULTS.get(f.name, f.default)}"
        if hint is bool:
            group.add_argument(flag, action=argparse.BooleanOptionalAction, help=help_)
        elif hint is int:
            group.add_argument(flag, type=int, metavar="N", help=help_)
        else:
            group.add_argument(flag, metavar="VALUE", help=help_)


def _version() -> str:
    from mockkafka._version import __version__

    return f"{PROG} {__version__}"


class _Parser(argparse.ArgumentParser):
    """argparse, but a bad flag is one line (``mockkafka serve: ...``) and status 2, and no
    flag is taken as an abbreviation of another (``--broker 3`` is not ``--brokers 3``): an
    unknown flag is named by the command it was given to, with the closest flags it has."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: None = None
    ) -> argparse.Namespace:
        parsed, extra = self.parse_known_args(args, namespace)
        if extra:
            parser = self._subcommand_parser(parsed)
            parser.error(f"unrecognized arguments: {' '.join(extra)}{parser._close_flags(extra)}")
        return parsed

    def _subcommand_parser(self, parsed: argparse.Namespace) -> _Parser:
        """The parser of the subcommand ``parsed`` ran (this one if none)."""
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                chosen = action.choices.get(getattr(parsed, action.dest, None) or "")
                if isinstance(chosen, _Parser):
                    return chosen._subcommand_parser(parsed)
        return self

    def _close_flags(self, extra: list[str]) -> str:
        """``"; did you mean --brokers?"`` for the first unknown flag close to one of ours."""
        from mockkafka.cluster.configs import did_you_mean

        # Compared without the dashes, which every flag shares.
        names = [f[2:] for f in self._option_string_actions if f.startswith("--")]
        for token in extra:
            if token.startswith("--"):
                hint = did_you_mean(token.split("=", 1)[0][2:], names)
                if hint:  # the helper's wording, the names given back their dashes
                    return hint.replace("mean ", "mean --").replace(", ", ", --")
        return ""

    def error(self, message: str) -> typing.NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def _add_scenario_flags(parser: argparse.ArgumentParser, scenario_help: str | None) -> None:
    """``--scenario`` (unless ``scenario_help`` is None: ``scenario check`` takes the file as
    an argument), ``--set`` and ``--skip-expect`` (``serve``, ``proxy``, ``scenario check``)."""
    if scenario_help is not None:
        parser.add_argument("--scenario", metavar="NAME|FILE", help=scenario_help)
    parser.add_argument(
        "--set",
        dest="scenario_parameters",
        type=_parameter,
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="bind a parameter of --scenario, e.g. topic=payments (repeatable; "
        "`mockkafka scenarios --show NAME` lists them)",
    )
    parser.add_argument(
        "--skip-expect",
        action="append",
        default=[],
        metavar="CHECK",
        help="leave a check of the scenario's expect: out, e.g. committed (repeatable)",
    )


def build_parser() -> argparse.ArgumentParser:
    ap = _Parser(
        prog=PROG,
        description="A fake Apache Kafka cluster speaking the real wire protocol, for tests.",
    )
    ap.add_argument("--version", action="version", version=_version())
    sub = ap.add_subparsers(dest="command", required=True, parser_class=_Parser)
    s = sub.add_parser("serve", help="run a cluster until SIGINT/SIGTERM (or POST /stop)")
    s.add_argument(
        "--brokers",
        type=_count,
        default=None,
        help="number of brokers (default: the scenario's, else 1)",
    )
    _add_scenario_flags(
        s, "play a scenario (a library name, see `mockkafka scenarios`, or a .yaml file)"
    )
    s.add_argument(
        "--control-port",
        type=_port,
        default=0,
        help="port of the HTTP control endpoint (default: a free port)",
    )
    s.add_argument(
        "--control-host",
        default="127.0.0.1",
        metavar="ADDRESS",
        help="address of the HTTP control endpoint (default: 127.0.0.1); an address that is "
        "not loopback gets a bearer token, printed on the control= line",
    )
    s.add_argument(
        "--control-token",
        metavar="TOKEN",
        help="every control request must carry 'Authorization: Bearer TOKEN'",
    )
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
        "--traffic-jsonl",
        metavar="FILE",
        help="write every request/response to FILE as JSON lines, as they happen",
    )
    s.add_argument(
        "--user",
        type=_user,
        action="append",
        default=[],
        metavar="NAME:PASSWORD",
        help="a SASL user (PLAIN and SCRAM) for --security-protocol SASL_* (repeatable)",
    )
    s.add_argument(
        "--super-user",
        action="append",
        default=[],
        metavar="PRINCIPAL",
        help="a principal allowed everything with --authorizer (super.users), e.g. "
        "User:admin (repeatable)",
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
        "--log", action="store_true", help="print one line per request/response on stderr"
    )
    s.add_argument(
        "--no-traffic",
        action="store_true",
        help="keep no traffic log (GET /traffic answers 409; --traffic-jsonl and --log still "
        "write every exchange)",
    )
    _add_config_flags(s)
    px = sub.add_parser(
        "proxy",
        help="relay to a real Kafka cluster with fault rules and a traffic log, printing "
        "bootstrap.servers= when ready",
    )
    px.add_argument("--upstream", required=True, metavar="HOST:PORT[,...]")
    px.add_argument("--host", default="127.0.0.1", help="where the listeners bind")
    px.add_argument(
        "--security-protocol",
        choices=("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"),
        help="what clients use towards the proxy (default: SASL_PLAINTEXT when the upstream "
        "wants SASL, else PLAINTEXT); SSL and SASL_SSL give the listeners a throwaway CA, "
        "printed as ssl.ca.location=",
    )
    px.add_argument(
        "--upstream-security-protocol",
        default="PLAINTEXT",
        choices=("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"),
        help="how the proxy reaches the upstream listener",
    )
    px.add_argument(
        "--upstream-ssl-cafile", metavar="PEM", help="CA the upstream's TLS is checked with"
    )
    px.add_argument(
        "--upstream-sasl-mechanism",
        choices=("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"),
        help="the proxy's own login for its Metadata requests (clients log in themselves)",
    )
    px.add_argument("--upstream-sasl-username", metavar="USER")
    px.add_argument(
        "--upstream-sasl-password-env",
        metavar="VAR",
        default="MOCKKAFKA_UPSTREAM_SASL_PASSWORD",
        help="environment variable holding the password (default %(default)s)",
    )
    px.add_argument("--control-port", type=int, default=0, help="port of the control endpoint")
    px.add_argument("--control-host", default="127.0.0.1", help="address of the control endpoint")
    px.add_argument("--control-token", help="every control request must carry this bearer token")
    _add_scenario_flags(px, "play this scenario against the upstream")
    a = sub.add_parser("apis", help="list the API keys and versions the broker serves")
    a.add_argument("--kafka-version", metavar="RELEASE", help="as that Kafka release would")
    ls = sub.add_parser("scenarios", help="list the library scenarios with one-line descriptions")
    ls.add_argument(
        "--show", metavar="NAME", help="print one scenario: its parameters and its YAML"
    )
    sc = sub.add_parser("scenario", help="work with a scenario file")
    scs = sc.add_subparsers(dest="scenario_command", required=True, parser_class=_Parser)
    check = scs.add_parser("check", help="validate a scenario file (exit 0) or explain (exit 1)")
    check.add_argument("file", metavar="NAME|FILE")
    _add_scenario_flags(check, None)
    return ap


def _config_flags(args: argparse.Namespace) -> dict[str, Any]:
    """The ClusterConfig options given on the command line: generated flags that were given,
    ``--user NAME:PASSWORD`` SASL users (as ``users``), ``--super-user PRINCIPAL`` (as
    ``super_users``) and ``--config KEY=VALUE`` broker configs (as ``config``)."""
    options: dict[str, Any] = {
        f.name: getattr(args, f.name)
        for f in dataclasses.fields(ClusterConfig)
        if f.name not in _OWN_FLAGS and getattr(args, f.name) is not None
    }
    if getattr(args, "user", None):
        options["users"] = tuple(args.user)
    if getattr(args, "super_user", None):
        options["super_users"] = tuple(args.super_user)
    if getattr(args, "config", None):
        options["config"] = dict(args.config)
    return options


def cluster_options(args: argparse.Namespace, scenario: Scenario | None = None) -> dict[str, Any]:
    """Keyword arguments of ``open_cluster`` for the parsed flags (and the scenario's cluster
    options, which take precedence over the flags' defaults). Traffic is recorded unless
    ``--no-traffic``: the control endpoint and scenario triggers read it."""
    return {
        "brokers": args.brokers,
        "port": args.port,
        "record_traffic": not getattr(args, "no_traffic", False),
        **_config_flags(args),
        **(dict(scenario.cluster.options) if scenario is not None else {}),
    }


def check_args(args: argparse.Namespace) -> None:
    """Refuse what cannot work before anything starts (raises UsageProblem)."""
    if args.port and args.port + args.brokers - 1 > 65535:
        raise UsageProblem(
            f"--port {args.port} with --brokers {args.brokers}: broker {args.brokers} would "
            f"listen on {args.port + args.brokers - 1}, above 65535"
        )
    if getattr(args, "no_traffic", False) and args.scenario is not None:
        raise UsageProblem(
            "--no-traffic with --scenario: a scenario's request triggers and expectations "
            "read the traffic log; bound it with --traffic-limit instead"
        )
    token = getattr(args, "control_token", None)
    if token is not None and (not token or any(c.isspace() for c in token)):
        raise UsageProblem("--control-token must be a non-empty string without spaces")
    seen: set[str] = set()
    for t in args.topic:
        if t.name in seen:
            raise UsageProblem(f"--topic {t.name!r} is given twice")
        seen.add(t.name)
        if t.replication_factor > args.brokers:
            raise UsageProblem(
                f"topic {t.name!r} asks for replication factor {t.replication_factor} but "
                f"there are only {args.brokers} brokers (add --brokers {t.replication_factor})"
            )
    from mockkafka._api.options import make_config
    from mockkafka.errors import ConfigError

    try:
        make_config(args.brokers, _config_flags(args))
    except ConfigError as exc:
        raise UsageProblem(str(exc)) from None


class TrafficWriter:
    """Writes each exchange once, when it completes: a JSON line to ``jsonl`` (flushed, so
    a crash loses nothing) and a summary line to ``log``."""

    def __init__(self, jsonl: IO[str] | None, log: TextIO | None) -> None:
        self.jsonl = jsonl
        self.log = log
        self.origin_ms: int | None = None
        self.written = 0

    def __call__(self, ex: Exchange) -> None:
        import json

        if self.origin_ms is None:
            self.origin_ms = ex.time_ms
        if self.jsonl is not None:
            try:
                self.jsonl.write(json.dumps(ex.to_json(), default=str) + "\n")
                self.jsonl.flush()
            except OSError as exc:  # disk full, file gone: say so once, keep serving
                print(
                    f"{PROG} serve: writing --traffic-jsonl failed ({exc.strerror or exc}); "
                    "traffic is no longer written",
                    file=sys.stderr,
                    flush=True,
                )
                self.jsonl = None
        if self.log is not None:
            try:
                print(ex.summary(self.origin_ms), file=self.log, flush=True)
            except (BrokenPipeError, ValueError):
                self.log = None  # nobody reads the log any more: keep serving
        self.written += 1


async def serve(
    args: argparse.Namespace,
    *,
    out: TextIO | None = None,
    jsonl: IO[str] | None = None,
    log: TextIO | None = None,
    scenario: Scenario | None = None,
    prebound: Prebound | None = None,
) -> int:
    """Run the cluster and its control endpoint until SIGINT/SIGTERM or ``POST /stop`` (flags
    already checked); play ``scenario`` if given and say on stderr how it ended. With
    ``prebound`` (see :func:`prebind`) the listeners are those sockets. The lines are
    printed once the cluster answers and the first requests a test makes are prepared
    (``handlers.base.prepare``): a client that connects right after them is answered at
    once."""
    import trio

    from mockkafka._api.cluster import open_cluster
    from mockkafka.control import ControlServer
    from mockkafka.handlers.base import prepare

    stream = out if out is not None else sys.stdout
    writer = TrafficWriter(jsonl, log) if (jsonl is not None or log is not None) else None
    options = cluster_options(args, scenario)
    if prebound is not None:
        options["sockets"], prebound.brokers = prebound.brokers, {}

    def before_serving(cluster: AsyncCluster) -> None:
        if writer is not None:
            cluster.traffic.on_completed.append(writer)
        _create_topics(cluster, args.topic)
        # The line printed below means ready: the first requests a test makes are answered
        # without importing or compiling anything first (issue 33).
        prepare(cluster.state)
        # Everything loaded so far (modules, codecs, the cluster) lives as long as the
        # process: out of the collector's way, a full collection scans only what requests
        # made since (it was 50-100 ms a pass under a pipeline, every few seconds). main()
        # paused the collector for the start (its passes found nothing to free: ~10% of it).
        gc.freeze()
        gc.enable()

    async with open_cluster(**options, before_serving=before_serving) as cluster:
        async with trio.open_nursery() as nursery:
            control = ControlServer(
                cluster, nursery, host=args.control_host, token=args.control_token
            )
            control_port = await nursery.start(
                control.serve, args.control_port if prebound is None else prebound.control
            )
            if scenario is not None:
                await control.start_scenario(scenario)
            with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                _print_ready(
                    cluster.bootstrap_servers,
                    control_port,
                    stream,
                    cluster,
                    host=args.control_host,
                    token=control.token if control.generated_token else None,
                )

                async def on_signal() -> None:
                    async for _sig in signals:
                        control.stopped.set()
                        return

                # A signal that came while the broker was loading (prebind()) stops it now.
                if prebound is None or not prebound.early_stop.received:
                    nursery.start_soon(on_signal)
                    await control.stopped.wait()
                nursery.cancel_scope.cancel()
        run = control.scenario_run
        if run is not None:  # say how the scenario ended, for the suite's log
            failures = run.failures()
            with contextlib.suppress(BrokenPipeError):
                print(
                    run.report(failures) if failures else f"scenario {run.scenario.name!r}: ok",
                    file=sys.stderr,
                    flush=True,
                )
    return 0


def _print_ready(
    bootstrap: str,
    control_port: int,
    stream: TextIO,
    cluster: AsyncCluster | None = None,
    *,
    host: str = "127.0.0.1",
    token: str | None = None,
) -> None:
    """The lines a harness reads: bootstrap servers, control endpoint (with the ``token``
    it made, for a listener that is not loopback) and, for a secured ``cluster``, the Java
    client's settings (CA and certificate files, SASL)."""
    url = f"http://{f'[{host}]' if ':' in host else host}:{control_port}"
    if token is not None:
        url += f" token={token}"
    # A harness that read the lines and went away leaves a broken pipe: keep serving.
    with contextlib.suppress(BrokenPipeError):
        print(f"bootstrap.servers={bootstrap}", file=stream, flush=True)
        print(f"control={url}", file=stream, flush=True)
        if cluster is not None and cluster.state.config.security_protocol != "PLAINTEXT":
            for k, v in cluster.client_config("java").items():
                if k != "bootstrap.servers":
                    print(f"{k}={v}", file=stream, flush=True)


def prebind(args: argparse.Namespace, scenario: Scenario | None) -> Prebound | None:
    """Bind the listeners before the broker is imported (``server/prebind.py``): a port in
    use is reported at once, and a client given fixed ports is accepted while the broker
    loads. Only where the broker takes such sockets as they are: no scenario, PLAINTEXT, the
    control endpoint on loopback and ``--topic`` names and sizes that CreateTopics takes.
    Else None: serve() binds. Raises OSError (a port in use) as the broker would. The
    lines are printed by serve(), once the broker answers (issue 33)."""
    from mockkafka._api.options import check_endpoint, make_config
    from mockkafka.cluster.limits import LIMIT_DEFAULTS
    from mockkafka.cluster.topic_names import topic_name_problem
    from mockkafka.server.prebind import EarlyStop, Prebound, bind_listeners, listen_socket

    config = make_config(args.brokers, _config_flags(args))
    max_partitions = int(LIMIT_DEFAULTS["mockkafka.max.records.per.user.op"])
    if (
        scenario is not None
        or config.security_protocol != "PLAINTEXT"
        or args.control_host != "127.0.0.1"  # the endpoint may make a token to print
        or any(k == "mockkafka.max.records.per.user.op" for k, _ in args.config or ())
        or any(
            topic_name_problem(t.name) is not None or t.partitions > max_partitions
            for t in args.topic
        )
    ):
        return None
    host = "127.0.0.1"
    fixed = check_endpoint(config, args.port, host, True, False)
    first = config.first_node_id
    ports = fixed or {first + n: 0 for n in range(config.brokers)}
    brokers = bind_listeners(host, ports)
    try:
        control = listen_socket(host, args.control_port)
    except OSError as exc:
        for sock in brokers.values():
            sock.close()
        raise OSError(
            exc.errno,
            f"the control endpoint cannot listen on {host}:{args.control_port}: {exc.strerror}",
        ) from None
    bound = Prebound(brokers, control, EarlyStop())
    bound.early_stop.install()  # from here on a signal means "stop once running", exit 0
    return bound


def _create_topics(cluster: AsyncCluster, topics: Sequence[TopicSpec]) -> None:
    for t in topics:
        cluster.create_topic(
            t.name, partitions=t.partitions, replication_factor=t.replication_factor
        )


def list_apis(out: TextIO, kafka_version: str | None = None) -> int:
    from mockkafka.cluster.state import ClusterState
    from mockkafka.handlers.base import served_versions
    from mockkafka.protocol.apis import API_BY_KEY

    state = ClusterState(ClusterConfig(kafka_version=kafka_version))
    for key, (lo, hi) in served_versions(state).items():
        print(f"{key:>3} {API_BY_KEY[key].name:<32} v{lo}-v{hi}", file=out)
    out.flush()
    return 0


def _quiet_broken_pipe(fn: Callable[[], int]) -> int:
    """Run ``fn``; if stdout's reader went away (``mockkafka apis | head``), exit quietly."""
    try:
        return fn()
    except BrokenPipeError:
        # Python would report the pipe again when it flushes stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


def _problem(command: str, message: str, status: int = 2) -> int:
    print(f"{PROG} {command}: {message}", file=sys.stderr)
    return status


def list_scenarios() -> int:
    from mockkafka.scenario.loader import library
    from mockkafka.scenario.model import Scenario, ScenarioError

    lib = library()
    width = max((len(n) for n in lib), default=0)
    for name, path in sorted(lib.items()):
        try:
            description = Scenario.load(path).description
        except ScenarioError as exc:
            description = f"(invalid: {exc})"
        print(f"{name:<{width}}  {description}")
    return 0


def show_scenario(name: str) -> int:
    """``mockkafka scenarios --show NAME``: the parameters, then the file as written."""
    from mockkafka.scenario.loader import find
    from mockkafka.scenario.model import Scenario, ScenarioError
    from mockkafka.scenario.params import describe

    try:
        path = find(name)
        sc = Scenario.load(path)
    except ScenarioError as exc:
        return _problem("scenarios --show", str(exc))
    print(f"# {sc.name}: {sc.description}")
    print(f"# file: {path}")
    if sc.parameters:
        print("# parameters (bind with --set NAME=VALUE, or NAME=... in Python):")
        for line in describe(sc.parameters).splitlines():
            print(f"#   {line}")
    print(path.read_text(), end="")
    return 0


def check_scenario(args: argparse.Namespace) -> int:
    """``mockkafka scenario check NAME|FILE [--set NAME=VALUE] [--skip-expect CHECK]``: the
    file with those parameters bound, as ``serve --scenario`` would load it."""
    from mockkafka.scenario.model import Scenario, ScenarioError

    try:
        sc = Scenario.load(
            args.file, skip_expect=args.skip_expect, **dict(args.scenario_parameters)
        )
    except ScenarioError as exc:
        return _problem("scenario check", str(exc), status=1)
    print(f"{sc.source}: ok ({sc.name}: {len(sc.steps)} steps, {len(sc.expect)} checks)")
    return 0


def load_scenario(args: argparse.Namespace) -> Scenario | None:
    """The ``--scenario`` of ``serve`` (raises UsageProblem), and ``--brokers`` defaulted from
    it (1 without a scenario)."""
    scenario = scenario_of(args)
    if scenario is not None:
        if args.brokers is None:
            args.brokers = scenario.cluster.brokers
        elif args.brokers < scenario.cluster.brokers:
            raise UsageProblem(
                f"scenario {scenario.name!r} needs {scenario.cluster.brokers} brokers; "
                f"--brokers is {args.brokers}"
            )
    if args.brokers is None:
        args.brokers = 1
    return scenario


def scenario_of(args: argparse.Namespace) -> Scenario | None:
    """The ``--scenario`` of ``serve`` or ``proxy`` with its ``--set`` parameters bound and
    its ``--skip-expect`` checks left out (raises UsageProblem)."""
    if args.scenario is None:
        if args.scenario_parameters or args.skip_expect:
            raise UsageProblem("--set and --skip-expect bind a --scenario; there is none")
        return None
    from mockkafka.scenario.model import Scenario, ScenarioError

    try:
        return Scenario.load(
            args.scenario, skip_expect=args.skip_expect, **dict(args.scenario_parameters)
        )
    except ScenarioError as exc:
        raise UsageProblem(str(exc)) from None


def run_proxy(args: argparse.Namespace) -> int:
    """``mockkafka proxy``: exit 2 with a one-line message when the upstream is unusable or
    the scenario is one a proxy cannot run."""
    import functools

    import trio

    from mockkafka.errors import MockKafkaError, leaf_exception

    try:
        scenario = scenario_of(args)
    except UsageProblem as exc:
        return _problem("proxy", str(exc))
    try:
        run = functools.partial(
            serve_proxy,
            args.upstream,
            args.host,
            control_host=args.control_host,
            control_port=args.control_port,
            control_token=args.control_token,
            scenario=scenario,
            security_protocol=args.security_protocol,
            upstream_security_protocol=args.upstream_security_protocol,
            upstream_ssl_cafile=args.upstream_ssl_cafile,
            upstream_sasl_mechanism=args.upstream_sasl_mechanism,
            upstream_sasl_username=args.upstream_sasl_username,
            upstream_sasl_password=os.environ.get(args.upstream_sasl_password_env),
        )
        return trio.run(run)
    except BaseException as group:
        leaf = leaf_exception(group)
        if isinstance(leaf, MockKafkaError):
            return _problem("proxy", str(leaf))
        raise


async def serve_proxy(
    upstream: str,
    host: str = "127.0.0.1",
    *,
    control_host: str = "127.0.0.1",
    control_port: int = 0,
    control_token: str | None = None,
    scenario: Scenario | None = None,
    out: TextIO | None = None,
    **security: Any,
) -> int:
    """``mockkafka proxy``: relay until SIGINT/SIGTERM or ``POST /stop``, printing
    ``bootstrap.servers=`` and ``control=`` as ``mockkafka serve`` does (and
    ``ssl.ca.location=`` for a TLS listener); the control endpoint (``mockkafka/control.py``)
    drives the proxy's faults, steps, waits and scenarios. ``security``: the
    ``security_protocol`` and ``upstream_*`` options of :class:`~mockkafka.Proxy`.
    ``scenario`` is started first; how it ended goes to stderr on exit."""
    import trio

    from mockkafka._api.proxy import open_proxy
    from mockkafka.control import ControlServer

    stream = out if out is not None else sys.stdout
    async with (
        open_proxy(upstream, host=host, **security) as proxy,
        trio.open_nursery() as nursery,
    ):
        control = ControlServer(proxy, nursery, host=control_host, token=control_token)
        port = await nursery.start(control.serve, control_port)
        if scenario is not None:
            await control.start_scenario(scenario)
        _print_ready(
            proxy.bootstrap_servers,
            port,
            stream,
            host=control_host,
            token=control.token if control.generated_token else None,
        )
        tls = proxy._server.tls
        if tls is not None:
            with contextlib.suppress(BrokenPipeError):
                print(f"ssl.ca.location={tls.ca_file}", file=stream, flush=True)
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:

            async def on_signal() -> None:
                async for _sig in signals:
                    control.stopped.set()
                    return

            nursery.start_soon(on_signal)
            await control.stopped.wait()
        nursery.cancel_scope.cancel()
    run = control.scenario_run
    if run is not None:
        failures = await trio.to_thread.run_sync(run.failures)
        with contextlib.suppress(BrokenPipeError):
            print(
                run.report(failures) if failures else f"scenario {run.scenario.name!r}: ok",
                file=sys.stderr,
                flush=True,
            )
    print("mockkafka proxy: stopped", file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "apis":
        from mockkafka.errors import ConfigError

        try:
            return _quiet_broken_pipe(lambda: list_apis(sys.stdout, args.kafka_version))
        except ConfigError as exc:
            return _problem("apis", str(exc))
    if args.command == "scenarios":
        if args.show is not None:
            return _quiet_broken_pipe(lambda: show_scenario(args.show))
        return _quiet_broken_pipe(list_scenarios)
    if args.command == "proxy":
        return run_proxy(args)
    if args.command == "scenario":
        return check_scenario(args)
    collecting = gc.isenabled()
    gc.disable()  # for the start's imports; serve() freezes what they made and resumes it
    try:
        return _serve_main(args)
    finally:
        (gc.enable if collecting else gc.disable)()


def _serve_main(args: argparse.Namespace) -> int:
    try:
        scenario = load_scenario(args)
        check_args(args)
    except UsageProblem as exc:
        return _problem("serve", str(exc))
    jsonl: IO[str] | None = None
    if args.traffic_jsonl:
        try:
            jsonl = open(args.traffic_jsonl, "w", encoding="utf-8")  # noqa: SIM115
        except OSError as exc:
            return _problem(
                "serve", f"cannot write --traffic-jsonl {args.traffic_jsonl}: {exc.strerror}"
            )
    prebound: Prebound | None = None
    try:
        prebound = prebind(args, scenario)
    except OSError as exc:
        if jsonl is not None:
            jsonl.close()
        return _problem("serve", exc.strerror or str(exc), status=1)
    import trio

    from mockkafka.errors import ListenError, MockKafkaError, leaf_exception

    try:
        return trio.run(
            functools.partial(
                serve,
                args,
                jsonl=jsonl,
                log=sys.stderr if args.log else None,
                scenario=scenario,
                prebound=prebound,
            )
        )
    except BaseException as group:
        leaf = leaf_exception(group)
        if isinstance(leaf, ListenError):  # a broker cannot listen: status 1, as any OSError
            return _problem("serve", leaf.strerror or str(leaf), status=1)
        if isinstance(leaf, MockKafkaError):
            return _problem("serve", str(leaf))
        if isinstance(leaf, OSError):
            return _problem("serve", leaf.strerror or str(leaf), status=1)
        if isinstance(leaf, KeyboardInterrupt):  # Ctrl-C before the cluster was up
            return 130
        raise
    finally:
        if prebound is not None:
            prebound.close()
            prebound.early_stop.restore()
        if jsonl is not None:
            jsonl.close()


if __name__ == "__main__":
    raise SystemExit(main())

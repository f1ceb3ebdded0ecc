"""``python -m tests.oracle.report [-v]``: one line per API -- exchanges compared, identical,
allowed differences, unexplained -- from a fresh mockkafka cluster and a fresh Apache Kafka
broker (``mockkafka/kafka_broker.py``), then both again with the authorizer on. ``-v`` also prints each unexplained difference."""

from __future__ import annotations

import sys
import time

import mockkafka
from mockkafka.kafka_broker import KafkaBroker
from tests.oracle.authz_sessions import run_authorizer
from tests.oracle.differential import run_all
from tests.oracle.harness import ApiTally


def format_report(tallies: dict[str, ApiTally], *, verbose: bool = False) -> str:
    lines = [f"{'api':<32} {'compared':>8} {'identical':>9} {'allowed':>7} {'unexplained':>11}"]
    total = ApiTally("total")
    for api in sorted(tallies):
        t = tallies[api]
        lines.append(
            f"{api:<32} {t.compared:>8} {t.identical:>9} {t.allowed:>7} {t.unexplained:>11}"
        )
        total.compared += t.compared
        total.identical += t.identical
        total.allowed += t.allowed
        total.unexplained += t.unexplained
        if verbose:
            for d in t.examples:
                if d.allowed_by is None:
                    lines.append(
                        f"    {d.session}#{d.step} v{d.version} {d.path}: "
                        f"mockkafka={d.fake!r:.120} kafka={d.kafka!r:.120}"
                    )
    lines.append(
        f"{'TOTAL':<32} {total.compared:>8} {total.identical:>9} {total.allowed:>7} "
        f"{total.unexplained:>11}"
    )
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    verbose = "-v" in argv
    t0 = time.monotonic()
    with KafkaBroker() as kafka, mockkafka.Cluster() as fake:
        started = time.monotonic() - t0
        port = int(fake.bootstrap_servers.split(",")[0].rsplit(":", 1)[1])
        tallies, _ = run_all(port, kafka.port)
    with KafkaBroker(authorizer=True) as kafka, mockkafka.Cluster(authorizer=True) as fake:
        for api, t in run_authorizer(fake, kafka).items():
            into = tallies.setdefault(api, ApiTally(api))
            into.compared += t.compared
            into.identical += t.identical
            into.allowed += t.allowed
            into.unexplained += t.unexplained
            into.examples += t.examples
    print(format_report(tallies, verbose=verbose))
    print(f"kafka broker start: {started:.1f} s; whole run: {time.monotonic() - t0:.1f} s")
    return 1 if any(t.unexplained for t in tallies.values()) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

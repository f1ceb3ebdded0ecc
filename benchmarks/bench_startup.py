"""What the pytest plugin costs a session that never uses Kafka, and how fast
``mockkafka serve`` starts.

Run ``python benchmarks/bench_startup.py`` (``--runs N`` sessions per case, default 10;
about 1 minute on a loaded 2-core machine; ``--serve-only`` for the ``serve`` figures;
``--vs CHECKOUT`` times that checkout's ``serve`` beside this one's, alternately).

Figures:

- ``mockkafka serve --brokers 3`` (a child process, this checkout): spawn to the
  ``bootstrap.servers=`` line (what a harness waits for; printed once the broker answers,
  issue 33), and spawn to the answers of the first requests of a test's client sent as soon
  as the line came (``first_answers.py``: ApiVersions, CreateTopics, Metadata, Produce with
  acks=all and one record; issue 33's target for CreateTopics and Produce is <= 150 ms on an
  idle machine), and the child's CPU time until the Produce answer, median of ``--runs``;
  beside them a bare ``python -c pass`` and ``python -c "import trio"``, the floors any
  Python process and any trio server pay. The child writes and reads bytecode caches as an
  installed package does (a ``PYTHONDONTWRITEBYTECODE`` of the caller is not passed on; one
  unmeasured start first);

- import time of the plugin module beyond pytest itself (``python -X importtime``, best of
  ``--runs``): what every pytest session of a user with mockkafka installed pays;
- import time of the cluster (``mockkafka._api.cluster``: broker, codec, schema tables,
  trio), paid once, by the first test that asks for a cluster fixture;
- a whole one-test pytest session (a test that uses no fixture of mockkafka) with this
  checkout's plugin loaded and with it left out (``-p no:mockkafka``), median of ``--runs``
  alternating runs, and the difference: in CPU time (user + system of the session, which
  barely moves with the machine's load) and in wall time.

The plugin is this checkout's (``-p pytest_plugin.plugin`` with the checkout first on
``PYTHONPATH``), whatever copy is installed.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import first_answers  # noqa: E402

PLUGIN = "pytest_plugin.plugin"
PYTEST = (sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:mockkafka")
ENV_PATH = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
}


def import_ms(statement: str, module: str) -> float:
    """Cumulative import time of ``module`` (ms) when ``statement`` runs in a fresh process."""
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", statement],
        capture_output=True,
        text=True,
        env=ENV,
        cwd=ROOT,
        timeout=60,
        check=True,
    ).stderr
    for line in out.splitlines():
        m = re.match(r"import time:\s+\d+ \|\s+(\d+) \|\s+(.*)$", line)
        if m and m.group(2).strip() == module:
            return int(m.group(1)) / 1000
    raise SystemExit(f"{module} not in the -X importtime output of {statement!r}")


def session_s(directory: Path, *args: str) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one pytest session. CPU time (user + system of the
    child) barely moves with the machine's load; wall time does."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(
        [*PYTEST, *args, "test_one.py"],
        cwd=directory,
        env=ENV,
        capture_output=True,
        timeout=120,
        check=True,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


#: The child's environment: as ENV, but writing bytecode caches (as an installed package has
#: them: without, every start compiles mockkafka from source, ~0.5 s more).
SERVE_ENV = {k: v for k, v in ENV.items() if k != "PYTHONDONTWRITEBYTECODE"}


def serve_start_ms(*args: str, root: Path = ROOT) -> dict[str, float]:
    """ms from spawning one ``mockkafka serve`` child (of the checkout ``root``) to its
    ``bootstrap.servers=`` line (``line``) and to the first answers (``first_answers.py``),
    and the child's CPU ms until the last of them (``cpu``)."""
    env = {**SERVE_ENV, "PYTHONPATH": os.pathsep.join([str(root), *ENV_PATH])}
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "mockkafka.cli", "serve", *args],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=root,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        figures = {"line": (time.perf_counter() - started) * 1000}
        if not line.startswith("bootstrap.servers="):
            raise SystemExit(f"mockkafka serve did not start: {line!r}")
        figures.update(first_answers.first_answers(line.split("=", 1)[1].strip(), started))
        figures["cpu"] = cpu_ms(proc.pid)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
    return figures


def cpu_ms(pid: int) -> float:
    """CPU ms of process ``pid``'s main thread so far (Linux: ``/proc/PID/schedstat``, in
    nanoseconds; NaN elsewhere): it moves less with the machine's load than wall time."""
    try:
        with open(f"/proc/{pid}/schedstat") as f:
            return int(f.read().split()[0]) / 1e6
    except OSError:
        return float("nan")


def process_ms(*argv: str) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, *argv], check=True, timeout=60, env=SERVE_ENV)
    return (time.perf_counter() - t0) * 1000


SERVE_ROWS = (
    ("mockkafka serve --brokers 3: spawn to bootstrap.servers=", "line"),
    ("  ... to the first ApiVersions answer", "ApiVersions"),
    ("  ... to the first CreateTopics answer", "CreateTopics"),
    ("  ... to the first Metadata answer", "Metadata"),
    ("  ... to the first Produce answer (acks=all, one record)", "Produce"),
    ("  its CPU until that answer", "cpu"),
)


def print_serve(runs: int, before: Path | None = None) -> None:
    """The serve figures of this checkout; with ``before`` (another checkout) beside them,
    the two started alternately, so that the machine's load hits both alike."""
    first_answers.prepare()
    roots = [ROOT] if before is None else [before, ROOT]
    for root in roots:
        serve_start_ms("--brokers", "3", root=root)  # writes the bytecode caches
    bare, trio_ = [], []
    figures: dict[Path, list[dict[str, float]]] = {root: [] for root in roots}
    for _ in range(runs):  # interleaved, so machine load hits every case alike
        bare.append(process_ms("-c", "pass"))
        trio_.append(process_ms("-c", "import trio"))
        for root in roots:
            figures[root].append(serve_start_ms("--brokers", "3", root=root))
    print(f"{f'ms, median of {runs} (min)':<62}" + "".join(f" {r.name[:16]:>16}" for r in roots))
    floors = (
        ("python -c pass (the floor of any Python process)", bare),
        ('python -c "import trio" (the floor of a trio server)', trio_),
    )
    for name, values in floors:
        print(f"{name:<62} {fmt(values):>16}")
    for name, key in SERVE_ROWS:
        cells = "".join(f" {fmt([f[key] for f in figures[r] if key in f]):>16}" for r in roots)
        print(f"{name:<62}{cells}")


def fmt(values: list[float]) -> str:
    return f"{statistics.median(values):.1f} ({min(values):.1f})" if values else "-"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10, help="sessions per case (default 10)")
    ap.add_argument("--serve-only", action="store_true", help="only the serve figures")
    ap.add_argument(
        "--vs",
        type=Path,
        metavar="CHECKOUT",
        help="time serve of CHECKOUT (e.g. the code before a change) beside this one's",
    )
    parsed = ap.parse_args()
    runs = max(1, min(parsed.runs, 100))
    print_serve(runs, parsed.vs.resolve() if parsed.vs else None)
    if parsed.serve_only:
        return

    plugin = min(import_ms(f"import pytest; import {PLUGIN}", PLUGIN) for _ in range(runs))
    cluster = min(
        import_ms(
            f"import pytest, {PLUGIN}; import mockkafka._api.cluster", "mockkafka._api.cluster"
        )
        for _ in range(runs)
    )
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        (directory / "test_one.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")
        with_plugin: list[tuple[float, float]] = []
        without: list[tuple[float, float]] = []
        for _ in range(runs):  # alternate, so machine load hits both cases alike
            with_plugin.append(session_s(directory, "-p", PLUGIN))
            without.append(session_s(directory))
    print(f"{'case':<62} {'ms':>8}")
    print(f"{f'plugin module import beyond pytest (best of {runs})':<62} {plugin:>8.1f}")
    print(f"{'cluster import, paid by the first cluster fixture (best)':<62} {cluster:>8.1f}")
    for i, kind in ((1, "CPU"), (0, "wall")):
        on = statistics.median(x[i] for x in with_plugin)
        off = statistics.median(x[i] for x in without)
        print(f"{f'one-test session, plugin loaded ({kind}, median)':<62} {on * 1000:>8.0f}")
        print(f"{f'one-test session, -p no:mockkafka ({kind}, median)':<62} {off * 1000:>8.0f}")
        print(
            f"{f'added by the plugin ({kind}, difference of medians)':<62} {(on - off) * 1000:>8.0f}"
        )


if __name__ == "__main__":
    main()

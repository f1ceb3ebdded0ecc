"""Build-once helpers for the Java and Go interop tiers (compiled per session, cached).

Builds land in ``<repo>/.cache/`` (gitignored), keyed by a hash of their sources, so a
second session reuses them. A tier whose toolchain or dependencies cannot be had is skipped
with a reason naming what is missing; nothing here hangs: every subprocess has a timeout.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent.parent
CACHE = REPO / ".cache"
JAVA_SRC = Path(__file__).resolve().parent / "java"
GO_SRC = Path(__file__).resolve().parent / "go"

#: kafka-clients versions of the Java tier: the newest 4.x and the newest 3.x.
KAFKA_CLIENTS_VERSIONS = ("4.4.0", "3.9.2")
#: The kafka-clients releases whose KafkaShareConsumer the share tier runs: 4.4.0 (KIP-932 GA,
#: ShareFetch v2), 4.1.1 (the first GA release, ShareFetch v1) and 4.0.2 (early access, the
#: v0 share APIs).
KAFKA_CLIENTS_SHARE_VERSIONS = ("4.4.0", "4.1.1", "4.0.2")
#: An older client for what changed under it: 3.4.1 is the one Spark 3.5 ships, and it
#: predates KAFKA-17011 (it fails on a supported feature whose range starts at 0).
KAFKA_CLIENTS_OLD = "3.4.1"
BUILD_TIMEOUT_S = 300.0
#: Set (as .ci/run does after its bounded download steps) to build from local caches only:
#: a tier whose downloads did not finish then skips instead of downloading during the tests.
OFFLINE = os.environ.get("MOCKKAFKA_BUILD_OFFLINE") == "1"


def _digest(paths: Sequence[Path], *extra: str) -> str:
    h = hashlib.sha256()
    for path in sorted(paths):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    for e in extra:
        h.update(e.encode())
    return h.hexdigest()[:12]


def _run(cmd: Sequence[str], cwd: Path, what: str, env: dict[str, str] | None = None) -> str:
    """Run a build step; returns '' or why it failed (for a skip or a failure message)."""
    try:
        proc = subprocess.run(
            list(cmd),
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT_S,
            env={**os.environ, **(env or {})},
            check=False,
        )
    except subprocess.TimeoutExpired:
        return f"{what} timed out after {BUILD_TIMEOUT_S:.0f} s"
    if proc.returncode:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-8:])
        return f"{what} failed ({' '.join(cmd[:3])} ... exited {proc.returncode}):\n{tail}"
    return ""


@dataclass(frozen=True)
class Program:
    """A built interop program: ``run(*args)`` returns its last stdout line parsed as JSON."""

    name: str
    command: tuple[str, ...]

    def run(
        self, *args: str, timeout: float = 90.0, env: dict[str, str] | None = None
    ) -> dict[str, Any]:
        """``env`` is added to this process's environment for the run."""
        proc = subprocess.run(
            [*self.command, *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            env={**os.environ, **(env or {})},
        )
        lines = proc.stdout.strip().splitlines()
        assert proc.returncode == 0 and lines, (
            f"{self.name} {' '.join(args[:1])} exited {proc.returncode}\n"
            f"stdout: {proc.stdout[-2000:]}\nstderr: {proc.stderr[-4000:]}"
        )
        result: dict[str, Any] = json.loads(lines[-1])
        return result

    def start(self, *args: str) -> subprocess.Popen[str]:
        """Run it in the background (the test drives faults meanwhile); see :func:`finish`."""
        return subprocess.Popen(
            [*self.command, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )

    def finish(self, proc: subprocess.Popen[str], *, timeout: float = 90.0) -> dict[str, Any]:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        lines = out.strip().splitlines()
        assert proc.returncode == 0 and lines, (
            f"{self.name} exited {proc.returncode}\nstdout: {out[-2000:]}\nstderr: {err[-4000:]}"
        )
        result: dict[str, Any] = json.loads(lines[-1])
        return result


def held_values(cluster: Any, topic: str) -> list[str]:
    """The values ``topic`` holds, in log order per partition (what the program wrote)."""
    return [r.value.decode() for r in cluster.topic(topic).records() if r.value is not None]


def build_java(version: str) -> Program:
    """Compile ``java/src`` against kafka-clients ``version`` (resolved by mvn into ~/.m2).

    Skips (pytest.skip) when java, javac or mvn is missing or the jars cannot be resolved.
    """
    return _build_java(version, ("src",), "Interop")


def build_java_share(version: str) -> Program:
    """``java/src`` plus ``java/share-src`` (KIP-932 share consumers, kafka-clients 4.0.x
    and 4.1+), run as ``ShareInterop``; skips as :func:`build_java` does."""
    return _build_java(version, ("src", "share-src"), "ShareInterop")


def build_java_share_admin(version: str) -> Program:
    """``java/src`` plus ``java/share-admin-src`` (the Admin client's share-group offset
    calls, kafka-clients 4.1+ only), run as ``ShareAdmin``; skips as :func:`build_java`."""
    return _build_java(version, ("src", "share-admin-src"), "ShareAdmin")


def build_java_actions(version: str) -> Program:
    """``java/actions-src`` (a consumer reading edited Fetch answers, a group member that
    can be blackholed), run as ``FaultActions``; skips as :func:`build_java` does."""
    return _build_java(version, ("actions-src",), "FaultActions")


def build_java_wire(version: str) -> Program:
    """``java/wire-src`` (Kafka's message classes read and re-write our bytes), run as
    ``WireCheck``; skips as :func:`build_java` does."""
    return _build_java(version, ("wire-src",), "WireCheck")


def build_java_streams(version: str) -> Program:
    """``java/streams/src`` (a Kafka Streams word count) against kafka-streams ``version``,
    resolved with ``java/streams/pom.xml``, run as ``WordCount``; skips as :func:`build_java`."""
    return _build_java(version, ("streams/src",), "WordCount", pom_dir=JAVA_SRC / "streams")


def _build_java(
    version: str, source_dirs: Sequence[str], main: str, *, pom_dir: Path = JAVA_SRC
) -> Program:
    for tool in ("java", "javac", "mvn"):
        if shutil.which(tool) is None:
            pytest.skip(
                f"java tier: `{tool}` is not installed (apt-get install openjdk-17-jdk maven)"
            )
    sources = sorted(p for d in source_dirs for p in (JAVA_SRC / d).glob("*.java"))
    digest = _digest([*sources, pom_dir / "pom.xml"], version, *source_dirs)
    out = CACHE / "java" / f"{version}-{digest}"
    if not (out / "classes" / f"{main}.class").is_file():
        # Built in a private directory, then renamed: xdist workers may build at once.
        tmp = out.with_name(f"{out.name}.tmp{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        step = ["dependency:build-classpath", f"-Dkafka.version={version}"]
        step.append(f"-Dmdep.outputFile={tmp / 'classpath.txt'}")
        problem = _run(["mvn", "-B", "-q", "-o", *step], pom_dir, "mvn (offline)")
        if problem and not OFFLINE:
            problem = _run(["mvn", "-B", "-q", *step], pom_dir, "mvn")
        if problem:
            pytest.skip(f"java tier: kafka-clients {version} cannot be resolved: {problem}")
        cp = (tmp / "classpath.txt").read_text().strip()
        javac = ["javac", "-nowarn", "-d", str(tmp / "classes"), "-cp", cp]
        problem = _run([*javac, *map(str, sources)], JAVA_SRC, "javac")
        assert not problem, problem  # our own source does not compile: a defect, not a skip
        try:
            tmp.rename(out)
        except OSError:  # another worker finished first
            shutil.rmtree(tmp, ignore_errors=True)
    classes, classpath_file = out / "classes", out / "classpath.txt"
    cp = f"{classes}{os.pathsep}{classpath_file.read_text().strip()}"
    return Program(f"{main} (kafka-clients {version})", ("java", "-cp", cp, main))


def build_go() -> Program:
    """``go build`` the module under ``go/`` (modules from the Go proxy, cached by Go).

    Skips when go is missing or the modules cannot be downloaded.
    """
    if shutil.which("go") is None:
        pytest.skip("go tier: `go` is not installed (Go 1.26 or newer, as go/go.mod says)")
    sources = [*sorted(GO_SRC.glob("*.go")), GO_SRC / "go.mod", GO_SRC / "go.sum"]
    binary = CACHE / "go" / f"interop-{_digest([s for s in sources if s.exists()])}"
    if not binary.is_file():
        binary.parent.mkdir(parents=True, exist_ok=True)
        offline = {"GOPROXY": "off", "GOFLAGS": "-mod=mod"} if OFFLINE else None
        problem = _run(["go", "mod", "download"], GO_SRC, "go mod download", offline)
        if problem:
            pytest.skip(f"go tier: the Go modules cannot be downloaded: {problem}")
        tmp = binary.with_name(f"{binary.name}.tmp{os.getpid()}")
        problem = _run(["go", "build", "-o", str(tmp), "."], GO_SRC, "go build", offline)
        assert not problem, problem
        tmp.replace(binary)  # atomic: xdist workers may build at once
    return Program("Go interop", (str(binary),))

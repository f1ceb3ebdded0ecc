"""The rough edges a newcomer hit on the first day (issue 26): each one a clear message
instead of a nested ExceptionGroup, a bare AttributeError, a silently default cluster or an
install command that fails outside the repository."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import tomllib
import warnings
from pathlib import Path

import pytest

import mockkafka

REPO = Path(__file__).resolve().parent.parent.parent


def test_a_port_in_use_is_a_one_line_oserror_naming_broker_and_port() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(OSError) as exc:  # not an ExceptionGroup from trio's nursery
            mockkafka.Cluster(port=port).start()
    assert type(exc.value) is mockkafka.ListenError
    assert str(exc.value).startswith(f"broker 1 cannot listen on 127.0.0.1:{port}: ")
    assert "\n" not in str(exc.value) and exc.value.errno is not None
    assert exc.value.__cause__ is None and exc.value.__suppress_context__


def test_open_cluster_on_a_port_in_use_says_the_same_in_one_line() -> None:
    import trio

    async def main(port: int) -> None:
        async with mockkafka.open_cluster(port=port, topics=["never"]):
            raise AssertionError("the cluster cannot have started")

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(mockkafka.ListenError, match=f"cannot listen on 127.0.0.1:{port}"):
            trio.run(main, port)


async def _topics_of_an_async_cluster() -> list[str]:
    async with mockkafka.open_cluster(topics={"payments": 3}) as cluster:
        return cluster.topics()


def test_cluster_takes_topics_as_the_marker_does() -> None:
    import trio

    assert trio.run(_topics_of_an_async_cluster) == ["payments"]
    with mockkafka.Cluster(
        brokers=3,
        topics={"payments": {"partitions": 6, "replication_factor": 3}, "audit": 2, "dlq": None},
    ) as cluster:
        assert cluster.topics() == ["audit", "dlq", "payments"]
        assert len(cluster.topic("payments").partitions) == 6
        assert len(cluster.topic("payments").partitions[0].replicas) == 3
        assert len(cluster.topic("audit").partitions) == 2
    with mockkafka.Cluster(topics=["a", "b"]) as cluster:
        assert cluster.topics() == ["a", "b"]
    with pytest.raises(
        mockkafka.ConfigError, match=r"unknown key\(s\) partitons \(did you mean partitions\?\)"
    ):
        mockkafka.Cluster(topics={"a": {"partitons": 3}})
    with pytest.raises(
        mockkafka.ConfigError, match=r"unknown cluster option 'topcs' \(did you mean 'topics'\?\)"
    ):
        mockkafka.Cluster(topcs=["a"])


def test_a_misspelt_rule_method_gets_a_did_you_mean() -> None:
    with mockkafka.Cluster() as cluster:
        rule = cluster.faults.on("Produce")
        with pytest.raises(
            AttributeError, match=r"Rule has no attribute 'time' \(did you mean times\?\)"
        ):
            rule.time(2)  # type: ignore[attr-defined]
        assert not hasattr(rule, "__deepcopy__")  # dunders still plainly missing
        cluster.faults.clear()


def test_a_rule_on_a_topic_that_never_existed_is_named_at_teardown() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with mockkafka.Cluster(topics=["payments"]) as cluster:
            cluster.faults.on("Produce", topic="paymnets").error("NOT_LEADER_OR_FOLLOWER")
            cluster.faults.on("Produce", topic="pay*").error("NOT_LEADER_OR_FOLLOWER")
    (w,) = [w for w in caught if issubclass(w.category, mockkafka.UnfiredRuleWarning)]
    text = str(w.message)
    assert "2 fault rule(s) never fired" in text
    assert (
        "it names topic 'paymnets', which does not exist (did you mean payments?); "
        "topics: payments" in text
    )
    assert text.count("does not exist") == 1  # a pattern that matches a topic is fine


def test_a_misspelt_marker_is_a_usage_error_naming_the_mark_meant(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        """
import pytest

@pytest.mark.kafka_clsuter(brokers=3)
def test_meant_three_brokers(kafka_cluster):
    assert len(kafka_cluster.brokers) == 3
"""
    )
    result = pytester.runpytest("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*@pytest.mark.kafka_clsuter is not a mockkafka mark (did you mean kafka_cluster?)*"]
    )


def test_a_folder_shadowing_the_package_is_detected_with_what_to_do(tmp_path: Path) -> None:
    (tmp_path / "mockkafka").mkdir()  # the clone, seen from the folder above it
    (tmp_path / "test_x.py").write_text("def test_x():\n    pass\n")
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 4, out.stdout + out.stderr
    assert f"the folder {tmp_path / 'mockkafka'} shadows the mockkafka package" in out.stderr
    assert "run pytest from inside the clone or from another folder" in out.stderr


# -- README's install section -------------------------------------------------------------


def _install_section() -> str:
    text = (REPO / "README.md").read_text()
    return text.split("## Install", 1)[1].split("\n## ", 1)[0]


def _pip_targets(text: str) -> list[str]:
    out = []
    for line in re.findall(r"pip install ([^#`\n]*)", text):
        for word in line.split("&&")[0].split():
            if not word.startswith("-"):
                out.append(word.strip("'\"():,"))
    return out


def test_readme_installs_extras_by_path_never_by_the_unpublished_name() -> None:
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    docs = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    for doc in docs:
        for target in _pip_targets(doc.read_text()):
            name, _, rest = target.partition("[")
            assert name != "mockkafka", f"{doc.name}: pip install {target} needs an index"
            if rest and name.startswith((".", "dist/")):
                for extra in rest.rstrip("]").split(","):
                    assert extra in extras, f"{doc.name}: no extra {extra!r}"
    section = _install_section()
    assert "pip install '.[scenarios,fuzz]'" in section
    for extra in ("scenarios", "fuzz", "tls", "spark"):
        assert f"| `{extra}` |" in section
    assert "pip install confluent-kafka kafka-python" in section
    assert "(unknown location)" in section and "detects" in section


@pytest.mark.parametrize("extras", ["fuzz", "scenarios,fuzz"])
def test_the_readme_extra_form_resolves_from_a_clone(extras: str) -> None:
    # pip resolves "PATH[extras]" to this project with those extras, without an index
    out = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--no-index", "--no-deps",
         "--no-build-isolation", "--quiet", "--report", "-", f"{REPO}[{extras}]"],
        capture_output=True,
        text=True,
        timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    import json

    (item,) = json.loads(out.stdout)["install"]
    assert item["metadata"]["name"] == "mockkafka"
    assert sorted(item["requested_extras"]) == sorted(extras.split(","))

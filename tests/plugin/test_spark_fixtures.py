"""The ``spark`` fixtures stay out of the way: the plugin loads without pyspark, and a
missing runtime skips the test with a reason naming what is missing."""

from __future__ import annotations

import subprocess
import sys

import pytest

from mockkafka.spark import _artifact_name, _earlier_patches


def test_loading_the_plugin_does_not_import_pyspark() -> None:
    code = (
        "import sys, pytest_plugin.plugin, mockkafka.spark; "
        "assert 'pyspark' not in sys.modules, 'pyspark imported'"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_spark_fixture_skips_naming_what_is_missing(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")  # no java, no mvn
    monkeypatch.delenv("JAVA_HOME", raising=False)
    pytester.makepyfile(
        """
        def test_job(spark):
            raise AssertionError("must not run")
        """
    )
    result = pytester.runpytest("-rs", "-p", "no:cacheprovider")
    result.assert_outcomes(skipped=1)
    result.stdout.re_match_lines([r".*spark unavailable: (Java|pyspark) is not installed.*"])


@pytest.mark.parametrize(
    ("jar", "name"),
    [
        ("kafka-clients-3.9.2.jar", "kafka-clients"),
        ("spark-sql-kafka-0-10_2.13-4.2.0.jar", "spark-sql-kafka-0-10_2.13"),
        ("zstd-jni-1.5.7-7.jar", "zstd-jni"),
        ("commons-pool2-2.13.1.jar", "commons-pool2"),
    ],
)
def test_jars_pyspark_ships_are_recognised_whatever_their_version(jar: str, name: str) -> None:
    assert _artifact_name(jar) == name


def test_a_patch_release_without_its_connector_falls_back_within_its_line() -> None:
    """pyspark 3.5.9 (Scala 2.12) tries 3.5.8, 3.5.7, ... newest first; never another line."""
    assert _earlier_patches("3.5.9")[:3] == ["3.5.8", "3.5.7", "3.5.6"]
    assert _earlier_patches("4.2.1") == ["4.2.0"]
    assert _earlier_patches("4.3.0") == []
    assert _earlier_patches("4.3.0.dev1") == []

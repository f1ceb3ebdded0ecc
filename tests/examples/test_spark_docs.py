"""docs/spark.md's batch example is the whole test it quotes, not a statement cut short."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent


def test_the_batch_example_is_quoted_whole_from_its_test() -> None:
    docs = (REPO / "docs" / "spark.md").read_text()
    block = re.search(r"A batch round trip.*?```python\n(.*?)```", docs, re.S)
    assert block is not None
    code = block.group(1)
    source = (REPO / "examples" / "spark_pipeline" / "tests" / "test_batch.py").read_text()
    assert code in source, "update docs/spark.md (or test_batch.py) so they match"
    compile(code, "docs/spark.md", "exec")  # whole statements
    assert "got.load()" in code  # the read is run and checked


def test_the_spark_docs_answer_the_first_questions() -> None:
    docs = (REPO / "docs" / "spark.md").read_text()
    assert "@pytest.mark.kafka_cluster(brokers=3)" in docs
    assert "startingOffsets=latest" in docs
    assert "fetch_positions" in docs
    assert "QUIET_LOGGERS" in docs

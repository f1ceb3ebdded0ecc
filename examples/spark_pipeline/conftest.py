"""The pipeline's tests need pyspark (``pip install '.[spark]'`` in the clone): without it they are
not collected, so the default test run works on a machine without Spark. The ``spark`` fixture's
own tests (tests/plugin/test_spark_fixtures.py) say, as a skip reason, what is missing."""

from __future__ import annotations

import importlib.util

collect_ignore = [] if importlib.util.find_spec("pyspark") is not None else ["tests"]

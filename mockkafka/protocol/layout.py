"""Where topics and partitions sit in Kafka messages: one table for every reader.

The partition-level APIs share a shape -- an array of topics, each with a name (or topic
id) and an array of partitions keyed by an index -- under different field names in
different messages. These names are facts of the schemas; the fault engine
(``faults/inspect.py``, which finds what a request targets and edits responses) and the
whole-request error builder (``handlers/_errors.py``, which mirrors a request into an error
response) both read them from here.
"""

from __future__ import annotations

#: Arrays of topics (requests and responses).
TOPIC_ARRAYS = ("topics", "topic_data", "responses", "results")
#: Arrays of partitions inside a topic entry.
PARTITION_ARRAYS = ("partitions", "partition_data", "partition_indexes", "partition_responses")
#: A topic entry's name field.
TOPIC_KEYS = ("name", "topic")
#: A partition entry's index field.
PARTITION_KEYS = ("partition_index", "index", "partition")


def same_meaning(name: str, names: tuple[str, ...]) -> tuple[str, ...]:
    """``name`` first, then the other field names in ``names`` that mean the same."""
    return (name, *(n for n in names if n != name))

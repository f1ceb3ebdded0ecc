"""Public cluster verbs for the transactions subsystem (mixed into mockkafka.Cluster)."""

from __future__ import annotations


class TransactionsVerbs:
    """Verbs of the transactions subsystem; they run on the cluster's loop via ``self._call``."""

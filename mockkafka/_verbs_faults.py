"""Public cluster verbs for the faults subsystem (mixed into mockkafka.Cluster)."""

from __future__ import annotations


class FaultsVerbs:
    """Verbs of the faults subsystem; they run on the cluster's loop via ``self._call``."""

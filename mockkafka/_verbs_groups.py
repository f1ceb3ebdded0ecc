"""Public cluster verbs for the groups subsystem (mixed into mockkafka.Cluster)."""

from __future__ import annotations


class GroupsVerbs:
    """Verbs of the groups subsystem; they run on the cluster's loop via ``self._call``."""

"""Sans-IO broker state: topics and partition logs (``state.py``, ``log.py``), the produce and
fetch paths (``produce.py``, ``fetch.py``), producers, groups, transactions, coordinators and
configs. No sockets, no threads, no trio: time comes from an injected clock."""

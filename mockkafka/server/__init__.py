"""The trio side of mockkafka (the only package besides the public ``_api`` that imports trio).

``runtime.py`` serves a ClusterState (listeners, connections, dispatch, parked requests);
``connection.py`` one client connection; ``faults.py`` applies fired fault rules;
``traffic.py`` records every exchange; ``waits.py`` is the one waiting primitive;
``runner.py`` runs a server in a background thread for sync and asyncio tests.
"""

"""The public cluster objects (``mockkafka.Cluster``, ``AsyncCluster``, ``open_cluster``).

``verbs.py`` holds every verb, grouped by concept; ``cluster.py`` the two flavours (a trio
loop in a background thread, or the caller's own trio loop) and their waits;
``options.py`` the checks of ``Cluster(...)`` arguments. The broker state these objects
drive lives in ``mockkafka/cluster/`` (sans-IO) and is served by ``mockkafka/server/``.
"""

"""The first-use tier: every promise as a new user meets it (issue 33).

Each *probe* is a small program doing what the docs show -- a cluster, a real client at its
default settings, the first call of a wait, a verb or a fault -- and it runs in a **fresh
interpreter**, where nothing is imported or warmed up yet. The suite's own tests run in warm
worker processes and cannot see what goes wrong only the first time (issue 33's first wait
of a process polled an orphan group coordinator).

* ``registry.py``: the ``@probe`` decorator and the list of probes (imports nothing heavy).
* ``_clients.py``: producing and consuming in a group with each Python client family at its
  defaults (confluent-kafka, kafka-python, aiokafka), as a user would write it.
* ``probes_*.py``: the probes, by area.
* ``run.py``: ``python -m tests.first_use.run --repeat 5`` runs every (probe, client) N
  times, each in its own interpreter, two at a time, no retries, and prints the table
  (item, client, k of N). ``.ci/run`` runs it as a bounded step.
* ``test_first_use.py``: each (probe, client) once, in a fresh interpreter, in the default
  test run.
"""

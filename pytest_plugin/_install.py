"""Is the ``mockkafka`` that would be imported the installed package?

Running Python from the folder that holds a clone puts the clone's folder ``mockkafka/`` on
``sys.path`` first; it has no ``__init__.py``, so Python imports it as an empty namespace
package and ``from mockkafka import Cluster`` fails with "(unknown location)". The plugin
checks this once at start-up (``importlib.util.find_spec``: nothing is imported) and stops
with what to do instead.
"""

from __future__ import annotations

import importlib.util


def shadowing_folder() -> str | None:
    """The folder shadowing the mockkafka package, or None when the import is fine."""
    try:
        spec = importlib.util.find_spec("mockkafka")
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin not in (None, "namespace"):
        return None
    locations = list(spec.submodule_search_locations or [])
    return locations[0] if locations else None


def shadowing_message(folder: str) -> str:
    return (
        f"mockkafka: the folder {folder} shadows the mockkafka package: it is on sys.path "
        "(the current directory?) and has no __init__.py, so Python imports it as an empty "
        "namespace package. It is most likely the clone of mockkafka: run pytest from inside "
        "the clone or from another folder (not the one holding the clone), or rename the "
        "folder."
    )
